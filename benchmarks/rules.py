"""Decision time of the rules tier per step, with 0, 10 and 100 policies active.

The rules tier is what runs for every action before it executes: the compiled `RuleBook`
evaluating the step (with its static prediction, computed beforehand and not timed) and
the graded decision. Policies are a deterministic mix of every rule kind in the
proportions ST-WebAgentBench tasks use (URL deny lists, forbidden elements, consent,
sensitive values, budgets, input allow-lists, sequences), or, with ``--data``, the first
policies with rules of a benchmark task file. Every timed step is distinct (clicks, link
clicks, form submissions, fills, gotos, messages, finishes, each over a session history
of 12 actions), so memoised matching does not flatter the numbers. The built-in baseline is left out so that
"0 policies" means none.

    .venv/bin/python benchmarks/rules.py [--steps 3000] [--data test.raw.json] [--out rules.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from pagewarden import __version__
from pagewarden.guard import Action, Step, Thresholds
from pagewarden.guard._risk import decide
from pagewarden.observe._facts import ElementFacts, FormFacts, FormField, Observation
from pagewarden.policies import Policy, PolicySet
from pagewarden.policies.rules import HistoryEntry, RuleBook, RuleContext, SessionView
from pagewarden.worldmodel import predict_static

DEFAULT_OUT = Path(__file__).parent / "results" / "rules.json"
SIZES = (0, 10, 100)
SITE = "http://crm.bench.test:8080"
WORDS = ["invoice", "contact", "meeting", "lead", "project", "issue", "member", "report", "account", "task"]


def synthetic_policies(count: int, seed: int = 7) -> list[Policy]:
    """`count` policies mixing every rule kind (ST-WebAgentBench-like proportions)."""
    rng = random.Random(seed)
    makers = [
        (
            30,
            lambda i: {
                "url_deny": [f"/{rng.choice(WORDS)}/admin{i}", f"module={rng.choice(WORDS).title()}{i}"]
            },
        ),
        (25, lambda i: {"forbid_element": {"match": [f"Delete {rng.choice(WORDS)} {i}", "remove"]}}),
        (
            12,
            lambda i: {
                "consent": {"match": [f"Create {rng.choice(WORDS)} {i}"], "actions": ["click", "fill"]}
            },
        ),
        (
            9,
            lambda i: {"sensitive_data": {"values": [f"secret-{i}-{rng.random():.6f}"], "allow_user": False}},
        ),
        (5, lambda i: {"action_budget": {"action": "click", "max": 20 + i % 5, "selectors": [f"#save-{i}"]}}),
        (3, lambda i: {"input_allow": {"values": [f"value {i}", rng.choice(WORDS)]}}),
        (
            2,
            lambda i: {
                "sequence": {
                    "steps": [
                        {"action": "fill", "match": [f"Subject {i}"]},
                        {"action": "click", "match": ["Send"]},
                    ],
                    "contiguous": True,
                }
            },
        ),
        (4, lambda i: {"domain_allow": ["crm.bench.test", "*.bench.test"]}),
    ]
    weights = [w for w, _ in makers]
    policies = []
    for i in range(count):
        _, make = rng.choices(makers, weights=weights)[0]
        policies.append(
            Policy(
                id=f"B{i}", category="boundary", risk_level="high", description=f"bench {i}", rules=[make(i)]
            )
        )
    return policies


def benchmark_policies(path: Path, count: int) -> list[Policy]:
    """The first `count` policies with rules from an ST-WebAgentBench task file."""
    from pagewarden.policies.importers import import_tasks

    found = [p for _, policy_set in import_tasks(path) for p in policy_set if p.rules]
    return found[:count]


def step_pool(size: int, seed: int = 11) -> list[tuple[Step, SessionView]]:
    """Distinct steps with their session views (history of 12 earlier actions)."""
    rng = random.Random(seed)
    pool = []
    for i in range(size):
        word = rng.choice(WORDS)
        url = f"{SITE}/#/{word}s/index?record={i}"
        kind = rng.choice(["click", "link", "fill", "goto", "message", "finish", "submit"])
        form = FormFacts(
            action=f"{SITE}/index.php", method="post", fields=(FormField("name", "text", f"{word} {i}"),)
        )
        if kind == "click":
            action = Action("click", "Locator.click", f"#b{i}")
            target = ElementFacts(
                tag="button", role="button", name=f"Save {word} {i}", text=f"Save {word} {i}"
            )
        elif kind == "link":
            action = Action("click", "Locator.click", f"#a{i}")
            href = f"{SITE}/{word}/view/{i}" if i % 3 else f"https://www.{word}-{i}.example/"
            target = ElementFacts(tag="a", role="link", name=f"Open {word}", text=f"Open {word}", href=href)
        elif kind == "fill":
            action = Action("fill", "Locator.fill", f"#f{i}", f"{word} notes {i}")
            target = ElementFacts(
                tag="input", role="textbox", name=f"{word.title()} name", input_type="text", form=form
            )
        elif kind == "submit":
            action = Action("click", "Locator.click", f"#s{i}")
            target = ElementFacts(
                tag="button", role="button", name="Submit", text="Submit", is_submit=True, form=form
            )
        elif kind == "goto":
            action, target = Action("goto", "Page.goto", value=f"{SITE}/{word}/{i}?q={word}"), None
        elif kind == "message":
            action, target = (
                Action("send_msg_to_user", "Guard.message_user", value=f"About the {word} {i}"),
                None,
            )
        else:
            action, target = Action("finish", "finish", value=f"Done with {word} {i}."), None
        history = tuple(
            HistoryEntry(
                kind=rng.choice(["click", "fill", "goto"]),
                label=f"{rng.choice(WORDS)} {j}",
                selector=f"#h{j}",
                url=url,
                value=f"v{j}",
                target=ElementFacts(tag="button", name=f"Item {j}", attrs={"id": f"h{j}"}),
            )
            for j in range(12)
        )
        step = Step(action=action, observation=Observation(url=url, target=target), goal=f"Update the {word}")
        pool.append((step, SessionView(history=history, user_messages=[f"May I save the {word}?"])))
    return pool


def measure(policies: list[Policy], pool: list[tuple[Step, SessionView]], steps: int) -> dict[str, Any]:
    """Per-step rules-tier time (µs) over `steps` evaluations of the pool, after a warm-up."""
    book = RuleBook(PolicySet(policies))
    thresholds = Thresholds()
    prepared = [(step, predict_static(step), view) for step, view in pool]
    for step, prediction, view in prepared[:50]:  # warm-up
        decide(book.evaluate(RuleContext(step, prediction, view))[0], prediction, thresholds)
    times = []
    blocked = 0
    for i in range(steps):
        step, prediction, view = prepared[i % len(prepared)]
        started = time.perf_counter()
        findings, _errors = book.evaluate(RuleContext(step, prediction, view))
        decision, _score = decide(findings, prediction, thresholds)
        times.append((time.perf_counter() - started) * 1e6)
        blocked += decision.value != "allow"
    times.sort()
    return {
        "policies": len(policies),
        "rules": len(book),
        "steps": steps,
        "p50_us": round(statistics.median(times), 1),
        "p95_us": round(times[int(0.95 * (len(times) - 1))], 1),
        "max_us": round(times[-1], 1),
        "non_allow_share": round(blocked / steps, 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3000, help="evaluations per configuration")
    parser.add_argument("--data", type=Path, help="draw policies from an ST-WebAgentBench task file")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="JSON output path")
    args = parser.parse_args(argv)
    console = Console()
    if args.data is not None and not args.data.is_file():
        console.print(f"[red]error[/red] {args.data}: no such file", highlight=False)
        return 1
    pool = step_pool(args.steps)
    results = []
    for size in SIZES:
        policies = benchmark_policies(args.data, size) if args.data else synthetic_policies(size)
        results.append(measure(policies, pool, args.steps))
    table = Table(title="rules tier: decision time per step")
    for name in ("policies", "rules", "p50 (µs)", "p95 (µs)", "max (µs)", "not allowed"):
        table.add_column(name, justify="right")
    for r in results:
        cells = [str(r["policies"]), str(r["rules"])]
        cells += [f"{r[k]:.1f}" for k in ("p50_us", "p95_us", "max_us")] + [f"{r['non_allow_share']:.0%}"]
        table.add_row(*cells)
    console.print(table)
    document = {
        "benchmark": "rules",
        "pagewarden": __version__,
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "policies_from": str(args.data.name) if args.data else "synthetic mix",
        "results": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    console.print(f"wrote {args.out}", highlight=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
