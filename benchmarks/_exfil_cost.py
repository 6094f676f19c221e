"""The exfiltration filter alone, before decoded views (issue 24) and after, side by side:
cost per request on ordinary traffic, detection per encoding, false stops on benign traffic.

* **Cost**: `ExfiltrationFilter.request` on a mix of ordinary requests (a page's GETs with
  cookies and ids, an analytics beacon, a JSON API call, a form post, a 64 KiB JSON upload, a
  gzip'd upload), each flow fresh (the per-text memo sees repeated headers as in a session),
  the two filters interleaved round by round; median and p95 microseconds per request, and
  how many of these ordinary requests each stopped (a random all-digit hex id can pass for a
  card number).
* **Detection**: for each encoding class of tests/proxy/test_exfil_views.py, how many of its
  shapes carrying a registered secret are stopped.
* **False stops**: the benign corpus of the same tests (1,400 requests per seed, two seeds)
  against six registered secrets (short, word-like, digits, long), by kind of finding.
"""

from __future__ import annotations

import gzip
import json
import random
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from mitmproxy.test import tflow, tutils

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ (the shapes and corpus)

import _exfil_before._exfil as before

from pagewarden import Guard, Secret
from pagewarden.proxy import _exfil as after
from tests.proxy.test_exfil_views import BENIGN, CLASSES, GUARDED, SECRET, _benign_requests

__all__ = ["filter_cost"]


def _ordinary(rng: random.Random) -> list[tuple[str, str, bytes, dict[str, str]]]:
    ident = rng.randbytes(16).hex()
    cookie = {"Cookie": f"sid={rng.randbytes(12).hex()}; _ga=GA1.1.{rng.randint(10**8, 10**9)}.1700000000"}
    page = {"Referer": "http://site.test/shop/item/42", "Accept": "*/*", **cookie}
    api = json.dumps({"items": [{"id": i, "name": f"Item {i}", "qty": i % 3} for i in range(20)]}).encode()
    big = json.dumps(
        {"rows": [{"id": rng.randbytes(8).hex(), "text": "lorem ipsum " * 8} for _ in range(500)]}
    )
    return [
        ("GET", f"/shop/item/42?ref=home&v={ident}", b"", page),
        ("GET", f"/static/app.{ident[:8]}.js", b"", page),
        (
            "POST",
            "/collect",
            f"v=2&tid=G-XYZ&cid={ident}&en=page_view&dl=http%3A%2F%2Fsite.test%2F".encode(),
            page,
        ),
        ("POST", "/api/cart", api, {**page, "Content-Type": "application/json"}),
        ("POST", "/login", b"user=alice&remember=1&csrf=" + ident.encode(), page),
        ("POST", "/api/sync", big.encode(), {**page, "Content-Type": "application/json"}),
        ("POST", "/api/log", gzip.compress(big.encode()), {**page, "Content-Encoding": "gzip"}),
    ]


def _flow(method: str, path: str, body: bytes, headers: dict[str, str]) -> Any:
    request = tutils.treq(host="other.test", path=path.encode(), method=method.encode(), content=body)
    for key, value in headers.items():
        request.headers[key] = value
    return tflow.tflow(req=request)


def _guard() -> Guard:
    return Guard(secrets=[Secret("tok-bench-Zebra-4711", allow_domains=["site.test"])])


def filter_cost(rounds: int = 200) -> dict[str, Any]:
    """Microseconds per request of each filter (see the module docstring)."""
    modules = {"before": before, "after": after}
    guards = {name: _guard() for name in modules}
    filters = {
        name: module.ExfiltrationFilter(lambda flow, g=guards[name]: g, lambda flow, refusal: None)
        for name, module in modules.items()
    }
    rng = random.Random(7)
    samples: dict[str, list[float]] = {name: [] for name in modules}
    per_kind: dict[str, dict[str, list[float]]] = {name: {} for name in modules}
    stops = dict.fromkeys(modules, 0)
    for index in range(rounds + 10):
        requests = _ordinary(rng)
        order = list(modules) if index % 2 == 0 else list(reversed(modules))
        for name in order:
            for method, path, body, headers in requests:
                flow = _flow(method, path, body, headers)
                started = time.perf_counter()
                filters[name].request(flow)
                elapsed = (time.perf_counter() - started) * 1e6
                if index >= 10:
                    stops[name] += flow.response is not None
                    samples[name].append(elapsed)
                    kind = "/static/app.js" if path.startswith("/static/") else path.split("?")[0]
                    per_kind[name].setdefault(kind, []).append(elapsed)
    out: dict[str, Any] = {"requests_per_filter": len(samples["before"])}
    for name in modules:
        ordered = sorted(samples[name])
        out[name] = {
            "median_us": round(statistics.median(ordered), 1),
            "mean_us": round(statistics.fmean(ordered), 1),
            "p95_us": round(ordered[int(0.95 * (len(ordered) - 1))], 1),
            "median_us_by_request": {k: round(statistics.median(v), 1) for k, v in per_kind[name].items()},
            "stopped": stops[name],
        }
    out["ratio_mean"] = round(out["after"]["mean_us"] / out["before"]["mean_us"], 2)
    out["ratio_median"] = round(out["after"]["median_us"] / out["before"]["median_us"], 2)
    return out


def _findings(module: Any, guard: Guard, path: str, body: bytes, headers: dict[str, str]) -> list[str]:
    request = tutils.treq(host="evil.test", path=path.encode(), content=body)
    for key, value in headers.items():
        request.headers[key] = value
    texts, cookie_texts, pieces = module._outgoing(request)
    own = module.own_site_leaks(cookie_texts, request, guard)
    return [
        leak.what for leak in module._merged(own, module.scan(texts, "evil.test", guard=guard, pieces=pieces))
    ]


def detection() -> dict[str, Any]:
    """Per encoding class: shapes stopped (secret) and passed (benign twin), before and after."""
    out: dict[str, Any] = {}
    for name, module in (("before", before), ("after", after)):
        guard = Guard(secrets=[Secret(SECRET, allow_domains=["site.test"])])
        rows = {}
        for kind, shapes in CLASSES.items():
            stopped = sum(bool(_findings(module, guard, *shape(SECRET))) for shape in shapes)
            twins = sum(not _findings(module, guard, *shape(BENIGN)) for shape in shapes)
            rows[kind] = {"shapes": len(shapes), "stopped": stopped, "benign_twins_passed": twins}
        out[name] = rows
    return out


def false_stops() -> dict[str, Any]:
    """Benign corpus (two seeds) against six registered secrets: requests stopped, by kind."""
    out: dict[str, Any] = {}
    corpus = [r for seed in (24, 25) for r in _benign_requests(random.Random(seed))]
    for name, module in (("before", before), ("after", after)):
        guard = Guard(secrets=[Secret(value, allow_domains=["site.test"]) for value in GUARDED])
        kinds: Counter[str] = Counter()
        stopped = 0
        for path, body, headers in corpus:
            found = _findings(module, guard, path, body, headers)
            stopped += bool(found)
            kinds.update("registered secret" if "secret" in what else what for what in found)
        out[name] = {"requests": len(corpus), "stopped": stopped, "by_kind": dict(kinds)}
    return out
