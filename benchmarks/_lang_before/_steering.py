"""Signs that the judge itself was steered: untrusted text that addresses the guard, and a
model answer that relays an injected instruction while finding nothing wrong.

The model's "nothing wrong" is only worth something if the page could not talk it into
that. Two deterministic checks back it up (sans-I/O, on the text of one consultation):

* `addresses_judge`: fenced data (page text, the agent's reasoning) that speaks to the guard
  — names its answer fields, addresses a judge / guard, forges markers — or, from a page,
  dictates the verdict or claims the action was approved. Ordinary pages do not do that; an
  attack on the guard does.
* `relayed_instructions`: phrases of the model's own answer that are instructions aimed at
  an agent or at the judge (`instruction_signals`, `addresses_judge`) and that it copied
  from the fenced data — a model repeating the page's orders while saying the action is
  fine has been steered, or is about to pass the orders on as guidance.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

from _lang_before._instructions import instruction_signals

__all__ = ["addresses_judge", "fenced_data", "relayed_instructions"]

_JUDGE = (
    r"(?:(?:(?:ai|llm|safety|security)\s+)?(?:judge|guard|guardrail|checker)s?|pagewarden"
    r"|(?:safety|security)\s+(?:system|model|layer|reviewer|monitor|filter|classifier)s?)"
)
_ADDRESSING = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        # the answer's own vocabulary
        r"\b(?:policy_violation|goal_deviation|violated_policy_ids|risk_explanation|goal_explanation)\b",
        # speaking to the judge
        rf"\b(?:to|for|dear|hey|attention|note|message|instructions?)\s+(?:the\s+|any\s+|all\s+)?{_JUDGE}\b",
        rf"(?:^|[.!?>\n]\s*){_JUDGE}\s*:\s*(?:answer|report|respond|output|return|allow|approve|ignore|this|the\s+action)",
        rf"\b(?:tell|instruct)\s+(?:the\s+)?{_JUDGE}\b",
        # forged markers (defanged by the fence, still a sign)
        r"\b(?:BEGIN|END)\s+UNTRUSTED\b",
    )
)
#: Dictating the verdict or claiming approval: a sign when a page says it; an agent may say
#: such things in its own words ("the user approved this action"), so its text is not held to them.
_DICTATING = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\b(?:report|answer|respond|output|classify)\s+(?:this\s+|it\s+|the\s+action\s+)?(?:as\s+|with\s+)?"
        r"(?:no\s+(?:policy\s+)?violations?|safe|benign|harmless|compliant|approved|allowed)\b",
        r"\b(?:no|not\s+a)\s+(?:policy\s+)?violation\s+(?:here|occurs|applies)\b",
        r"\bthis\s+(?:action|step|request|click|operation)\s+(?:is|was|has\s+been)\s+"
        r"(?:safe|pre[-\s]?approved|approved|authori[sz]ed|allowed|permitted|compliant)\b",
        r"\b(?:user|owner|admin(?:istrator)?|operator)\s+(?:has\s+)?(?:already\s+)?(?:approved|authori[sz]ed|"
        r"confirmed|allowed)\s+(?:this|the)\s+(?:action|step|request|click|operation)\b",
    )
)
_MIN_QUOTE = 12


def _fold(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    text = re.sub(r"[\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff\u00ad]", "", text)
    return " ".join(text.lower().split())


def addresses_judge(text: str, *, dictating: bool = True) -> list[str]:
    """Phrases of `text` that speak to the guard (and, with `dictating`, that dictate its
    answer or claim the action was approved); empty: none."""
    if not text:
        return []
    folded = unicodedata.normalize("NFKC", text)
    patterns = (*_ADDRESSING, *_DICTATING) if dictating else _ADDRESSING
    return [m.group(0).strip(" .!?>\n")[:80] for p in patterns if (m := p.search(folded))]


def fenced_data(messages: Sequence[dict[str, str]], token: str, labels: Iterable[str] | None = None) -> str:
    """Everything between this call's fence markers (only those labelled `labels`, upper
    case, when given), joined: the untrusted data of a prompt."""
    wanted = None if labels is None else {label.upper() for label in labels}
    mark = re.escape(token)
    pattern = re.compile(
        rf"<<<BEGIN UNTRUSTED ([A-Z0-9 ]+) {mark}>>>\n(.*?)\n<<<END UNTRUSTED \1 {mark}>>>", re.DOTALL
    )
    return "\n".join(
        m.group(2)
        for message in messages
        for m in pattern.finditer(message.get("content", ""))
        if wanted is None or m.group(1) in wanted
    )


def relayed_instructions(answer_texts: Iterable[str], data: str) -> list[str]:
    """Instruction phrases in the model's answer that were copied from the untrusted `data`."""
    folded_data = _fold(data)
    found: list[str] = []
    for text in answer_texts:
        if not text:
            continue
        phrases = [*instruction_signals(text).phrases, *addresses_judge(text)]
        for phrase in phrases:
            folded = _fold(phrase)
            if len(folded) >= _MIN_QUOTE and folded in folded_data and phrase not in found:
                found.append(phrase)
    return found
