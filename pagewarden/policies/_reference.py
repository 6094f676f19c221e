"""The field-by-field reference of every rule kind, generated from the rule models.

`pagewarden policies schema` prints it, and the docs site's rule reference
(docs/reference/rules.md) is `reference_markdown()` put in by a build hook (docs_hooks.py), so
the documentation cannot drift from the code.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from pagewarden.policies._rules_schema import _PATTERN_KINDS, _RULE_MODELS, SequenceStep

__all__ = ["FieldDoc", "KindDoc", "reference_markdown", "rule_reference"]


# How a field is written, by field name where the annotation alone does not say it.
_TYPES_BY_NAME = {
    "actions": "action kind or list",
    "selectors": "selector or list",
    "match": "text or list",
    "message_terms": "text or list",
    "patterns": "pattern or list",
    "values": "text or list",
    "allow_domains": "domain pattern or list",
    "subresources": "domain pattern or list",
    "ugc_selectors": "selector or list",
    "steps": "list of steps",
}


@dataclass(frozen=True)
class FieldDoc:
    """One field of a rule kind: how it is written, whether it is required, what it means."""

    name: str
    type: str
    default: str  # "required" when it must be given
    description: str
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class KindDoc:
    """One rule kind: its summary, whether it has a shorthand form, its fields."""

    kind: str
    summary: str
    shorthand: bool
    fields: tuple[FieldDoc, ...]

    def to_dict(self) -> dict[str, Any]:
        """JSON form (for `pagewarden policies schema --json`)."""
        return asdict(self)


def _type(name: str, info: FieldInfo) -> str:
    if name in _TYPES_BY_NAME:
        return _TYPES_BY_NAME[name]
    annotation = info.annotation
    if annotation is bool:
        return "true / false"
    if annotation is int:
        return "integer ≥ 0"
    return "text"


def _default(info: FieldInfo) -> str:
    if info.is_required():
        return "required"
    value = info.default_factory() if info.default_factory is not None else info.default  # type: ignore[call-arg]
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return str(value)


def _fields(model: type[BaseModel], prefix: str = "") -> list[FieldDoc]:
    aliases: dict[str, str] = getattr(model, "aliases", {})
    out: list[FieldDoc] = []
    for name, info in model.model_fields.items():
        out.append(
            FieldDoc(
                name=prefix + name,
                type=_type(name, info),
                default=_default(info),
                description=" ".join((info.description or "").split()),
                aliases=tuple(prefix + a for a, canonical in aliases.items() if canonical == name),
            )
        )
        if name == "steps":
            out.extend(_fields(SequenceStep, prefix="steps[]."))
    return out


def rule_reference() -> list[KindDoc]:
    """Every rule kind with its fields, in the order of `RULE_KINDS`."""
    return [
        KindDoc(
            kind=kind,
            summary=getattr(model, "summary", "") or (model.__doc__ or "").strip().splitlines()[0],
            shorthand=kind in _PATTERN_KINDS,
            fields=tuple(
                FieldDoc(f.name, f.type, f.default, f.description.replace("KIND", kind), f.aliases)
                for f in _fields(model)
            ),
        )
        for kind, model in _RULE_MODELS.items()
    ]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def reference_markdown() -> str:
    """The reference as one Markdown table (the docs site's copy)."""
    lines = [
        "| kind | field | written as | default | meaning |",
        "|---|---|---|---|---|",
    ]
    for doc in rule_reference():
        for index, field in enumerate(doc.fields):
            kind = f"`{doc.kind}`" if index == 0 else ""
            name = f"`{field.name}`" + "".join(f" (or `{a}`)" for a in field.aliases)
            cells = (kind, name, _cell(field.type), _cell(field.default), _cell(field.description))
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
