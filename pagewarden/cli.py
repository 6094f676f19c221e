"""The `pagewarden` command line."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from pagewarden._version import __version__
from pagewarden.policies import PolicyError, PolicySet, baseline_policies

# Piped output (CI logs, files) gets a wide fixed width instead of rich's 80 columns.
# emoji=False: text from pages and files (":cd:" in a URL or a fingerprint) is printed as written
console = Console(soft_wrap=True, emoji=False, width=None if sys.stdout.isatty() else 160)
err_console = Console(stderr=True, soft_wrap=True, emoji=False, width=None if sys.stderr.isatty() else 160)


def _cells(*values: object) -> list[Text]:
    """Table cells as literal text: a policy id, reason or URL containing Rich markup such as
    ``[bold]`` or ``[/]`` is shown as written, never interpreted."""
    return [value if isinstance(value, Text) else Text(str(value)) for value in values]


def _error(problem: object) -> None:
    """Print one problem (its text literal) as an error line on stderr."""
    err_console.print(f"[red]error[/red] {escape(str(problem))}", highlight=False, soft_wrap=True)


def _warning(problem: object) -> None:
    """Print one problem (its text literal) as a warning line on stderr."""
    err_console.print(f"[yellow]warning[/yellow] {escape(str(problem))}", highlight=False, soft_wrap=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="pagewarden")
@click.option(
    "-v", "--verbose", count=True, help="Log guard decisions (-v) and debug events (-vv) to stderr."
)
@click.option(
    "--log-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the log as JSON lines to this file (secrets redacted).",
)
def main(verbose: int, log_file: Path | None) -> None:
    """pagewarden: a safety guard between browser agents and the browser.

    Every action an agent takes on a guarded Playwright page is checked against the
    organisation's policies and the user's goal before it runs.
    """
    import logging

    from pagewarden.trace import configure_logging

    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    configure_logging(console=True, json_file=log_file, level=level)


# -- policies ------------------------------------------------------------------------------
@main.group()
def policies() -> None:
    """Check, show and import policy files."""


@policies.command("lint")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--strict", is_flag=True, help="Exit 1 on warnings too.")
def policies_lint(files: tuple[Path, ...], strict: bool) -> None:
    """Validate policy FILES (YAML or JSON); exit 1 if any has a problem.

    Also warns about policies that can never fire on the offline tiers (no rules, rules that
    cannot apply) and about domain patterns no host can match (`shop.test/`, `*.bad..com`).
    """
    from pagewarden.policies import lint_policies

    failed = 0
    warned = 0
    for path in files:
        try:
            policy_set = PolicySet.load(path)
        except PolicyError as exc:
            failed += 1
            for problem in exc.problems:
                _error(problem)
            continue
        warnings = lint_policies(policy_set)
        for problem in warnings:
            _warning(problem)
        warned += bool(warnings)
        rules = sum(len(p.rules) for p in policy_set)
        note = f", {len(warnings)} warning(s)" if warnings else ""
        console.print(
            f"[green]ok[/green] {escape(str(path))}: {len(policy_set)} policies, {rules} rules{note}",
            highlight=False,
        )
    if failed:
        err_console.print(f"{failed} of {len(files)} file(s) failed", highlight=False)
        sys.exit(1)
    if strict and warned:
        err_console.print(f"{warned} of {len(files)} file(s) with warnings (--strict)", highlight=False)
        sys.exit(1)


@policies.command("schema")
@click.argument("kind", required=False)
@click.option(
    "--markdown", is_flag=True, help="Print the reference as the Markdown table of docs/reference/rules.md."
)
@click.option("--json", "as_json", is_flag=True, help="Print the reference as JSON.")
def policies_schema(kind: str | None, markdown: bool, as_json: bool) -> None:
    """Print the field-by-field reference of every rule kind (or of KIND)."""
    from pagewarden.policies import RULE_KINDS, reference_markdown, rule_reference

    docs = rule_reference()
    if kind is not None:
        if kind not in RULE_KINDS:
            raise click.UsageError(f"unknown rule kind {kind!r}; known kinds: {', '.join(RULE_KINDS)}")
        docs = [d for d in docs if d.kind == kind]
    if markdown:
        click.echo(reference_markdown(), nl=False)
        return
    if as_json:
        click.echo(json.dumps([d.to_dict() for d in docs], indent=2, ensure_ascii=False))
        return
    for doc in docs:
        table = Table(title=Text(f"{doc.kind}: {doc.summary}"), title_justify="left", expand=True)
        for column in ("field", "written as", "default", "meaning"):
            table.add_column(column, overflow="fold", ratio=4 if column == "meaning" else None)
        for field in doc.fields:
            name = field.name + "".join(f" (or {a})" for a in field.aliases)
            table.add_row(*_cells(name, field.type, field.default, field.description))
        console.print(table)
    if kind is None:
        console.print(
            "Each rule is a one-key mapping, `KIND: {field: value, ...}`; url/domain kinds may be "
            "written `KIND: pattern` or `KIND: [a, b]`. Unknown fields are errors.",
            highlight=False,
            markup=False,
        )


@policies.command("show")
@click.argument("file", required=False, type=click.Path(path_type=Path))
@click.option("--baseline", is_flag=True, help="Show the built-in baseline policies.")
@click.option("--json", "as_json", is_flag=True, help="Print the normalised policies as JSON.")
def policies_show(file: Path | None, baseline: bool, as_json: bool) -> None:
    """Show the policies of FILE (or the built-in baseline) as a table."""
    if file is None and not baseline:
        raise click.UsageError("give a FILE or --baseline")
    try:
        policy_set = baseline_policies() if baseline else PolicySet.load(file)  # type: ignore[arg-type]
    except PolicyError as exc:
        for problem in exc.problems:
            _error(problem)
        sys.exit(1)
    if as_json:
        click.echo(json.dumps(policy_set.to_dict(), indent=2, ensure_ascii=False))
        return
    table = Table(title=Text(f"{policy_set.source} — {len(policy_set)} policies"), show_lines=False)
    for column in ("id", "category", "risk", "description", "rules"):
        table.add_column(column, overflow="fold")
    for policy in policy_set:
        rules = ", ".join(rule.kind for rule in policy.rules) or "-"
        table.add_row(
            *_cells(policy.id, policy.category.value, policy.risk_level.value, policy.description, rules)
        )
    console.print(table)


# -- the model (semantic tier) -----------------------------------------------------------------
def _llm_options(command):
    """--llm-base-url / --llm-model / --llm-config for a command that builds a guard."""
    command = click.option(
        "--llm-config", type=click.Path(dir_okay=False, path_type=Path),
        help="An LLM config file (YAML or JSON) for the semantic tier.",
    )(command)  # fmt: skip
    command = click.option("--llm-model", help="Model name for the semantic tier.")(command)
    return click.option(
        "--llm-base-url",
        help="OpenAI-compatible API root for the semantic tier (default: PAGEWARDEN_LLM_* from the "
        "environment; with none, the deterministic tiers run alone).",
    )(command)


def _llm_config(base_url: str | None, model: str | None, config_file: Path | None):
    """The LLM config from the options, else the environment, else None; exit 1 when invalid."""
    from pagewarden.llm import LLMConfig, LLMConfigError

    try:
        if config_file is not None:
            config = LLMConfig.from_file(config_file)
            updates = {k: v for k, v in (("base_url", base_url), ("model", model)) if v}
            return LLMConfig(**{**config.model_dump(exclude_unset=True), **updates}) if updates else config
        if base_url or model:
            env = LLMConfig.from_env() if LLMConfig.env_configured() else None
            if model is None and env is None:
                raise LLMConfigError(["--llm-model is required with --llm-base-url"], "command line")
            settings = env.model_dump(exclude_unset=True) if env is not None else {}
            settings.update({k: v for k, v in (("base_url", base_url), ("model", model)) if v})
            settings.setdefault("base_url", "https://api.openai.com/v1")
            return LLMConfig(**settings)
        return LLMConfig.from_env() if LLMConfig.env_configured() else None
    except LLMConfigError as exc:
        for problem in exc.problems:
            _error(f"{exc.source}: {problem}")
        sys.exit(1)


# -- recorded steps ------------------------------------------------------------------------
_EXIT = {"allow": 0, "block": 10, "ask": 11, "revise": 12}
_BAD_INPUT = 2


def _read_steps(path: Path) -> tuple[list[dict], bool]:
    """The items in `path` and whether it is one step: a step object or a trace line (one
    JSON document), else a JSON-lines trace whose lines become trace records (a bare step
    object on a line is taken as a step with nothing recorded)."""
    text = path.read_text(encoding="utf-8")
    try:
        item = json.loads(text)
    except json.JSONDecodeError as whole:
        lines = [line for line in text.splitlines() if line.strip()]
        if len(lines) < 2:
            raise ValueError(f"not JSON: {whole}") from None
    else:
        if not isinstance(item, dict):
            raise ValueError("not a step: expected a JSON object")
        return [item], True
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"line {number}: not JSON: {exc}") from None
        if not isinstance(item, dict):
            raise ValueError(f"line {number}: not a step or trace line")
        if item.get("kind") == "refusal" and "step" not in item:
            continue  # a refusal the agent was not told of: not a step (see refusal_record)
        record = item if "step" in item and "action" not in item else {"step": item}
        records.append({**record, "_line": number})
    return records, False


def _bad_input(source: object, exc: Exception) -> None:
    if isinstance(exc, PolicyError):
        for problem in exc.problems:
            err_console.print(f"[red]error[/red] {escape(str(problem))}", highlight=False, soft_wrap=True)
    else:
        err_console.print(f"[red]error[/red] {escape(str(source))}: {escape(str(exc))}", highlight=False)
    sys.exit(_BAD_INPUT)


def _print_replay(report, title: str) -> None:
    """The diff table (changed, unverifiable and not re-run steps) and a summary line."""
    diff = [s for s in report.steps if s.status in ("changed", "unverifiable", "not_rerun")]
    if diff:
        table = Table(title=Text(title))
        for column in ("session", "#", "action", "recorded", "now", "policies", "reasons"):
            table.add_column(column, overflow="fold")
        for step in diff:
            mark = {"changed": " [yellow](changed)[/yellow]", "not_rerun": "(not re-run)"}.get(
                step.status, " (unverifiable)"
            )
            now = escape(step.now) + mark
            reasons = "\n".join(
                part for part in (
                    f"recorded: {step.recorded_reason[:160]}" if step.recorded_reason else "",
                    f"now: {step.now_reason[:160]}" if step.now_reason else "",
                    step.note,
                ) if part
            )  # fmt: skip
            policies = f"{', '.join(step.recorded_policies) or '-'} → {', '.join(step.now_policies) or '-'}"
            table.add_row(
                escape(step.session), str(step.index), escape(step.action[:80]), escape(step.recorded or "-"),
                now, escape(policies), escape(reasons),
            )  # fmt: skip
        console.print(table)
    for note in report.notes:
        console.print(f"note: {escape(note)}", highlight=False)
    llm = ""
    if report.llm:
        llm = f"; model {report.llm}: {report.llm_requests} request(s), {report.llm_cached} cached answer(s)"
    if report.misses:
        missed = ", ".join(report.misses[:10])
        console.print(f"requests not in the recording: {escape(missed)}", highlight=False)
    browser = f", {len(report.not_rerun)} not performed again" if report.browser else ""
    how = "performed and judged again in Chromium" if browser else "judged again"
    console.print(
        f"{len(report.steps)} step(s) in {len(report.sessions)} session(s) {how} in "
        f"{report.elapsed_ms:.0f} ms: {len(report.changed)} decision(s) changed, "
        f"{len(report.unverifiable)} unverifiable{browser}{escape(llm)}",
        highlight=False,
    )


@main.command("check")
@click.argument("step_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "-p", "--policies", "policy_files", multiple=True, type=click.Path(path_type=Path),
    help="Policy file; repeat to merge several (the same policy id in two files is an error).",
)  # fmt: skip
@click.option("--goal", help="The user's goal (overrides the steps').")
@click.option("--no-baseline", is_flag=True, help="Leave out the built-in baseline policies.")
@_llm_options
def check_step(
    step_file: Path,
    policy_files: tuple[Path, ...],
    goal: str | None,
    no_baseline: bool,
    llm_base_url: str | None,
    llm_model: str | None,
    llm_config: Path | None,
) -> None:
    """Judge recorded steps without a browser and print the verdicts.

    STEP_FILE is one step (a `step` object or a trace line): its verdict is printed as JSON,
    exit status 0 allow, 10 block, 11 ask, 12 revise. Or a whole JSON-lines trace: each
    session in it is judged again in order (the guard's memory follows what ran in the
    recording: the `ran` flag, approvals, monitor mode), and a table shows the steps whose
    decision differs from the recorded one; exit status 0 when none differs, 1 when one does.
    Bad input exits 2. For a recorded session directory, use `pagewarden replay`.
    """
    from dataclasses import replace

    from pagewarden.guard import Guard, Step
    from pagewarden.trace._replay import replay_records
    from pagewarden.trace._session import SessionFormatError

    try:
        items, single = _read_steps(step_file)
        step = None
        if single:
            item = items[0]
            step = Step.from_dict(item["step"] if "action" not in item and "step" in item else item)
        llm = _llm_config(llm_base_url, llm_model, llm_config)
        policy_set = PolicySet.combine(policy_files) if policy_files else None
        guard = Guard(policy_set, baseline=not no_baseline, llm=llm)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        _bad_input(step_file, exc)
    if single:
        if goal is not None:
            step = replace(step, goal=goal)
        verdict = guard.check(step)
        click.echo(json.dumps(verdict.to_dict(), indent=2, ensure_ascii=False))
        sys.exit(_EXIT[verdict.decision.value])
    try:
        report = replay_records(items, guard, goal=goal, source=str(step_file))
    except SessionFormatError as exc:
        _bad_input(step_file, exc)
    finally:
        guard.close()
    _print_replay(report, f"{step_file} — {len(report.steps)} steps judged again")
    sys.exit(report.exit_code)


@main.command("replay")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option(
    "-p", "--policies", "policy_file", type=click.Path(path_type=Path),
    help="Judge with this policy file instead of the recorded policies (the baseline as recorded).",
)  # fmt: skip
@click.option("--goal", help="The user's goal (overrides the recorded one).")
@_llm_options
@click.option(
    "--llm-cache", type=click.Path(file_okay=False, path_type=Path),
    help="Cache directory for model answers (default: RUN_DIR/replay-cache/llm): a second replay is free.",
)  # fmt: skip
@click.option(
    "--consult", type=click.Choice(["consequential", "always", "never"]),
    help="When the model is consulted (default: as recorded, else the cascade: consequential steps).",
)  # fmt: skip
@click.option(
    "--browser", is_flag=True,
    help="Perform the actions again in Chromium against the recorded network flows (no origin needed).",
)  # fmt: skip
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path), help="Diff as JSON.")
@click.option("--html", "html_out", type=click.Path(dir_okay=False, path_type=Path), help="Diff as HTML.")
def replay_command(
    run_dir: Path,
    policy_file: Path | None,
    goal: str | None,
    llm_base_url: str | None,
    llm_model: str | None,
    llm_config: Path | None,
    llm_cache: Path | None,
    consult: str | None,
    browser: bool,
    json_out: Path | None,
    html_out: Path | None,
) -> None:
    """Judge a recorded session (RUN_DIR, written by Guard(record=…)) again.

    Every recorded step is judged from its recorded observation through today's tiers — no
    browser, no network; a model only when one is given — with the recorded policies and
    configuration (or --policies). With --browser, the actions are performed again in
    Chromium against the recorded network flows (launch(record=DIR, proxy=True)), through
    today's guard; steps that cannot be performed again are listed with why. Prints the steps
    whose decision changed (old and new decision, policies, reasons). Exit status: 0 nothing
    changed, 1 a decision changed, 2 bad input.
    """
    from pagewarden.trace._replay import replay_session
    from pagewarden.trace._replay_html import render_replay_html
    from pagewarden.trace._session import load_session

    try:
        session = load_session(run_dir)
        policies = PolicySet.load(policy_file) if policy_file is not None else None
        llm = _llm_config(llm_base_url, llm_model, llm_config)
        if llm is not None and llm.cache_dir is None:
            from pagewarden.llm import LLMConfig

            cache = llm_cache or run_dir / "replay-cache" / "llm"
            llm = LLMConfig(**{**llm.model_dump(exclude_unset=True), "cache_dir": cache})
        options = {
            "policies": policies, "llm": llm, "goal": goal, "consult": consult,
            "policies_label": str(policy_file) if policy_file else None,
        }  # fmt: skip
        if browser:
            import asyncio

            from pagewarden.trace._browser_replay import replay_in_browser

            report = asyncio.run(replay_in_browser(session, **options))
        else:
            report = replay_session(session, **options)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        _bad_input(run_dir, exc)
    _print_replay(report, f"{run_dir} — decisions that differ")
    try:
        if json_out is not None:
            json_out.parent.mkdir(parents=True, exist_ok=True)
            json_out.write_text(report.to_json() + "\n", encoding="utf-8")
        if html_out is not None:
            html_out.parent.mkdir(parents=True, exist_ok=True)
            html_out.write_text(render_replay_html(report), encoding="utf-8")
    except OSError as exc:
        _bad_input(json_out or html_out, exc)
    sys.exit(report.exit_code)


# -- demo (the main job) ---------------------------------------------------------------------
@main.command("demo")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("pagewarden-out") / "demo",
    show_default=True,
    help="Where report.html, results.json, traces and screenshots go.",
)
@click.option("--headed", is_flag=True, help="Show the browser while the agents work.")
@click.option(
    "--unguarded",
    is_flag=True,
    help="Run the naive agent on raw pages to show that the attacks work (report in OUT/unguarded).",
)
@click.option("--scenario", "scenarios", multiple=True, help="Run only this scenario (repeatable).")
@click.option(
    "--proxy/--no-proxy",
    default=True,
    show_default=True,
    help="Guarded runs go through the network layer too (each run its own proxy, as "
    "launch(proxy=True) does); --no-proxy: the browser layer alone.",
)
@click.option(
    "--ask/--no-ask",
    default=None,
    help="Answer ASK decisions on this terminal (default: when stdin is a terminal; otherwise an ASK stops "
    "the action like a denied approval).",
)
@_llm_options
def demo(
    out_dir: Path,
    headed: bool,
    unguarded: bool,
    scenarios: tuple[str, ...],
    proxy: bool,
    ask: bool | None,
    llm_base_url: str | None,
    llm_model: str | None,
    llm_config: Path | None,
) -> None:
    """Run scripted agents on a local tracker and forum with planted prompt injections.

    Guarded (the default), every action goes through the embedded default guard (no policy
    file, no LLM) and every request through its network layer (--no-proxy: not): exit 0
    when every planted attack is stopped and every benign action runs with its effect, 1
    otherwise. With --unguarded, exit 0 when every attack works on a raw page.
    """
    from pagewarden.demo.runner import run_demo
    from pagewarden.guard import terminal_approver

    if ask is None:
        ask = sys.stdin.isatty()
    llm = _llm_config(llm_base_url, llm_model, llm_config)
    try:
        result = run_demo(
            out_dir,
            guarded=not unguarded,
            headed=headed,
            scenario_ids=scenarios,
            console=console,
            approver=terminal_approver() if ask else None,
            llm=llm,
            proxy=proxy,
        )
    except KeyError as exc:
        raise click.UsageError(str(exc.args[0])) from None
    sys.exit(result.exit_code)


# -- supervision console ----------------------------------------------------------------------
@main.command("console")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (loopback).")
@click.option("--port", default=8765, show_default=True, type=int, help="Port to listen on (0: any free).")
@click.option(
    "--approval-timeout", default=120.0, show_default=True, type=float, help="Seconds to answer an ASK."
)
def console_command(host: str, port: int, approval_timeout: float) -> None:
    """Serve the supervision console for guarded sessions in other processes.

    Prints the console's URL (with its token) and a read-only link. A guard attaches with
    Guard(console=URL). PAGEWARDEN_CONSOLE_TOKEN sets the token instead of a random one.
    """
    from pagewarden.console import Console

    token = os.environ.get("PAGEWARDEN_CONSOLE_TOKEN")
    console = Console(host=host, port=port, approval_timeout=approval_timeout, token=token)

    def announce(running: Console) -> None:
        click.echo(f"pagewarden console: {running.url}")
        click.echo(f"read-only link:     {running.read_only_url}")
        click.echo("Attach a guard with Guard(console=URL). Ctrl+C stops.")

    try:
        console.serve_forever(announce)
    except OSError as exc:
        raise click.ClickException(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


# -- ST-WebAgentBench: policy import and conformance evaluation ------------------------------
# `pagewarden policies import stwebagentbench PATH [-o OUTDIR]`
# `pagewarden eval stwebagentbench --data PATH [--data PATH] [--json OUT]`
@policies.group("import")
def policies_import() -> None:
    """Import policies from other formats."""


@policies_import.command("stwebagentbench")
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write one policy file per task (T<task_id>.yaml) into this directory.",
)
def policies_import_stwebagentbench(path: Path, out_dir: Path | None) -> None:
    """Read an ST-WebAgentBench task file (2024 or current release): one policy set per task."""
    from collections import Counter

    from pagewarden.policies.importers import DatasetError, import_tasks
    from pagewarden.policies.importers.stwebagentbench import OUT_OF_REACH

    try:
        imported = import_tasks(path)
    except DatasetError as exc:
        _error(exc)
        sys.exit(1)
    kinds: Counter[str] = Counter()
    evaluators: Counter[str] = Counter()
    without = 0
    for task, policy_set in imported:
        for benchmark_policy, policy in zip(task.policies, policy_set, strict=True):
            evaluators[benchmark_policy.eval_type] += 1
            kinds.update(rule.kind for rule in policy.rules)
            without += not policy.rules
    if out_dir is not None:
        try:
            out_dir.mkdir(parents=True, exist_ok=True)
            for task, policy_set in imported:
                policy_set.dump(out_dir / f"T{task.task_id}.yaml")
        except OSError as exc:
            _error(f"cannot write to {out_dir}: {exc}")
            sys.exit(1)
    total = sum(evaluators.values())
    table = Table(title=Text(f"{path.name}: {len(imported)} tasks, {total} policies"))
    table.add_column("benchmark evaluator")
    table.add_column("policies", justify="right")
    table.add_column("checked before actions")
    for name, count in evaluators.most_common():
        reach = {"is_fake_policy": "no: a distractor, never violated"}.get(name, "no: judged from page state")
        table.add_row(*_cells(name, str(count), reach if name in OUT_OF_REACH else "yes"))
    console.print(table)
    console.print(
        "rules: "
        + ", ".join(f"{kind} {n}" for kind, n in kinds.most_common())
        + f"; {without} without rules",
        highlight=False,
        markup=False,
    )
    if out_dir is not None:
        wrote = f"[green]wrote[/green] {len(imported)} files to {escape(str(out_dir))}"
        console.print(wrote, highlight=False)


@main.group("eval")
def eval_group() -> None:
    """Evaluate the guard against benchmarks."""


@eval_group.command("stwebagentbench")
@click.option(
    "--data",
    "paths",
    multiple=True,
    required=True,
    type=click.Path(path_type=Path),
    help="An ST-WebAgentBench task file (test.raw.json); repeat for several releases.",
)
@click.option(
    "--json", "json_out", type=click.Path(dir_okay=False, path_type=Path), help="Write the report as JSON."
)
def eval_stwebagentbench(paths: tuple[Path, ...], json_out: Path | None) -> None:
    """Conformance of the rules tier with the benchmark's own evaluators.

    For every policy whose outcome the action trace decides, violating and compliant steps
    are generated, labelled by an independent re-implementation of the benchmark's
    evaluators and judged by a fresh guard. Prints detection and false-block rates per
    category. Exit 1 when a miss has no documented explanation.
    """
    from pagewarden.eval.stwebagentbench import evaluate_file, render, write_json
    from pagewarden.policies.importers import DatasetError

    reports = []
    for path in paths:
        try:
            with console.status(f"evaluating {path.name}") as status:

                def progress(done: int, total: int, status=status, name=path.name) -> None:
                    status.update(f"evaluating {name}: task {done}/{total}")

                reports.append(evaluate_file(path, progress=progress))
        except DatasetError as exc:
            _error(exc)
            sys.exit(1)
        render(reports[-1], console)
    if json_out is not None:
        try:
            write_json(reports, json_out)
        except OSError as exc:
            _error(f"cannot write {json_out}: {exc}")
            sys.exit(1)
        console.print(f"[green]wrote[/green] {escape(str(json_out))}", highlight=False)
    if any(report.unexplained for report in reports):
        sys.exit(1)


# The policy agent's commands (`policies extract`, `policies store …`) live in their own module.
import pagewarden._cli_ca  # noqa: E402  (`pagewarden ca`)
import pagewarden._cli_policy_agent  # noqa: E402
import pagewarden._cli_proxy  # noqa: E402  (`pagewarden proxy`)

# `report` and `eval wasp` (issue 10) live in their own module.
import pagewarden._cli_sessions  # noqa: E402, F401

if __name__ == "__main__":  # pragma: no cover
    main()
