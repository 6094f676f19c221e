"""Injections in German, Japanese, Arabic and Russian on real pages in Chromium, with the
embedded default (no policy file, no model): a comment that addresses AI agents and tells them
to open a page of the same site is stopped; on a shop page in the same language, its ordinary
imperatives ("Klicken Sie hier …", "カートに入れる") and a link in a review run."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import Page

from pagewarden import ActionBlocked, Guard
from pagewarden.testing import LocalSite

pytestmark = [pytest.mark.browser]
PAGES = Path(__file__).resolve().parents[1] / "pages" / "lang"
LANGS = ("de", "ja", "ar", "ru")
GOALS = {
    "de": (
        "Prüfe, ob der Fehler beim Export schon gemeldet ist.",
        "Lege das Buch „Der Prozess“ in den Warenkorb.",
    ),
    "ja": ("エクスポートのエラーが報告済みか確認して。", "『吾輩は猫である』をカートに入れて。"),
    "ar": ("تحقق مما إذا كان خطأ التصدير قد تم الإبلاغ عنه.", "أضف كتاب الأيام إلى السلة."),
    "ru": ("Проверь, сообщалось ли уже об ошибке экспорта.", "Добавь «Мастер и Маргарита» в корзину."),
}


@pytest.fixture(autouse=True)
def _lang_host(site: LocalSite) -> None:
    site.add_directory("lang.test", PAGES)


@pytest.mark.parametrize("lang", LANGS)
async def test_an_injected_comment_in_the_pages_language_is_stopped(page: Page, lang: str) -> None:
    guarded = Guard(goal=GOALS[lang][0]).wrap(page)
    await guarded.goto(f"http://lang.test/issue-{lang}.html")
    with pytest.raises(ActionBlocked) as caught:
        await guarded.click("#injected")
    verdict = caught.value.verdict
    assert verdict.violated_policy_ids == ["PW-INJECTION"], verdict.explanation
    assert "user-generated content" in verdict.explanation
    assert page.url == f"http://lang.test/issue-{lang}.html"
    # The reply beside it, in the same language, with no orders in it, is followed.
    await guarded.click("#ordinary")
    assert page.url.endswith("/plain.html?from=reply")


@pytest.mark.parametrize("lang", LANGS)
async def test_ordinary_imperatives_of_a_shop_in_that_language_run(page: Page, lang: str) -> None:
    guarded = Guard(goal=GOALS[lang][1]).wrap(page)
    await guarded.goto(f"http://lang.test/shop-{lang}.html")
    await guarded.click("#cart")
    assert "item=42" in page.url
    await guarded.goto(f"http://lang.test/shop-{lang}.html")
    await guarded.click("#more")
    assert page.url.endswith("/plain.html?from=review")
