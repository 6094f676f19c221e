"""A pagewarden fleet on one host, without containers (docs/guides/fleet.md): a throw-away
PostgreSQL store holding policies.yaml, the console over TLS (a certificate from make-certs.sh),
and a small OTLP receiver (otlp_receiver.py), started together and stopped together.

    .venv/bin/python deploy/local_fleet.py [--dir pagewarden-fleet] [--env-file fleet.env]

It prints the links for people and the environment an agent on this host needs (also written
to --env-file, mode 600, for ``. fleet.env`` in another shell), then runs until Ctrl+C or
SIGTERM, which stops all three and deletes the store's data. What arrived stays in DIR:
otlp.jsonl (every export request), otlp.log, console.log, certs/.

Everything listens on 127.0.0.1 only: the console (at https://localhost:PORT, the name its
certificate holds), the store and the receiver. For agents on other machines use compose.yaml, or servers
of your own. Needs pagewarden with its ``postgres`` and ``otel`` extras, Debian's ``postgresql``
(initdb; as root the server runs as the ``postgres`` user) and ``openssl``.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

DEPLOY = Path(__file__).resolve().parent
DATABASE = "pagewarden"
TOKENS = {
    "full": "PAGEWARDEN_CONSOLE_TOKEN",
    "read_only": "PAGEWARDEN_CONSOLE_READ_ONLY_TOKEN",
    "guard": "PAGEWARDEN_CONSOLE_GUARD_TOKEN",
}
#: the variable the agent's code reads the guard link from (pagewarden itself does not)
GUARD_LINK = "CONSOLE_GUARD_LINK"


class FleetError(Exception):
    """A part did not start; the message says which and why."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_for_line(path: Path, start: str, process: subprocess.Popen, what: str, timeout: float) -> str:
    """The first line of `path` (a child's output) that starts with `start`."""
    deadline = time.monotonic() + timeout
    while True:
        text = path.read_text(errors="replace") if path.exists() else ""
        for line in text.splitlines():
            if line.startswith(start):
                return line
        if process.poll() is not None:
            raise FleetError(f"{what} exited ({process.returncode}):\n{text[-2000:]}")
        if time.monotonic() > deadline:
            raise FleetError(f"{what} did not start within {timeout:.0f} s:\n{text[-2000:]}")
        time.sleep(0.1)


