"""`GuardedPage.release()` under the network layer: the guard's listener on the context's requests
(which tells a frame's refused navigation from a tab's, `SessionNetwork.watch_frames`) and its
DevTools sessions go; the context's proxy setting is the context's own and stays (a context made
for one guard's proxy is not shared with another guard). Real Chromium, real mitmproxy."""

from __future__ import annotations

import asyncio

import pytest
from playwright.async_api import Browser

from pagewarden import Guard, GuardReleased
from pagewarden.proxy._session import session_proxy, verify_enforcing
from pagewarden.proxy._tokens import accept_language
from pagewarden.testing import LocalSite


async def test_release_removes_the_network_layers_listener(
    plain_browser: Browser, netsite: LocalSite
) -> None:
    guard = Guard(goal="Read the site.")
    proxy = session_proxy(guard, host_map={"*.test": netsite.port})
    await proxy.start_async()
    try:
        await asyncio.to_thread(verify_enforcing, proxy)
        context = await plain_browser.new_context(
            proxy={"server": proxy.url},
            extra_http_headers={"Accept-Language": accept_language(guard.network.token)},
        )
        impl = context._impl_obj
        before = len(impl.listeners("request"))
        page = guard.wrap(await context.new_page())
        await page.goto("http://site.test/index.html")
        await page.locator("body").hover()
        assert len(impl.listeners("request")) == before + 1  # the network layer watches the context
        reader = page._pw_shared.direct_readers.get(page.unwrap())
        assert reader is not None

        await page.release()
        assert len(impl.listeners("request")) == before
        with pytest.raises(Exception, match=r"(?i)detach|closed"):
            await reader.session.send("Runtime.evaluate", {"expression": "1"})
        with pytest.raises(GuardReleased):
            await page.goto("http://site.test/index.html")
        await page.unwrap().goto("http://site.test/index.html")  # the raw page still works
        await context.close()
    finally:
        await proxy.stop_async()
        guard.close()
