"""False stops on the benign corpus (issue 29): how many of a benign agent's actions the guard
stops on pages that load their own third-party frames, widgets, ad frames, a CDN on a sister
domain, analytics, icon-only buttons and subdomains (`tests.benign.corpus`), in the browser
layer (the navigation gate, no proxy) and the network layer (``launch(proxy=True)``).

    .venv/bin/python benchmarks/false_stops.py [--out FILE.json] [--label NAME]

Each layer runs twice: under ``domain_allow: [.news.test]``, and under the same rule with the
site's CDN and video host as ``subresources`` (rows ``… with subresources``: they may serve the
pages' scripts, styles and frames, no tab may go there); ``embed_loads`` counts the requests
that reached those hosts.

Every stop counted here is a false stop: the corpus's pages ask nothing of the agent and every
action goes where the agent chose. To measure another checkout of pagewarden (e.g. before a
change), put its directory first: ``PYTHONPATH=/path/to/checkout .venv/bin/python
benchmarks/false_stops.py`` (the corpus comes from this checkout's tests).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.append(str(ROOT))

from pagewarden import __version__  # noqa: E402
from pagewarden.testing import LocalSite  # noqa: E402
from tests.benign.corpus import EMBED_HOSTS, run_corpus, serve  # noqa: E402


async def measure() -> dict[str, object]:
    site = LocalSite()
    serve(site)
    rows: dict[str, object] = {}
    with site:
        for embeds in (False, True):
            for layer, proxy in (("browser layer (gate)", False), ("network layer (proxy=True)", True)):
                seen = len(site.requests)
                outcome = await run_corpus(site.port, proxy=proxy, embeds=embeds)
                row: dict[str, object] = {
                    "actions": outcome.actions,
                    "stopped": len(outcome.stops),
                    "rate": round(outcome.rate, 3),
                    "refusals_recorded": outcome.refused,
                    "stops": [{"page": p, "action": a, "message": m} for p, a, m in outcome.stops],
                }
                if embeds:
                    row["embed_loads"] = sum(r.host in EMBED_HOSTS for r in site.requests[seen:])
                rows[layer + (" with subresources" if embeds else "")] = row
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--label", default="current")
    args = parser.parse_args()
    import pagewarden

    rows = asyncio.run(measure())
    result = {"label": args.label, "pagewarden": __version__, "source": str(Path(pagewarden.__file__).parent),
              "layers": rows}  # fmt: skip
    for layer, row in rows.items():
        print(f"{layer}: {row['stopped']} of {row['actions']} benign actions stopped")  # type: ignore[index]
    if args.out is not None:
        args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
