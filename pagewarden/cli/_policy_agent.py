"""`pagewarden policies extract …` (and, later, `policies store …`): the policy agent's CLI.

Registered on the `policies` group (`pagewarden.cli._policies`); `pagewarden.cli` imports this module.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from pathlib import Path

import click
import yaml
from rich.markup import escape
from rich.text import Text

from pagewarden.cli._base import _cells, _llm_config, _llm_options, console, err_console
from pagewarden.cli._policies import policies, policies_import
from pagewarden.policies import PolicyError, PolicySet

#: a document with at least this many pages or statements gets a progress bar
_LONG = 20


class _Bar:
    """A progress bar per long source (on stderr; gone when done)."""

    def __init__(self) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.progress = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            console=err_console, transient=True,
        )  # fmt: skip
        self.tasks: dict[str, int] = {}

    def __call__(self, name: str, done: int, total: int) -> None:
        if total < _LONG:
            return
        if name not in self.tasks:
            self.progress.start()
            self.tasks[name] = self.progress.add_task(Path(name).name[:40], total=total)
        self.progress.update(self.tasks[name], completed=done, total=total)

    def stop(self) -> None:
        self.progress.stop()


def _print_report(result, out: Path | None) -> None:
    for document in result.documents:
        size = f"{document.pages} pages" if document.pages else f"{len(document.blocks)} blocks"
        err_console.print(
            f"read {escape(str(document.name))} ({escape(str(document.kind))}, {escape(str(size))})",
            highlight=False
        )
    for warning in result.warnings:
        err_console.print(f"[yellow]warning[/yellow] {escape(str(warning))}", highlight=False)
    for error in result.errors:
        err_console.print(f"[red]error[/red] {escape(str(error))}", highlight=False, soft_wrap=True)
    for passage in result.hostile:
        err_console.print(
            f"[yellow]ignored[/yellow] text addressed to the extractor, not obeyed: {passage}",
            highlight=False, soft_wrap=True,
        )  # fmt: skip
    for rejected in result.rejected_rules:
        err_console.print(
            f"[yellow]rule dropped[/yellow] (did not validate) {escape(str(rejected))}",
            highlight=False
        )
    kinds = Counter(rule.kind for policy in result.new for rule in policy.rules)
    rules = ", ".join(f"{kind} {n}" for kind, n in kinds.most_common()) or "none"
    err_console.print(
        f"{result.statements} statements → {result.extracted} policies ({result.mode}); "
        f"{len(result.merge.added)} new, {len(result.merge.duplicates)} already present; rules: {rules}"
        + ("; marked needs_review" if result.mode == "offline" and result.new else ""),
        highlight=False,
    )


@policies.command("extract")
@click.argument("sources", nargs=-1, required=True)
@click.option(
    "-o", "--out", type=click.Path(dir_okay=False, path_type=Path),
    help="Policy file to write (YAML, or JSON for .json). An existing file is merged into, and its "
    "previous version kept as FILE.rN. Without -o (and --store) the policies go to stdout.",
)  # fmt: skip
@click.option(
    "--store", "store_path", metavar="STORE",
    help="Policy store to merge the policies into, as one versioned change: a SQLite file or a "
    "postgresql://user:pass@host:port/db URL.",
)  # fmt: skip
@click.option("--subject", help='Whom the policies are for (e.g. "web agents acting for employees").')
@click.option("--org", help="The organisation whose documents these are.")
@click.option(
    "--offline", is_flag=True, help="Use the deterministic extractor even if a model is configured."
)
@_llm_options
def policies_extract(
    sources: tuple[str, ...],
    out: Path | None,
    store_path: str | None,
    subject: str | None,
    org: str | None,
    offline: bool,
    llm_base_url: str | None,
    llm_model: str | None,
    llm_config: Path | None,
) -> None:
    """Extract policies from SOURCES (PDF, HTML, Markdown or text files, or http(s) URLs).

    With no model configured (or --offline) a deterministic extractor finds obligation and
    prohibition statements and marks every policy needs_review. With a model (--llm-* or
    PAGEWARDEN_LLM_* in the environment) the model extracts, refines, de-duplicates and
    structures them. Every policy keeps its provenance (document, page or section, sentence).
    Exit 1 when a source could not be read (the others are still written) or nothing was found.
    """
    from pagewarden.policies.extract import extract, write_policy_file

    llm = None if offline else _llm_config(llm_base_url, llm_model, llm_config)
    existing = None
    store = _open_store(store_path) if store_path is not None else None
    if out is not None and store is not None:
        raise click.UsageError("give -o FILE or --store DB, not both")
    if store is not None:
        existing = store.policies()
    if out is not None and out.exists():
        try:
            existing = PolicySet.load(out)
        except PolicyError as exc:
            for problem in exc.problems:
                err_console.print(f"[red]error[/red] {escape(str(problem))}", highlight=False, soft_wrap=True)
            err_console.print(
                f"{escape(str(out))} is not a valid policy file: not merging into it",
                highlight=False
            )
            sys.exit(1)
    bar = _Bar()
    try:
        result = extract(sources, existing=existing, llm=llm, subject=subject, org=org, progress=bar)
    finally:
        bar.stop()
    _print_report(result, out)
    if out is not None:
        if result.documents:
            try:
                previous = write_policy_file(out, result.policies)
            except (OSError, PolicyError) as exc:
                err_console.print(
                    f"[red]error[/red] cannot write {escape(str(out))}: {escape(str(exc))}",
                    highlight=False
                )
                sys.exit(1)
            kept = f" (previous version kept as {previous})" if previous else ""
            kept = kept or (" (unchanged)" if existing is not None else "")
            err_console.print(
                f"[green]wrote[/green] {out}: {len(result.policies)} policies{kept}", highlight=False
            )
    elif store is not None:
        if result.new:
            change = store.put(result.new, cause="extract", detail=", ".join(sources))
            where = escape(_where(store))
            err_console.print(
                f"[green]stored[/green] {len(result.new)} policies in {where} (change {change.id})"
                if change else f"{where} unchanged", highlight=False,
            )  # fmt: skip
        store.close()
    elif result.new:
        click.echo(yaml.safe_dump(PolicySet(result.new).to_dict(), sort_keys=False, allow_unicode=True))
    if result.errors or not result.documents:
        sys.exit(1)
    if not result.new and not result.merge.duplicates:
        err_console.print("no policy statements found", highlight=False)
        sys.exit(1)


# -- the store ---------------------------------------------------------------------------------
def _where(store) -> str:
    """Where a store is, for messages (a URL's password redacted)."""
    return store.backend.describe()


def _open_store(target: str | Path, *, must_exist: bool = False):
    from pagewarden.policies.store import PolicyStore, StoreError, is_postgres_url

    if must_exist and not is_postgres_url(target) and not Path(target).exists():
        err_console.print(f"[red]error[/red] {escape(str(target))}: no such policy store", highlight=False)
        sys.exit(1)
    try:
        return PolicyStore(target)
    except StoreError as exc:
        err_console.print(f"[red]error[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
        sys.exit(1)


def _store_call(function, *args, **kwargs):
    from pagewarden.policies.store import StoreError

    try:
        return function(*args, **kwargs)
    except (StoreError, PolicyError, OSError) as exc:
        err_console.print(f"[red]error[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
        sys.exit(1)


_DB = click.argument("db", metavar="DB")


def _looks_like_store(arg: str) -> bool:
    """Whether a first argument names a store: a postgresql:// URL, a SQLite file name, or an
    existing SQLite database (a policy file such as ``policies.yaml`` is none of these, so
    ``store import policies.yaml`` takes its store from PAGEWARDEN_STORE)."""
    from pagewarden.policies.store import is_postgres_url

    if is_postgres_url(arg) or arg.endswith((".db", ".sqlite", ".sqlite3")):
        return True
    try:
        with open(arg, "rb") as handle:
            return handle.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


class _StoreCommand(click.Command):
    """A store command whose DB may also be given as ``--store STORE`` (anywhere), or taken from
    ``PAGEWARDEN_STORE`` when the first argument is not a store."""

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        params = super().get_params(ctx)
        store = click.Option(
            ["--store"], metavar="STORE", expose_value=False,
            help="The store, instead of DB: a SQLite file or postgresql://user:pass@host:port/db "
            "(default: $PAGEWARDEN_STORE, which keeps a password off the command line; so do "
            "PGPASSWORD and ~/.pgpass).",
        )  # fmt: skip
        return [*params[:-1], store, params[-1]]  # before --help

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        rest, given = [], []
        items = iter(args)
        for arg in items:
            if arg == "--store":
                given.append(next(items, ""))
            elif arg.startswith("--store="):
                given.append(arg.split("=", 1)[1])
            else:
                rest.append(arg)
        if len(given) > 1 or (given and not given[0]):
            raise click.UsageError("give --store once, with a store", ctx)
        positional = [a for a in rest if not a.startswith("-")]
        env = os.environ.get("PAGEWARDEN_STORE", "")
        if given:
            rest = [given[0], *rest]
        elif env and "--help" not in rest and not (positional and _looks_like_store(positional[0])):
            rest = [env, *rest]
        return super().parse_args(ctx, rest)


@policies.group("store")
def store_group() -> None:
    """The versioned policy store (a SQLite file, or PostgreSQL for a fleet): list, show,
    history, changes, diff, export, import, delete.

    DB is a file path or a postgresql://user:pass@host:port/db URL; it may also be given as
    --store STORE, or in PAGEWARDEN_STORE (keeping a password off the command line)."""


store_group.command_class = _StoreCommand


@store_group.command("list")
@_DB
@click.option("--json", "as_json", is_flag=True, help="Print the current policies as JSON.")
def store_list(db: str, as_json: bool) -> None:
    """The current policies in DB, with their version and reference count."""
    import json

    from rich.table import Table

    store = _open_store(db, must_exist=True)
    policy_set = _store_call(store.policies)
    if as_json:
        click.echo(json.dumps(policy_set.to_dict(), indent=2, ensure_ascii=False))
        return
    versions = {p.id: len(_store_call(store.history, p.id)) for p in policy_set}
    revision = _store_call(store.revision)
    table = Table(title=Text(f"{_where(store)} — {len(policy_set)} policies, revision {revision}"))
    for column in ("id", "v", "category", "risk", "refs", "review", "description", "rules"):
        table.add_column(column, overflow="fold")
    for p in policy_set:
        rules = ", ".join(rule.kind for rule in p.rules) or "-"
        review = "yes" if p.needs_review else ""
        cells = (p.id, str(versions[p.id]), p.category.value, p.risk_level.value, str(len(p.references)))
        table.add_row(*_cells(*cells, review, p.description, rules))
    console.print(table)


@store_group.command("show")
@_DB
@click.argument("policy_id")
@click.option("--version", "number", type=int, help="Show this version instead of the current one.")
def store_show(db: str, policy_id: str, number: int | None) -> None:
    """One policy (YAML), with its references and provenance."""
    store = _open_store(db, must_exist=True)
    policy = _store_call(store.version, policy_id, number) if number else _store_call(store.get, policy_id)
    if policy is None:
        which = f" version {number}" if number else ""
        err_console.print(
            f"[red]error[/red] no policy {escape(repr(policy_id))}{escape(str(which))}",
            highlight=False
        )
        sys.exit(1)
    click.echo(yaml.safe_dump(policy.to_dict(), sort_keys=False, allow_unicode=True), nl=False)


@store_group.command("history")
@_DB
@click.argument("policy_id")
def store_history(db: str, policy_id: str) -> None:
    """Every version of a policy: when, why (cause), by whom."""
    store = _open_store(db, must_exist=True)
    history = _store_call(store.history, policy_id)
    if not history:
        err_console.print(
            f"[red]error[/red] no policy {escape(repr(policy_id))} in {escape(_where(store))}",
            highlight=False
        )
        sys.exit(1)
    for item in history:
        what = "deleted" if item.policy is None else f"{len(item.policy.references)} references"
        console.print(
            f"v{item.version}  change {item.change.id}  {item.change.at}  {item.change.cause:<9}  "
            f"{item.change.actor}  {what}  {item.change.detail}", highlight=False, soft_wrap=True,
        )  # fmt: skip


@store_group.command("diff")
@_DB
@click.argument("policy_id")
@click.argument("old", type=int, required=False)
@click.argument("new", type=int, required=False)
def store_diff(db: str, policy_id: str, old: int | None, new: int | None) -> None:
    """The difference between two versions of a policy (default: the last two)."""
    store = _open_store(db, must_exist=True)
    click.echo(_store_call(store.diff, policy_id, old, new), nl=False)


@store_group.command("changes")
@_DB
@click.option("--since", type=int, default=0, help="Only changes after this change id.")
@click.option("--limit", type=int, help="Only the latest N changes.")
def store_changes(db: str, since: int, limit: int | None) -> None:
    """The store's change log: each change, its cause and the policies it touched."""
    store = _open_store(db, must_exist=True)
    for change in _store_call(store.changes, since=since, limit=limit):
        ids = ", ".join(change.policy_ids[:8]) + (" …" if len(change.policy_ids) > 8 else "")
        line = f"{change.id}  {change.at}  {change.cause:<9}  {change.actor}  [{ids}]  {change.detail}"
        console.print(line, highlight=False, soft_wrap=True)


@store_group.command("export")
@_DB
@click.option("-o", "--out", type=click.Path(dir_okay=False, path_type=Path), help="File (YAML or .json).")
def store_export(db: str, out: Path | None) -> None:
    """The current policies as a policy file (references included): to FILE or stdout."""
    store = _open_store(db, must_exist=True)
    data = _store_call(store.export, out)
    if out is None:
        click.echo(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), nl=False)
    else:
        err_console.print(
            f"[green]wrote[/green] {escape(str(out))}: {len(data['policies'])} policies",
            highlight=False
        )


@store_group.command("import")
@_DB
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
def store_import(db: str, file: Path) -> None:
    """Store the policies of a policy FILE (new ids added, changed ones versioned)."""
    store = _open_store(db)
    change = _store_call(store.import_policies, file)
    if change is None:
        err_console.print(
            f"{escape(_where(store))} unchanged: {escape(str(file))} holds nothing new",
            highlight=False
        )
    else:
        err_console.print(
            f"[green]imported[/green] {len(change.policy_ids)} policies (change {escape(str(change.id))})",
            highlight=False,
        )


@store_group.command("delete")
@_DB
@click.argument("policy_ids", nargs=-1, required=True)
def store_delete(db: str, policy_ids: tuple[str, ...]) -> None:
    """Delete policies (their history is kept)."""
    store = _open_store(db, must_exist=True)
    change = _store_call(store.delete, policy_ids)
    err_console.print(
        f"[green]deleted[/green] {escape(', '.join(policy_ids))} (change {escape(str(change.id))})",
        highlight=False
    )


# -- importers of other policy agents' files ------------------------------------------------------
def _import_agent_file(fmt: str, file: Path, out: Path | None, store_path: str | None) -> None:
    from pagewarden.policies.extract import merge_policies, write_policy_file
    from pagewarden.policies.importers import import_agent_policies

    try:
        imported = import_agent_policies(file, fmt)
    except PolicyError as exc:
        for problem in exc.problems:
            err_console.print(f"[red]error[/red] {escape(str(problem))}", highlight=False, soft_wrap=True)
        sys.exit(1)
    rules = sum(len(p.rules) for p in imported)
    err_console.print(
        f"read {file}: {len(imported)} {fmt} policies, {rules} rules compiled", highlight=False, markup=False
    )
    if store_path is not None:
        store = _open_store(store_path)
        change = _store_call(store.import_policies, imported)
        err_console.print(f"[green]stored[/green] in {escape(_where(store))}" + (f" (change {change.id})"
                          if change else " (unchanged)"), highlight=False)  # fmt: skip
    elif out is not None:
        existing = _store_call(PolicySet.load, out) if out.exists() else None
        merged, report = merge_policies(existing, list(imported))
        previous = _store_call(write_policy_file, out, merged)
        kept = escape(f"; previous version kept as {previous}") if previous else ""
        err_console.print(f"[green]wrote[/green] {escape(str(out))}: {len(report.added)} new, "
                          f"{len(report.duplicates)} already present{kept}", highlight=False)  # fmt: skip
    else:
        click.echo(yaml.safe_dump(imported.to_dict(), sort_keys=False, allow_unicode=True), nl=False)


def _agent_importer(fmt: str, title: str):
    @policies_import.command(fmt, help=f"Read a {title} policy file (JSON or YAML list of policies).")
    @click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
    @click.option("-o", "--out", type=click.Path(dir_okay=False, path_type=Path),
                  help="Policy file to write or merge into (previous version kept as FILE.rN).")  # fmt: skip
    @click.option("--store", "store_path", metavar="STORE",
                  help="Policy store to import into (one change, cause import): a SQLite file "
                  "or a postgresql:// URL.")  # fmt: skip
    def command(file: Path, out: Path | None, store_path: str | None) -> None:
        _import_agent_file(fmt, file, out, store_path)

    return command


import_harmonyguard = _agent_importer("harmonyguard", "HarmonyGuard")
import_safepred = _agent_importer("safepred", "SafePred")

__all__ = ["console", "import_harmonyguard", "import_safepred", "policies_extract", "store_group"]
