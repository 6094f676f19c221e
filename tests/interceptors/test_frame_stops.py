"""A navigation that a *frame's* own facts reader stops (its pin) is reported to the agent, as
the top document's stops are: the frame's reader hands the stop to the top document's reader
(same origin: into its list; another origin: a message carrying the how and the origin only),
and the guard reads that one with the action's check or the next action (no extra round trip).
Nothing reaches the refused host. The benign twin (the frame's script going where the policies
allow) is not reported. Real Chromium over 127.0.0.1.
"""

from __future__ import annotations

import itertools

import pytest
from playwright.async_api import Page

from pagewarden import ActionBlocked, Guard, PolicySet
from pagewarden.guard._exceptions import GuardError
from pagewarden.testing import LocalSite, Response

from .test_gate_hops import POLICIES, _reached, _until

NONE = PolicySet.from_dict({"version": 1, "policies": []})
_COUNTER = itertools.count()
INNER = """<!doctype html><body>
<button id="go" type="button" onclick="location.href = '{D}'">Continue</button></body>"""


def _serve(site: LocalSite, frame_host: str, dest: str) -> str:
    n = next(_COUNTER)
    inner = INNER.replace("{D}", dest)
    site.route(frame_host, f"/frame-stop/inner-{n}", lambda _r: Response(inner))
    outer = (
        f'<!doctype html><body><p>Top</p><iframe id="f" src="http://{frame_host}/frame-stop/inner-{n}"'
        ' style="width:300px;height:120px;border:0"></iframe></body>'
    )
    site.route("app.test", f"/frame-stop/outer-{n}", lambda _r: Response(outer))
    return f"http://app.test/frame-stop/outer-{n}"


async def _act_twice(page: Page, guarded: object) -> list[GuardError]:
    """The click in the frame, then the next action: what each raised (the agent's view)."""
    told: list[GuardError] = []
    for step in ("click", "hover"):
        try:
            if step == "click":
                await guarded.frame_locator("#f").locator("#go").click()  # type: ignore[attr-defined]
                await page.wait_for_timeout(500)
            else:
                await guarded.hover("body")  # type: ignore[attr-defined]
        except GuardError as exc:
            told.append(exc)
    return told


@pytest.mark.parametrize("frame_host", ["app.test", "other.test"])
@pytest.mark.parametrize("policies", ["allow_list", "none"])
async def test_a_stop_in_a_frame_reaches_the_agent(
    page: Page, site: LocalSite, frame_host: str, policies: str
) -> None:
    guard = Guard(POLICIES if policies == "allow_list" else NONE, goal="Use the app.")
    guarded = guard.wrap(page)
    mark = f"frame-stop-{frame_host}-{policies}"
    await guarded.goto(_serve(site, frame_host, f"http://evil.test/landing?c={mark}"))
    await page.frame_locator("#f").locator("#go").wait_for()
    told = await _act_twice(page, guarded)
    assert _reached(site, "evil.test", mark) == []
    assert all(not f.url.startswith("http://evil.test") for f in page.frames)
    assert told, "the agent was not told of the navigation the frame's reader stopped"
    assert isinstance(told[0], ActionBlocked)
    assert "evil.test" in told[0].verdict.explanation


@pytest.mark.parametrize("frame_host", ["app.test", "other.test"])
async def test_the_allowed_twin_is_not_reported(page: Page, site: LocalSite, frame_host: str) -> None:
    guarded = Guard(POLICIES, goal="Use the app.").wrap(page)
    mark = f"frame-stop-twin-{frame_host}"
    await guarded.goto(_serve(site, frame_host, f"http://other.test/landing?c={mark}"))
    await page.frame_locator("#f").locator("#go").wait_for()
    told = await _act_twice(page, guarded)
    assert await _until(lambda: bool(_reached(site, "other.test", mark)))
    assert told == []
