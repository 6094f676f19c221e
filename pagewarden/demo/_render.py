"""A minimal template renderer for the demo site's hand-written HTML.

``{{name}}`` inserts an HTML-escaped value, ``{{{name}}}`` inserts raw HTML, and dotted names
(``{{votes.p1}}``) look into nested mappings. A missing name is an error, not a blank.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = ["TEMPLATES", "render", "render_string"]

#: Where the templates of the demo site live (package data).
TEMPLATES = Path(__file__).parent / "site" / "templates"

_PLACEHOLDER = re.compile(r"\{\{(\{)?\s*([\w.\-]+)\s*\}?\}\}")


def _lookup(values: Mapping[str, Any], name: str) -> Any:
    current: Any = values
    for part in name.split("."):
        if not isinstance(current, Mapping) or part not in current:
            raise KeyError(f"template value {name!r} is missing")
        current = current[part]
    return current


def render_string(template: str, values: Mapping[str, Any]) -> str:
    """Fill the placeholders of `template` from `values`."""

    def fill(match: re.Match[str]) -> str:
        raw, name = match.group(1), match.group(2)
        value = _lookup(values, name)
        return str(value) if raw else html.escape(str(value))

    return _PLACEHOLDER.sub(fill, template)


@lru_cache(maxsize=64)
def _read(name: str) -> str:
    return (TEMPLATES / name).read_text(encoding="utf-8")


def render(name: str, values: Mapping[str, Any] | None = None, /, **more: Any) -> str:
    """Render the template file `name` (relative to `TEMPLATES`)."""
    return render_string(_read(name), {**(values or {}), **more})
