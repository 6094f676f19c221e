"""The `pagewarden` command line."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from pagewarden._version import __version__
from pagewarden.policies import PolicyError, PolicySet, baseline_policies

# Piped output (CI logs, files) gets a wide fixed width instead of rich's 80 columns.
console = Console(soft_wrap=True, width=None if sys.stdout.isatty() else 160)
err_console = Console(stderr=True, soft_wrap=True, width=None if sys.stderr.isatty() else 160)


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
def policies_lint(files: tuple[Path, ...]) -> None:
    """Validate policy FILES (YAML or JSON); exit 1 if any has a problem."""
    failed = 0
    for path in files:
        try:
            policy_set = PolicySet.load(path)
        except PolicyError as exc:
            failed += 1
            for problem in exc.problems:
                err_console.print(f"[red]error[/red] {problem}", highlight=False, soft_wrap=True)
            continue
        rules = sum(len(p.rules) for p in policy_set)
        console.print(f"[green]ok[/green] {path}: {len(policy_set)} policies, {rules} rules", highlight=False)
    if failed:
        err_console.print(f"{failed} of {len(files)} file(s) failed", highlight=False)
        sys.exit(1)


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
            err_console.print(f"[red]error[/red] {problem}", highlight=False, soft_wrap=True)
        sys.exit(1)
    if as_json:
        click.echo(json.dumps(policy_set.to_dict(), indent=2, ensure_ascii=False))
        return
    table = Table(title=f"{policy_set.source} — {len(policy_set)} policies", show_lines=False)
    for column in ("id", "category", "risk", "description", "rules"):
        table.add_column(column, overflow="fold")
    for policy in policy_set:
        rules = ", ".join(rule.kind for rule in policy.rules) or "-"
        table.add_row(policy.id, policy.category.value, policy.risk_level.value, policy.description, rules)
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
            err_console.print(f"[red]error[/red] {exc.source}: {problem}", highlight=False, soft_wrap=True)
        sys.exit(1)


# -- recorded steps ------------------------------------------------------------------------
_EXIT = {"allow": 0, "block": 10, "ask": 11, "revise": 12}
_SEVERITY = ("allow", "revise", "ask", "block")


def _read_steps(path: Path) -> list[tuple[dict, str | None]]:
    """The steps in `path`: one step object, one trace line, or a JSON-lines trace.

    Each comes with the decision recorded next to it (None when the file has none).
    """
    text = path.read_text(encoding="utf-8")
    try:
        items = [json.loads(text)]
    except json.JSONDecodeError as whole:
        lines = [line for line in text.splitlines() if line.strip()]
        if len(lines) < 2:
            raise ValueError(f"not JSON: {whole}") from None
        items = []
        for number, line in enumerate(lines, 1):
            try:
                items.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ValueError(f"line {number}: not JSON: {exc}") from None
    steps = []
    for item in items:
        if isinstance(item, dict) and "step" in item and "action" not in item:
            recorded = (
                item.get("verdict", {}).get("decision") if isinstance(item.get("verdict"), dict) else None
            )
            steps.append((item["step"], recorded))
        else:
            steps.append((item, None))
    return steps


@main.command("check")
@click.argument("step_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-p", "--policies", "policy_file", type=click.Path(path_type=Path), help="Policy file.")
@click.option("--goal", help="The user's goal (overrides the steps').")
@click.option("--no-baseline", is_flag=True, help="Leave out the built-in baseline policies.")
@_llm_options
def check_step(
    step_file: Path,
    policy_file: Path | None,
    goal: str | None,
    no_baseline: bool,
    llm_base_url: str | None,
    llm_model: str | None,
    llm_config: Path | None,
) -> None:
    """Judge recorded steps without a browser and print the verdicts.

    STEP_FILE is one step (a `step` object or a trace line: the verdict is printed as JSON),
    or a whole JSON-lines trace: its steps are judged in order, as one session (the guard's
    memory follows what ran in the recording), and a table compares each recorded decision
    with today's — for trying new policies on recorded sessions.

    Exit status: the most severe decision — 0 allow, 10 block, 11 ask, 12 revise; 1 on bad
    input, 2 on bad usage.
    """
    from dataclasses import replace

    from pagewarden.guard import Guard, Step

    try:
        raw_steps = _read_steps(step_file)
        steps = [(Step.from_dict(data), recorded) for data, recorded in raw_steps]
        llm = _llm_config(llm_base_url, llm_model, llm_config)
        guard = Guard(PolicySet.load(policy_file) if policy_file else None, baseline=not no_baseline, llm=llm)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        if isinstance(exc, PolicyError):
            for problem in exc.problems:
                err_console.print(f"[red]error[/red] {problem}", highlight=False, soft_wrap=True)
        else:
            err_console.print(f"[red]error[/red] {step_file}: {exc}", highlight=False)
        sys.exit(1)
    if goal is not None:
        steps = [(replace(step, goal=goal), recorded) for step, recorded in steps]
    if len(steps) == 1:
        verdict = guard.check(steps[0][0])
        click.echo(json.dumps(verdict.to_dict(), indent=2, ensure_ascii=False))
        sys.exit(_EXIT[verdict.decision.value])
    table = Table(title=f"{step_file} — {len(steps)} steps judged again")
    for column in ("#", "action", "recorded", "now", "policies", "reason"):
        table.add_column(column, overflow="fold")
    worst = "allow"
    changed = 0
    for index, (step, recorded) in enumerate(steps, 1):
        # Memory follows what happened in the recorded session: a step counts as run when
        # its recorded decision was allow (or, with no record, when today's verdict allows it).
        step = replace(step, previous=guard.session.previous, goal=step.goal or guard.goal)
        verdict = guard.assess(step)
        guard.commit(step, verdict, ran=recorded == "allow" if recorded is not None else verdict.allowed)
        now = verdict.decision.value
        worst = max(worst, now, key=_SEVERITY.index)
        changed += recorded is not None and recorded != now
        mark = "" if recorded in (None, now) else " [yellow](changed)[/yellow]"
        reason = "" if now == "allow" else verdict.explanation[:120]
        table.add_row(
            str(index), step.action.describe()[:70], recorded or "-", now + mark,
            ", ".join(verdict.violated_policy_ids) or "-", reason,
        )  # fmt: skip
    console.print(table)
    console.print(f"{changed} decision(s) differ from the recorded ones", highlight=False)
    sys.exit(_EXIT[worst])


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
    ask: bool | None,
    llm_base_url: str | None,
    llm_model: str | None,
    llm_config: Path | None,
) -> None:
    """Run scripted agents on a local tracker and forum with planted prompt injections.

    Guarded (the default), every action goes through the embedded default guard (no policy
    file, no LLM, no network): exit 0 when every planted attack is stopped and every benign
    action runs with its effect, 1 otherwise. With --unguarded, exit 0 when every attack
    works on a raw page.
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
        err_console.print(f"[red]error[/red] {exc}", highlight=False, soft_wrap=True)
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
            err_console.print(f"[red]error[/red] cannot write to {out_dir}: {exc}", highlight=False)
            sys.exit(1)
    total = sum(evaluators.values())
    table = Table(title=f"{path.name}: {len(imported)} tasks, {total} policies")
    table.add_column("benchmark evaluator")
    table.add_column("policies", justify="right")
    table.add_column("checked before actions")
    for name, count in evaluators.most_common():
        reach = {"is_fake_policy": "no: a distractor, never violated"}.get(name, "no: judged from page state")
        table.add_row(name, str(count), reach if name in OUT_OF_REACH else "yes")
    console.print(table)
    console.print(
        "rules: "
        + ", ".join(f"{kind} {n}" for kind, n in kinds.most_common())
        + f"; {without} without rules",
        highlight=False,
    )
    if out_dir is not None:
        console.print(f"[green]wrote[/green] {len(imported)} files to {out_dir}", highlight=False)


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
            err_console.print(f"[red]error[/red] {exc}", highlight=False, soft_wrap=True)
            sys.exit(1)
        render(reports[-1], console)
    if json_out is not None:
        try:
            write_json(reports, json_out)
        except OSError as exc:
            err_console.print(f"[red]error[/red] cannot write {json_out}: {exc}", highlight=False)
            sys.exit(1)
        console.print(f"[green]wrote[/green] {json_out}", highlight=False)
    if any(report.unexplained for report in reports):
        sys.exit(1)


# The policy agent's commands (`policies extract`, `policies store …`) live in their own module.
import pagewarden._cli_policy_agent  # noqa: E402, F401

if __name__ == "__main__":  # pragma: no cover
    main()
