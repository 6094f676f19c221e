"""Documents as the extractor sees them: an ordered list of text blocks with provenance.

Every reader (PDF, HTML, Markdown, plain text) turns its source into a `Document`: blocks
of kind ``heading``, ``paragraph`` or ``item`` (a list item), each with the page it is on
(PDF) and the heading path above it (``section``). The extractor never sees the raw file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["Block", "Document", "ExtractionError", "NoTextLayer", "SectionTracker", "clean_text"]

BlockKind = Literal["heading", "paragraph", "item"]

_SPACE_RE = re.compile(r"[ \t\u00a0\u2000-\u200a\u202f\u205f\u3000]+")
_INVISIBLE_RE = re.compile(r"[\u200b-\u200d\u2060\ufeff\u00ad]")


def clean_text(text: str) -> str:
    """One line of normal text: invisible characters removed, whitespace collapsed."""
    text = _INVISIBLE_RE.sub("", text)
    text = text.replace("\r", " ").replace("\n", " ")
    return _SPACE_RE.sub(" ", text).strip()


class ExtractionError(Exception):
    """A source could not be read (missing, unreadable, unsupported, or empty of text)."""

    def __init__(self, source: str, message: str) -> None:
        self.source = source
        self.message = message
        super().__init__(f"{source}: {message}")


class NoTextLayer(ExtractionError):
    """A PDF whose pages carry no text (a scan): it needs OCR, it is not "no policies"."""


@dataclass(frozen=True, slots=True)
class Block:
    """One unit of document text with where it was found."""

    kind: BlockKind
    text: str
    page: int | None = None
    section: str | None = None
    level: int = 0  # heading level (1 = top) for headings

    def where(self) -> str:
        """A readable location: ``page 3, "Data handling"``."""
        parts = []
        if self.page is not None:
            parts.append(f"page {self.page}")
        if self.section:
            parts.append(f"section {self.section!r}")
        return ", ".join(parts) or "start of document"


@dataclass(slots=True)
class Document:
    """A read source: its name (as given), its blocks, and what the reader noticed."""

    name: str
    kind: str  # pdf | html | markdown | text
    blocks: list[Block] = field(default_factory=list)
    pages: int | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def text_chars(self) -> int:
        """How much text the document holds."""
        return sum(len(b.text) for b in self.blocks)


class SectionTracker:
    """The heading path above the current block (``"Security > Passwords"``)."""

    def __init__(self) -> None:
        self._stack: list[tuple[int, str]] = []

    def heading(self, level: int, text: str) -> str | None:
        """Enter a heading; returns the section path of the heading's parent."""
        parent = self.path
        while self._stack and self._stack[-1][0] >= level:
            self._stack.pop()
        parent = self.path
        self._stack.append((level, text[:120]))
        return parent

    @property
    def path(self) -> str | None:
        """The current section path, or None before the first heading."""
        return " > ".join(text for _, text in self._stack) or None
