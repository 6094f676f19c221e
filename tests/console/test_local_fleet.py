"""The fleet without containers (deploy/local_fleet.py, docs/guides/fleet.md) run end to end as
the guide runs it: the script starts PostgreSQL with the fleet's policies, the console over TLS
and the OTLP receiver, and prints the environment; an agent in a process of its own, with only
that environment, is blocked by a policy from the store, and the block reaches the console (its
session's steps), the store (a violation reference) and the receiver (a span); Ctrl+C stops all
three."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import ssl
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from pagewarden import PolicyStore

ROOT = Path(__file__).parents[2]
AGENT = Path(__file__).with_name("local_fleet_agent.py")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.timeout(600),
    pytest.mark.skipif(shutil.which("openssl") is None, reason="make-certs.sh needs openssl"),
]


def _exports(text: str) -> dict[str, str]:
    """`export NAME=VALUE` lines (VALUE as the shell reads it)."""
    import shlex

    found = {}
    for line in text.splitlines():
        if line.startswith("export "):
            name, _, value = line.removeprefix("export ").partition("=")
            found[name] = shlex.split(value)[0] if value else ""
    return found


def _get_json(url: str, token: str, ca: str) -> dict:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, context=ssl.create_default_context(cafile=ca), timeout=30) as answer:
        return json.loads(answer.read())


def test_one_agent_s_block_reaches_the_console_the_store_and_the_receiver(tmp_path: Path) -> None:
    fleet_dir, env_file = tmp_path / "fleet", tmp_path / "fleet.env"
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "deploy" / "local_fleet.py"), "--dir", str(fleet_dir),
         "--env-file", str(env_file), "--console-port", "0", "--otlp-port", "0"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        printed = []
        for line in proc.stdout:
            printed.append(line)
            if line.startswith("Ready."):
                break
        else:
            raise AssertionError("".join(printed) + (proc.stderr.read() if proc.stderr else ""))
        text = "".join(printed)
        env = _exports(text)
        assert set(env) == {
            "PAGEWARDEN_STORE", "PGPASSWORD", "PAGEWARDEN_CONSOLE_CA", "CONSOLE_GUARD_LINK",
            "OTEL_EXPORTER_OTLP_ENDPOINT",
        }  # fmt: skip
        assert _exports(env_file.read_text()) == env and oct(env_file.stat().st_mode & 0o777) == "0o600"
        assert env["CONSOLE_GUARD_LINK"].startswith("https://localhost:")
        read_only = re.search(r"^  read-only\s+(https://\S+)\?token=(\S+)$", text, re.M)
        assert read_only, text

        # the agent, with the printed environment only (and its service name)
        agent_env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "PAGEWARDEN_", "PG"))}
        agent_env.update(env, OTEL_SERVICE_NAME="billing-bot", HOME=str(tmp_path))
        done = subprocess.run(
            [sys.executable, str(AGENT), "billing-bot"], cwd=ROOT, env=agent_env,
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        blocked = re.search(r"^BLOCKED (\S+) FLEET-001$", done.stdout, re.M)
        assert blocked, done.stdout + done.stderr[-2000:]
        assert "REACHED 0" in done.stdout  # stopped before it ran
        session = blocked.group(1)

        # the console: the session, its agent and the blocked step
        base, token = read_only.groups()
        detail = _get_json(f"{base}api/sessions/{session}", token, env["PAGEWARDEN_CONSOLE_CA"])
        assert detail["summary"]["agent"] == "billing-bot"
        shown = [(step["decision"], step["policies"]) for step in detail["steps"]]
        assert ("block", ["FLEET-001"]) in shown, shown

        # the store: the block filed as a violation reference of FLEET-001
        os.environ["PGPASSWORD"] = env["PGPASSWORD"]
        try:
            with PolicyStore(env["PAGEWARDEN_STORE"]) as store:
                policy = store.get("FLEET-001")
                assert policy is not None and any("elsewhere.test" in r.text for r in policy.references)
        finally:
            del os.environ["PGPASSWORD"]

        # the receiver: the step's span, from billing-bot, decided block
        lines = [json.loads(x) for x in (fleet_dir / "otlp.jsonl").read_text().splitlines()]
        spans = [
            (resource, span)
            for line in lines if line["signal"] == "traces"
            for resource in line["request"]["resourceSpans"]
            for scope in resource["scopeSpans"] for span in scope["spans"]
        ]  # fmt: skip
        steps = [(r, s) for r, s in spans if s["name"] == "pagewarden.step"]
        assert steps, lines
        resource, span = steps[0]
        service = {"key": "service.name", "value": {"stringValue": "billing-bot"}}
        assert service in resource["resource"]["attributes"]
        attributes = {a["key"]: a["value"] for a in span["attributes"]}
        assert attributes["pagewarden.decision"] == {"stringValue": "block"}, attributes
        assert any(line["signal"] == "metrics" for line in lines)
        assert "traces: " in (fleet_dir / "otlp.log").read_text()
        # no token of the console in its own log
        console_log = (fleet_dir / "console.log").read_text()
        assert token not in console_log and env["CONSOLE_GUARD_LINK"] not in console_log
    finally:
        proc.send_signal(signal.SIGINT)  # Ctrl+C
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert out.rstrip().endswith("stopped")
    assert not env_file.exists()
    with pytest.raises(OSError):  # PostgreSQL is gone with its data
        import socket

        port = int(re.search(r":(\d+)/pagewarden$", env["PAGEWARDEN_STORE"]).group(1))  # type: ignore[union-attr]
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