class LocalFleet:
    """The three services; `start` brings them up (or raises `FleetError` after stopping what
    had started), `stop` takes them down."""

    def __init__(self, directory: Path, *, policies: Path, console_port: int, otlp_port: int,
                 postgres_port: int, name: str = "localhost") -> None:  # fmt: skip
        self.dir = directory
        self.policies = policies
        self.console_port = console_port or _free_port()
        self.otlp_port = otlp_port or _free_port()
        self.postgres_port = postgres_port
        self.name = name
        self.tokens = {kind: secrets.token_urlsafe(24) for kind in TOKENS}
        self.postgres = None
        self.children: dict[str, subprocess.Popen] = {}
        self._logs: list = []

    # -- the parts ---------------------------------------------------------------------------------
    def _certificates(self) -> Path:
        if shutil.which("openssl") is None:
            raise FleetError("openssl is not installed (make-certs.sh needs it): apt-get install openssl")
        certs = self.dir / "certs"
        shutil.rmtree(certs, ignore_errors=True)  # a new CA and certificate at each start
        made = subprocess.run(
            ["sh", str(DEPLOY / "make-certs.sh"), self.name], env={**os.environ, "CERTS_DIR": str(certs)},
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        if made.returncode != 0:
            raise FleetError(f"make-certs.sh failed:\n{made.stderr[-2000:]}")
        return certs

    def _store(self) -> None:
        from pagewarden import PolicyStore
        from pagewarden.testing import PostgresServer

        try:
            self.postgres = PostgresServer(port=self.postgres_port)
            self.postgres.start()
            url = self.postgres.create_database(DATABASE)
        except Exception as exc:  # noqa: BLE001 - whatever it was, said as why the store did not start
            raise FleetError(f"PostgreSQL did not start: {exc}") from None
        with PolicyStore(url) as store:
            store.import_policies(self.policies)

    def _spawn(
        self, name: str, args: list[str], env: dict[str, str] | None = None
    ) -> tuple[subprocess.Popen, Path]:
        log = self.dir / f"{name}.log"
        handle = open(log, "wb")  # noqa: SIM115 - the child's output, closed in stop()
        self._logs.append(handle)
        process = subprocess.Popen(
            args, stdout=handle, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}, start_new_session=True,
        )  # fmt: skip
        self.children[name] = process
        return process, log

    def _console(self, certs: Path) -> None:
        env = {TOKENS[kind]: token for kind, token in self.tokens.items()}
        process, log = self._spawn(
            "console",
            [sys.executable, "-m", "pagewarden", "console", "--host", "127.0.0.1",
             "--port", str(self.console_port),
             "--tls-cert", str(certs / "console.pem"), "--tls-key", str(certs / "console-key.pem"),
             "--public-url", self.console_url, "--approval-timeout", "120"],
            env,
        )  # fmt: skip
        _wait_for_line(log, "guard link:", process, "the console", 120)

    def _receiver(self) -> None:
        out = self.dir / "otlp.jsonl"
        out.unlink(missing_ok=True)
        process, log = self._spawn(
            "otlp",
            [sys.executable, str(DEPLOY / "otlp_receiver.py"),
             "--port", str(self.otlp_port), "--out", str(out)],
        )  # fmt: skip
        _wait_for_line(log, "OTLP/HTTP receiver on", process, "the OTLP receiver", 60)

    def start(self) -> LocalFleet:
        self.dir.mkdir(parents=True, exist_ok=True)
        try:
            certs = self._certificates()
            self._receiver()
            self._console(certs)
            self._store()
        except BaseException:
            self.stop()
            raise
        return self

    # -- what the agents and people get --------------------------------------------------------------
    @property
    def console_url(self) -> str:
        return f"https://{self.name}:{self.console_port}"

    def link(self, kind: str) -> str:
        return f"{self.console_url}/?token={self.tokens[kind]}"

    def environment(self) -> dict[str, str]:
        """What an agent on this host needs (docs/guides/fleet.md, "Attach the agents")."""
        assert self.postgres is not None
        return {
            "PAGEWARDEN_STORE": self.postgres.url(DATABASE, password=False),
            "PGPASSWORD": self.postgres.password,
            "PAGEWARDEN_CONSOLE_CA": str((self.dir / "certs" / "ca.pem").resolve()),
            GUARD_LINK: self.link("guard"),
            "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{self.otlp_port}",
        }

    def failed(self) -> str | None:
        """Which part stopped by itself, if one did."""
        for name, process in self.children.items():
            if process.poll() is not None:
                return f"{name} exited ({process.returncode}); see {self.dir / (name + '.log')}"
        if self.postgres is not None and not self.postgres.running:
            return f"postgres exited:\n{self.postgres.log_tail()}"
        return None

    def stop(self) -> None:
        for process in self.children.values():
            if process.poll() is None:
                process.terminate()
        for process in self.children.values():
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
        for handle in self._logs:
            handle.close()
        if self.postgres is not None:
            self.postgres.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, default=Path("pagewarden-fleet"),
                        help="where the certificates, logs and otlp.jsonl go (default ./pagewarden-fleet)")
    parser.add_argument("--env-file", type=Path, help="also write the agent's environment here (mode 600)")
    parser.add_argument("--policies", type=Path, default=DEPLOY / "policies.yaml",
                        help="the policy file put into the store (default deploy/policies.yaml)")
    parser.add_argument("--console-port", type=int, default=8765, help="default 8765 (0: a free one)")
    parser.add_argument("--otlp-port", type=int, default=4318, help="default 4318 (0: a free one)")
    parser.add_argument("--postgres-port", type=int, default=0, help="default: a free one")
    args = parser.parse_args(argv)

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    fleet = LocalFleet(
        args.dir.resolve(), policies=args.policies, console_port=args.console_port,
        otlp_port=args.otlp_port, postgres_port=args.postgres_port,
    )  # fmt: skip
    try:
        fleet.start()
    except FleetError as exc:
        print(f"local_fleet: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    signal.signal(signal.SIGINT, lambda *_: stop.set())  # Ctrl+C, also where a shell ignores it
    try:
        env = fleet.environment()
        lines = [f"export {name}={shlex.quote(value)}" for name, value in env.items()]
        if args.env_file is not None:
            args.env_file.parent.mkdir(parents=True, exist_ok=True)
            args.env_file.touch(mode=0o600)
            args.env_file.chmod(0o600)
            args.env_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
        print(f"pagewarden fleet on this host; files in {fleet.dir}")
        print(f"  console     {fleet.link('full')}")
        print(f"  read-only   {fleet.link('read_only')}")
        print(f"              (your browser trusts it once you import {env['PAGEWARDEN_CONSOLE_CA']})")
        print(f"  store       {env['PAGEWARDEN_STORE']} (PostgreSQL {fleet.postgres.version}, throw-away; "
              f"holds {args.policies.name})")  # fmt: skip
        print(f"  telemetry   {env['OTEL_EXPORTER_OTLP_ENDPOINT']} -> {fleet.dir / 'otlp.jsonl'}")
        where = f" (also in {args.env_file}: . {args.env_file})" if args.env_file else ""
        print(f"An agent on this host needs{where}:")
        for line in lines:
            print(line)
        print("and attaches with Guard(policies=store, references=store, "
              f"console=os.environ['{GUARD_LINK}'], agent_name=...)")  # fmt: skip
        print("Ready. Ctrl+C stops the console, the receiver and PostgreSQL (its data is deleted).",
              flush=True)  # fmt: skip
        while not stop.wait(0.5):
            problem = fleet.failed()
            if problem is not None:
                print(f"local_fleet: {problem}", file=sys.stderr)
                return 1
        return 0
    finally:
        fleet.stop()
        if args.env_file is not None:
            args.env_file.unlink(missing_ok=True)
        print("stopped", flush=True)


if __name__ == "__main__":
    sys.exit(main())
