"""`pagewarden policies store postgres`: a throw-away PostgreSQL server for the policy store."""

from __future__ import annotations

import signal
import sys
import threading
from pathlib import Path

import click

from pagewarden.cli._base import _error
from pagewarden.cli._policy_agent import store_group

__all__ = ["DATABASE", "environment_lines", "store_postgres"]

DATABASE = "pagewarden"


def environment_lines(store_url: str, password: str) -> list[str]:
    """The shell lines that point pagewarden (and libpq's tools) at the store."""
    return [f"export PAGEWARDEN_STORE='{store_url}'", f"export PGPASSWORD='{password}'"]


@store_group.command("postgres", cls=click.Command)
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="TCP port on 127.0.0.1 (0: a free one).")  # fmt: skip
@click.option(
    "--env-file", type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the environment lines to FILE (mode 600), for `. FILE` in another shell.",
)  # fmt: skip
def store_postgres(port: int, env_file: Path | None) -> None:
    """Run a throw-away PostgreSQL server for the store until Ctrl+C (or SIGTERM).

    It uses the PostgreSQL server already installed (Debian's `postgresql` package: initdb under
    /usr/lib/postgresql/*/bin, or initdb on PATH), runs as the `postgres` user when started as
    root (initdb refuses root), keeps its data in a new temporary directory, listens on
    127.0.0.1 only, and has one database, `pagewarden`, for a user `pagewarden` with a random
    password. It prints PAGEWARDEN_STORE (the URL without the password) and PGPASSWORD as shell
    lines; stopping it deletes the data. For trying the PostgreSQL store and for tests: a
    fleet's store is a server you run (deploy/compose.yaml has one).
    """
    from pagewarden.testing import PostgresServer

    try:
        server = PostgresServer(port=port)
    except RuntimeError as exc:
        _error(exc)
        sys.exit(1)
    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        try:
            server.start()
            server.create_database(DATABASE)
        except Exception as exc:  # noqa: BLE001 - any failure to start is reported, not a traceback
            _error(f"PostgreSQL did not start: {exc}")
            sys.exit(1)
        lines = environment_lines(server.url(DATABASE, password=False), server.password)
        if env_file is not None:
            env_file.parent.mkdir(parents=True, exist_ok=True)
            env_file.touch(mode=0o600)
            env_file.chmod(0o600)
            env_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
        click.echo(
            f"PostgreSQL {server.version} on 127.0.0.1:{server.port}, database {DATABASE!r} "
            f"(throw-away: data in {server.dir}, deleted when it stops)"
        )
        for line in lines:
            click.echo(line)
        if env_file is not None:
            click.echo(f"(also in {env_file}: . {env_file})")
        click.echo("Ctrl+C stops it.")
        sys.stdout.flush()
        # Ctrl+C by a handler of our own: also where a shell started it with SIGINT ignored
        # (a background job of a script), which would leave the server running
        interrupt = signal.signal(signal.SIGINT, lambda *_: stop.set())
        try:
            while not stop.wait(0.5):
                if not server.running:
                    _error(f"postgres exited:\n{server.log_tail()}")
                    sys.exit(1)
        finally:
            signal.signal(signal.SIGINT, interrupt)
    finally:
        signal.signal(signal.SIGTERM, previous)
        server.stop()
        if env_file is not None:
            env_file.unlink(missing_ok=True)
    click.echo("stopped; its data is deleted")

