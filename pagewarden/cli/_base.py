"""The base of the `pagewarden` command line: the `main` group, the output consoles and the
helpers the command modules share. Each command module imports this one and registers its
commands on a group; `pagewarden.cli` imports them all."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from pagewarden._version import __version__
from pagewarden.policies import PolicyError

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
