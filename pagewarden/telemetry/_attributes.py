"""What a judged step and a network refusal say as OpenTelemetry attributes (plain data, no
OpenTelemetry import).

Built from the guard's events, which are the trace's lines (already redacted: registered
secrets, typed passwords and recognisable credentials are gone). On top of that, attributes
hold only identifiers, kinds, hosts, numbers and the target's role and name, never a typed
value, a URL's path or query, the goal, the agent's reasoning or an explanation; and every
string attribute is scrubbed of the values the session typed (`TypedValues`), so a page that
copies what the agent typed into a label or a host name does not get it into telemetry.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any

from pagewarden._url import parse_url

__all__ = [
    "ADDED_TIME_KEYS",
    "STEP_TIME_KEYS",
    "TypedValues",
    "added_ms",
    "host_of",
    "llm_requests",
    "refusal_attributes",
    "step_attributes",
    "step_duration_ms",
]

#: the parts of a step's time, in the order they happen (``verdict.timings_ms`` keys): reading
#: the page, the deterministic tiers (``total`` covers the world model and the rules), the
#: semantic tier (model included), the approver, running the action
STEP_TIME_KEYS = ("observe", "total", "semantic", "approval", "execute")
#: what the guard adds to an action: everything but the approver's and the action's own time
ADDED_TIME_KEYS = ("observe", "total", "semantic")
#: action kinds whose value is text the agent typed
TYPING = frozenset({"fill", "type", "press_sequentially", "insert_text"})
_MAX_STRING = 200
_SCRUBBED = "[typed]"
#: what the trace's redaction left in place of a secret (not a value to scrub: it says what went)
_REDACTED = re.compile(r"\[REDACTED:[^\]]*\]")


class TypedValues:
    """The latest values the session typed (bounded), scrubbed from every string attribute."""

    def __init__(self, keep: int = 64, min_length: int = 4) -> None:
        self._values: deque[str] = deque(maxlen=keep)
        self._min = min_length

    def note(self, step: Mapping[str, Any]) -> None:
        """Remember the value of a typing step (as recorded: what redaction replaced is gone)."""
        action = step.get("action") or {}
        kind = (action.get("options") or {}).get("kind") or action.get("kind")
        value = action.get("value")
        if kind not in TYPING or not isinstance(value, str):
            return
        for part in (value, *value.split()):  # a page may copy one word of it
            for piece in _REDACTED.split(part):
                piece = piece.strip()
                long_enough = len(piece) >= (self._min if part is value else max(self._min, 6))
                if long_enough and piece not in self._values:
                    self._values.append(piece)

    def scrub(self, text: str) -> str:
        """`text` with every remembered value replaced, cut to a bounded length."""
        lowered = text.lower()
        for value in self._values:
            if value.lower() in lowered:
                text = _replace_folded(text, value)
                lowered = text.lower()
        return text if len(text) <= _MAX_STRING else text[: _MAX_STRING - 1] + "…"


def _replace_folded(text: str, value: str) -> str:
    """`text` with `value` replaced wherever it occurs, ignoring case."""
    out, lowered, needle, start = [], text.lower(), value.lower(), 0
    while (found := lowered.find(needle, start)) >= 0:
        out.append(text[start:found])
        out.append(_SCRUBBED)
        start = found + len(needle)
    out.append(text[start:])
    return "".join(out)


def host_of(url: Any) -> str:
    """The host of `url` as a browser parses it ("" when there is none)."""
    if not isinstance(url, str) or not url:
        return ""
    try:
        return parse_url(url).host or ""
    except Exception:  # noqa: BLE001 - a URL the page wrote: no host rather than an error
        return ""


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def step_duration_ms(timings: Mapping[str, Any]) -> float:
    """How long the step took from the guard's first look to its report (ms)."""
    return sum(v for k in STEP_TIME_KEYS if (v := _number(timings.get(k))) is not None)


def added_ms(timings: Mapping[str, Any]) -> float | None:
    """The guard's added time for the step (ms): reading the page and judging it; None when
    the step was not judged by the tiers (a refusal of the network layer reported)."""
    parts = [v for k in ADDED_TIME_KEYS if (v := _number(timings.get(k))) is not None]
    return sum(parts) if parts else None


def _strings(values: Iterable[Any], scrub: TypedValues) -> list[str]:
    return [scrub.scrub(str(v)) for v in values if v is not None and str(v)]


