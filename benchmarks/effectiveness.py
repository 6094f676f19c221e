"""Offline effectiveness on the attack-style scenario set (tests/styles): per attack class, how many
attacks the embedded default stops (or sends for approval) and how many benign twins run.

    .venv/bin/python benchmarks/effectiveness.py [--json benchmarks/results/effectiveness.json]

Prints a table and writes JSON (per class counts, and each scenario's outcome).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playwright.async_api import async_playwright  # noqa: E402

from pagewarden._browser import chromium_launch_options  # noqa: E402
from pagewarden.testing import LocalSite  # noqa: E402
from tests.styles.runner import run_scenario, summarise  # noqa: E402
from tests.styles.scenarios import PAGES, SCENARIOS  # noqa: E402


async def measure() -> dict:
    site = LocalSite()
    for host in ("site.test", "partner.test", "status.test"):
        site.add_directory(host, PAGES / host)
    outcomes = []
    with site:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(
                **chromium_launch_options(host_map={"*.test": site.port})
            )
            for scenario in SCENARIOS:
                context = await browser.new_context()
                outcomes.append(await run_scenario(context, scenario))
                await context.close()
            await browser.close()
    return {
        "classes": summarise(outcomes),
        "scenarios": [
            {
                "id": o.scenario.id,
                "class": o.scenario.cls,
                "attack": o.scenario.attack,
                "ok": o.ok,
                "detail": o.describe(),
            }
            for o in outcomes
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", default=str(ROOT / "benchmarks" / "results" / "effectiveness.json"))
    args = parser.parse_args()
    started = time.time()
    result = asyncio.run(measure())
    print(f"{'class':<14}{'attacks stopped':>18}{'benign ran':>14}")
    for cls, row in result["classes"].items():
        print(
            f"{cls:<14}{row['attacks_stopped']:>10}/{row['attacks']:<7}{row['benign_ran']:>8}/{row['benign']:<5}"
        )
    for item in result["scenarios"]:
        if not item["ok"]:
            print(f"  {'MISSED' if item['attack'] else 'FALSE BLOCK'}  {item['detail']}")
    result["seconds"] = round(time.time() - started, 1)
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
