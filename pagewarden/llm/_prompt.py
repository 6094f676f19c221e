"""Prompts as package files rendered with `string.Template`, and fences for untrusted data.

A prompt file has sections introduced by ``--- system ---`` / ``--- user ---`` lines and
``$name`` placeholders. `PromptTemplate.render` fills every placeholder (a missing or an
unused value is an error, so no template debris can reach a model), drops blank runs, and
refuses an empty section. Optional parts are rendered by code with `block`, which yields
nothing at all for an empty body.

Untrusted text (page content, element text, the agent's reasoning, documents) goes inside a
`Fence`: markers carrying a random token chosen per call, which the data cannot contain, so
the data can neither close its fence nor forge another one.
"""

from __future__ import annotations

import re
import secrets
from functools import cache
from importlib import resources
from string import Template

__all__ = ["Fence", "PromptError", "PromptTemplate", "block"]

_SECTION = re.compile(r"^---\s*(system|user|assistant)\s*---\s*$", re.MULTILINE)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u202a-\u202e\u2066-\u2069]")


class PromptError(ValueError):
    """A prompt template is malformed or was rendered with missing or unknown values."""


# Letters only (16 of 24: 73 random bits): a token with digits can look like a card number or
# a key to the redaction that runs over the finished prompt, which would break the markers.
_TOKEN_LETTERS = "ABCDEFGHJKLMNPQRSTUVWXYZ"


class Fence:
    """Markers around untrusted data, with a random per-call token.

    Use one fence for all the data of one call: ``fence = Fence.around(tree, reasoning)``,
    then ``fence.wrap("page tree", tree)``. The token is 16 random letters (73 bits), never present in
    the data; marker look-alikes in the data (``<<<`` / ``>>>``) are defanged too.
    """

    def __init__(self, token: str | None = None) -> None:
        self.token = token or "".join(secrets.choice(_TOKEN_LETTERS) for _ in range(16))

    @classmethod
    def around(cls, *texts: str | None) -> Fence:
        """A fence whose token occurs in none of `texts`."""
        while True:
            fence = cls()
            if not any(text and fence.token.lower() in text.lower() for text in texts):
                return fence

    def wrap(self, label: str, text: str | None) -> str:
        """`text` between this fence's BEGIN and END markers, labelled (upper-case label)."""
        name = re.sub(r"[^A-Za-z0-9 ]", " ", label).upper().strip()
        data = _CONTROL.sub("", text or "").replace("<<<", "‹‹‹").replace(">>>", "›››")
        if self.token.lower() in data.lower():  # a caller wrapped data it did not fence around
            data = re.sub(re.escape(self.token), "[token removed]", data, flags=re.IGNORECASE)
        begin = f"<<<BEGIN UNTRUSTED {name} {self.token}>>>"
        return f"{begin}\n{data.strip()}\n<<<END UNTRUSTED {name} {self.token}>>>"

    def __repr__(self) -> str:
        return "Fence(<token>)"


def block(title: str, body: str | None) -> str:
    """A titled part of a prompt (``## title``), or the empty string when `body` is empty."""
    body = (body or "").strip()
    return f"## {title}\n{body}" if body else ""


class PromptTemplate:
    """A prompt file of a package: its sections and their placeholders."""

    def __init__(self, text: str, name: str = "prompt") -> None:
        self.name = name
        parts = _SECTION.split(text)
        if len(parts) < 3 or parts[0].strip():
            raise PromptError(f"{name}: must start with a '--- system ---' or '--- user ---' line")
        self.sections: list[tuple[str, Template]] = [
            (parts[i], Template(parts[i + 1].strip("\n"))) for i in range(1, len(parts), 2)
        ]
        self.identifiers: frozenset[str] = frozenset()
        ids: set[str] = set()
        for _, template in self.sections:
            if not template.is_valid():
                raise PromptError(f"{name}: invalid placeholder (use $name or ${{name}}; $$ for a dollar)")
            ids.update(template.get_identifiers())
        self.identifiers = frozenset(ids)

    @classmethod
    @cache
    def load(cls, package: str, filename: str) -> PromptTemplate:
        """The template file `filename` of `package` (read once)."""
        text = resources.files(package).joinpath(filename).read_text("utf-8")
        return cls(text, f"{package}/{filename}")

    def render(self, **values: str) -> list[dict[str, str]]:
        """Chat messages with every placeholder filled; `PromptError` on a missing, unknown or
        non-string value, or when a section renders empty."""
        missing = sorted(self.identifiers - set(values))
        unknown = sorted(set(values) - self.identifiers)
        if missing or unknown:
            raise PromptError(f"{self.name}: missing values {missing}, unknown values {unknown}")
        bad = sorted(k for k, v in values.items() if not isinstance(v, str))
        if bad:
            raise PromptError(f"{self.name}: values must be strings: {bad}")
        messages = []
        for role, template in self.sections:
            text = template.substitute(values)
            text = re.sub(r"[ \t]+\n", "\n", text)
            text = re.sub(r"\n{3,}", "\n\n", text).strip()
            if not text:
                raise PromptError(f"{self.name}: the {role} section rendered empty")
            messages.append({"role": role, "content": text})
        return messages
