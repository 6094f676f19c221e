"""Rules-tier decision time per action with 0, 100, 1,000 and 3,000 policies, over a short
session and over one with 10,000 earlier actions.

The rules tier is what runs for every action before it executes, and what it keeps up to date
after the action ran. Timed per action, as the guard does it: `Guard.evaluate` (the session
view for the rules, the compiled `RuleBook` evaluating the step, the browser findings, the graded
decision and the verdict; the static prediction is computed beforehand and not timed: it is the
world model's), then, for an action the verdict lets run, the rules' running state
(`RuleBook.observe`: budget counters, sequence progress). Policies are a deterministic mix of
every rule kind in the proportions ST-WebAgentBench tasks use (URL deny lists, forbidden
elements, consent, sensitive values, budgets, input allow-lists, sequences), plus domain rules,
rules over every action kind ("any"), budgets and sequences over the session; or, with
``--data``, the first policies with rules of a benchmark task file. Times are the thread's CPU
time (the machine is shared: wall-clock time mostly measures the other processes; it is
recorded too).

Every timed step is distinct (clicks, link clicks, form submissions, fills, key presses, gotos,
messages, finishes) and unseen: the warm-up (which builds each action kind's index once) uses
other steps, and the matching caches are emptied before each configuration, so memoised
matching does not flatter the numbers (words repeat across steps, as labels do on a site).
The session's history is filled through the guard's own path (`RuleBook.observe` keeps budget
and sequence counters). The built-in baseline is left out so that "0 policies" means none.

Next to the indexed book, the same book run exhaustively (every rule of the action kind,
budgets and sequences scanning the history: the reference the index is tested against) is
timed on a sample of the steps of the short sessions, to show what the index saves. The CPU
time of building the guard (compiling the rule book and planning every action kind) is
recorded too (`build_ms`, a cold compile: the book's shared compilations are emptied first),
and beside it the CPU time of building another guard of equal policies (`shared_build_ms`:
equal copies, not the same objects; books of equal policies share one compilation, as the
guards of an MCP server's sessions, a fleet's agents or an evaluation's scenarios do).

    .venv/bin/python benchmarks/rules.py [--steps 2000] [--data test.raw.json] [--out rules.json]
"""

from __future__ import annotations

import argparse
import copy
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
from pagewarden.guard import Action, Guard, Step, Thresholds
from pagewarden.guard._risk import decide
from pagewarden.policies import Policy, PolicySet
from pagewarden.rules import HistoryEntry, RuleBook, RuleContext, SessionView
from pagewarden.steps import ElementFacts, FormFacts, FormField, Observation
from pagewarden.worldmodel import predict_static

DEFAULT_OUT = Path(__file__).parent / "results" / "rules.json"
SIZES = (0, 100, 1000, 3000)
HISTORIES = (12, 10_000)
TARGET_P95_MS = {1000: 1.0, 3000: 3.0}
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
        (3, lambda i: {"domain_deny": [f"{rng.choice(WORDS)}{i}.example", f"*.bad{i}.example"]}),
        (2, lambda i: {"url_deny": [f"https://www.{rng.choice(WORDS)}-{i}.example/"]}),
        # rules over every action kind
        (2, lambda i: {"forbid_element": {"match": [f"Drop {rng.choice(WORDS)} {i}"], "actions": ["any"]}}),
        (1, lambda i: {"consent": {"match": [f"Approve {rng.choice(WORDS)} {i}"], "actions": "any"}}),
        (1, lambda i: {"action_budget": {"actions": "any", "max": 50_000 + i}}),
        (
            1,
            lambda i: {
                "sequence": {
                    "steps": [
                        {"actions": "click", "match": [f"Review {rng.choice(WORDS)}"]},
                        {"actions": "click", "match": [f"Publish {i}"]},
                    ]
                }
            },
        ),
        (1, lambda i: {"sensitive_data": {"patterns": ["card_number", "api_key"], "allow_domains": "self"}}),
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


