"""Exfiltration filter: sensitive data leaving for a host not allowed to receive it.

What is sensitive, and where it may go, is exactly what the guard knows, with the same code:
registered secrets (`Guard(secrets=…)`, `guard.add_secret`) and passwords typed in the
session (allowed back to the site they were typed on) from the guard's `SecretRegistry`,
and the ``sensitive_data`` rules of its policies (values, named patterns such as
``card_number`` / ``api_key`` / ``jwt``, ``re:`` regexes, their ``allow_domains``; ``self`` is
the site of the page that sends the request, from ``Origin`` or ``Referer``) through the
rules tier's `SensitiveData.refused_in`.

Looked at, for every request of a guarded session: the URL (and its percent-decoded form),
the query values and path segments joined together (a value split across parameters), every
header, the body (text, form fields joined, JSON strings joined, multipart fields), base64
runs anywhere in those (decoded), and each websocket message the page sends. The secret
registry also knows URL-, form-, JSON- and base64-encoded spellings of each value. A request
that carries any is refused (403, rule ``sensitive_data``), a websocket message is dropped;
both are reported to the session.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote_plus

from mitmproxy import http

from pagewarden._url import ParsedURL, host_matches, parse_url, same_site
from pagewarden.proxy._egress import NETWORK_POLICY, refuse_flow
from pagewarden.proxy._refusal import Refusal

__all__ = ["ExfiltrationFilter", "Leak", "outgoing_texts", "scan"]

#: Bodies are scanned up to this size (larger uploads: their first part).
BODY_LIMIT = 4 * 1024 * 1024
_B64 = re.compile(r"[A-Za-z0-9+/_\-]{12,}={0,2}")


@dataclass(frozen=True, slots=True)
class Leak:
    """Sensitive data found in a request: what (never the value itself), and whose rule."""

    what: str
    policy_id: str
    allowed: tuple[str, ...]


@dataclass(slots=True)
class _Context:
    """What `SensitiveData.refused_in` reads of a rule context."""

    secrets: Any
    session: Any
    page_url: ParsedURL


def _b64_decoded(text: str) -> Iterator[str]:
    for match in _B64.finditer(text):
        run = match.group(0).rstrip("=")
        for alphabet in (None, b"-_"):
            try:
                padded = run + "=" * (-len(run) % 4)
                raw = base64.b64decode(padded, altchars=alphabet, validate=alphabet is None)
            except (binascii.Error, ValueError):
                continue
            decoded = raw.decode("utf-8", "ignore")
            if decoded and sum(ch.isprintable() for ch in decoded) >= 0.9 * len(decoded):
                yield decoded
                break


def _json_strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _json_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _json_strings(item)
    elif value is not None:
        yield str(value)


def _body_texts(content: bytes, content_type: str) -> list[str]:
    text = content[:BODY_LIMIT].decode("utf-8", "replace")
    out = [text]
    lowered = content_type.lower()
    if "json" in lowered or text.lstrip()[:1] in ("{", "["):
        with contextlib.suppress(ValueError):
            out.append("".join(_json_strings(json.loads(text))))
    if "x-www-form-urlencoded" in lowered or ("=" in text and "&" in text and " " not in text[:200]):
        values = [unquote_plus(part.partition("=")[2]) for part in text.split("&")]
        out.append("".join(values))
    return out


def outgoing_texts(request: http.Request) -> list[str]:
    """The spellings of what `request` carries, in which sensitive data is looked for."""
    texts = [request.url, unquote_plus(request.url)]
    query = list(request.query.items(multi=True))
    if query:
        texts.append("".join(v for _, v in query))
        texts.append("".join(k + v for k, v in query))
    segments = [unquote_plus(s) for s in request.path.split("?", 1)[0].split("/") if s]
    if len(segments) > 1:
        texts.append("".join(segments))
    texts.append("\n".join(f"{k}: {v}" for k, v in request.headers.items(multi=True)))
    if request.raw_content:
        content = request.get_content(strict=False) or request.raw_content
        texts += _body_texts(content, request.headers.get("content-type", ""))
        if "multipart/form-data" in request.headers.get("content-type", "").lower():
            with contextlib.suppress(Exception):  # a malformed multipart body is scanned as text above
                fields = request.multipart_form.items(multi=True)
                texts.append("".join(v.decode("utf-8", "replace") for _, v in fields))
    decoded = [d for t in texts for d in _b64_decoded(t)]
    return texts + decoded


def _allowed(host: str, sender: str, domains: tuple[str, ...]) -> bool:
    return any(same_site(host, sender) if d == "self" else host_matches(host, d) for d in domains)


def scan(texts: list[str], host: str, *, guard: Any, initiator: str = "") -> list[Leak]:
    """Sensitive data in `texts` that may not go to `host`, by the guard's secrets and the
    ``sensitive_data`` rules of its policies."""
    from pagewarden.policies.rules.sensitive import SensitiveData

    leaks: dict[tuple[str, str], Leak] = {}
    page = parse_url(initiator or "about:blank")
    ctx = _Context(guard.secrets, guard.session, page)
    for policy in guard.policies:
        for rule in policy.rules:
            if rule.kind != "sensitive_data":
                continue
            compiled = SensitiveData(policy, rule)
            for text in texts:
                for what, domains in compiled.refused_in(text, host, ctx):  # type: ignore[arg-type]
                    leaks.setdefault((policy.id, what), Leak(what, policy.id, domains))
    # registered secrets are enforced even without a policy that names them (baseline=False)
    named = {leak.what for leak in leaks.values()}
    for text in texts:
        for secret in guard.secrets.find(text):
            what = f"the registered secret {secret.label!r}"
            domains = tuple(secret.allow_domains)
            if what not in named and not _allowed(host, page.host, domains):
                leaks.setdefault((NETWORK_POLICY, what), Leak(what, NETWORK_POLICY, domains))
    return list(leaks.values())


class ExfiltrationFilter:
    """mitmproxy addon: refuse requests (and drop websocket messages) that carry sensitive
    data to a host not allowed for it (see the module docstring).

    `guard_for(flow)` names the guard whose secrets and policies apply (the session the
    request belongs to), or None to let the request through unjudged (no guarded session);
    `report(flow, refusal)` files a refusal with that session.
    """

    def __init__(
        self,
        guard_for: Callable[[http.HTTPFlow], Any],
        report: Callable[[http.HTTPFlow, Refusal], None],
    ) -> None:
        self.guard_for = guard_for
        self.report = report

    @staticmethod
    def _initiator(request: http.Request) -> str:
        origin = request.headers.get("origin", "")
        if origin and origin != "null":
            return origin
        return request.headers.get("referer", "")

    def request(self, flow: http.HTTPFlow) -> None:
        if flow.response is not None:
            return
        guard = self.guard_for(flow)
        if guard is None:
            return
        request = flow.request
        leaks = scan(outgoing_texts(request), request.host, guard=guard, initiator=self._initiator(request))
        if leaks:
            refusal = self._refusal(flow, leaks, guard)
            refuse_flow(flow, refusal)
            self.report(flow, refusal)

    def websocket_message(self, flow: http.HTTPFlow) -> None:
        assert flow.websocket is not None
        message = flow.websocket.messages[-1]
        if not message.from_client:
            return
        guard = self.guard_for(flow)
        if guard is None:
            return
        text = message.content.decode("utf-8", "replace")
        texts = [text, *(_b64_decoded(text))]
        with contextlib.suppress(ValueError):
            texts.append("".join(_json_strings(json.loads(text))))
        leaks = scan(texts, flow.request.host, guard=guard, initiator=self._initiator(flow.request))
        if leaks:
            message.drop()
            self.report(flow, self._refusal(flow, leaks, guard, websocket=True))

    @staticmethod
    def _refusal(flow: http.HTTPFlow, leaks: list[Leak], guard: Any, websocket: bool = False) -> Refusal:
        """The refusal, its URL redacted (it may carry the very data refused)."""
        from pagewarden.secrets import redact_credentials

        request = flow.request
        where = "a websocket message" if websocket else "the request"
        what = ", ".join(leak.what for leak in leaks[:3])
        reason = f"{where} carries {what}, which {request.host} may not receive"
        url = request.url.replace("http", "ws", 1) if websocket else request.url
        url = guard.secrets.redact(redact_credentials(url))
        return Refusal(
            "exfiltration", url, request.host, "sensitive_data", leaks[0].policy_id, reason, request.method
        )
