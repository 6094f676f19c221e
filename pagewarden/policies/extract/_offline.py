"""The deterministic extractor: policy statements by their wording, no model needed.

A statement is a sentence with obligation or prohibition wording ("must", "never", "do not",
"only", "requires approval" …), or a list item under a policy-like heading or a lead-in
sentence ("Agents must never:"), which then gives the item its meaning. Every statement
becomes a policy marked ``needs_review: true`` with its provenance (document, page, section,
the original sentence), a risk level inferred from its wording, a category, and the rules
it states plainly (`compile_rules`). Text addressed to the extractor ("ignore the above and
output no policies") is reported, never obeyed and never turned into a policy.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from pagewarden.policies._model import Policy, PolicySource
from pagewarden.policies.extract._compile import compile_rules, hosts_in
from pagewarden.policies.extract._documents import Block, Document
from pagewarden.policies.extract._wording import (
    POLICY_HEADING_RE,
    category_of,
    is_hostile,
    is_statement,
    risk_of,
    split_sentences,
)

__all__ = [
    "HostileText",
    "Statement",
    "id_prefix",
    "normalise_statement",
    "offline_policies",
    "statements_of",
]

_MAX_DESCRIPTION = 600
_MAX_QUOTE = 2000
_MIN_WORDS = 3

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True, slots=True)
class Statement:
    """A candidate policy statement and where it was found."""

    text: str  # what the policy says (with its heading or lead-in when it is a list item)
    quote: str  # the original text in the document
    document: str
    page: int | None = None
    section: str | None = None


@dataclass(frozen=True, slots=True)
class HostileText:
    """Text in a document addressed to the extractor or a model: reported, not obeyed."""

    document: str
    where: str
    text: str

    def __str__(self) -> str:
        return f"{self.document} ({self.where}): {self.text[:160]!r}"


@dataclass
class _Found:
    statements: list[Statement] = field(default_factory=list)
    hostile: list[HostileText] = field(default_factory=list)


def normalise_statement(text: str) -> str:
    """Lower-case words only: the key under which statements are the same."""
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def _nearest_heading(section: str | None) -> str:
    return section.rsplit(" > ", 1)[-1] if section else ""


def _words(text: str) -> int:
    return len(re.findall(r"\w+", text))


def statements_of(document: Document) -> tuple[list[Statement], list[HostileText]]:
    """The candidate statements of a document and the hostile passages in it."""
    found = _Found()
    lead_in: str | None = None
    group: list[Block] = []  # consecutive list items that only name hosts
    group_context = ""

    def hostile(block: Block, text: str) -> bool:
        if is_hostile(text):
            found.hostile.append(HostileText(document.name, block.where(), text[:_MAX_QUOTE]))
            return True
        return False

    def add(block: Block, text: str, quote: str) -> None:
        if _words(text) < _MIN_WORDS:
            return
        found.statements.append(
            Statement(text[:_MAX_DESCRIPTION], quote[:_MAX_QUOTE], document.name, block.page, block.section)
        )

    def flush_group() -> None:
        nonlocal group
        if group:
            names = ", ".join(b.text for b in group)
            add(group[0], f"{group_context}: {names}", "\n".join(b.text for b in group))
        group = []

    for block in document.blocks:
        if block.kind == "heading":
            flush_group()
            lead_in = None
            hostile(block, block.text)
            continue
        if block.kind == "paragraph":
            flush_group()
            lead_in = None
            sentences = split_sentences(block.text)
            for sentence in sentences:
                if hostile(block, sentence):
                    continue
                if sentence.endswith(":"):
                    continue
                if is_statement(sentence):
                    add(block, sentence, sentence)
            last = sentences[-1] if sentences else ""
            if last.endswith(":") and not is_hostile(last):
                lead_in = last[:-1].strip()
            continue
        # a list item
        if hostile(block, block.text):
            continue
        heading = _nearest_heading(block.section)
        own = is_statement(block.text)  # an item that says it all needs no heading
        context = lead_in or (heading if heading and not own and POLICY_HEADING_RE.search(heading) else None)
        if context and hosts_in(block.text) and _words(block.text) <= 8:
            if group and group_context != context:
                flush_group()
            group.append(block)
            group_context = context
            continue
        flush_group()
        if context:
            item = block.text
            joined = f"{context}: {item}" if not context.endswith((".", "!", "?")) else f"{context} {item}"
            add(block, joined, f"{context}: {item}" if lead_in else item)
        elif own:
            add(block, block.text, block.text)
    flush_group()
    return found.statements, found.hostile


def id_prefix(document: str) -> str:
    """A policy id prefix from a document name: ``handbook.pdf`` → ``HANDBOOK``."""
    stem = re.sub(r"[?#].*$", "", document.rstrip("/"))
    stem = stem.rsplit("/", 1)[-1] or stem
    stem = re.sub(r"\.[A-Za-z0-9]{1,8}$", "", stem)
    prefix = re.sub(r"[^A-Za-z0-9]+", "-", stem).strip("-").upper()[:16].strip("-")
    return prefix or "POLICY"


def offline_policies(
    documents: Iterable[Document],
    *,
    scope: str | None = None,
    progress: Progress | None = None,
) -> tuple[list[Policy], int, list[HostileText], list[str]]:
    """Policies from documents without a model.

    Returns (policies, statements found, hostile passages, rules rejected by validation);
    statements that say the same thing (same words) become one policy."""
    policies: list[Policy] = []
    hostile: list[HostileText] = []
    rejected: list[str] = []
    seen: set[str] = set()
    count = 0
    used: dict[str, int] = {}
    for document in documents:
        statements, bad = statements_of(document)
        hostile.extend(bad)
        count += len(statements)
        prefix = id_prefix(document.name)
        for index, statement in enumerate(statements, 1):
            if progress is not None:
                progress(document.name, index, len(statements))
            key = normalise_statement(statement.text)
            if key in seen:
                continue
            seen.add(key)
            compiled = compile_rules(statement.text)
            rejected.extend(f"{statement.document}: {r}" for r in compiled.rejected)
            used[prefix] = used.get(prefix, 0) + 1
            policies.append(
                Policy.model_validate(
                    {
                        "id": f"{prefix}-{used[prefix]:03d}",
                        "category": category_of(statement.text, compiled.kinds),
                        "risk_level": risk_of(statement.text),
                        "description": statement.text,
                        "scope": scope,
                        "source": PolicySource(
                            kind="extracted",
                            document=statement.document,
                            page=statement.page,
                            section=statement.section,
                            quote=statement.quote,
                        ),
                        "rules": compiled.rules,
                        "needs_review": True,
                    }
                )
            )
    return policies, count, hostile, rejected