def step_pool(size: int, seed: int = 11) -> list[Step]:
    """Distinct steps of every kind."""
    rng = random.Random(seed)
    pool = []
    for i in range(size):
        word = rng.choice(WORDS)
        url = f"{SITE}/#/{word}s/index?record={i}"
        kind = rng.choice(["click", "link", "fill", "goto", "message", "finish", "submit", "press"])
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
        elif kind == "press":
            action = Action("press", "Locator.press", f"#f{i}", rng.choice(["Enter", "a", "Tab"]))
            target = ElementFacts(tag="input", role="textbox", name=f"{word.title()} {i}", input_type="text")
        elif kind == "goto":
            action, target = Action("goto", "Page.goto", value=f"{SITE}/{word}/{i}?q={word}"), None
        elif kind == "message":
            action, target = (
                Action("send_msg_to_user", "Guard.message_user", value=f"About the {word} {i}"),
                None,
            )
        else:
            action, target = Action("finish", "finish", value=f"Done with {word} {i}."), None
        step = Step(action=action, observation=Observation(url=url, target=target), goal=f"Update the {word}")
        pool.append(step)
    return pool


def fill_history(guard: Guard, entries: int, seed: int = 5) -> None:
    """`entries` earlier actions in the guard's session, kept as the guard keeps them."""
    rng = random.Random(seed)
    session = guard.session
    for j in range(entries):
        word = rng.choice(WORDS)
        kind = rng.choice(["click", "fill", "goto", "click"])
        label = f"Save {word} {j}"
        attrs = {"id": f"save-{j % 40}"}
        target = ElementFacts(tag="button", role="button", name=label, text=label, attrs=attrs)
        entry = HistoryEntry(kind, label, selector=f"#h{j}", url=SITE, value=f"v{j}", target=target)
        session.history.append(entry)
        guard.rulebook.observe(session.memory, entry, session.history)
    session.user_messages.append("May I save the invoice?")


def _percentiles(times: list[float]) -> dict[str, float]:
    times = sorted(times)
    return {
        "p50_ms": round(statistics.median(times), 4),
        "p95_ms": round(times[int(0.95 * (len(times) - 1))], 4),
        "max_ms": round(times[-1], 4),
    }


def calibration_ms() -> float:
    """CPU time (ms, median of 5) of a fixed pure-Python loop of a million additions."""
    runs = []
    for _ in range(5):
        started, total = time.thread_time(), 0
        for i in range(1_000_000):
            total += i
        runs.append((time.thread_time() - started) * 1e3)
    return round(statistics.median(runs), 1)


def clear_caches() -> None:
    """Empty every memoised function of pagewarden (label keys, term patterns, URL parses)."""
    for name, module in list(sys.modules.items()):
        if name == "pagewarden" or name.startswith("pagewarden."):
            for value in list(vars(module).values()):
                clear = getattr(value, "cache_clear", None)
                if callable(clear) and getattr(value, "__module__", None) == name:
                    clear()


