"""HTTPS through the proxy: Chromium trusts the per-user CA by its SPKI pin only, and the
proxy verifies upstream certificates (a wrong one is refused, nothing reaches that server)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pagewarden import launch
from pagewarden.proxy import ca_dir, spki_pin
from tests.proxy.tls import HTTPSServer, make_ca, make_server_cert

pytestmark = pytest.mark.browser


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[tuple[Path, HTTPSServer, HTTPSServer]]:
    ca_path, ca_key, ca_cert = make_ca(tmp_path)
    good = HTTPSServer(*make_server_cert(tmp_path, "secure.test", ca_key, ca_cert))
    _, rogue_key, rogue_cert = make_ca(tmp_path, "rogue CA")  # a CA nobody trusts
    bad = HTTPSServer(*make_server_cert(tmp_path, "wrong.test", rogue_key, rogue_cert))
    yield ca_path, good, bad
    good.close()
    bad.close()


async def test_https_via_the_pinned_ca_and_verified_upstream(
    servers: tuple[Path, HTTPSServer, HTTPSServer], proxy_config_dir: Path
) -> None:
    ca_path, good, bad = servers
    options = {"ssl_verify_upstream_trusted_ca": str(ca_path)}  # the origin's CA (a test CA)
    host_map = {"secure.test": good.port, "wrong.test": bad.port}
    async with launch(proxy=True, host_map=host_map, proxy_options=options) as page:
        response = await page.goto("https://secure.test/page")
        assert response is not None and response.status == 200
        assert await page.title() == "Secure"
        # Chromium may ask for /favicon.ico after the load, depending on timing
        assert [p for p in good.paths if p != "/favicon.ico"] == ["/page"]
        # the certificate Chromium saw is the proxy's, trusted by pin (not by ignoring errors)
        security = await response.security_details()
        assert security is not None and security.get("issuer") == "pagewarden proxy CA"
        refused = await page.goto("https://wrong.test/page")
        assert refused is not None and refused.status == 502
        assert "certificate" in (await page.content()).lower()
    assert bad.paths == []
    assert str(ca_dir()).startswith(str(proxy_config_dir))
    assert len(spki_pin()) == 44
