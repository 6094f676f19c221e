"""Exfiltration filter: sensitive data leaving for a host not allowed to receive it.

What is sensitive, and where it may go, is exactly what the guard knows, with the same code:
registered secrets (`Guard(secrets=…)`, `guard.add_secret`) and passwords typed in the
session (allowed back to the site they were typed on) from the guard's `SecretRegistry`,
and the ``sensitive_data`` rules of its policies (values, named patterns such as
``card_number`` / ``api_key`` / ``jwt``, ``re:`` regexes, their ``allow_domains``; ``self`` is
the site of the page that sends the request, from ``Origin`` or ``Referer``) through the
rules tier's `SensitiveData.refused_in`.

Looked at, for every request of a guarded session: the URL (and its percent-decoded form), the
query values and path segments joined together (a value split across parameters), every header
(the ``Cookie`` header on its own: the browser sends a cookie only to the site that set it, so
``self`` there is the request's own site, not the page that sends it — a first-party session
cookie that happens to look like a card number is not a leak, on a typed navigation or a
favicon fetch either, which carry no ``Origin`` or ``Referer``), the body (text, form fields
joined, JSON strings joined, multipart fields), base64 runs anywhere in those (decoded), and
each websocket message the page sends. The secret registry also knows URL-, form-, JSON- and
base64-encoded spellings of each value. A request that carries any is refused (403, rule
``sensitive_data``), a websocket message is dropped; both are reported to the session.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any
from urllib.parse import unquote_plus

from mitmproxy import http

from _exfil_before._leaks import FragmentWindow, Literals, literals_of
from pagewarden._url import ParsedURL, host_matches, parse_url, same_site
from pagewarden.proxy._egress import NETWORK_POLICY, refuse_flow
from pagewarden.proxy._refusal import Refusal

__all__ = ["ExfiltrationFilter", "Leak", "outgoing_texts", "own_site_leaks", "scan"]

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


@lru_cache(maxsize=4096)
def _b64_decoded(text: str) -> tuple[str, ...]:
    """The printable texts that base64 runs in `text` decode to (memoised: a page's requests
    repeat their headers)."""
    return tuple(_b64_runs(text))


def _b64_runs(text: str) -> Iterator[str]:
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


def _body_texts(content: bytes, content_type: str) -> tuple[list[str], list[str]]:
    text = content[:BODY_LIMIT].decode("utf-8", "replace")
    out = [text]
    pieces: list[str] = []
    again = _double_decoded(text[:65536])
    if again is not None:
        out.append(again)
    lowered = content_type.lower()
    if "json" in lowered or text.lstrip()[:1] in ("{", "["):
        with contextlib.suppress(ValueError, RecursionError):
            strings = list(_json_strings(json.loads(text)))
            out.append("".join(strings))
            pieces += strings
    if "x-www-form-urlencoded" in lowered or ("=" in text and "&" in text and " " not in text[:200]):
        fields = [part.partition("=") for part in text.split("&")]
        values = [unquote_plus(v) for _, _, v in fields]
        out.append("".join(values))
        pieces += values + [unquote_plus(k) for k, _, _ in fields]
    elif len(text) <= 512 and "\n" not in text:
        pieces.append(text)  # a short text body (a beacon) is one piece
    return out, pieces


#: headers the browser writes itself (a page cannot put data in them): not scanned
_BROWSER_HEADERS = frozenset({
    "host", "user-agent", "accept-encoding", "connection", "content-length", "upgrade",
    "upgrade-insecure-requests", "te", "keep-alive", "proxy-connection", "pragma", "cache-control",
    "sec-websocket-key", "sec-websocket-version", "sec-websocket-extensions", "priority",
})  # fmt: skip


def _scanned_headers(request: http.Request) -> list[tuple[str, str]]:
    return [
        (k, v) for k, v in request.headers.items(multi=True)
        if k.lower() not in _BROWSER_HEADERS and not k.lower().startswith(("sec-ch-", "sec-fetch-"))
    ]  # fmt: skip


def _double_decoded(text: str) -> str | None:
    """`text` percent-decoded until it stops changing (double encoding), if it took more
    than one round."""
    if "%25" not in text:
        return None
    out = text
    for _ in range(3):
        decoded = unquote_plus(out)
        if decoded == out:
            break
        out = decoded
    return out


def outgoing_texts(request: http.Request) -> list[str]:
    """The spellings of what `request` carries, in which sensitive data is looked for."""
    texts, cookie_texts, _ = _outgoing(request)
    return texts + cookie_texts


def _outgoing(request: http.Request) -> tuple[list[str], list[str], list[str]]:
    """(the texts to scan, the texts of its ``Cookie`` headers — scanned as sent by the
    request's own site —, the pieces of data the request carries: query keys and values, path
    segments, form fields, JSON strings, cookie values, page-set header values)."""
    url = request.url
    texts = [url, unquote_plus(url)] if ("%" in url or "+" in url) else [url]
    again = _double_decoded(url)
    if again is not None:
        texts.append(again)
    pieces: list[str] = []
    query = list(request.query.items(multi=True))
    if query:
        texts.append("".join(v for _, v in query))
        texts.append("".join(k + v for k, v in query))
        for k, v in query:
            pieces += [k, v]
    segments = [unquote_plus(s) for s in request.path.split("?", 1)[0].split("/") if s]
    if len(segments) > 1:
        texts.append("".join(segments))
    pieces += segments
    headers = _scanned_headers(request)
    texts.append("\n".join(f"{k}: {v}" for k, v in headers if k.lower() != "cookie"))
    cookies = [v for k, v in headers if k.lower() == "cookie"]
    cookie_texts = cookies + [unquote_plus(v) for v in cookies if "%" in v or "+" in v]
    cookie_texts += [d for t in cookie_texts for d in _b64_decoded(t)]
    for key, value in headers:
        name = key.lower()
        if name == "cookie":
            for part in value.split(";"):
                cookie_name, _, cookie_value = part.strip().partition("=")
                pieces += [cookie_name, unquote_plus(cookie_value)]
        elif name not in ("referer", "origin", "accept", "accept-language", "content-type"):
            pieces.append(value)
    if request.raw_content:
        content = request.get_content(strict=False) or request.raw_content
        content_type = request.headers.get("content-type", "")
        body_texts, body_pieces = _body_texts(content, content_type)
        texts += body_texts
        pieces += body_pieces
        if "multipart/form-data" in content_type.lower():
            with contextlib.suppress(Exception):  # a malformed multipart body is scanned as text above
                fields = [(k.decode("utf-8", "replace"), v.decode("utf-8", "replace"))
                          for k, v in request.multipart_form.items(multi=True)]  # fmt: skip
                texts.append("".join(v for _, v in fields))
                for k, v in fields:
                    pieces += [k, v]
    decoded = [d for t in texts for d in _b64_decoded(t)]
    return texts + decoded, cookie_texts, pieces


def _allowed(host: str, sender: str, domains: tuple[str, ...]) -> bool:
    return any(same_site(host, sender) if d == "self" else host_matches(host, d) for d in domains)


@dataclass(slots=True)
class _Compiled:
    """A guard's sensitive_data rules and protected values, compiled once per state."""

    key: tuple
    rules: list[tuple[Any, Any, Any]]  # (policy, rule, SensitiveData)
    literals: Literals
    memo: dict[tuple[str, str, str], tuple[Leak, ...]] = field(default_factory=dict)


