"""Pruning the aria snapshot for prompts: bounded size, the target's neighbourhood kept."""

from __future__ import annotations

__all__ = ["prune_snapshot"]


def prune_snapshot(snapshot: str, *, focus: str = "", max_chars: int = 12_000) -> str:
    """`snapshot` cut to `max_chars`, keeping the top of the page and the lines around `focus`.

    Dropped stretches are marked ``… (N lines omitted)`` so a reader knows the tree is partial.
    """
    if len(snapshot) <= max_chars:
        return snapshot
    lines = snapshot.splitlines()
    keep: set[int] = set(range(min(len(lines), 40)))
    if focus:
        needle = focus.lower()[:80]
        hits = [i for i, line in enumerate(lines) if needle and needle in line.lower()]
        for hit in hits[:3]:
            keep.update(range(max(0, hit - 60), min(len(lines), hit + 60)))
    out: list[str] = []
    size = 0
    skipped = 0
    for index, line in enumerate(lines):
        if index in keep and size + len(line) + 1 <= max_chars:
            if skipped:
                out.append(f"… ({skipped} lines omitted)")
                skipped = 0
            out.append(line)
            size += len(line) + 1
        else:
            skipped += 1
    if skipped:
        out.append(f"… ({skipped} lines omitted)")
    return "\n".join(out)
