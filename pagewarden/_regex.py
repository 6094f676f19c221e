"""Regex building shared by the secret registry and the navigation gate."""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["trie_pattern"]


def trie_pattern(words: Iterable[str]) -> str:
    """A regex matching exactly `words`, with shared prefixes factored out, that takes the
    longest word matching at a position (as an alternation sorted longest first does).

    A search tests a branch per character instead of every word in turn, so patterns of
    thousands of words (a large policy set's secret variants or denied hosts) stay fast, in
    Python and in Playwright's driver alike (the syntax is common to both)."""
    root: dict[str, dict] = {}
    for word in words:
        node = root
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}  # a word ends here

    def emit(node: dict[str, dict]) -> str:
        out: list[str] = []
        while True:
            children = sorted((char, child) for char, child in node.items() if char)
            if not children:
                break
            if len(children) == 1 and "" not in node:
                out.append(re.escape(children[0][0]))  # a run of one branch: no group
                node = children[0][1]
                continue
            body = "|".join(re.escape(char) + emit(child) for char, child in children)
            out.append(f"(?:{body})?" if "" in node else f"(?:{body})")  # greedy: longest first
            break
        return "".join(out)

    return emit(root)
