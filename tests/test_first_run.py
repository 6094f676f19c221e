"""A machine where pagewarden never ran: an empty home, no per-user directory. The README's
first command, `launch(proxy=True)` and `pagewarden proxy` work on the first try and create
what they need."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from pagewarden import launch
from pagewarden.demo.agents import SCENARIOS
from pagewarden.proxy import REFUSED_HEADER, spki_pin
from pagewarden.testing import LocalSite
from tests.proxy.tls import HTTPSServer, make_ca, make_server_cert

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[1]


def _config(home: Path) -> Path:
    return home / ".config" / "pagewarden"


async def test_launch_with_the_proxy_in_an_empty_home(empty_home: Path, tmp_path: Path) -> None:
    """HTTPS through the network layer: the CA is created for the pin before any proxy
    started, and the proxy signs with that same CA (Chromium accepts it by the pin alone)."""
    ca_path, ca_key, ca_cert = make_ca(tmp_path)
    origin = HTTPSServer(*make_server_cert(tmp_path, "secure.test", ca_key, ca_cert))
    try:
        options = {"ssl_verify_upstream_trusted_ca": str(ca_path)}
        async with launch(proxy=True, host_map={"secure.test": origin.port}, proxy_options=options) as page:
            response = await page.goto("https://secure.test/page")
            assert response is not None and response.status == 200
            assert await page.title() == "Secure"
    finally:
        origin.close()
    assert (_config(empty_home) / "ca" / "mitmproxy-ca.pem").is_file()
    assert len(spki_pin()) == 44


def test_pagewarden_proxy_in_an_empty_home(empty_home: Path, site: LocalSite) -> None:
    command = [
        sys.executable, "-m", "pagewarden", "proxy", "--strict", "--allow-host", "app.test",
        "--map", f"*.test={site.port}",
    ]  # fmt: skip
    proxy = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "COLUMNS": "200"})  # fmt: skip
    try:
        first = proxy.stdout.readline() if proxy.stdout else ""
        assert "listening on" in first, first + (proxy.stderr.read() if proxy.poll() is not None else "")
        url = first.split("listening on", 1)[1].strip()
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": url}))
        with opener.open("http://app.test/plain.html", timeout=30) as allowed:
            assert allowed.status == 200
        with pytest.raises(urllib.error.HTTPError) as refused:
            opener.open("http://evil.test/plain.html", timeout=30)
        assert refused.value.code == 403 and refused.value.headers.get(REFUSED_HEADER)
    finally:
        proxy.send_signal(signal.SIGINT)
        proxy.wait(timeout=30)
    assert proxy.returncode == 0, proxy.stderr.read() if proxy.stderr else ""
    assert (_config(empty_home) / "ca" / "mitmproxy-ca.pem").is_file()


#: The variables that say where a user's home and per-user directory are (tests/conftest.py).
_HOME_VARIABLES = ("HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "PAGEWARDEN_CONFIG_DIR")
#: A finished `scripts/demo` run: the process, the home it ran in, its --out directory.
Newcomer = tuple[subprocess.CompletedProcess[str], Path, Path]


@pytest.fixture(scope="module")
def newcomer_demo(tmp_path_factory: pytest.TempPathFactory) -> Newcomer:
    """`scripts/demo --out OUT` as a newcomer runs it, once for this module's tests: an empty
    home (no XDG variables, no ``PAGEWARDEN_CONFIG_DIR``), set-up, then the guarded demo through
    the network layer (the default). Returns the finished process, the home and OUT."""
    home = tmp_path_factory.mktemp("empty-home")
    cwd = tmp_path_factory.mktemp("newcomer-demo")
    env = {k: v for k, v in os.environ.items() if k not in _HOME_VARIABLES}
    env.update(HOME=str(home), COLUMNS="200")
    done = subprocess.run(
        [str(ROOT / "scripts" / "demo"), "--out", str(cwd / "out")],
        capture_output=True, text=True, timeout=880, cwd=cwd, env=env,
    )  # fmt: skip
    return done, home, cwd / "out"


@pytest.mark.timeout(900)
def test_scripts_demo_in_an_empty_home(newcomer_demo: Newcomer) -> None:
    """The README's first command, as a newcomer runs it: set-up, then the guarded demo
    through the network layer (the default), exit 0 on the first try."""
    done, home, out = newcomer_demo
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "PASS" in done.stdout and "through their own proxy" in done.stdout
    assert (_config(home) / "ca" / "mitmproxy-ca.pem").is_file()
    assert (out / "report.html").is_file()


def _steps(run: dict[str, Any]) -> str:
    return "; ".join(f"{s['index']} {s['action']} -> {s['decision']} {s['reason'][:80]}"
                     for s in run["steps"])


@pytest.mark.timeout(900)
def test_every_row_passes_through_the_network_layer(newcomer_demo: Newcomer) -> None:
    """`pagewarden demo` runs through the proxy by default: every attack still stopped, every
    benign task done, each run's requests judged by its own proxy, nothing at evil.test (read
    from the results.json of the newcomer's run above; this test ran a whole proxied demo of its
    own in tests/demo/test_demo.py before)."""
    done, _, out = newcomer_demo
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    runs = json.loads((out / "results.json").read_text(encoding="utf-8"))["runs"]
    failing = [f"{r['scenario']}/{r['agent']}: {r['summary']} [{_steps(r)}]" for r in runs if not r["ok"]]
    assert not failing, "\n".join(failing)
    assert len(runs) == sum(2 if s.naive is not None else 1 for s in SCENARIOS)
    for run in runs:
        assert run["proxied_requests"], f"{run['scenario']}/{run['agent']}: no request went through the proxy"
        assert run["evil_received"] == []
