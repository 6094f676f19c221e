"""`pagewarden policies store postgres`: the one command that gives a throw-away PostgreSQL
server for the store, as the policy-agent guide runs it (here as root: the server then runs as
the ``postgres`` user). Its printed lines are the environment the store commands and a guard
take; Ctrl+C stops it and deletes its data."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

from pagewarden import Guard, PolicyStore

ROOT = Path(__file__).parents[3]


def _pagewarden(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pagewarden", *args], env=env, capture_output=True, text=True, timeout=120
    )


def test_one_command_starts_a_store_server_and_ctrl_c_removes_it(tmp_path: Path) -> None:
    env_file = tmp_path / "store.env"
    proc = subprocess.Popen(
        [sys.executable, "-m", "pagewarden", "policies", "store", "postgres", "--env-file", str(env_file)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        lines = []
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if line.startswith("Ctrl+C stops it"):
                break
        else:
            raise AssertionError(f"it did not start: {lines} {proc.stderr.read() if proc.stderr else ''}")
        started = r"PostgreSQL \S+ on 127\.0\.0\.1:(\d+), database 'pagewarden' .*data in (\S+),"
        first = re.match(started, lines[0])
        assert first, lines
        data_dir = Path(first.group(2))
        assert data_dir.is_dir()
        exports = dict(re.findall(r"^export (\w+)='([^']*)'$", "\n".join(lines), re.M))
        assert set(exports) == {"PAGEWARDEN_STORE", "PGPASSWORD"}
        store_url = exports["PAGEWARDEN_STORE"]
        assert store_url == f"postgresql://pagewarden@127.0.0.1:{first.group(1)}/pagewarden"  # no password
        assert oct(env_file.stat().st_mode & 0o777) == "0o600"
        assert dict(re.findall(r"^export (\w+)='([^']*)'$", env_file.read_text(), re.M)) == exports
        # the guide's next commands, with that environment
        env = {**os.environ, **exports}
        imported = _pagewarden("policies", "store", "import", str(ROOT / "deploy" / "policies.yaml"), env=env)
        assert imported.returncode == 0 and "imported 2 policies" in imported.stderr, imported.stderr
        listed = _pagewarden("policies", "store", "list", env=env)
        assert listed.returncode == 0 and "2 policies" in listed.stdout, listed.stdout + listed.stderr
        os.environ["PGPASSWORD"] = exports["PGPASSWORD"]  # libpq's, as the printed line sets it
        try:
            with PolicyStore(store_url) as store:
                guard = Guard(policies=store, follow=False)
                assert {"FLEET-001", "FLEET-002"} <= set(guard.policies.ids)
                guard.close()
        finally:
            del os.environ["PGPASSWORD"]
    finally:
        proc.send_signal(signal.SIGINT)  # Ctrl+C
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert "stopped; its data is deleted" in out
    assert not data_dir.exists() and not env_file.exists()
