"""A throw-away PostgreSQL server for the policy store: to try the PostgreSQL store, for tests,
and for a fleet on one host (``deploy/local-fleet``). ``pagewarden policies store postgres``
runs one from the command line.

It uses the PostgreSQL server programs already installed (``initdb`` on PATH, else Debian's
newest under ``/usr/lib/postgresql/*/bin``; Debian's ``postgresql`` package, which
``scripts/setup`` installs), a data directory in a new temporary directory that `stop` removes,
a unix socket there, a TCP port on 127.0.0.1 only, and password authentication for a user
``pagewarden`` with a random password.

``initdb`` and ``postgres`` refuse to run as root, so as root the server runs as the
``postgres`` system user (which Debian's package creates), or ``nobody``.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import re
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import IO

__all__ = ["PostgresServer", "find_postgres_bindir"]


def find_postgres_bindir() -> Path | None:
    """The directory of ``initdb`` and ``postgres``: on PATH, else Debian's newest."""
    on_path = shutil.which("initdb")
    if on_path:
        return Path(on_path).parent
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    return Path(found[-1]).parent if found else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class PostgresServer:
    """A PostgreSQL server of its own, on 127.0.0.1, removed with its data by `stop`.

    ``with PostgresServer() as server: url = server.create_database("x")``.

    Args:
        durable: False (tests, trying things out) turns fsync and synchronous commits off;
            True runs the server's defaults (benchmarks).
        max_connections: the server's ``max_connections``.
        port: the TCP port on 127.0.0.1 (0: a free one).

    Raises (from `start`):
        RuntimeError: PostgreSQL's programs are not installed, or the server did not start
            (with the end of its log).
    """

    user = "pagewarden"

    def __init__(self, *, durable: bool = False, max_connections: int = 200, port: int = 0) -> None:
        bindir = find_postgres_bindir()
        if bindir is None:
            raise RuntimeError(
                "PostgreSQL's server programs are not installed (no initdb on PATH or under "
                "/usr/lib/postgresql/*/bin): on Debian or Ubuntu, apt-get install postgresql "
                "(scripts/setup does)"
            )
        self.bindir = bindir
        self.durable = durable
        self.max_connections = max_connections
        self.password = secrets.token_urlsafe(18)
        self.port = port
        self.dir: Path | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self._run_as: str | None = None
        if os.geteuid() == 0:
            for name in ("postgres", "nobody"):
                with contextlib.suppress(KeyError):
                    pwd.getpwnam(name)
                    self._run_as = name
                    break
            if self._run_as is None:
                raise RuntimeError("initdb refuses to run as root, and there is no postgres or nobody user")

    @property
    def version(self) -> str:
        """The server's version, from ``initdb --version`` ("15.18")."""
        done = subprocess.run(
            [str(self.bindir / "initdb"), "--version"], capture_output=True, text=True, timeout=30
        )
        found = re.search(r"\(PostgreSQL\)\s+(\S+)", done.stdout)
        return found.group(1) if found else done.stdout.strip()

    def _popen(self, args: list[str], **kwargs) -> subprocess.Popen[bytes]:
        if self._run_as:
            entry = pwd.getpwnam(self._run_as)
            kwargs.update(user=entry.pw_uid, group=entry.pw_gid, extra_groups=[])
        assert self.dir is not None
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C", "HOME": str(self.dir)}
        return subprocess.Popen(args, cwd=self.dir, env=env, **kwargs)

    def _make_dir(self) -> Path:
        base = Path(tempfile.gettempdir())
        if self._run_as and not all(os.stat(p).st_mode & 0o001 for p in (base, *base.parents)):
            base = Path("/tmp")  # the server's user must be able to reach its directory
        directory = Path(tempfile.mkdtemp(prefix="pagewarden-pg-", dir=base))
        if self._run_as:
            entry = pwd.getpwnam(self._run_as)
            os.chown(directory, entry.pw_uid, entry.pw_gid)
        return directory

    def start(self, *, timeout: float = 120.0) -> PostgresServer:
        """Make the data directory, start the server and wait until it takes connections."""
        import psycopg

        self.dir = self._make_dir()
        try:
            self._init()
            if not self.port:
                self.port = _free_port()
            options = ["-c", f"max_connections={self.max_connections}", "-c", "shared_buffers=32MB"]
            if not self.durable:
                options += ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]
            self._log = open(self.dir / "server.out", "wb")  # noqa: SIM115 - closed in stop()
            self.process = self._popen(
                [str(self.bindir / "postgres"), "-D", str(self.dir / "data"), "-k", str(self.dir),
                 "-h", "127.0.0.1", "-p", str(self.port), *options],
                stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
            deadline = time.monotonic() + timeout
            while True:
                if self.process.poll() is not None:
                    raise RuntimeError(f"postgres exited:\n{self.log_tail()}")
                try:
                    psycopg.connect(self.url("postgres"), connect_timeout=2).close()
                    return self
                except psycopg.OperationalError:
                    if time.monotonic() > deadline:
                        raise RuntimeError(
                            f"postgres did not take connections within {timeout:.0f} s:\n{self.log_tail()}"
                        ) from None
                    time.sleep(0.1)
        except BaseException:
            self.stop()
            raise

    def _init(self) -> None:
        assert self.dir is not None
        pwfile = self.dir / "pw"
        pwfile.write_text(self.password + "\n")
        if self._run_as:
            entry = pwd.getpwnam(self._run_as)
            os.chown(pwfile, entry.pw_uid, entry.pw_gid)
        pwfile.chmod(0o600)
        init = self._popen(
            [str(self.bindir / "initdb"), "-D", str(self.dir / "data"), "-U", self.user, "-E", "UTF8",
             "--auth-local=trust", "--auth-host=scram-sha-256", f"--pwfile={pwfile}", "--no-instructions"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )  # fmt: skip
        output = init.communicate(timeout=120)[0].decode(errors="replace")
        pwfile.unlink()
        if init.returncode != 0:
            raise RuntimeError(f"initdb failed:\n{output[-2000:]}")

    def log_tail(self, size: int = 2000) -> str:
        """The end of the server's log."""
        if self.dir is None or not (self.dir / "server.out").exists():
            return ""
        return (self.dir / "server.out").read_text(errors="replace")[-size:]

    @property
    def running(self) -> bool:
        """Whether the server process is alive."""
        return self.process is not None and self.process.poll() is None

    def url(self, database: str = "postgres", *, password: bool = True) -> str:
        """The ``postgresql://`` URL of `database` (with the password unless `password` is False:
        then libpq takes it from ``PGPASSWORD``)."""
        secret = f":{self.password}" if password else ""
        return f"postgresql://{self.user}{secret}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """A new empty database; returns its URL (with the password)."""
        import psycopg
        from psycopg import sql

        with psycopg.connect(self.url("postgres"), autocommit=True) as connection:
            connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return self.url(name)

    def stop(self) -> None:
        """Stop the server (a fast shutdown) and remove its directory. Safe to call twice."""
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGINT)  # fast shutdown
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        if self._log is not None:
            self._log.close()
            self._log = None
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
