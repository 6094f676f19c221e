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
    file; no LLM unless --llm-* or PAGEWARDEN_LLM_* name one, and then the table and the
    report name the model and count its calls) and every request through its network layer
    (--no-proxy: not): exit 0 when every planted attack is stopped and every benign action
    runs with its effect, 1 otherwise. With --unguarded, exit 0 when every attack works on a
    raw page.
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
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on. Beyond loopback only with --tls-cert/--tls-key or --behind-proxy.",
)
@click.option("--port", default=8765, show_default=True, type=int, help="Port to listen on (0: any free).")
@click.option(
    "--approval-timeout", default=120.0, show_default=True, type=float, help="Seconds to answer an ASK."
)
@click.option(
    "--tls-cert",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="PEM certificate (chain) to serve HTTPS with.",
)
@click.option(
    "--tls-key", type=click.Path(exists=True, dir_okay=False, path_type=Path), help="PEM key of --tls-cert."
)
@click.option(
    "--behind-proxy",
    is_flag=True,
    help="A reverse proxy in front terminates TLS: listen beyond loopback without TLS of its own "
    "(needs --public-url).",
)
@click.option(
    "--public-url",
    metavar="URL",
    help="The address people and guards use (https://console.example.com); other Host names "
    "are refused. Needed behind a proxy and on 0.0.0.0.",
)
@click.option(
    "--people",
    "people_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A YAML file of people's own full tokens (name: token, 16+ characters each): an "
    "approval answered with one is recorded as answered by that name, not 'console'.",
)
@click.option(
    "--user-header",
    metavar="HEADER",
    help="Behind a reverse proxy that authenticates people (with --behind-proxy): the header "
    "naming the user (X-Forwarded-User, Remote-User …), recorded as who answered an approval.",
)
def console_command(
    host: str,
    port: int,
    approval_timeout: float,
    tls_cert: Path | None,
    tls_key: Path | None,
    behind_proxy: bool,
    public_url: str | None,
    people_file: Path | None,
    user_header: str | None,
) -> None:
    """Serve the supervision console for guarded sessions in other processes or machines.

    Prints the console's URL (with its token), a read-only link and a guard link (attaching
    guards only). A guard attaches with Guard(console=GUARD LINK). PAGEWARDEN_CONSOLE_TOKEN,
    PAGEWARDEN_CONSOLE_READ_ONLY_TOKEN and PAGEWARDEN_CONSOLE_GUARD_TOKEN set the tokens
    instead of random ones; a token set so is never printed, on any address (its link shows
    $PAGEWARDEN_CONSOLE_TOKEN in its place, for a shell to fill in): whoever set it has it,
    and a server's output often ends up in a log. A random token is printed, as it cannot be
    learnt otherwise.
    """
    from pagewarden.console import Console

    variables = {
        "full": "PAGEWARDEN_CONSOLE_TOKEN",
        "read_only": "PAGEWARDEN_CONSOLE_READ_ONLY_TOKEN",
        "guard": "PAGEWARDEN_CONSOLE_GUARD_TOKEN",
    }
    tokens = {name: os.environ.get(variable) or None for name, variable in variables.items()}
    people = _read_people(people_file) if people_file is not None else None
    try:
        console = Console(
            host=host,
            port=port,
            approval_timeout=approval_timeout,
            token=tokens["full"],
            read_only_token=tokens["read_only"],
            guard_token=tokens["guard"],
            tls_cert=tls_cert,
            tls_key=tls_key,
            behind_proxy=behind_proxy,
            public_url=public_url,
            people=people,
            user_header=user_header,
        )
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    # a token the operator set is never written out, on loopback too: they have it, and the
    # output of a server is often a log (journald, docker logs, CI); a random one is printed

    def link(url: str, name: str) -> str:
        return url.split("?token=")[0] + f"?token=${variables[name]}" if tokens[name] else url

    def announce(running: Console) -> None:
        click.echo(f"pagewarden console: {link(running.url, 'full')}")
        click.echo(f"read-only link:     {link(running.read_only_url, 'read_only')}")
        click.echo(f"guard link:         {link(running.guard_url, 'guard')}")
        click.echo("Attach a guard with Guard(console=GUARD LINK). Ctrl+C stops.")

    try:
        console.serve_forever(announce)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        raise click.ClickException(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


def _read_people(path: Path) -> dict[str, str]:
    """``--people FILE``: a YAML mapping of names to tokens (never echoed: a message names the
    file and the entry, not the token)."""
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise click.UsageError(f"--people {path}: cannot read it ({type(exc).__name__})") from None
    if not isinstance(data, dict) or not data:
        raise click.UsageError(f"--people {path}: expected a mapping of names to tokens (alice: TOKEN)")
    for name, token in data.items():
        if not isinstance(name, str) or not isinstance(token, str):
            raise click.UsageError(f"--people {path}: every entry is a name and a token, as text")
    return data
