"""js/pinning.js on its own (real Chromium): which hosts the policies' allow-list lets a pinned
navigation reach, and when a destination is still the one judged."""

from __future__ import annotations

import pytest
from playwright.async_api import Page

from pagewarden.testing import LocalSite
from tests.observe._reader import call, load

pytestmark = pytest.mark.browser


async def test_allowed_hosts_follow_the_policies_patterns(page: Page, site: LocalSite) -> None:
    await load(page, site, "<p>pin</p>", ["policyAllows", "hostMatches"])
    cases = [
        ("https://shop.example.com/cart", {"allow": [["*.example.com"]]}, True),
        ("https://example.com/", {"allow": [["*.example.com"]]}, False),
        ("https://example.com/", {"allow": [[".example.com"]]}, True),
        ("https://evil-example.com/", {"allow": [[".example.com"]]}, False),
        ("https://a.test/", {"allow": [["a.test"], ["*"]]}, True),
        ("https://a.test/", {"allow": [["a.test"], ["b.test"]]}, False),  # every rule must allow it
        ("https://news.site.org/x", {"allow": [], "site": "site.org"}, True),
        ("https://notsite.org/x", {"allow": [], "site": "site.org"}, False),
        ("not a url", {"allow": [["*"]]}, False),
        ("https://a.test/", None, False),
    ]
    found = await call(page, "arg.map(([url, p]) => I.policyAllows(url, p))", [c[:2] for c in cases])
    assert found == [c[2] for c in cases]


async def test_the_same_target_up_to_query_or_through_the_sites_redirect(page: Page, site: LocalSite) -> None:
    await load(page, site, "<p>pin</p>", ["sameTarget"])
    cases = [
        ("https://a.test/p?utm=1#x", "https://a.test/p", True),
        ("https://a.test/q", "https://a.test/p", False),
        ("https://b.test/p", "https://a.test/p", False),
        ("https://app.test/url?q=https%3A%2F%2Fa.test%2Fp", "https://a.test/p", True),
        ("https://app.test/url?q=https%3A%2F%2Fa.test%2Fother", "https://a.test/p", False),
        ("https://app.test/url?q=%E0%A4%A", "https://a.test/p", False),  # malformed escapes
        ("https://anything.test/", "javascript:void(0)", True),
    ]
    found = await call(page, "arg.map(([now, judged]) => I.sameTarget(now, judged))", [c[:2] for c in cases])
    assert found == [c[2] for c in cases]