def step_attributes(record: Mapping[str, Any], scrub: TypedValues) -> dict[str, Any]:
    """The attributes of the ``pagewarden.step`` span for one trace line."""
    step = record.get("step") or {}
    verdict = record.get("verdict") or {}
    action = step.get("action") or {}
    observation = step.get("observation") or {}
    target = observation.get("target") or {}
    prediction = verdict.get("prediction") or {}
    timings = verdict.get("timings_ms") or {}
    llm = verdict.get("llm") or {}
    attrs: dict[str, Any] = {
        "pagewarden.session.id": str(record.get("session") or ""),
        "pagewarden.step.index": int(record.get("index") or 0),
        "pagewarden.action.kind": str(action.get("kind") or ""),
        "pagewarden.decision": str(verdict.get("decision") or ""),
        "pagewarden.decision.score": float(verdict.get("score") or 0.0),
        "pagewarden.enforced": bool(verdict.get("enforced", True)),
        "pagewarden.policies": _strings(verdict.get("violated_policy_ids") or (), scrub),
        "pagewarden.finding.rules": list(
            dict.fromkeys(str(f.get("rule")) for f in verdict.get("findings") or () if f.get("rule"))
        ),
        "pagewarden.tiers": _tiers(verdict, timings),
    }
    if action.get("method"):
        attrs["pagewarden.action.method"] = scrub.scrub(str(action["method"]))
    if isinstance(record.get("ran"), bool):
        attrs["pagewarden.ran"] = record["ran"]
    if verdict.get("approved_by"):
        attrs["pagewarden.approved_by"] = scrub.scrub(str(verdict["approved_by"]))
    if target.get("role"):
        attrs["pagewarden.target.role"] = scrub.scrub(str(target["role"]))
    name = target.get("name") or target.get("label")
    if name:
        attrs["pagewarden.target.name"] = scrub.scrub(str(name))
    host = host_of(observation.get("url"))
    if host:
        attrs["pagewarden.url.host"] = scrub.scrub(host)
    destination = (prediction.get("navigation") or {}).get("url") or (prediction.get("submission") or {}).get(
        "url"
    )
    if (dest := host_of(destination)) and dest != host:
        attrs["pagewarden.destination.host"] = scrub.scrub(dest)
    if prediction.get("consequence"):
        attrs["pagewarden.consequence"] = str(prediction["consequence"])
    if verdict.get("tier_errors"):
        attrs["pagewarden.tier_errors"] = len(verdict["tier_errors"])
    for key, value in timings.items():
        if (number := _number(value)) is not None:
            attrs[f"pagewarden.time.{key}_ms"] = number
    if (added := added_ms(timings)) is not None:
        attrs["pagewarden.added_ms"] = round(added, 3)
    calls = int(llm.get("calls") or 0) if isinstance(llm, Mapping) else 0
    attrs["pagewarden.llm.calls"] = calls
    if calls:
        attrs["pagewarden.llm.model"] = str(llm.get("model") or "")
        attrs["pagewarden.llm.input_tokens"] = int(llm.get("prompt_tokens") or 0)
        attrs["pagewarden.llm.output_tokens"] = int(llm.get("completion_tokens") or 0)
        attrs["pagewarden.llm.reasons"] = [str(r) for r in llm.get("reasons") or ()]
        if llm.get("error_kind"):
            attrs["pagewarden.llm.error_kind"] = str(llm["error_kind"])
    return attrs


def _tiers(verdict: Mapping[str, Any], timings: Mapping[str, Any]) -> list[str]:
    """The tiers that looked at the step (the deterministic ones run on every judged step,
    even when the verdict names only the model's)."""
    tiers = [t for t in ("worldmodel", "rules") if t in timings]
    tiers += [str(t) for t in verdict.get("tiers") or () if str(t) not in tiers]
    return tiers


def llm_requests(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The model calls of a step (``verdict.llm.requests``), each with its purpose, start
    offset in the semantic stage, latency, tokens and error kind."""
    llm = (record.get("verdict") or {}).get("llm") or {}
    requests = llm.get("requests") if isinstance(llm, Mapping) else None
    return [r for r in requests or () if isinstance(r, Mapping)]


def refusal_attributes(data: Mapping[str, Any], scrub: TypedValues) -> dict[str, Any]:
    """The attributes of a ``pagewarden.network.refusal`` span event (a ``network`` guard
    event): what was refused, by which rule of which policy, at which layer, and the host;
    never the URL (its path and query may carry what the page tried to send)."""
    attrs: dict[str, Any] = {
        "pagewarden.network.action": str(data.get("action") or ""),
        "pagewarden.network.rule": str(data.get("rule") or ""),
        "pagewarden.network.policy_id": str(data.get("policy_id") or ""),
        "pagewarden.network.layer": str(data.get("layer") or "network"),
        "pagewarden.network.subframe": bool(data.get("subframe", False)),
    }
    if data.get("method"):
        attrs["http.request.method"] = str(data["method"]).upper()[:16]
    host = data.get("host") if isinstance(data.get("host"), str) else ""
    if host:
        attrs["pagewarden.network.host"] = scrub.scrub(host)
    return attrs
