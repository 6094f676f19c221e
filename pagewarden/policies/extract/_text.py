"""Line-oriented readers: plain text, Markdown, and the text layer of PDF pages.

They share one routine: lines become headings, list items and paragraphs (wrapped lines
joined, hyphenation undone), with the heading path kept as each block's section.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pagewarden.policies.extract._documents import Block, SectionTracker, clean_text

__all__ = ["blocks_from_lines", "markdown_blocks", "text_blocks"]

BULLET_RE = re.compile(r"^\s*(?:[•·▪◦‣∙●○■□➢►✓✔\-\*\+–—]|\(?\d{1,2}[.)]|\(?[a-zA-Z][.)])\s+(?=\S)")
_NUMBERED_HEADING_RE = re.compile(
    r"^(?:(?:section|chapter|part|article)\s+)?(\d+(?:\.\d+)*)\.?\s+(?=[A-Z])", re.I
)
_HEADING_MARK = "\x00heading:"  # a line known to be a heading (underlined in plain text)
_WORD_RE = re.compile(r"[A-Za-z][A-Za-z'’\-]*")
_SMALL_WORDS = frozenset(str.split(
    "a an and or the of for to in on at by with from as is are be not no nor vs via into per"
))


def _looks_like_heading(line: str, following: str = "") -> int:
    """The heading level this line would have (0: not a heading); `following` is the next
    non-blank line (a short sentence-case line is a heading when a sentence starts after it)."""
    text = line.strip()
    if not text or len(text) > 90 or text[-1] in ".,;!?" or (not text[0].isupper() and not text[0].isdigit()):
        return 0
    numbered = _NUMBERED_HEADING_RE.match(text)
    words = _WORD_RE.findall(text)
    if not words or len(words) > 12:
        return 0
    if numbered:
        return numbered.group(1).count(".") + 1
    if text.isupper() and len(words) >= 1 and len(text) >= 4:
        return 1
    big = [w for w in words if w.lower() not in _SMALL_WORDS]
    if big and sum(w[0].isupper() for w in big) / len(big) >= 0.6 and len(words) <= 8:
        return 2
    if text.endswith(":") and len(words) <= 8:
        return 3
    nxt = following.strip()
    if len(words) <= 6 and text[-1].isalnum() and nxt[:1].isupper() and not OBLIGATION_HINT_RE.search(text):
        return 2
    return 0


OBLIGATION_HINT_RE = re.compile(r"\b(must|never|not|should|shall|only|always|may|do|does|is|are)\b", re.I)


def blocks_from_lines(
    lines: Iterable[tuple[str, int | None]],
    tracker: SectionTracker | None = None,
    *,
    guess_headings: bool = True,
) -> list[Block]:
    """Blocks from text lines (each with its page): headings by shape, list items by their
    bullet, paragraphs from consecutive lines up to a blank line or a new block."""
    tracker = tracker or SectionTracker()
    blocks: list[Block] = []
    current: list[str] = []
    current_kind = "paragraph"
    current_page: int | None = None
    previous_ended = True  # the previous line ended a sentence (or there was none)

    def flush() -> None:
        nonlocal current
        if current:
            text = clean_text(" ".join(current).replace("\u00ad ", ""))
            if text:
                blocks.append(Block(current_kind, text, current_page, tracker.path))  # type: ignore[arg-type]
        current = []

    lines = list(lines)
    for index, (raw, page) in enumerate(lines):
        line = raw.rstrip()
        if not line.strip():
            flush()
            previous_ended = True
            continue
        forced = line.startswith(_HEADING_MARK)
        if forced:
            line = line[len(_HEADING_MARK) :]
        bullet = None if forced else BULLET_RE.match(line)
        if forced:
            level = 1
        else:
            level = 0
            if guess_headings and (previous_ended or not current):
                following = next((text for text, _ in lines[index + 1 :] if text.strip()), "")
                level = _looks_like_heading(line, following)
        if bullet and not (level and _NUMBERED_HEADING_RE.match(line.strip())):
            flush()
            current_kind, current_page = "item", page
            current = [line[bullet.end() :].strip()]
        elif level:
            flush()
            text = clean_text(line).rstrip(":")
            tracker.heading(level, text)
            blocks.append(Block("heading", text, page, tracker.path, level))
            current_kind = "paragraph"
        else:
            if not current:
                current_kind, current_page = "paragraph", page
            if current and current[-1].endswith("-") and line[:1].islower():
                current[-1] = current[-1][:-1] + line.strip()
            else:
                current.append(line.strip())
        previous_ended = line.rstrip()[-1:] in ".:!?)" or bool(level)
    flush()
    return blocks


def text_blocks(text: str) -> list[Block]:
    """Blocks of a plain-text document (underlined headings ``===`` / ``---`` understood)."""
    lines = text.splitlines()
    out: list[tuple[str, int | None]] = []
    for index, line in enumerate(lines):
        if re.fullmatch(r"\s*(=+|-+)\s*", line) and index and lines[index - 1].strip():
            continue  # the underline of the heading before
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if line.strip() and re.fullmatch(r"\s*(=+|-+)\s*", following) and len(following.strip()) >= 3:
            out.extend([("", None), (_HEADING_MARK + line.strip(), None), ("", None)])
            continue
        out.append((line, None))
    return blocks_from_lines(out)


_MD_HEADING_RE = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_MD_LINK_RE = re.compile(r"!?\[([^\]]*)\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
_MD_AUTOLINK_RE = re.compile(r"<(https?://[^>\s]+)>")
_MD_EMPHASIS_RE = re.compile(r"(\*\*|__|\*|_|~~)(?=\S)(.+?)(?<=\S)\1")
_MD_CODE_RE = re.compile(r"`+([^`]*)`+")
_HTML_TAG_RE = re.compile(r"<[^>\n]{1,200}>")


def _md_inline(text: str) -> str:
    def link(match: re.Match[str]) -> str:
        label, target = match.group(1).strip(), match.group(2).strip()
        if target.startswith(("http://", "https://", "/")) and target not in label:
            return f"{label} ({target})" if label else target
        return label

    text = _MD_LINK_RE.sub(link, text)
    text = _MD_AUTOLINK_RE.sub(r"\1", text)
    text = _MD_CODE_RE.sub(r"\1", text)
    for _ in range(2):
        text = _MD_EMPHASIS_RE.sub(r"\2", text)
    return _HTML_TAG_RE.sub("", text)


def markdown_blocks(text: str) -> list[Block]:
    """Blocks of a Markdown document: ATX and setext headings, lists, paragraphs; code blocks,
    tables' separator rows, front matter and HTML comments are dropped."""
    tracker = SectionTracker()
    blocks: list[Block] = []
    pending: list[tuple[str, int | None]] = []
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    if text.startswith("---\n"):
        end = text.find("\n---", 4)
        if end != -1:
            text = text[end + 4 :]
    lines = text.splitlines()
    fence: str | None = None

    def flush() -> None:
        if pending:
            # Markdown headings are explicit: no heading guessing inside paragraphs.
            blocks.extend(blocks_from_lines(pending, tracker, guess_headings=False))
            pending.clear()

    for index, line in enumerate(lines):
        stripped = line.strip()
        if fence is not None:
            if stripped.startswith(fence):
                fence = None
            continue
        if stripped.startswith(("```", "~~~")):
            flush()
            fence = stripped[:3]
            continue
        heading = _MD_HEADING_RE.match(line)
        following = lines[index + 1] if index + 1 < len(lines) else ""
        setext = stripped and not BULLET_RE.match(line) and re.fullmatch(r"\s{0,3}(=+|-+)\s*", following)
        if heading or setext:
            flush()
            level = len(heading.group(1)) if heading else (1 if following.strip()[0] == "=" else 2)
            title = clean_text(_md_inline(heading.group(2) if heading else stripped))
            if title:
                tracker.heading(level, title)
                blocks.append(Block("heading", title, None, tracker.path, level))
            continue
        if re.fullmatch(r"\s{0,3}(=+|-+|\*+|_+)\s*", line) or re.fullmatch(r"\s*\|?[\s:|-]+\|[\s:|-]*", line):
            pending.append(("", None))
            continue
        if stripped.startswith(">"):
            line = stripped.lstrip("> ")
        if stripped.startswith("|"):
            line = " ".join(cell.strip() for cell in stripped.strip("|").split("|")) + "."
            pending.append(("", None))
        pending.append((_md_inline(line), None))
    flush()
    return blocks
