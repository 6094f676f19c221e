"""Reading a model's answer into a pydantic model: JSON (fenced, bare, repaired), then XML,
then structured ``key: value`` text — SafePred's order — validated by the schema.

Every strategy ends in ``schema.model_validate``: nothing unvalidated leaves this module.
`OutputParseError` says what each strategy found wrong (for the format-retry message).
"""

from __future__ import annotations

import html
import json
import re
import types
import typing
from typing import Any, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

__all__ = ["OutputParseError", "parse_output", "repair_json"]

M = TypeVar("M", bound=BaseModel)

_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+\-]*)[ \t]*\n?(.*?)(?:```|$)", re.DOTALL)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")
_LITERALS = {"true": "true", "false": "false", "null": "null", "True": "true", "False": "false",
             "None": "null", "NaN": "null", "Infinity": "null", "undefined": "null"}  # fmt: skip
_EMPTY = frozenset({"", "none", "n/a", "na", "null", "[]", "-", "nothing"})


class OutputParseError(ValueError):
    """The answer could not be read into the schema; the message lists each strategy's fault."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems) if problems else "empty answer")


def parse_output(text: str, schema: type[M]) -> M:
    """`text` read into `schema` (JSON, then XML, then structured text)."""
    text = _THINK.sub("", text or "").strip()
    if not text:
        raise OutputParseError(["the answer was empty"])
    problems: list[str] = []
    found: tuple[M, tuple[int, int]] | None = None
    for candidate, span in _json_candidates(text):
        if found is not None and span[0] < found[1][1] and found[1][0] < span[1]:
            continue  # inside (or around) the answer already read
        for attempt in (candidate, None):
            try:
                data = json.loads(attempt if attempt is not None else repair_json(candidate))
            except (json.JSONDecodeError, RecursionError) as exc:
                if attempt is None and found is None:
                    problems.append(f"JSON: {exc.msg if isinstance(exc, json.JSONDecodeError) else exc}")
                continue
            try:
                parsed = schema.model_validate(_unwrap(data, schema))
            except ValidationError as exc:
                if found is None:
                    problems.append(f"JSON does not match the schema: {_brief(exc)}")
                break
            if found is None:
                found = (parsed, span)
            elif parsed.model_dump() != found[0].model_dump():
                # Two answers that disagree: reading the first would be a guess.
                raise OutputParseError(["several JSON objects in the answer disagree; give exactly one"])
            break
    if found is not None:
        return found[0]
    if "<" in text:
        data = _from_xml(text, schema)
        if data:
            try:
                return schema.model_validate(data)
            except ValidationError as exc:
                problems.append(f"XML does not match the schema: {_brief(exc)}")
    data = _from_text(text, schema)
    if data:
        try:
            return schema.model_validate(data)
        except ValidationError as exc:
            problems.append(f"text does not match the schema: {_brief(exc)}")
    if not problems:
        problems.append("no JSON object, XML fields or 'field: value' lines found")
    raise OutputParseError(list(dict.fromkeys(problems)))


def _brief(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors(include_input=False, include_url=False)[:4]:
        where = ".".join(str(p) for p in error["loc"]) or "answer"
        parts.append(f"{where}: {error['msg']}")
    return ", ".join(parts)


# -- JSON -------------------------------------------------------------------------------------
def _json_candidates(text: str) -> list[tuple[str, tuple[int, int]]]:
    """Fenced blocks first, then each balanced-looking object from a '{' or '[', then the
    whole text; each with its span in `text`."""
    out: dict[str, tuple[int, int]] = {}
    for match in _FENCE.finditer(text):
        body = match.group(2).strip()
        if body:
            out.setdefault(body, match.span(2))
    starts = [i for i, c in enumerate(text) if c in "{["][:8]
    for start in starts:
        end = _balanced_end(text, start)
        out.setdefault(text[start:end], (start, end))
    out.setdefault(text, (0, len(text)))
    return list(out.items())


def _balanced_end(text: str, start: int) -> int:
    """Index after the bracket closing the one at `start` (the text's end if never closed)."""
    depth = 0
    quote: str | None = None
    i = start
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(text)


def repair_json(text: str) -> str:
    """Common model mistakes made valid: single quotes, Python literals, unquoted keys and
    words, comments, trailing commas, and a truncated end (open strings and brackets closed)."""
    out: list[str] = []
    stack: list[str] = []
    quote: str | None = None
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if quote:
            if c == "\\" and i + 1 < n:
                nxt = text[i + 1]
                out.append("'" if nxt == "'" else text[i : i + 2])
                i += 2
                continue
            if c == quote:
                out.append('"')
                quote = None
            elif c == '"':
                out.append('\\"')
            elif c == "\n":
                out.append("\\n")
            elif c in "\t\r":
                out.append("\\t" if c == "\t" else "\\r")
            else:
                out.append(c)
            i += 1
            continue
        if c in "\"'":
            quote = c
            out.append('"')
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            continue
        elif c in "{[":
            stack.append("}" if c == "{" else "]")
            out.append(c)
        elif c in "}]":
            _drop_trailing_comma(out)
            if stack:
                stack.pop()
            out.append(c)
        elif c.isalpha() or c == "_":
            match = _IDENT.match(text, i)
            assert match is not None
            word = match.group(0)
            i = match.end()
            if word in _LITERALS:
                out.append(_LITERALS[word])
            else:
                out.append(json.dumps(word))
            continue
        else:
            out.append(c)
        i += 1
    if quote:
        out.append('"')
    joined = "".join(out).rstrip()
    # A truncated end: drop a dangling comma, colon or key, then close what is open.
    while True:
        before = joined
        joined = re.sub(r"[,:]\s*$", "", joined).rstrip()
        if stack and stack[-1] == "}":
            joined = re.sub(r'([{,])\s*"(?:[^"\\]|\\.)*"\s*$', r"\1", joined).rstrip()
            joined = re.sub(r",\s*$", "", joined).rstrip()
        if joined == before:
            break
    return joined + "".join(reversed(stack))


def _drop_trailing_comma(out: list[str]) -> None:
    j = len(out) - 1
    while j >= 0 and out[j].isspace():
        j -= 1
    if j >= 0 and out[j] == ",":
        del out[j]


def _field_names(schema: type[BaseModel]) -> set[str]:
    names = set(schema.model_fields)
    names.update(f.alias for f in schema.model_fields.values() if f.alias)
    return names


def _unwrap(data: Any, schema: type[BaseModel]) -> Any:
    """The schema's object inside a one-key wrapper ({"answer": {...}}) or a one-item list."""
    names = _field_names(schema)
    if isinstance(data, list) and len(data) == 1:
        data = data[0]
    if isinstance(data, dict) and not names & set(data) and len(data) == 1:
        (inner,) = data.values()
        if isinstance(inner, dict) and names & set(inner):
            return inner
    return data


# -- annotations ------------------------------------------------------------------------------
def _strip_optional(tp: Any) -> Any:
    if get_origin(tp) in (Union, types.UnionType):
        args = [a for a in get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    if get_origin(tp) is typing.Annotated:
        return get_args(tp)[0]
    return tp


def _kind(tp: Any) -> tuple[str, Any]:
    """('list', item type) | ('model', cls) | ('dict', None) | ('scalar', tp)."""
    tp = _strip_optional(tp)
    origin = get_origin(tp)
    if origin in (list, tuple, set, frozenset):
        args = get_args(tp)
        return "list", (_strip_optional(args[0]) if args else str)
    if origin is dict or tp is dict:
        return "dict", None
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return "model", tp
    return "scalar", tp


def _key(name: str) -> str:
    return re.sub(r"[\s\-]+", "_", name.strip().lower())


# -- XML --------------------------------------------------------------------------------------
def _xml_text(value: str) -> str:
    value = re.sub(r"<!\[CDATA\[(.*?)\]\]>", r"\1", value, flags=re.DOTALL)
    return html.unescape(value).strip()


def _xml_children(text: str) -> list[tuple[str, str]]:
    pattern = r"<([A-Za-z_][\w\-.]*)[^>]*>(.*?)</\1\s*>"
    return [(m.group(1), m.group(2)) for m in re.finditer(pattern, text, re.S)]


def _xml_value(tp: Any, inner: str) -> Any:
    kind, arg = _kind(tp)
    if kind == "list":
        children = _xml_children(inner)
        if children:
            sub_kind, sub = _kind(arg)
            if sub_kind == "model":
                return [_from_xml(body, sub) for _, body in children]
            return [_xml_text(body) for _, body in children]
        flat = _xml_text(inner)
        return [] if flat.lower() in _EMPTY else [p.strip() for p in re.split(r"[,\n]", flat) if p.strip()]
    if kind == "model":
        return _from_xml(inner, arg)
    if kind == "dict":
        return {name: _xml_text(body) for name, body in _xml_children(inner)}
    return _xml_text(inner)


def _from_xml(text: str, schema: type[BaseModel]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, field in schema.model_fields.items():
        tags = {name, name.replace("_", "-"), field.alias or name}
        for tag in tags:
            match = re.search(rf"<{re.escape(tag)}\b[^>]*>(.*?)</{re.escape(tag)}\s*>", text, re.S | re.I)
            if match:
                out[field.alias or name] = _xml_value(field.annotation, match.group(1))
                break
    return out


# -- structured text --------------------------------------------------------------------------
_LINE = re.compile(r"^\s*(?:[-*+#>]+\s*)?\**\s*([A-Za-z][A-Za-z0-9 _\-]{0,60}?)\s*\**\s*[:=]\s*\**\s*(.*)$")
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+(.*)$")


def _from_text(text: str, schema: type[BaseModel]) -> dict[str, Any]:
    fields = {_key(name): name for name in schema.model_fields}
    for name, field in schema.model_fields.items():
        if field.alias:
            fields[_key(field.alias)] = name
        if field.title:
            fields[_key(field.title)] = name
    blocks: dict[str, list[str]] = {}
    current: str | None = None
    for line in text.splitlines():
        match = _LINE.match(line)
        key = _key(match.group(1)) if match else None
        if match and key in fields:
            current = fields[key]
            blocks[current] = [match.group(2).strip().strip("*").strip()]
        elif current is not None:
            blocks[current].append(line)
    out: dict[str, Any] = {}
    for name, lines in blocks.items():
        field = schema.model_fields[name]
        out[field.alias or name] = _text_value(field.annotation, lines)
    return out


def _text_value(tp: Any, lines: list[str]) -> Any:
    kind, arg = _kind(tp)
    head = lines[0] if lines else ""
    rest = [line for line in lines[1:] if line.strip()]
    if kind == "list":
        items = [m.group(1).strip() for m in map(_BULLET.match, rest) if m]
        if head and head.lower() not in _EMPTY:
            stripped = head.strip("[]")
            items = [p.strip().strip("'\"") for p in stripped.split(",") if p.strip()] + items
        return items
    if kind in ("model", "dict"):
        body = "\n".join(line.strip() for line in rest)
        return (
            _from_text(body, arg)
            if kind == "model"
            else dict((m.group(1).strip(), m.group(2).strip()) for m in map(_LINE.match, rest) if m)
        )
    text = " ".join([head, *(line.strip() for line in rest)]).strip()
    return text
