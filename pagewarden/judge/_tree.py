"""The accessibility tree cut for a model prompt: what matters for this action, never the whole.

Kept, in order of importance: the target's line with its subtree and the landmark / form
lines above it; dialogs and pop-ups; the lines whose text the deterministic tier flagged
(where a typed value or URL came from, hidden or user-written regions); the target's
nearest siblings; headings. Everything else becomes one summary line per omitted run
(``… 12 lines omitted: 7 links, 2 buttons``). The result stays within a token budget even
when the kept parts alone would not (the target first).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["PrunedTree", "prune_for_prompt"]

_LINE = re.compile(r"^(\s*)-\s+(.*)$")
_ROLE = re.compile(r'^([a-z/][\w/-]*)(?:\s+"((?:[^"\\]|\\.)*)")?')
_LANDMARKS = frozenset(
    {"banner", "main", "navigation", "contentinfo", "complementary", "region", "form", "search",
     "dialog", "alertdialog", "article", "list", "listitem", "table", "row", "group"}
)  # fmt: skip
_DIALOGS = frozenset({"dialog", "alertdialog", "alert"})


def _tokens(text: str) -> int:
    return (len(text) + 3) // 4


@dataclass(frozen=True, slots=True)
class PrunedTree:
    """A pruned tree and how it compares with the whole one (tokens estimated)."""

    text: str
    tokens: int
    whole_tokens: int
    lines: int
    whole_lines: int
    target_found: bool


@dataclass(slots=True)
class _Node:
    index: int
    depth: int
    text: str
    role: str
    name: str
    parent: int | None


def _parse(snapshot: str) -> list[_Node]:
    nodes: list[_Node] = []
    stack: list[tuple[int, int]] = []  # (indent, index)
    for line in snapshot.splitlines():
        match = _LINE.match(line)
        if match is None:
            if not line.strip():
                continue
            indent, body = len(line) - len(line.lstrip()), line.strip()
        else:
            indent, body = len(match.group(1)), match.group(2)
        while stack and stack[-1][0] >= indent:
            stack.pop()
        role_match = _ROLE.match(body)
        role = role_match.group(1) if role_match else ""
        name = (role_match.group(2) or "") if role_match else ""
        node = _Node(len(nodes), len(stack), line.rstrip(), role, name, stack[-1][1] if stack else None)
        nodes.append(node)
        stack.append((indent, node.index))
    return nodes


def _ancestors(nodes: list[_Node], index: int) -> list[int]:
    out = []
    parent = nodes[index].parent
    while parent is not None:
        out.append(parent)
        parent = nodes[parent].parent
    return out


def _subtree(nodes: list[_Node], index: int, limit: int) -> list[int]:
    depth = nodes[index].depth
    out = [index]
    for node in nodes[index + 1 :]:
        if node.depth <= depth or len(out) >= limit:
            break
        out.append(node.index)
    return out


def _find_target(nodes: list[_Node], role: str, name: str) -> int | None:
    if not name and not role:
        return None
    wanted = name.strip().lower()[:80]
    best: tuple[int, int] | None = None
    for node in nodes:
        node_name = node.name.lower()
        score = 0
        if wanted and node_name == wanted:
            score = 3
        elif wanted and len(wanted) >= 3 and wanted in node_name:
            score = 2
        elif wanted and len(wanted) >= 3 and wanted in node.text.lower():
            score = 1
        if score and role and node.role == role:
            score += 2
        if score and (best is None or score > best[0]):
            best = (score, node.index)
    return best[1] if best else None


def _summary(nodes: Iterable[_Node]) -> str:
    roles = Counter(n.role for n in nodes if n.role and not n.role.startswith("/") and n.role != "text")
    top = ", ".join(f"{count} {role}{'s' if count > 1 else ''}" for role, count in roles.most_common(4))
    return top


def prune_for_prompt(
    snapshot: str | None,
    *,
    target_role: str | None = None,
    target_name: str = "",
    flagged: Iterable[str] = (),
    budget_tokens: int = 2000,
    siblings: int = 3,
) -> PrunedTree:
    """The parts of an aria snapshot (``ai`` mode) that matter for acting on the target.

    Args:
        snapshot: the whole snapshot (None or empty gives an empty tree).
        target_role / target_name: the target element's role and accessible name.
        flagged: text snippets the deterministic tier flagged (value sources, untrusted
            regions); lines containing them are kept with their landmark.
        budget_tokens: the most the result may take (estimated tokens).
        siblings: how many siblings on each side of the target are kept.
    """
    snapshot = snapshot or ""
    nodes = _parse(snapshot)
    whole = _tokens(snapshot)
    if not nodes:
        return PrunedTree("", 0, whole, 0, 0, False)
    # Priority 0 is kept first; lower numbers win when the budget is short.
    priority: dict[int, int] = {}

    def want(indexes: Iterable[int], level: int) -> None:
        for i in indexes:
            if level < priority.get(i, 99):
                priority[i] = level

    target = _find_target(nodes, target_role or "", target_name)
    if target is not None:
        want([target], 0)
        want(_ancestors(nodes, target), 0)
        want(_subtree(nodes, target, 12), 1)
        parent = nodes[target].parent
        kin = [n.index for n in nodes if n.parent == parent]
        pos = kin.index(target)
        near = kin[max(0, pos - siblings) : pos + siblings + 1]
        for index in near:
            want(_subtree(nodes, index, 4), 3)
        # The form (or other landmark) the target belongs to, bounded.
        for ancestor in _ancestors(nodes, target)[:3]:
            if nodes[ancestor].role in ("form", "dialog", "alertdialog", "group", "listitem", "article"):
                want(_subtree(nodes, ancestor, 30), 2)
                break
    for node in nodes:
        if node.role in _DIALOGS:
            want(_subtree(nodes, node.index, 25), 1)
            want(_ancestors(nodes, node.index), 1)
    snippets = [s.strip().lower()[:60] for s in flagged if s and len(s.strip()) >= 6]
    if snippets:
        for node in nodes:
            text = node.text.lower()
            if any(s in text for s in snippets):
                want([node.index], 2)
                want(_ancestors(nodes, node.index), 2)
    for node in nodes:
        if node.role == "heading" or (node.role in _LANDMARKS and node.depth <= 2 and node.role != "list"):
            want([node.index], 4)
            want(_ancestors(nodes, node.index), 4)
    # Fill the budget by priority (ancestors come with their lines: an ancestor's level is
    # never worse than its descendants', so it is taken first).
    budget = max(64, budget_tokens) - 16
    chosen: set[int] = set()
    used = 0
    for index in sorted(priority, key=lambda i: (priority[i], i)):
        cost = _tokens(nodes[index].text) + 1
        if used + cost > budget:
            continue
        chosen.add(index)
        used += cost
    out: list[str] = []
    omitted: list[_Node] = []
    omitted_depth = 0

    def flush(depth: int) -> None:
        if omitted:
            what = _summary(omitted)
            pad = "  " * depth
            count = len(omitted)
            out.append(
                f"{pad}- … {count} line{'s' if count != 1 else ''} omitted" + (f": {what}" if what else "")
            )
            omitted.clear()

    for node in nodes:
        if node.index in chosen:
            flush(omitted_depth)
            out.append(node.text)
        else:
            if not omitted:
                omitted_depth = node.depth
            omitted.append(node)
    if omitted:
        flush(omitted_depth)
    text = "\n".join(out)
    # Summary lines can push past the budget on pathological trees: cut, marked.
    while _tokens(text) > budget_tokens and out:
        out.pop(len(out) // 2 if len(out) > 2 else -1)
        text = "\n".join(out)
    return PrunedTree(text, _tokens(text), whole, len(out), len(nodes), target is not None)
