"""A throw-away PostgreSQL server for tests and benchmarks: Debian's PostgreSQL binaries
(`scripts/setup` installs the ``postgresql`` package), a data directory in a temporary
directory, a unix socket there and a free TCP port on 127.0.0.1, password authentication.

``initdb`` and ``postgres`` refuse to run as root, so as root the server runs as the
``postgres`` system user (which Debian's package creates), or ``nobody``.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

__all__ = ["PostgresServer", "find_bindir"]


def find_bindir() -> Path | None:
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
    """``with PostgresServer() as server: server.create_database("x"); server.url("x")``.

    `durable=False` (tests) turns off fsync; the benchmark runs the server's defaults."""

    user = "pagewarden"

    def __init__(self, *, durable: bool = False, max_connections: int = 200) -> None:
        bindir = find_bindir()
        if bindir is None:
            raise RuntimeError("PostgreSQL is not installed (initdb not found): run scripts/setup")
        self.bindir = bindir
        self.durable = durable
        self.max_connections = max_connections
        self.password = secrets.token_urlsafe(18)
        self.port = 0
        base = Path(tempfile.gettempdir())
        if os.geteuid() == 0 and not all(os.stat(p).st_mode & 0o001 for p in (base, *base.parents)):
            base = Path("/tmp")  # the server's user must be able to reach its directory
        self.dir = Path(tempfile.mkdtemp(prefix="pagewarden-pg-", dir=base))
        self.process: subprocess.Popen[bytes] | None = None
        self._run_as: str | None = None
        if os.geteuid() == 0:
            for name in ("postgres", "nobody"):
                with contextlib.suppress(KeyError):
                    pwd.getpwnam(name)
                    self._run_as = name
                    break
            entry = pwd.getpwnam(self._run_as or "nobody")
            os.chown(self.dir, entry.pw_uid, entry.pw_gid)

    def _popen(self, args: list[str], **kwargs) -> subprocess.Popen[bytes]:
        if self._run_as:
            entry = pwd.getpwnam(self._run_as)
            kwargs.update(user=entry.pw_uid, group=entry.pw_gid, extra_groups=[])
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C", "HOME": str(self.dir)}
        return subprocess.Popen(args, cwd=self.dir, env=env, **kwargs)

    def start(self) -> PostgresServer:
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
        self.port = _free_port()
        options = ["-c", f"max_connections={self.max_connections}", "-c", "shared_buffers=32MB"]
        if not self.durable:
            options += ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]
        log = open(self.dir / "server.out", "wb")  # noqa: SIM115 - the server's, closed in stop()
        self.process = self._popen(
            [str(self.bindir / "postgres"), "-D", str(self.dir / "data"), "-k", str(self.dir),
             "-h", "127.0.0.1", "-p", str(self.port), *options],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        self._log = log
        deadline = time.monotonic() + 60
        import psycopg

        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"postgres exited:\n{(self.dir / 'server.out').read_text()[-2000:]}")
            try:
                psycopg.connect(self.url("postgres"), connect_timeout=2).close()
                return self
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def url(self, database: str = "postgres") -> str:
        """The ``postgresql://`` URL of `database` (with the password)."""
        return f"postgresql://{self.user}:{self.password}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """A new empty database; returns its URL."""
        import psycopg

        with psycopg.connect(self.url("postgres"), autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGINT)  # fast shutdown
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        if self.process is not None:
            self._log.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
