"""A deterministic token estimate, for prompt budgets and for servers that report no usage."""

from __future__ import annotations

__all__ = ["estimate_tokens"]


def estimate_tokens(text: str) -> int:
    """About how many tokens `text` is for a BPE tokenizer (4 characters a token)."""
    return (len(text) + 3) // 4
