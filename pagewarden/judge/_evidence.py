"""The lines of a page the judge must see even when the tree is pruned hard: text that
gives orders to an agent or to the guard, and the text the agent's reasoning says it acts on.

On a page of a thousand lines the pruned tree keeps the target, its landmarks and form;
an injected comment further up would be summarised away ("… 960 lines omitted"), and the
judge would have only the agent's word for what the page said. `evidence_lines` finds such
lines cheaply — a substring scan for English trigger words over the snapshot, a pass over
its distinct words for the lexicon's triggers in the other languages (and for hidden
characters and mixed scripts), the instruction detectors only on the lines these hit, and,
when the agent says it acts on what the page says, word overlap with its reasoning — and
the pruner keeps them.
"""

from __future__ import annotations

import re

from pagewarden.judge._steering import addresses_judge
from pagewarden.rules import (
    instruction_signals,
    reasoning_cites_page,
    reasoning_follows_page,
    significant_tokens,
    trigger_positions,
)

__all__ = ["evidence_lines"]

# Words without which no instruction detector fires (a cheap first pass over the whole page).
# Words without which no instruction detector fires: a cheap first pass over the whole page
# (plain substring search; a line holding one of them goes to the detectors). Short words
# must end there (an optional plural "s"); longer ones may be the start of a longer word.
_SHORT = ("ai", "a.i.", "bot", "llm", "gpt")
_LONG = ("assistant", "agent", "copilot", "model", "ignore", "disregard", "override", "instruction",
         "objective", "system", "judge", "guard", "pagewarden", "violation", "approved", "urgent",
         "immediately", "password", "credential", "token", "secret", "api key", "apikey",
         "deploy key")  # fmt: skip


def _trigger_lines(snapshot: str) -> list[tuple[int, int]]:
    """(start, end) of each line of `snapshot` that holds a trigger word, in page order."""
    lower = snapshot.lower()
    starts: set[int] = set()
    for word in (*_SHORT, *_LONG):
        short = word in _SHORT
        i = lower.find(word)
        while i >= 0:
            after = i + len(word)
            if after < len(lower) and short and lower[after] == "s":
                after += 1
            if (i == 0 or not lower[i - 1].isalnum()) and (
                not short or after >= len(lower) or not lower[after].isalnum()
            ):
                starts.add(lower.rfind("\n", 0, i) + 1)
            i = lower.find(word, i + 1)
    # Other languages, hidden characters, mixed scripts (`pagewarden.rules.trigger_positions`).
    for i in trigger_positions(lower):
        starts.add(lower.rfind("\n", 0, i) + 1)
    out = []
    for start in sorted(starts):
        end = lower.find("\n", start)
        out.append((start, len(lower) if end < 0 else end))
    return out


_TEXT = re.compile(
    r'^\s*-\s+[a-z/][\w/-]*(?:\s+"(?P<name>(?:[^"\\]|\\.)*)")?(?:\s+\[[^\]]*\])*(?::\s*(?P<text>.*))?$'
)
_MIN_CHARS = 24


_WIDE = re.compile("[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af]")


def _width(text: str) -> int:
    """Length, a Chinese, Japanese or Korean character counting as three (a word's worth)."""
    return len(text) + 2 * len(_WIDE.findall(text)) if not text.isascii() else len(text)


def _line_text(line: str) -> tuple[str, str]:
    """A snapshot line's name and text joined (to judge), and a piece of it that occurs in the
    line as written (to find the line again)."""
    match = _TEXT.match(line)
    if match is None:
        return "", ""
    name, text = match.group("name") or "", (match.group("text") or "").strip()
    return " ".join(x for x in (name, text.strip('"')) if x), (text or name)


def evidence_lines(snapshot: str | None, reasoning: str | None = None, *, limit: int = 4) -> list[str]:
    """Up to `limit` text snippets of `snapshot` (aria snapshot lines) that give orders to an
    agent or the guard; then, when the agent's `reasoning` says it acts on what the page
    says, the lines sharing most words with it."""
    if not snapshot:
        return []
    found: list[str] = []
    for start, end in _trigger_lines(snapshot):
        if len(found) >= limit:
            break
        text, piece = _line_text(snapshot[start:end])
        if _width(text) < _MIN_CHARS:
            continue
        if instruction_signals(text).instruction_like or addresses_judge(text):
            found.append(piece)
    cites = reasoning_cites_page(reasoning) or reasoning_follows_page(reasoning)
    wanted = significant_tokens(reasoning or "") if cites else frozenset()
    if len(wanted) >= 3 and len(found) < limit:
        lines = [parts for line in snapshot.splitlines() if len((parts := _line_text(line))[0]) >= _MIN_CHARS]
        scored = []
        for order, (text, piece) in enumerate(lines):
            shared = len(wanted & significant_tokens(text))
            if shared >= 3:
                scored.append((shared, -order, piece))
        for _, _, piece in sorted(scored, reverse=True):
            if len(found) >= limit:
                break
            if piece not in found:
                found.append(piece)
    return found
