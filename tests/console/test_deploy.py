"""The fleet deployment in deploy/ (docs/guides/fleet.md): no Docker here, so the compose file is
parsed, every pagewarden command and option it (and the guide) uses is checked against the CLI,
the console service's command is run as compose would run it (with certificates made by
deploy/make-certs.sh and a guard attaching over TLS), and the collector's configuration is
checked for the receivers and pipelines the guide names."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from pagewarden import Guard
from pagewarden.cli import main

ROOT = Path(__file__).parents[2]
DEPLOY = ROOT / "deploy"
GUIDE = ROOT / "docs" / "guides" / "fleet.md"
_VAR = re.compile(r"\$\{([A-Z0-9_]+)(?::?[?-][^}]*)?\}")


def _compose() -> dict[str, Any]:
    return yaml.safe_load((DEPLOY / "compose.yaml").read_text())


def _env_example() -> dict[str, str]:
    pairs = [line.split("=", 1) for line in (DEPLOY / "env.example").read_text().splitlines()]
    return {k.strip(): v.strip() for k, v in (p for p in pairs if len(p) == 2 and not p[0].startswith("#"))}


@cache
def _help(*command: str) -> str:
    """``pagewarden COMMAND --help``, in this process (click renders the same help text; the
    process itself is run below, where it is what is tested)."""
    done = CliRunner().invoke(main, [*command, "--help"], prog_name="pagewarden", terminal_width=80)
    assert done.exit_code == 0, done.output
    return done.output


def _check_command(words: list[str]) -> None:
    """`words` (``pagewarden GROUP … --option …``) names commands and options the CLI has."""
    assert words[0] == "pagewarden", words
    path: list[str] = []
    for word in words[1:]:
        if word.startswith("-"):
            break
        if word in re.findall(r"^\s{2}(\S+)", _help(*path) if path else _help(), re.M):
            path.append(word)
        else:
            break
    assert path, f"no pagewarden command in {words}"
    text = _help(*path)
    for word in words:
        if word.startswith("--"):
            option = word.split("=", 1)[0]
            assert re.search(rf"(^|[\s,]){re.escape(option)}\b", text), f"{' '.join(path)} has no {option}"


def test_the_compose_file_parses_and_names_what_it_needs() -> None:
    compose = _compose()
    services = compose["services"]
    assert set(services) == {"postgres", "console", "otel-collector", "policies"}
    assert all("image" in s for s in services.values())
    assert services["policies"]["profiles"] == ["init"]  # a one-off, not started by `up`
    assert services["policies"]["image"] == services["console"]["image"]
    build = services["console"]["build"]
    assert (DEPLOY / build["context"] / build["dockerfile"]).resolve() == (DEPLOY / "Dockerfile").resolve()
    for line in (DEPLOY / "Dockerfile").read_text().splitlines():  # what it copies exists
        if line.startswith("COPY"):
            for source in line.split()[1:-1]:
                assert (ROOT / source).exists(), source
    # every variable compose interpolates is in env.example, and nothing else is
    used = set(_VAR.findall((DEPLOY / "compose.yaml").read_text()))
    assert used == set(_env_example())
    assert set(compose["volumes"]) == {"pgdata"}
    for service in services.values():  # files mounted from deploy/ are there (certs/ is made)
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            if source.startswith("./") and source != "./certs":
                assert (DEPLOY / source).is_file(), source


def _compose_plugin() -> str | None:
    """Why ``docker compose`` cannot run here, or None when it can (no engine is needed for
    ``config``: it only reads and checks the file)."""
    if shutil.which("docker") is None:
        return "docker is not installed"
    try:
        done = subprocess.run(["docker", "compose", "version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"docker compose version failed: {exc}"
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()
        return f"the docker compose plugin is missing ({said[0] if said else done.returncode})"
    return None


def test_docker_compose_config_accepts_the_file(tmp_path: Path) -> None:
    """`docker compose config` where the compose plugin exists: the file, with every variable of
    env.example set, is one compose accepts (an engine is not needed for this)."""
    missing = _compose_plugin()
    if missing is not None:
        pytest.skip(f"docker compose config not run: {missing}")
    env = tmp_path / ".env"
    env.write_text(
        "".join(
            f"{name}={'https://console.example.com:8765' if 'URL' in name else 'value-' + name.lower()}\n"
            for name in _env_example()
        )
    )
    compose = ["docker", "compose", "-f", str(DEPLOY / "compose.yaml")]
    done = subprocess.run(
        [*compose, "--env-file", str(env), "config", "--quiet"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    # and without the values, compose refuses with the message the file gives
    empty = tmp_path / "empty.env"
    empty.write_text("")
    refused = subprocess.run(
        [*compose, "--env-file", str(empty), "config", "--quiet"], capture_output=True, text=True, timeout=120
    )
    assert refused.returncode != 0 and "in .env" in refused.stderr


def test_every_pagewarden_command_and_option_exists(tmp_path: Path) -> None:
    services = _compose()["services"]
    _check_command(services["console"]["command"])
    _check_command(services["policies"]["command"])
    # the one-off import runs as written (a SQLite store in place of the PostgreSQL URL)
    words = services["policies"]["command"]
    assert words[-3].startswith("--store") and words[-2].startswith("postgresql://pagewarden@postgres:5432/")
    mounted = dict(v.split(":")[:2][::-1] for v in services["policies"]["volumes"])
    policy_file = DEPLOY / mounted[words[-1]].removeprefix("./")
    done = subprocess.run(
        [sys.executable, "-m", "pagewarden", *words[1:-2], str(tmp_path / "store.db"), str(policy_file)],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "imported 2 policies" in done.stdout + done.stderr
    # the environment the console service sets is what `pagewarden console` reads
    console_help = _help("console")
    for name in services["console"]["environment"]:
        assert name in " ".join(console_help.split()), name
    # and so for every `pagewarden …` line in the guide's shell blocks
    blocks = re.findall(r"```(?:bash|sh|console)\n(.*?)```", GUIDE.read_text(), re.S)
    lines = [line.strip() for block in blocks for line in block.replace("\\\n", " ").splitlines()]
    commands = [line.split() for line in lines if line.startswith("pagewarden ")]
    assert len(commands) >= 2
    for words in commands:
        _check_command(words)


def test_the_collector_config_has_the_receivers_the_guide_names() -> None:
    config = yaml.safe_load((DEPLOY / "otel-collector.yaml").read_text())
    protocols = config["receivers"]["otlp"]["protocols"]
    assert protocols["grpc"]["endpoint"].endswith(":4317")
    assert protocols["http"]["endpoint"].endswith(":4318")
    for name, pipeline in config["service"]["pipelines"].items():
        assert name.split("/")[0] in ("traces", "metrics", "logs")
        for kind in ("receivers", "processors", "exporters"):
            for component in pipeline.get(kind, []):
                assert component in config[kind], f"{name} uses {component}, not defined under {kind}"
    assert {"traces", "metrics"} <= set(config["service"]["pipelines"])
    for extension in config["service"].get("extensions", []):
        assert extension in config["extensions"]
    collector = _compose()["services"]["otel-collector"]
    mounted = {v.split(":")[1] for v in collector["volumes"]}
    assert collector["command"][0].removeprefix("--config=") in mounted
    assert {"4317:4317", "4318:4318"} <= {p.split()[0] for p in collector["ports"]}
    # the guide names each receiver, protocol, port and pipeline, and how guards find it
    guide = GUIDE.read_text()
    for receiver, settings in config["receivers"].items():
        assert f"`{receiver}`" in guide, receiver
        for protocol, endpoint in settings["protocols"].items():
            assert protocol in guide.lower(), protocol
            assert f"port {endpoint['endpoint'].rsplit(':', 1)[1]}" in guide, endpoint
    for pipeline in config["service"]["pipelines"]:
        assert f"`{pipeline}`" in guide, pipeline
    assert "OTEL_EXPORTER_OTLP_ENDPOINT=http://collector.example.com:4318" in guide


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.skipif(shutil.which("openssl") is None, reason="make-certs.sh needs openssl")
def test_the_console_service_starts_as_compose_runs_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    certs = tmp_path / "certs"
    made = subprocess.run(
        [str(DEPLOY / "make-certs.sh"), "localhost"], env={**os.environ, "CERTS_DIR": str(certs)},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    port = _free_port()
    env = {
        "PAGEWARDEN_CONSOLE_PUBLIC_URL": f"https://localhost:{port}",
        "PAGEWARDEN_CONSOLE_TOKEN": "full-token-0123456789abcdef",
        "PAGEWARDEN_CONSOLE_READ_ONLY_TOKEN": "view-token-0123456789abcdef",
        "PAGEWARDEN_CONSOLE_GUARD_TOKEN": "guard-token-0123456789abcdef",
    }
    assert set(env) <= set(_env_example())
    service = _compose()["services"]["console"]
    command = [_VAR.sub(lambda m: env[m.group(1)], word) for word in service["command"]]
    command = [str(port) if w == "8765" else w.replace("/certs", str(certs)) for w in command]
    assert command[:2] == ["pagewarden", "console"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "pagewarden", *command[1:]], cwd=ROOT,
        env={**os.environ, **{k: v for k, v in env.items() if k in service["environment"]}},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(3)]
        assert (
            lines[0].strip()
            == f"pagewarden console: https://localhost:{port}/?token=$PAGEWARDEN_CONSOLE_TOKEN"
        )
        assert "$PAGEWARDEN_CONSOLE_GUARD_TOKEN" in lines[2]
        assert not any(t in "".join(lines) for t in env.values() if t.endswith("abcdef"))  # no token printed
        monkeypatch.setenv("PAGEWARDEN_CONSOLE_CA", str(certs / "ca.pem"))
        guard = Guard(
            console=f"https://localhost:{port}/?token=guard-token-0123456789abcdef", agent_name="compose"
        )
        guard.close()
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    for token in env.values():
        if token.endswith("abcdef"):
            assert token not in err
