"""`pagewarden demo` and `pagewarden console`."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click
from rich.console import Console

from pagewarden.cli._base import (
    _llm_config,
    _llm_options,
    console,
    main,
)


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