_compiled_lock = threading.Lock()
_compiled: dict[int, _Compiled] = {}


def _compile(guard: Any) -> _Compiled:
    """The compiled rules and values of `guard`, rebuilt when its secrets, typed passwords or
    policies change."""
    from pagewarden.rules.sensitive import SensitiveData

    policies = list(guard.policies)
    typed = getattr(guard.session, "typed_passwords", {}) or {}
    key = (tuple(id(p) for p in policies), len(guard.secrets), tuple(typed.items()))
    found = _compiled.get(id(guard))
    if found is not None and found.key == key:
        return found
    rules = [
        (policy, rule, SensitiveData(policy, rule))
        for policy in policies for rule in policy.rules if rule.kind == "sensitive_data"
    ]  # fmt: skip
    literals = Literals(literals_of(guard, [(p, r) for p, r, _ in rules]))
    compiled = _Compiled(key, rules, literals)
    with _compiled_lock:
        if len(_compiled) > 64:
            _compiled.clear()
        _compiled[id(guard)] = compiled
    return compiled


def scan(
    texts: list[str], host: str, *, guard: Any, initiator: str = "", pieces: list[str] | None = None
) -> list[Leak]:
    """Sensitive data in `texts` that may not go to `host`, by the guard's secrets and the
    ``sensitive_data`` rules of its policies; `pieces` (the request's data, with what the
    same session sent to `host` lately) are checked for a protected value split among them."""
    compiled = _compile(guard)
    leaks: dict[tuple[str, str], Leak] = {}
    page = parse_url(initiator or "about:blank")
    for text in texts:
        for leak in _text_leaks(compiled, guard, text, host, page):
            leaks.setdefault((leak.policy_id, leak.what), leak)
    literals = compiled.literals
    if literals and pieces:
        for index in literals.assembled(literals.relevant(pieces)):
            lit = literals.literals[index]
            if not _allowed(host, page.host, lit.allowed):
                leaks.setdefault((lit.policy_id, lit.what), Leak(lit.what, lit.policy_id, lit.allowed))
    # registered secrets are enforced even without a policy that names them (baseline=False)
    named = {leak.what for leak in leaks.values() if leak.policy_id != NETWORK_POLICY}
    return [leak for leak in leaks.values() if leak.policy_id != NETWORK_POLICY or leak.what not in named]


