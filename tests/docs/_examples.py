"""The Python examples of README.md, CHANGELOG.md and docs/: where they are, and how each is marked.

A ```python block runs as written unless the HTML comment right above it says
`<!-- not-runnable: REASON -->` (a fragment, a model server it needs …). A runnable block may
also carry `<!-- prints: TEXT -->` above it: its output must contain TEXT.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_FENCE = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)
_MARK = re.compile(r"<!--\s*(not-runnable|prints):\s*(.*?)\s*-->")


@dataclass(frozen=True)
class Example:
    path: Path
    number: int  # 0-based among the file's python blocks
    line: int
    code: str
    not_runnable: str | None  # the reason, when marked
    prints: tuple[str, ...]

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(ROOT)}#{self.number}"


def markdown_files() -> list[Path]:
    return [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").rglob("*.md"))]


def examples(path: Path) -> list[Example]:
    text = path.read_text(encoding="utf-8")
    found = []
    for number, match in enumerate(_FENCE.finditer(text)):
        before = text[: match.start()].rstrip("\n").split("\n")
        marks: list[tuple[str, str]] = []
        while before and _MARK.fullmatch(before[-1].strip()):
            kind, value = _MARK.fullmatch(before.pop().strip()).groups()  # type: ignore[union-attr]
            marks.append((kind, value))
        reasons = [value for kind, value in marks if kind == "not-runnable"]
        found.append(
            Example(
                path=path,
                number=number,
                line=text[: match.start()].count("\n") + 1,
                code=match.group(1),
                not_runnable=reasons[0] if reasons else None,
                prints=tuple(value for kind, value in marks if kind == "prints"),
            )
        )
    return found


def all_examples() -> list[Example]:
    return [example for path in markdown_files() for example in examples(path)]
