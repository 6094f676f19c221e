"""In-page cost of the guard's facts reader at 500 vs 10,000 elements, per action kind and page shape.

The guard reads the element an action targets in the page before the action runs; that read must
cost at 10,000 elements what it costs at 500 (issue 14). This measures the read's own time in the
page (`performance.now()` around the reader's entry point, in Playwright's utility world where the
guard runs it), with the exact options the guard sends for each action kind, captured from a real
guarded action:

* actions: click on a button, fill of a text field (a value long enough to be searched for in the
  page), press of a key in a text field, click on a link;
* page shapes: `table` (the overhead benchmark's settings page: rows of a table), `divs` (the same
  controls in a flat list of <div> rows), `fixed` (everything inside a position:fixed scrolling
  shell, as single-page apps do), `article` (everything inside an <article>, i.e. user content);
* page states: nothing changed since the previous read (`still`), a text node changed before each
  read (`text`, a counter), an element added before each read (`tree`).

Each cell is the mean of `--reads` reads in one loop in the page (the change, when any, made just
before each read; the browser's layout brought up to date before the timer starts). `--library
FILE` measures another version of the reader's script in the same run (an older single-file
`element_facts.js`, or an assembled `pagewarden.observe._library.library()`; side by side: every
cell is measured for both, alternating).

    .venv/bin/python benchmarks/reader_scale.py [--reads 40] [--library OLD.js] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

from playwright.async_api import async_playwright

from pagewarden import Guard, __version__
from pagewarden._browser import chromium_launch_options
from pagewarden.observe import _direct
from pagewarden.testing import LocalSite, Response

HOST = "app.bench.test"
SIZES = (500, 10_000)
SHAPES = ("table", "divs", "fixed", "article")
KINDS = ("click", "fill", "press", "link")
STATES = {
    "still": "",
    "text": "document.getElementById('counter').textContent = String(i);",
    "tree": "{ const s = document.createElement('span'); s.textContent = 'x' + i; document.body.append(s); }",
}
DEFAULT_OUT = Path(__file__).parent / "results" / "reader_scale.json"


def page(shape: str, elements: int) -> str:
    """`elements` interactive elements (40 % buttons, 30 % labelled fields, 30 % links) in `shape`."""
    buttons, fields = int(elements * 0.4), int(elements * 0.3)
    links = elements - buttons - fields
    rows = []
    for i in range(max(buttons, fields, links)):
        cells = [f"Item {i}"]
        if i < fields:
            cells.append(f'<label for="field-{i}">Setting {i}</label> <input id="field-{i}" name="s{i}">')
        if i < buttons:
            cells.append(f'<button type="button" id="button-{i}">Toggle {i}</button>')
        if i < links:
            cells.append(f'<a id="link-{i}" href="/details?item={i}" title="Item {i}">Details {i}</a>')
        if shape == "table":
            rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
        else:
            rows.append('<div class="row">' + " ".join(cells) + "</div>")
    body = f"<table>{''.join(rows)}</table>" if shape == "table" else f'<div id="list">{"".join(rows)}</div>'
    if shape == "fixed":
        body = f'<div style="position:fixed;inset:0;overflow:auto">{body}</div>'
    elif shape == "article":
        body = f"<article>{body}</article>"
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Reader scale</title></head><body>'
        '<header><nav><a href="/">Home</a></nav></header><main><p>Count <output id="counter">0</output></p>'
        f"{body}</main></body></html>"
    )


class Captured:
    """The (reader, entry, options) of the guard's last direct read."""

    def __init__(self) -> None:
        self.last: tuple[Any, str, dict[str, Any]] | None = None
        original = _direct.DirectReader.read
        captured = self

        def read(reader: Any, entry: str, opts: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
            if entry != "report":  # (the check of stopped navigations after a link click)
                captured.last = (reader, entry, opts)
            return (yield from original(reader, entry, opts, *args, **kwargs))

        _direct.DirectReader.read = read  # type: ignore[method-assign]


async def in_page(
    reader: Any, library: str | None, entry: str, opts: dict[str, Any], reads: int, change: str
) -> float:
    """Mean in-page ms of `reads` reads, `change` made before each; with `library`, that version's
    reader, built once in the same world under another name."""
    body = json.dumps(json.dumps({**opts, "entry": entry, "pin": False}, separators=(",", ":")))
    if library is None:
        lib = f"window[{json.dumps(reader.name)}]"
    else:
        lib = "window.__readerScaleOther"
        await _evaluate(reader, f"{lib} = {lib} || (() => {{ {library}\n return __pwLibrary(); }})(); true")
    expression = (
        f"(() => {{ const lib = {lib}; let total = 0; for (let i = 0; i < {reads}; i++) {{ {change}"
        " document.documentElement.getBoundingClientRect(); const t = performance.now();"
        f" lib.direct({body}); total += performance.now() - t; }} return total / {reads}; }})()"
    )
    return float(await _evaluate(reader, expression))


async def _evaluate(reader: Any, expression: str) -> Any:
    params = {"expression": expression, "uniqueContextId": reader.world, "returnByValue": True}
    answer = await reader.session.send("Runtime.evaluate", params)
    if answer.get("exceptionDetails"):
        raise RuntimeError(str(answer["exceptionDetails"])[:300])
    return answer["result"].get("value")


async def act(guarded: Any, kind: str) -> None:
    """One guarded action of `kind` (clicks as trials: the page stays as it is)."""
    if kind == "click":
        await guarded.locator("#button-140").click(trial=True)
    elif kind == "fill":
        await guarded.locator("#field-140").fill("value 12345")
    elif kind == "press":
        await guarded.locator("#field-140").press("a")
    else:
        await guarded.locator("#link-140").click(trial=True)


async def measure(reads: int, library: str | None) -> dict[str, Any]:
    """Every cell, for the installed reader (and `library`, when given)."""
    captured = Captured()
    site = LocalSite()
    for shape in SHAPES:
        for size in SIZES:
            html = page(shape, size)
            site.route(HOST, f"/{shape}/{size}", lambda _r, html=html: Response(html))
    rows = []
    with site:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(**chromium_launch_options(host_map={HOST: site.port}))
            for shape in SHAPES:
                for size in SIZES:
                    context = await browser.new_context()
                    guard = Guard(goal="Adjust the settings on app.bench.test.")
                    guarded = guard.wrap(await context.new_page())
                    await guarded.goto(site.url(HOST, f"/{shape}/{size}"))
                    for kind in KINDS:
                        for _ in range(2):  # the first registers the reader
                            with contextlib.suppress(Exception):  # a stopped action still read its target
                                await act(guarded, kind)
                        assert captured.last is not None, "the guard read over CDP"
                        reader, entry, opts = captured.last
                        for state, change in STATES.items():
                            row = {"shape": shape, "elements": size, "action": kind, "state": state}
                            row["ms"] = round(await in_page(reader, None, entry, opts, reads, change), 3)
                            if library is not None:
                                other = await in_page(reader, library, entry, opts, reads, change)
                                row["ms_other"] = round(other, 3)
                            rows.append(row)
                    await context.close()
            await browser.close()
    return {
        "benchmark": "reader_scale",
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "environment": {
            "pagewarden": __version__,
            "python": platform.python_version(),
            "load_average_1m": round(os.getloadavg()[0], 2),
            "cpus": os.cpu_count(),
        },
        "reads": reads,
        "other_library": library is not None,
        "results": rows,
    }


def table(data: dict[str, Any]) -> str:
    """Rows of `shape action state: ms at 500 / at 10,000` (and the other library's)."""
    cells = {(r["shape"], r["action"], r["state"], r["elements"]): r for r in data["results"]}
    load = data["environment"]["load_average_1m"]
    lines = [f"in-page ms per read, {SIZES[0]} / {SIZES[1]} elements (load {load})"]
    for shape in SHAPES:
        for kind in KINDS:
            parts = []
            for state in STATES:
                small, large = cells[(shape, kind, state, SIZES[0])], cells[(shape, kind, state, SIZES[1])]
                part = f"{state} {small['ms']:.2f} / {large['ms']:.2f}"
                if "ms_other" in small:
                    part += f" (other {small['ms_other']:.2f} / {large['ms_other']:.2f})"
                parts.append(part)
            lines.append(f"{shape:8} {kind:6} " + "   ".join(parts))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Measure, print, write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reads", type=int, default=40, help="reads per cell")
    parser.add_argument("--library", type=Path, help="another reader script to measure side by side")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write the JSON")
    args = parser.parse_args(argv)
    library = args.library.read_text("utf-8") if args.library else None
    data = asyncio.run(measure(args.reads, library))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print(table(data))
    print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
