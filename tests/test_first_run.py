"""A machine where pagewarden never ran: an empty home, no per-user directory. The README's
first command, `launch(proxy=True)` and `pagewarden proxy` work on the first try and create
what they need."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from pagewarden import launch
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


@pytest.mark.timeout(900)
def test_scripts_demo_in_an_empty_home(empty_home: Path, tmp_path: Path) -> None:
    """The README's first command, as a newcomer runs it: set-up, then the guarded demo
    through the network layer (the default), exit 0 on the first try."""
    done = subprocess.run(
        [str(ROOT / "scripts" / "demo"), "--out", str(tmp_path / "out")],
        capture_output=True, text=True, timeout=880, cwd=tmp_path,
        env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "PASS" in done.stdout and "through their own proxy" in done.stdout
    assert (_config(empty_home) / "ca" / "mitmproxy-ca.pem").is_file()
    assert (tmp_path / "out" / "report.html").is_file()
