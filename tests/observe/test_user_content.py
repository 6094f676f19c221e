"""User content is recognised by what marks it (author, time, reply controls, repeated posts,
rel=ugc / nofollow links, schema.org Comment / Review, a comments section), not by a tag name:
product cards, cart lines, quotes and news stories built from <article> / <blockquote> are the
site's own (issue 24). Real Chromium over tests/pages/ugc_shapes.html."""

from __future__ import annotations

import pytest
from playwright.async_api import Page

from pagewarden import Guard
from pagewarden._calls import drive_async
from pagewarden.guard._exceptions import GuardError
from pagewarden.observe._gather import facts_of_locator

pytestmark = [pytest.mark.browser]


async def _expectations(page: Page) -> list[tuple[str, str]]:
    return await page.eval_on_selector_all(
        "[data-ugc-expect]", "els => els.map(e => [e.id, e.getAttribute('data-ugc-expect')])"
    )


async def test_each_shape_is_read_by_its_marks(page: Page) -> None:
    await page.goto("http://app.test/ugc_shapes.html")
    expected = await _expectations(page)
    kinds = [expect for _, expect in expected]
    assert kinds.count("yes") >= 8 and kinds.count("no") >= 8
    wrong = []
    for element_id, expect in expected:
        result, count, _ = await drive_async(facts_of_locator(page.locator(f"#{element_id}")))
        assert count == 1 and result is not None
        if result.in_ugc != (expect == "yes"):
            wrong.append(f"{element_id}: in_ugc={result.in_ugc} ({result.ugc_selector})")
    assert not wrong, wrong


async def test_guarded_fields_by_their_marks_on_a_patched_page(page: Page) -> None:
    """Through the guard (its reader runs in an isolated world): a page that patches getAttribute,
    matches and split after loading changes nothing. The quantity field of a product card is
    the site's own; a field inside a review (user content, no form) is stopped."""
    guarded = Guard(goal="Add a desk lamp to the cart; my email is dana@app.test.").wrap(page)
    await guarded.goto("http://app.test/ugc_shapes.html")
    await page.evaluate(
        """() => {
          Element.prototype.getAttribute = () => null;
          Element.prototype.matches = () => false;
          String.prototype.split = () => [];
        }"""
    )
    await guarded.fill("#n-card-qty", "2")
    await guarded.fill("#n-story-signup", "dana@app.test")
    with pytest.raises(GuardError) as caught:
        await guarded.fill("#y-review-field", "dana@app.test")
    assert "user content" in caught.value.verdict.explanation
