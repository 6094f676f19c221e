"""`pagewarden proxy`: the network layer alone, started as a user would, used by a plain client."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

from mitmproxy import io

from pagewarden.testing import LocalSite

#: the installed console script (the way a user runs it)
PAGEWARDEN = str(Path(sys.executable).parent / "pagewarden")

POLICY = """version: 1
policies:
  - id: NET-1
    category: boundary
    risk_level: high
    description: Never talk to evil.test.
    rules:
      - domain_deny: [evil.test]
"""


def _start(args: list[str], env_dir: Path) -> tuple[subprocess.Popen, str]:
    env = {**os.environ, "PAGEWARDEN_CONFIG_DIR": str(env_dir)}
    process = subprocess.Popen(
        [PAGEWARDEN, "proxy", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    lines = []
    for line in process.stdout:  # type: ignore[union-attr]
        lines.append(line)
        if "Ctrl-C" in line:
            break
    text = "".join(lines)
    assert "listening on http://127.0.0.1:" in text, text + process.stderr.read()  # type: ignore[union-attr]
    return process, text


def test_standalone_proxy_enforces_records_and_tells_how_to_use_it(
    netsite: LocalSite, tmp_path: Path
) -> None:
    policy = tmp_path / "net.yaml"
    policy.write_text(POLICY)
    record = tmp_path / "rec"
    process, text = _start(
        ["--policies", str(policy), "--record", str(record), "--map", f"*.test={netsite.port}"], tmp_path
    )
    try:
        url = text.split("listening on ", 1)[1].split()[0]
        assert f"--proxy-server={url}" in text and "--ignore-certificate-errors-spki-list=" in text
        # the flags that keep loopback, WebRTC's UDP and Chromium's DNS look-ups in the proxy
        for flag in (
            "--proxy-bypass-list=<-loopback>",
            "--webrtc-ip-handling-policy=disable_non_proxied_udp",
            "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
            "--host-resolver-rules=MAP * 127.0.0.1:",
        ):
            assert flag in text, flag
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": url}))
        assert b"Site" in opener.open("http://site.test/", timeout=30).read()
        try:
            opener.open("http://evil.test/landing", timeout=30)
            raise AssertionError("evil.test was reachable")
        except urllib.error.HTTPError as exc:
            assert exc.code == 403 and b"NET-1" in exc.read()
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert "refused request GET http://evil.test/landing [NET-1/domain_deny]" in err
    assert netsite.requests_to("evil.test") == []
    with (record / "flows.mitm").open("rb") as handle:
        urls = [f.request.url for f in io.FlowReader(handle).stream()]
    assert "http://site.test/" in urls and "http://evil.test/landing" in urls


def test_standalone_proxy_rejects_bad_input(tmp_path: Path) -> None:
    env = {**os.environ, "PAGEWARDEN_CONFIG_DIR": str(tmp_path)}
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\npolicies: [{id: X}]\n")
    result = subprocess.run([PAGEWARDEN, "proxy", "--policies", str(bad)],
                            capture_output=True, text=True, env=env, timeout=120)  # fmt: skip
    assert result.returncode == 2 and "error" in result.stderr
    result = subprocess.run([PAGEWARDEN, "proxy", "--replay", str(tmp_path / "none")],
                            capture_output=True, text=True, env=env, timeout=120)  # fmt: skip
    assert result.returncode == 1 and "no recorded flows" in result.stderr
