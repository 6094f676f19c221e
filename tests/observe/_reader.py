"""Running one module of the facts reader on its own in a real page: the assembled reader, with
the module's functions exposed (`assemble(internals=…)`), evaluated on a page served on
127.0.0.1, and called there."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from playwright.async_api import Page

from pagewarden.observe._library import assemble
from pagewarden.testing import LocalSite, Response

_paths = itertools.count()


async def load(page: Page, site: LocalSite, body: str, internals: Sequence[str]) -> None:
    """Serve `body` on app.test, open it, and build the reader there as `window.__pwTest` (its
    `internals` exposing the names given)."""
    path = f"/reader-module-{next(_paths)}"
    html = f"<!doctype html><html><head><title>module</title></head><body>{body}</body></html>"
    site.route("app.test", path, lambda _r: Response(html))
    await page.goto(f"http://app.test{path}")
    await page.evaluate(f"() => {{ {assemble(internals)}\n window.__pwTest = __pwLibrary(); }}")


async def call(page: Page, expression: str, arg: Any = None) -> Any:
    """Evaluate `expression` in the page with `I` (the exposed internals), `lib` (the reader),
    `$` (getElementById) and `arg` in scope."""
    return await page.evaluate(
        "(arg) => { const lib = window.__pwTest, I = lib.internals;"
        " const $ = (id) => document.getElementById(id);"
        f" return ({expression}); }}",
        arg,
    )
