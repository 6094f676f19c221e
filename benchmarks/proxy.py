"""Cost of the network layer: page load through the proxy vs direct, requests per second
through the addon chain, memory and disk per 1,000 recorded flows.

* **Page load**: a local page with 50 sub-resources (20 images, 15 scripts, 15 stylesheets),
  loaded (``goto``, until ``load``) in two contexts of one Chromium, side by side in each
  iteration (order alternating): ``direct`` and ``proxy`` (the session proxy of
  `launch(proxy=True)` with every addon: session tokens, egress rules, grants, exfiltration
  filter with the baseline policies and a registered secret, replay off, recorder on).
  Ratio of medians; target ≤ 1.5.
* **Requests per second**: sequential keep-alive GETs from one client through the proxy's
  addon chain (and directly, for reference).
* **Recording**: traced Python memory retained and bytes written per 1,000 flows recorded.
* **Exfiltration filter** (`benchmarks/_exfil_cost.py`): the filter alone before decoded views
  (issue 24, kept in `benchmarks/_exfil_before/`) and after, side by side in one run: cost per
  request on ordinary traffic, detection per encoding class, false stops on benign traffic.

    .venv/bin/python benchmarks/proxy.py [--iterations 30] [--requests 1000] [--exfil-rounds 200]
                                         [--only-exfil] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import http.client
import json
import os
import platform
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from playwright.async_api import async_playwright
from rich.console import Console as RichConsole
from rich.table import Table

from pagewarden import Guard, Secret, __version__
from pagewarden._browser import chromium_launch_options
from pagewarden.proxy._recorder import Recorder
from pagewarden.proxy._session import session_proxy
from pagewarden.proxy._tokens import accept_language
from pagewarden.testing import LocalSite, Response

sys.path.insert(0, str(Path(__file__).parent))
import _exfil_cost

HOST = "bench.test"
DEFAULT_OUT = Path(__file__).parent / "results" / "proxy.json"
GIF = bytes.fromhex("47494638396101000100800000000000ffffff21f90401000000002c00000000010001000002024401003b")


def _page() -> str:
    parts = ["<!doctype html><html><head><title>bench</title>"]
    parts += [f"<link rel='stylesheet' href='/s{i}.css'>" for i in range(15)]
    parts += [f"<script src='/j{i}.js'></script>" for i in range(15)]
    parts.append("</head><body><h1>fifty</h1>")
    parts += [f"<img src='/i{i}.gif' alt=''>" for i in range(20)]
    parts.append("</body></html>")
    return "".join(parts)


def _site() -> LocalSite:
    site = LocalSite()
    site.route(HOST, "/", lambda _r: Response(_page()))
    for i in range(15):
        css, js = f"h1{{margin:{i}px}}", f"window.v{i}={i};"
        site.route(HOST, f"/s{i}.css", lambda _r, body=css: Response(body, content_type="text/css"))
        site.route(HOST, f"/j{i}.js", lambda _r, body=js: Response(body, content_type="text/javascript"))
    for i in range(20):
        site.route(HOST, f"/i{i}.gif", lambda _r: Response(GIF, content_type="image/gif"))
    site.route(HOST, "/r", lambda _r: Response("ok", content_type="text/plain"))
    return site


def _stats(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "median_ms": round(statistics.median(ordered), 2),
        "mean_ms": round(statistics.fmean(ordered), 2),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 2),
        "n": len(ordered),
    }


def _reached(session: Any) -> None:
    """`HOST` counts as reached through a judged action (untagged tab), as after a goto."""
    session.follow_redirect(f"http://{HOST}/")  # a short grant ...
    assert session.navigation_allowed(f"http://{HOST}/")  # ... used: the site is now reached


def _guard(record: Path | None = None) -> Guard:
    return Guard(secrets=[Secret("tok-bench-Zebra-4711", allow_domains=[HOST])], record=record)


async def page_load(site: LocalSite, iterations: int, warmup: int, record_dir: Path) -> dict[str, Any]:
    guard = _guard(record_dir / "session")
    proxy = session_proxy(guard, host_map={HOST: site.port})
    proxy.start()
    samples: dict[str, list[float]] = {"direct": [], "proxy": []}
    try:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(**chromium_launch_options(host_map={HOST: site.port}))
            direct = await (await browser.new_context()).new_page()
            proxied_context = await browser.new_context(
                proxy={"server": proxy.url},
                extra_http_headers={"Accept-Language": accept_language(guard.network.token)},
            )
            proxied = await proxied_context.new_page()
            _reached(guard.network)  # as after the agent's first judged goto
            pages = {"direct": direct, "proxy": proxied}
            for index in range(warmup + iterations):
                order = ("direct", "proxy") if index % 2 == 0 else ("proxy", "direct")
                for name in order:
                    started = time.perf_counter()
                    response = await pages[name].goto(f"http://{HOST}/", wait_until="load", timeout=180_000)
                    elapsed = (time.perf_counter() - started) * 1000
                    assert response is not None and response.status == 200, name
                    if index >= warmup:
                        samples[name].append(elapsed)
            count = await proxied.evaluate("performance.getEntriesByType('resource').length")
            await browser.close()
    finally:
        proxy.stop()
        guard.close()
    direct_s, proxy_s = _stats(samples["direct"]), _stats(samples["proxy"])
    return {
        "subresources": count,
        "direct": direct_s,
        "proxy": proxy_s,
        "ratio_median": round(proxy_s["median_ms"] / direct_s["median_ms"], 3),
        "ratio_mean": round(proxy_s["mean_ms"] / direct_s["mean_ms"], 3),
        "target": 1.5,
    }


def _get_many(host: str, port: int, n: int, proxy: bool, token: str | None) -> float:
    connection = http.client.HTTPConnection(host, port, timeout=30)
    headers = {"Host": HOST}
    if token is not None:
        headers["Accept-Language"] = accept_language(token)
    path = f"http://{HOST}/r" if proxy else "/r"
    started = time.perf_counter()
    for _ in range(n):
        connection.request("GET", path, headers=headers)
        response = connection.getresponse()
        response.read()
        assert response.status == 200, response.status
    elapsed = time.perf_counter() - started
    connection.close()
    return n / elapsed


def throughput_and_memory(site: LocalSite, requests: int, record_dir: Path) -> dict[str, Any]:
    guard = _guard(record_dir / "rps")
    proxy = session_proxy(guard, host_map={HOST: site.port})
    proxy.start()
    try:
        _reached(guard.network)
        token = guard.network.token
        _get_many("127.0.0.1", proxy.port, 50, True, token)  # warm-up
        recorder = proxy.addon(Recorder)
        recorder.flush(60)
        flows_file = guard.recording.flows_path
        size_before = flows_file.stat().st_size if flows_file.exists() else 0
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        rps_proxy = _get_many("127.0.0.1", proxy.port, requests, True, token)
        recorder.flush(60)  # the writer thread catches up (it writes once traffic pauses)
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        size_after = flows_file.stat().st_size
        rps_direct = _get_many("127.0.0.1", site.port, requests, False, None)
    finally:
        proxy.stop()
        guard.close()
    per_thousand = 1000 / requests
    return {
        "requests": requests,
        "rps_proxy": round(rps_proxy, 1),
        "rps_direct": round(rps_direct, 1),
        "memory_retained_kib_per_1000_flows": round((after - before) / 1024 * per_thousand, 1),
        "recorded_kib_per_1000_flows": round((size_after - size_before) / 1024 * per_thousand, 1),
        "note": "throughput measured with tracemalloc on (slower than without); direct is LocalSite alone",
    }


def exfil_filter(rounds: int) -> dict[str, Any]:
    """The exfiltration filter before and after decoded views (see `_exfil_cost`)."""
    return {
        "cost": _exfil_cost.filter_cost(rounds),
        "detection": _exfil_cost.detection(),
        "false_stops": _exfil_cost.false_stops(),
    }


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    load_start = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    exfil = exfil_filter(args.exfil_rounds)
    if args.only_exfil:
        return {"benchmark": "proxy", "pagewarden": __version__, "exfil_filter": exfil}
    with tempfile.TemporaryDirectory() as tmp, _site() as site:
        os.environ.setdefault("PAGEWARDEN_CONFIG_DIR", str(Path(tmp) / "config"))
        load = await page_load(site, args.iterations, args.warmup, Path(tmp))
        chain = await asyncio.to_thread(throughput_and_memory, site, args.requests, Path(tmp))
    return {
        "benchmark": "proxy",
        "pagewarden": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "load_average_start": load_start,
        "load_average": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "page_load": load,
        "addon_chain": chain,
        "exfil_filter": exfil,
    }


def render_exfil(console: RichConsole, exfil: dict[str, Any]) -> None:
    cost = exfil["cost"]
    table = Table(title="exfiltration filter, µs per ordinary request (median)")
    table.add_column("request")
    table.add_column("before")
    table.add_column("after")
    for kind, value in cost["before"]["median_us_by_request"].items():
        table.add_row(kind, str(value), str(cost["after"]["median_us_by_request"][kind]))
    for stat in ("median_us", "mean_us", "p95_us", "stopped"):
        table.add_row(f"all: {stat}", str(cost["before"][stat]), str(cost["after"][stat]))
    console.print(table)
    detection = Table(title="encoded secret stopped / benign twins passed (before → after)")
    for column in ("encoding", "shapes", "stopped", "twins passed"):
        detection.add_column(column)
    for kind, row in exfil["detection"]["after"].items():
        old = exfil["detection"]["before"][kind]
        detection.add_row(
            kind, str(row["shapes"]), f"{old['stopped']} → {row['stopped']}",
            f"{old['benign_twins_passed']} → {row['benign_twins_passed']}",
        )  # fmt: skip
    console.print(detection)
    stops = exfil["false_stops"]
    console.print(
        f"benign corpus: {stops['before']['stopped']} → {stops['after']['stopped']} of "
        f"{stops['after']['requests']} requests stopped ({stops['after']['by_kind']})"
    )


def render(result: dict[str, Any]) -> None:
    console = RichConsole()
    render_exfil(console, result["exfil_filter"])
    if "page_load" not in result:
        return
    load, chain = result["page_load"], result["addon_chain"]
    table = Table(title=f"page load, {load['subresources']} sub-resources (ms)")
    for column in ("", "median", "mean", "p95", "n"):
        table.add_column(column)
    for name in ("direct", "proxy"):
        s = load[name]
        table.add_row(name, str(s["median_ms"]), str(s["mean_ms"]), str(s["p95_ms"]), str(s["n"]))
    console.print(table)
    ratios = f"median {load['ratio_median']}, mean {load['ratio_mean']}"
    console.print(f"proxy/direct: {ratios} (target ≤ {load['target']})")
    console.print(
        f"addon chain: {chain['rps_proxy']} requests/s through the proxy ({chain['rps_direct']} direct); "
        f"per 1,000 recorded flows: {chain['memory_retained_kib_per_1000_flows']} KiB retained in memory, "
        f"{chain['recorded_kib_per_1000_flows']} KiB written"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument(
        "--exfil-rounds", type=int, default=200, help="rounds of ordinary requests per filter"
    )
    parser.add_argument("--only-exfil", action="store_true", help="measure the exfiltration filter only")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    result = asyncio.run(main_async(args))
    render(result)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
