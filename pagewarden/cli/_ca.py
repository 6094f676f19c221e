"""`pagewarden ca`: where the network layer's CA is, how to recognise it, export it or make a
new one.

Registered on the `main` group (`pagewarden.cli._base`); `pagewarden.cli` imports this module.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from pagewarden.cli._base import _error, main


@main.command("ca")
@click.option(
    "--export", "export_to", type=click.Path(dir_okay=False, path_type=Path),
    help="Write the CA certificate (PEM, never the key) to FILE, for another browser or tool to trust.",
)
@click.option("--regenerate", is_flag=True, help="Replace the CA with a new one (restart running proxies).")
@click.option("--json", "as_json", is_flag=True, help="Print the facts as JSON.")
def ca_command(export_to: Path | None, regenerate: bool, as_json: bool) -> None:
    """Show the network layer's certificate authority: its directory, certificate, SPKI pin
    (what Chromium's --ignore-certificate-errors-spki-list takes) and SHA-256 fingerprint.
    The CA is created on first use; PAGEWARDEN_CONFIG_DIR moves it. Exit 1 when it cannot
    be created, read or written."""
    from pagewarden._userdir import UserDirError
    from pagewarden.proxy import CAError, ca_info, export_ca, regenerate_ca

    try:
        info = regenerate_ca() if regenerate else ca_info()
        exported = export_ca(export_to, info.directory) if export_to is not None else None
    except (CAError, UserDirError) as exc:
        _error(exc)
        sys.exit(1)
    facts = {
        "directory": str(info.directory),
        "certificate": str(info.certificate),
        "spki_pin": info.spki_pin,
        "sha256_fingerprint": info.sha256_fingerprint,
        "subject": info.subject,
        "not_before": info.not_before.isoformat(),
        "not_after": info.not_after.isoformat(),
        "regenerated": regenerate,
        "exported_to": str(exported) if exported is not None else None,
    }
    if as_json:
        click.echo(json.dumps(facts, indent=2))
        return
    lines = [
        f"directory    {info.directory}",
        f"certificate  {info.certificate}",
        f"SPKI pin     {info.spki_pin}",
        f"SHA-256      {info.sha256_fingerprint}",
        f"subject      {info.subject}",
        f"valid        {info.not_before:%Y-%m-%d} to {info.not_after:%Y-%m-%d}",
    ]
    if regenerate:
        lines.append("regenerated: browsers and tools pinned to the old CA need the new pin or certificate")
    if exported is not None:
        lines.append(f"exported the certificate to {exported}")
    click.echo("\n".join(lines))  # plain: Rich would read ":CD:" in a fingerprint as an emoji
