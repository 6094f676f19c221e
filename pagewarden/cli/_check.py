"""`pagewarden check` (judge recorded steps) and `pagewarden replay` (a recorded session again)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from pagewarden.cli._base import (
    _EXIT,
    _bad_input,
    _llm_config,
    _llm_options,
    _print_replay,
    _read_steps,
    main,
)
from pagewarden.policies import PolicySet


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
    from pagewarden.replay import replay_records
    from pagewarden.trace import SessionFormatError

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
    from pagewarden.replay import load_session, render_replay_html, replay_session

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

            from pagewarden.replay import replay_in_browser

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
