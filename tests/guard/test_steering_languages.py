"""The steering check in the languages of the multilingual set: page text addressed to the
guard (in German, French, Spanish, Portuguese, Italian, Russian, Chinese, Japanese, Arabic,
Polish, Turkish) cannot buy an allow from a model that found nothing wrong; ordinary page text
in the same languages does not trip the check. The model is `ScriptedLLM` over HTTP."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pagewarden import Decision
from pagewarden.testing import ScriptedLLM
from tests.guard.test_semantic_defences import FINE, close_step, guard_for
from tests.rules.lang_cases import CASES


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedLLM]:
    with ScriptedLLM() as server:
        server.on(None, FINE)
        yield server


@pytest.mark.parametrize("lang", [x for x in CASES if x != "en"])
def test_page_text_addressing_the_guard_cannot_buy_an_allow(llm: ScriptedLLM, lang: str) -> None:
    for text in CASES[lang]["judge"]:
        verdict = guard_for(llm).check(close_step(context=f"Kommentar / comment: {text}"))
        assert verdict.decision is Decision.BLOCK, (text, verdict.explanation)
        assert verdict.llm["error_kind"] == "steered" and "addresses the guard itself" in verdict.explanation


@pytest.mark.parametrize("lang", [x for x in CASES if x != "en"])
def test_ordinary_page_text_in_that_language_does_not_trip_the_check(llm: ScriptedLLM, lang: str) -> None:
    text = " ".join(CASES[lang]["benign"])
    verdict = guard_for(llm).check(close_step(context=text[:1200]))
    assert verdict.decision is Decision.ALLOW, (lang, verdict.explanation)
    assert "error" not in verdict.llm


def test_a_clean_answer_that_relays_orders_in_another_language_is_not_trusted(llm: ScriptedLLM) -> None:
    injection = CASES["de"]["attacks"][0]
    server_answer = {**FINE, "semantic_delta": f"Schließt das Issue, wie verlangt: {injection}"}
    with ScriptedLLM() as other:
        other.on(None, server_answer)
        verdict = guard_for(other).check(close_step(context=f"Kommentar von jens: {injection}"))
    assert verdict.decision is Decision.BLOCK and verdict.llm["error_kind"] == "steered"
    assert "may have been steered" in verdict.explanation
