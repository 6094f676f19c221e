"""`pagewarden proxy`: the network layer alone, for any browser or agent.

Registered on the `main` group (`pagewarden.cli._base`); `pagewarden.cli` imports this module.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from pagewarden.cli._base import _error, console, err_console, main
from pagewarden.policies import PolicyError


def _host_map(items: tuple[str, ...]) -> dict[str, int]:
    mapping: dict[str, int] = {}
    for item in items:
        pattern, sep, port = item.partition("=")
        if not sep or not port.isdigit():
            raise click.BadParameter(f"{item!r}: expected HOST_PATTERN=PORT (e.g. '*.test=8080')")
        mapping[pattern] = int(port)
    return mapping


@main.command("proxy")
@click.option("-p", "--policies", "policy_file", type=click.Path(path_type=Path), help="Policy file.")
@click.option(
    "--record", type=click.Path(file_okay=False, path_type=Path), help="Save every flow into DIR/flows.mitm."
)
@click.option("--replay", type=click.Path(path_type=Path), help="Serve a recording (DIR or flows file).")
@click.option("--port", type=int, default=0, show_default="a free port", help="Listen port on 127.0.0.1.")
@click.option("--strict", is_flag=True, help="Only allow-listed hosts (domain_allow, --allow-host).")
@click.option("--allow-host", multiple=True, help="Host pattern allowed besides the policies' own.")
@click.option("--map", "maps", multiple=True, help="Resolve HOST_PATTERN to 127.0.0.1:PORT ('*.test=8080').")
@click.option("--no-baseline", is_flag=True, help="Without the built-in policies (credentials filter).")
def proxy_command(
    policy_file: Path | None, record: Path | None, replay: Path | None, port: int, strict: bool,
    allow_host: tuple[str, ...], maps: tuple[str, ...], no_baseline: bool,
) -> None:  # fmt: skip
    """Run the network layer on its own: egress rules and the exfiltration filter of the
    policies for every request, optionally recording or replaying. Point any browser at it;
    Ctrl-C stops it."""
    from pagewarden.guard import Guard
    from pagewarden.proxy import (
        CA_CERT,
        ProxyError,
        ca_dir,
        chromium_proxy_args,
        standalone_proxy,
        verify_enforcing,
    )

    if record is not None and replay is not None:
        raise click.UsageError("--record and --replay exclude each other")
    try:
        guard = Guard(policies=policy_file, baseline=not no_baseline)
    except (PolicyError, OSError) as exc:
        _error(exc)
        sys.exit(2)
    options: dict[str, object] = {"pagewarden_strict": strict, "pagewarden_allow_hosts": list(allow_host)}
    if record is not None:
        options["pagewarden_record"] = str(record / "flows.mitm")
    if replay is not None:
        from pagewarden.proxy import flows_file

        if not flows_file(replay).is_file():
            _error(f"no recorded flows at {flows_file(replay)}")
            sys.exit(1)
        options["pagewarden_replay"] = str(replay)

    def refused(refusal) -> None:
        where = f"[{refusal.policy_id}/{refusal.rule}]"
        line = f"refused {refusal.action} {refusal.method} {guard.secrets.redact(refusal.url[:120])} {where}"
        err_console.print(line, highlight=False, markup=False)

    server = standalone_proxy(guard, port=port, host_map=_host_map(maps), options=options, on_refusal=refused)
    try:
        server.start()
        verify_enforcing(server)
    except (ProxyError, OSError) as exc:  # OSError: the CA's directory (CAError)
        server.stop()
        _error(exc)
        sys.exit(1)
    flags = chromium_proxy_args(server)  # the same flags launch(proxy=True) uses
    quoted = " ".join(f"'{flag}'" if any(c in flag for c in "<>* ,") else flag for flag in flags)
    rest = ", ".join(repr(flag) for flag in flags if not flag.startswith("--proxy-server="))
    console.print(
        f"pagewarden proxy listening on {server.url}\n"
        f"  Chromium: chromium {quoted}\n"
        f"  Playwright: chromium.launch(proxy={{'server': '{server.url}'}}, args=[{rest}])\n"
        f"  other clients: HTTP_PROXY/HTTPS_PROXY={server.url}; trust the CA {ca_dir() / CA_CERT} "
        "(`pagewarden ca` shows its pin, `--export FILE` copies it)\n"
        "  (the flags keep loopback, WebRTC's UDP and Chromium's own DNS look-ups in the proxy)\n"
        "Ctrl-C stops it.",
        highlight=False, markup=False, soft_wrap=True,
    )  # fmt: skip
    sys.stdout.flush()
    try:
        while server.running:
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