def _text_leaks(compiled: _Compiled, guard: Any, text: str, host: str, page: ParsedURL) -> tuple[Leak, ...]:
    """The leaks of one text to `host` from `page` (memoised: a page's requests repeat their
    headers and referrer)."""
    key = (text, host, page.host)
    found = compiled.memo.get(key)
    if found is not None:
        return found
    leaks: dict[tuple[str, str], Leak] = {}
    ctx = _Context(guard.secrets, guard.session, page)
    for policy, _rule, evaluator in compiled.rules:
        for what, domains in evaluator.refused_in(text, host, ctx):  # type: ignore[arg-type]
            leaks.setdefault((policy.id, what), Leak(what, policy.id, domains))
    literals = compiled.literals
    for index in literals.find(text) if literals else ():
        lit = literals.literals[index]
        if not _allowed(host, page.host, lit.allowed):
            leaks.setdefault((lit.policy_id, lit.what), Leak(lit.what, lit.policy_id, lit.allowed))
    for secret in guard.secrets.find(text):
        what = f"the registered secret {secret.label!r}"
        domains = tuple(secret.allow_domains)
        if not _allowed(host, page.host, domains):
            leaks.setdefault((NETWORK_POLICY, what), Leak(what, NETWORK_POLICY, domains))
    result = tuple(leaks.values())
    if len(compiled.memo) > 4096:
        compiled.memo.clear()
    compiled.memo[key] = result
    return result


def own_site_leaks(cookie_texts: list[str], request: http.Request, guard: Any) -> list[Leak]:
    """The leaks of `request`'s cookies: judged as sent by the request's own site (a cookie
    only ever goes back to the site that set it), so ``self`` allows them and an explicit
    allow-list (a registered secret's, a policy's) still refuses them."""
    own = f"{request.scheme}://{request.host}/"
    return scan(cookie_texts, request.host, guard=guard, initiator=own)


def _merged(first: list[Leak], second: list[Leak]) -> list[Leak]:
    seen = {(leak.policy_id, leak.what) for leak in first}
    return first + [leak for leak in second if (leak.policy_id, leak.what) not in seen]


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
        #: what each session sent to each host lately (values split across requests)
        self.window = FragmentWindow()

    def _judge(
        self,
        flow: http.HTTPFlow,
        guard: Any,
        texts: list[str],
        pieces: list[str],
        cookie_texts: list[str] | None = None,
    ) -> list[Leak]:
        """The leaks of what `flow` sends (`texts`, `pieces`, and `cookie_texts`, whose
        ``self`` is the request's own site), with the pieces the session sent to the same host
        lately; the pieces are remembered when nothing leaks."""
        request = flow.request
        initiator = self._initiator(request)
        leaks = own_site_leaks(cookie_texts, request, guard) if cookie_texts else []
        if not _compile(guard).literals:  # no fixed value to assemble from pieces
            return _merged(leaks, scan(texts, request.host, guard=guard, initiator=initiator))
        key = (flow.metadata.get("pagewarden_session", ""), request.host)
        relevant = _compile(guard).literals.relevant(pieces)
        window = [*self.window.recent(key), *relevant] if relevant else None
        leaks = _merged(leaks, scan(texts, request.host, guard=guard, initiator=initiator, pieces=window))
        if relevant and not leaks:
            self.window.add(key, relevant)
        return leaks

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
        texts, cookie_texts, pieces = _outgoing(request)
        leaks = self._judge(flow, guard, texts, pieces, cookie_texts)
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
        pieces = [text]
        again = _double_decoded(text)
        if again is not None:
            texts.append(again)
        with contextlib.suppress(ValueError, RecursionError):
            strings = list(_json_strings(json.loads(text)))
            texts.append("".join(strings))
            pieces += strings
        leaks = self._judge(flow, guard, texts, pieces)
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
