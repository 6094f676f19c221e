"""``browser_console_messages`` and ``browser_network_requests``: what the current tab logged
and requested (`SessionLog`), as Playwright MCP lists them, with pagewarden's verdict on each
request.

Both lists are page content: console texts and URLs are written by the page (a hostile one
writes orders to the agent into them, or a newline and a forged line). Each message is one
line (its line breaks shown as ``⏎``), judged by the snapshot's instruction detectors
(`strip_texts`: a flagged message, or the URL of a flagged request, is replaced by the
marker), and the list goes back fenced like the page state. Header values that carry
credentials (cookies, authorization, tokens, and ``Accept-Language``, which carries the
session's network-layer token) are hidden; registered secrets are masked by the server.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

from mcp import types

from pagewarden._url import parse_url
from pagewarden.integrations.mcp import _tools as t
from pagewarden.integrations.mcp._errors import ToolFailure
from pagewarden.integrations.mcp._logs import RequestEntry, SessionLog
from pagewarden.integrations.mcp._snapshot import REMOVED, Removed, fence_lines, strip_texts

__all__ = ["HANDLERS", "console_messages", "network_requests"]

_HIDDEN_HEADER = re.compile(r"auth|cookie|token|secret|session|csrf|xsrf|key|password|accept-language", re.I)
_URL_WORDS = re.compile(r"[/?&=#+_.:-]+")
_MAX_BODY = 2000


def _one_line(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\n", " ⏎ ")


def _judge(texts: list[str], strip: bool) -> tuple[list[str], Removed]:
    return strip_texts(texts) if strip else (texts, Removed())


def _log_and_page(server: Any) -> tuple[SessionLog, Any]:
    log: SessionLog = server.browser.log
    return log, server.current_raw_page()


async def _answer(server: Any, title: str, lines: list[str], removed: Removed, filename: str | None) -> list:
    if filename:
        target = server.output_file(filename)
        target.write_text(server.mask("\n".join(lines)) + "\n", encoding="utf-8")
        note = f"Saved {len(lines)} {title.lower()} line(s) to {target}."
        if removed:
            note += f" pagewarden removed {removed.passages} passage(s) that give orders to an AI agent."
        return [types.TextContent(type="text", text=f"### Result\n{note}")]
    body = fence_lines(lines, removed=removed) if lines else f"No {title.lower()}."
    return [types.TextContent(type="text", text=f"### Result\n{body}")]


async def console_messages(server: Any, args: t.ConsoleMessages) -> list:
    """The current tab's console messages at `args.level` and above."""
    await server.browser.page()
    log, page = _log_and_page(server)
    entries = log.console_of(page, level=args.level, everything=bool(args.all))
    texts, removed = _judge([_one_line(e.text) for e in entries], server.guard is not None)
    lines = []
    for entry, text in zip(entries, texts, strict=True):
        where = f" @ {entry.url}:{entry.line}" if entry.url and text != REMOVED else ""
        lines.append(f"[{entry.kind.upper()}] {text}{where}")
    return await _answer(server, "Console messages", lines, removed, args.filename)


def _url_words(url: str) -> str:
    """A URL as the detectors read it: decoded, its separators as spaces."""
    return _URL_WORDS.sub(" ", unquote(unquote(url))).strip()


def _headers(entry: RequestEntry) -> list[str]:
    try:
        headers = entry.request.headers
    except Exception:  # noqa: BLE001 - a request of a closed page
        return []
    out = []
    for name, value in sorted(headers.items()):
        shown = "[hidden by pagewarden]" if _HIDDEN_HEADER.search(name) else _one_line(str(value))[:500]
        out.append(f"    {name}: {shown}")
    return out


def _body(entry: RequestEntry) -> str | None:
    try:
        data = entry.request.post_data
    except Exception:  # noqa: BLE001 - binary or gone
        return "(binary)"
    if data is None:
        return None
    data = _one_line(str(data))
    return data if len(data) <= _MAX_BODY else data[:_MAX_BODY] + " …"


async def network_requests(server: Any, args: t.NetworkRequests) -> list:
    """The current tab's requests since its document loaded, each with its verdict; then the
    refusals no request of the tab shows."""
    await server.browser.page()
    log, page = _log_and_page(server)
    pattern = None
    if args.filter:
        try:
            pattern = re.compile(args.filter)
        except re.error as exc:
            raise ToolFailure(f"filter is not a regular expression: {exc}") from None
    entries = [
        e for e in log.requests_of(page, static=args.static) if pattern is None or pattern.search(e.url)
    ]
    strip = server.guard is not None
    flags, removed = _judge([_url_words(e.url) for e in entries], strip)
    bodies: list[str | None] = [_body(e) if args.requestBody else None for e in entries]
    body_texts, body_removed = _judge([b or "" for b in bodies], strip)
    lines: list[str] = []
    for entry, flag, body, body_text in zip(entries, flags, bodies, body_texts, strict=True):
        line = entry.describe()
        if flag == REMOVED:
            origin = parse_url(entry.url).origin
            line = line.replace(entry.url, f"{origin}/{REMOVED}", 1)
        lines.append(line)
        if args.requestHeaders:
            lines += ["  headers:", *_headers(entry)]
        if body is not None:
            lines.append(f"  body: {body_text}")
    since = log.document_time(page)
    others = [
        d for d in log.unmatched_refusals(since)
        if pattern is None or pattern.search(str(d.get("url") or ""))
    ]  # fmt: skip
    if others:
        other_flags, other_removed = _judge([_url_words(str(d.get("url") or "")) for d in others], strip)
        lines.append(
            "Refused with no request of this tab to show it (a connection, a websocket, a redirect, a frame):"
        )
        for data, flag in zip(others, other_flags, strict=True):
            url = str(data.get("url") or "")
            shown = f"{parse_url(url).origin}/{REMOVED}" if flag == REMOVED else url
            layer = "navigation gate" if data.get("layer") == "gate" else "network layer"
            lines.append(
                f"[{data.get('method') or 'GET'}] {shown} ({data.get('action')}) — REFUSED by pagewarden's "
                f"{layer} ({data.get('policy_id')}, rule {data.get('rule')}): {data.get('reason')}"
            )
        removed = _merge(removed, other_removed)
    return await _answer(server, "Network requests", lines, _merge(removed, body_removed), args.filename)


def _merge(a: Removed, b: Removed) -> Removed:
    if not b:
        return a
    if not a:
        return b
    return Removed(a.passages + b.passages, tuple(sorted({*a.kinds, *b.kinds})))


HANDLERS = {
    "browser_console_messages": console_messages,
    "browser_network_requests": network_requests,
}