def measure(
    policies: list[Policy], pool: list[Step], steps: int, history: int, exhaustive_steps: int
) -> dict[str, Any]:
    """Per-action rules-tier time (ms) over `steps` evaluations of the pool, after a warm-up."""
    builds = []
    for _ in range(3):
        RuleBook.forget_shared()  # a cold compile, not one shared with an earlier configuration
        started = time.thread_time()
        guard = Guard(PolicySet(policies), baseline=False)  # compiles the rule book and its plans
        builds.append((time.thread_time() - started) * 1e3)
    shared_builds = []
    for _ in range(20):
        equal = PolicySet(copy.deepcopy(policies))  # equal policies, other objects
        started = time.thread_time()
        Guard(equal, baseline=False)  # shares the compilation of `guard`'s book
        shared_builds.append((time.thread_time() - started) * 1e3)
    book = guard.rulebook
    fill_history(guard, history)
    earlier = len(guard.session.history)
    prepared = [(step, predict_static(step)) for step in pool]

    def decide_only(step: Step, prediction: Any, exhaustive: bool = False) -> str:
        view = guard.session.view(step)
        if exhaustive:
            view = SessionView(view.history, view.user_messages, view.typed_passwords, view.tab, None)
        findings, _errors = book.evaluate(RuleContext(step, prediction, view), exhaustive=exhaustive)
        return decide(findings, prediction, thresholds)[0].value

    def once(step: Step, prediction: Any) -> str:
        verdict = guard.evaluate(step, prediction=prediction)
        if verdict.allowed:  # it runs: the guard records it and the rules keep their counts
            target = step.observation.target
            entry = HistoryEntry(
                step.action.kind, target.label[:200] if target is not None else "", step.action.selector,
                step.observation.url, step.action.value, target,
            )  # fmt: skip
            guard.session.history.append(entry)
            book.observe(guard.session.memory, entry, guard.session.history)
        return verdict.decision.value

    thresholds = Thresholds()
    for step in step_pool(100, seed=1_000 + len(policies)):  # warm-up on other steps
        once(step, predict_static(step))
    clear_caches()
    times = []
    cpu = []
    blocked = 0
    for i in range(steps):
        step, prediction = prepared[i % len(prepared)]
        started, started_cpu = time.perf_counter(), time.thread_time()
        decision = once(step, prediction)
        cpu.append((time.thread_time() - started_cpu) * 1e3)
        times.append((time.perf_counter() - started) * 1e3)
        blocked += decision != "allow"
    result: dict[str, Any] = {
        "policies": len(policies),
        "rules": len(book),
        "history": earlier,
        "steps": steps,
        **_percentiles(cpu),
        "wall": _percentiles(times),
        "non_allow_share": round(blocked / steps, 3),
        # CPU time of building the guard: compiling the policies into the rule book, with every
        # action kind's plan (built up front, so that no action pays for it)
        "build_ms": round(statistics.median(builds), 2),
        # another guard of equal policies: the compilation is shared, the guard's state its own
        "shared_build_ms": round(statistics.median(shared_builds), 2),
    }
    if exhaustive_steps:
        slow = []
        for i in range(exhaustive_steps):
            step, prediction = prepared[(i * 7) % len(prepared)]
            started = time.thread_time()
            decide_only(step, prediction, exhaustive=True)
            slow.append((time.thread_time() - started) * 1e3)
        result["exhaustive"] = {"steps": exhaustive_steps, **_percentiles(slow)}
        result["exhaustive_over_indexed_p50"] = round(
            result["exhaustive"]["p50_ms"] / max(result["p50_ms"], 1e-6), 1
        )
    target = TARGET_P95_MS.get(len(policies))
    if target is not None:
        result["target_p95_ms"] = target
        result["meets_target"] = result["p95_ms"] <= target
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000, help="evaluations per configuration")
    parser.add_argument(
        "--exhaustive-steps", type=int, default=200, help="evaluations of the unindexed reference"
    )
    parser.add_argument("--data", type=Path, help="draw policies from an ST-WebAgentBench task file")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="JSON output path")
    args = parser.parse_args(argv)
    console = Console(width=max(Console().width, 130))
    if args.data is not None and not args.data.is_file():
        console.print(f"[red]error[/red] {args.data}: no such file", highlight=False)
        return 1
    pool = step_pool(args.steps)
    results = []
    for size in SIZES:
        policies = benchmark_policies(args.data, size) if args.data else synthetic_policies(size)
        for history in HISTORIES:
            exhaustive = args.exhaustive_steps if history == HISTORIES[0] else 0
            results.append(measure(policies, pool, args.steps, history, exhaustive))
    title = "rules tier: CPU time per action, decision + running state (ms; wall-clock p95 beside it)"
    table = Table(title=title)
    for name in ("policies", "history", "p50", "p95", "max", "target p95", "wall p95", "not allowed",
                 "exhaustive p50", "exhaustive p95", "build", "build shared"):  # fmt: skip
        table.add_column(name, justify="right")
    for r in results:
        cells = [str(r["policies"]), str(r["history"])]
        cells += [f"{r[k]:.3f}" for k in ("p50_ms", "p95_ms", "max_ms")]
        met = ""
        if "target_p95_ms" in r:
            met = f"≤{r['target_p95_ms']:g} " + ("ok" if r["meets_target"] else "MISSED")
        cells += [met, f"{r['wall']['p95_ms']:.3f}", f"{r['non_allow_share']:.0%}"]
        slow = r.get("exhaustive")
        cells += [f"{slow['p50_ms']:.3f}", f"{slow['p95_ms']:.3f}"] if slow else ["-", "-"]
        cells += [f"{r['build_ms']:.1f}", f"{r['shared_build_ms']:.2f}"]
        table.add_row(*cells)
    console.print(table)
    calibration = calibration_ms()
    console.print(
        f"load average {os.getloadavg()[0]:.1f}; a million Python additions took {calibration:.0f} ms of CPU "
        "(~30-50 ms on an idle machine)",
        highlight=False,
    )
    document = {
        "benchmark": "rules",
        "pagewarden": __version__,
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "load_average_1m": round(os.getloadavg()[0], 2),
        # how fast this machine ran plain Python during the run (a shared machine under load
        # runs everything several times slower: compare runs by this before comparing times)
        "calibration_loop_ms": calibration,
        "policies_from": str(args.data.name) if args.data else "synthetic mix",
        "results": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    console.print(f"wrote {args.out}", highlight=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
