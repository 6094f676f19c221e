"""Decoded views of outgoing data: what a page's encodings of a value turn back into.

A page that knows the exfiltration filter encodes what it sends. Rather than spelling every
protected value under every encoding in advance (`pagewarden.proxy._leaks` keeps that fast
path for the common ones: base64 at the three alignments, hex, percent-encoding), the filter
decodes what a request carries into *views* and searches each of them. `views` applies, to a
text and to every view it yields, each decoder whose mark is in it:

* percent-encoding (``%XX``, ``+``), so double and triple encoding unwrap round by round;
* HTML character references (named, decimal, hexadecimal);
* JSON / JavaScript string escapes (``\\uXXXX``, ``\\xXX``, ``\\/``);
* base64 and base64url runs (any alignment: each run is decoded on its own) and hex runs;
  decoded bytes that are gzip, zlib or raw deflate are inflated (bounded), other bytes are
  kept when they read as text.

Nesting is followed to `DEPTH` rounds, within a size budget proportional to the input, so a
hostile body cannot make the filter work more than a few times its size. Reversal and
characters put between a value's characters (dashes, dots, spaces, zero-width characters) are
matched on the protected values' side (`Literals`), in every view.

`inflate` reads a request body that is itself compressed (gzip, zlib, raw deflate) without a
``Content-Encoding`` header (``CompressionStream`` in the page).
"""

from __future__ import annotations

import base64
import binascii
import html
import re
import zlib
from collections.abc import Iterator
from functools import lru_cache
from urllib.parse import unquote_plus

__all__ = ["DEPTH", "inflate", "mostly_text", "views"]

#: rounds of decoding followed (base64 of hex of a percent-encoded value is three)
DEPTH = 4
#: most bytes one decompression yields (a zip bomb stops here)
INFLATE_LIMIT = 4 * 1024 * 1024
#: views of a text are computed up to this size of text (a larger body: its first part)
VIEW_LIMIT = 1024 * 1024

_B64_RUN = re.compile(r"[A-Za-z0-9+/_\-]{8,}={0,2}")
_HEX_RUN = re.compile(r"(?:[0-9a-fA-F]{2}){6,}")
_PERCENT = re.compile(r"%[0-9a-fA-F]{2}")
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});?")
_JS_ESCAPE = re.compile(r"\\(?:u\{([0-9a-fA-F]{1,6})\}|u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2})|([\\/\"']))")
_GZIP = b"\x1f\x8b"
#: second byte of a zlib header after 0x78 (the four compression levels)
_ZLIB = frozenset({0x01, 0x5E, 0x9C, 0xDA})


def inflate(raw: bytes) -> bytes | None:
    """`raw` decompressed if it is gzip, zlib or raw deflate data (at most `INFLATE_LIMIT`
    bytes of output), else None."""
    if len(raw) < 8:
        return None
    if raw[:2] == _GZIP:
        wbits = 16 + zlib.MAX_WBITS
    elif raw[0] == 0x78 and raw[1] in _ZLIB:
        wbits = zlib.MAX_WBITS
    else:
        wbits = -zlib.MAX_WBITS  # raw deflate has no mark: tried, fails fast on other data
    try:
        out = zlib.decompressobj(wbits).decompress(raw, INFLATE_LIMIT)
    except zlib.error:
        return None
    return out or None


def _text_of(raw: bytes) -> str | None:
    """`raw` as text if it reads as text (inflated first when compressed), else None."""
    if not raw:
        return None
    inflated = inflate(raw) if len(raw) >= 8 and not mostly_text(raw) else None
    if inflated is not None:
        raw = inflated
    text = raw.decode("utf-8", "ignore")
    if len(text) >= 3 and sum(ch.isprintable() or ch in "\r\n\t" for ch in text) >= 0.9 * len(text):
        return text
    return None


def mostly_text(raw: bytes) -> bool:
    """Whether the start of `raw` is (ASCII) text."""
    sample = raw[:256]
    return sum(32 <= b < 127 or b in (9, 10, 13) for b in sample) >= 0.95 * len(sample)


def _b64_views(text: str) -> Iterator[str]:
    for match in _B64_RUN.finditer(text):
        run = match.group(0).rstrip("=")
        if run.isdigit() or (run.isalpha() and (run.islower() or run.isupper())):
            continue  # a number or a plain word is no base64 worth decoding
        padded = run + "=" * (-len(run) % 4)
        alphabets = (b"-_",) if ("-" in run or "_" in run) else (None,)
        for altchars in alphabets:
            try:
                raw = base64.b64decode(padded, altchars=altchars, validate=True)
            except (binascii.Error, ValueError):
                continue
            decoded = _text_of(raw)
            if decoded is not None:
                yield decoded


def _hex_views(text: str) -> Iterator[str]:
    for match in _HEX_RUN.finditer(text):
        run = match.group(0)
        if run.isdigit():
            continue  # digits only: a number, decoded by nobody
        decoded = _text_of(binascii.unhexlify(run))
        if decoded is not None:
            yield decoded


def _js_unescape(text: str) -> str:
    def one(match: re.Match[str]) -> str:
        code = match.group(1) or match.group(2) or match.group(3)
        if code is None:
            return match.group(4)
        value = int(code, 16)
        return chr(value) if value <= 0x10FFFF else match.group(0)

    return _JS_ESCAPE.sub(one, text)


def _decoded_once(text: str) -> Iterator[str]:
    """What one round of each applicable decoder makes of `text` (only what differs)."""
    if "%" in text and _PERCENT.search(text):
        out = unquote_plus(text)
        if out != text:
            yield out
    if "&" in text and _ENTITY.search(text):
        out = html.unescape(text)
        if out != text:
            yield out
    if "\\" in text and _JS_ESCAPE.search(text):
        out = _js_unescape(text)
        if out != text:
            yield out
    yield from _b64_views(text)
    yield from _hex_views(text)


#: texts up to this size have their views memoised (a page's requests repeat their headers);
#: with the budget below, the memo holds at most ~2048 x 24 KiB even under a hostile page
_MEMO_LIMIT = 2048


def views(text: str, depth: int = DEPTH) -> tuple[str, ...]:
    """The decoded views of `text` (not `text` itself), to `depth` rounds of nesting, within
    a budget of a few times its size."""
    if len(text) <= _MEMO_LIMIT:
        return _memoised(text, depth)
    return _views(text[:VIEW_LIMIT], depth)


@lru_cache(maxsize=2048)
def _memoised(text: str, depth: int) -> tuple[str, ...]:
    return _views(text, depth)


def _views(text: str, depth: int) -> tuple[str, ...]:
    budget = 4 * len(text) + 16384
    seen = {text}
    out: list[str] = []
    frontier = [text]
    for _ in range(depth):
        following: list[str] = []
        for current in frontier:
            for view in _decoded_once(current):
                if view in seen:
                    continue
                budget -= len(view)
                if budget < 0:
                    return tuple(out)
                seen.add(view)
                out.append(view)
                following.append(view)
        if not following:
            break
        frontier = following
    return tuple(out)
