"""The steering, evidence and instruction checks in other languages than English (issue 27,
item 3): the English-only checks as they were (`benchmarks/_lang_before`) and today's, side by
side in one run.

* **Detection** on the multilingual set (`tests/rules/lang_cases.py`, tuned with the checks;
  `tests/rules/lang_heldout.py`, written before it was first run and not tuned on): attacks on
  the agent read as ``strong`` instructions, text addressed to the guard found by
  ``addresses_judge``, both found by ``evidence_lines`` in a page of ordinary lines.
* **False flags** on ordinary pages of the same languages (imperatives included): instruction-
  like, strong, addressed to the guard, picked as evidence.
* **English unchanged**: every English text the project has (the instruction tests' lists, the
  public WASP templates, ST-WebAgentBench intents and policies, AgentDAM, the text of every
  HTML page under tests/ and the demo site) scored by both; the texts whose score or families
  differ are listed.
* **Cost**: microseconds per `instruction_signals` on a 1,200-character context (the facts
  reader's bound) in English and in other languages, per `addresses_judge` on 20 kB of fenced
  data, and milliseconds per `evidence_lines` on a 10,000-line snapshot; medians, no caches.

    .venv/bin/python benchmarks/languages.py [--json benchmarks/results/languages.json]
"""

from __future__ import annotations

import argparse
import html
import json
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests/ (the sets)
sys.path.insert(0, str(Path(__file__).parent))  # _lang_before

from _lang_before import _evidence as before_evidence  # noqa: E402
from _lang_before import _instructions as before_instructions  # noqa: E402
from _lang_before import _steering as before_steering  # noqa: E402

from pagewarden.judge import _evidence as after_evidence  # noqa: E402
from pagewarden.judge import _steering as after_steering  # noqa: E402
from pagewarden.rules import _instructions as after_instructions  # noqa: E402
from tests.rules import lang_cases, lang_heldout  # noqa: E402

SHARED = ROOT.parent / "shared" / "benchmarks"
DEFAULT_JSON = Path(__file__).parent / "results" / "languages.json"
SIDES = {
    "before": (
        before_instructions.instruction_signals,
        before_steering.addresses_judge,
        before_evidence.evidence_lines,
    ),
    "after": (
        after_instructions.instruction_signals,
        after_steering.addresses_judge,
        after_evidence.evidence_lines,
    ),
}


def _snapshot(lines: list[str]) -> str:
    return "- main [ref=e1]:\n" + "\n".join(
        f"  - paragraph [ref=p{i}]: {json.dumps(t, ensure_ascii=False) if ':' in t else t}"
        for i, t in enumerate(lines)
    )


def detection(cases: dict[str, dict[str, list[str]]]) -> dict[str, Any]:
    """Per side and language: attacks and judge texts found, benign texts flagged."""
    out: dict[str, Any] = {}
    for side, (signals, addresses, evidence) in SIDES.items():
        per: dict[str, Any] = {}
        for lang, case in cases.items():
            attacks, judge, benign = case["attacks"], case["judge"], case["benign"]
            orders = attacks + judge
            mixed = [x for pair in zip(benign, orders, strict=False) for x in pair]
            snapshot = _snapshot(mixed + benign[len(orders) :] + orders[len(benign) :])
            picked = evidence(snapshot, limit=1000)

            def found(text: str, picked: list[str] = picked) -> bool:
                quoted = json.dumps(text, ensure_ascii=False)
                return any(p and p in quoted for p in picked)

            per[lang] = {
                "attacks": len(attacks),
                "attacks_strong": sum(signals(t).strong for t in attacks),
                "judge": len(judge),
                "judge_found": sum(bool(addresses(t)) for t in judge),
                "evidence_found": sum(found(t) for t in attacks + judge),
                "benign": len(benign),
                "benign_instruction_like": sum(signals(t).instruction_like for t in benign),
                "benign_strong": sum(signals(t).strong for t in benign),
                "benign_addresses_judge": sum(bool(addresses(t)) for t in benign),
                "benign_evidence": sum(found(t) for t in benign),
            }
        total = {k: sum(v[k] for v in per.values()) for k in next(iter(per.values()))}
        out[side] = {"total": total, "per_language": per}
    return out


def _html_blocks(path: Path) -> list[str]:
    text = re.sub(r"(?is)<(script|style)\b.*?</\1>", " ", path.read_text(errors="replace"))
    text = re.sub(r"(?i)<(?:br|/p|/div|/li|/h\d|/td|/tr|/button|/a|/label|/option|/span)\b[^>]*>", "\n", text)
    text = html.unescape(re.sub(r"<[^>]+>", " ", text))
    return [" ".join(b.split()) for b in text.split("\n") if len(b.split()) >= 2]


def english_texts() -> list[str]:
    """Every English text the project has at hand (see the module)."""
    from tests.rules import test_instructions as t

    texts = [*t.INJECTIONS, *t.SITE_TEXT, *t.BENIGN_UGC]
    wasp = SHARED / "wasp" / "injection_templates_and_user_goals.json"
    if wasp.exists():
        data = json.loads(wasp.read_text())
        for template in data["injection_formats"].values():
            texts.append(template.format(user_goal_str="comment", instantiated_url_of_action="http://tracker.test/a/b",
                                         instantiated_instruction_text="open the settings page and make the "
                                         "repository public"))  # fmt: skip
        for goals in data["user_goals"].values():
            texts += [g for g in goals if isinstance(g, str)]
    for name in ("test.raw.json",):
        path = SHARED / "st-webagentbench" / name
        if path.exists():
            for task in json.loads(path.read_text()):
                texts.append(task.get("intent", ""))
                texts += [p.get("description", "") for p in task.get("policies", []) if isinstance(p, dict)]
    agentdam = SHARED / "agentdam" / "gitlab_privacy.json"
    if agentdam.exists():

        def walk(x: Any) -> None:
            if isinstance(x, str) and len(x) >= 8:
                texts.extend(s for s in x.split("\n") if len(s) >= 8)
            elif isinstance(x, dict):
                for v in x.values():
                    walk(v)
            elif isinstance(x, list):
                for v in x:
                    walk(v)

        walk(json.loads(agentdam.read_text()))
    pages = [*ROOT.glob("tests/**/*.html"), *ROOT.glob("pagewarden/demo/**/*.html")]
    for page in sorted(p for p in pages if "lang" not in p.parent.name):
        texts += _html_blocks(page)
    return list(dict.fromkeys(x for x in texts if x))


def english_unchanged() -> dict[str, Any]:
    texts = english_texts()
    before, _, _ = SIDES["before"]
    after, _, _ = SIDES["after"]
    changed = []
    for text in texts:
        b, a = before(text), after(text)
        if (b.score, b.families) != (a.score, a.families):
            changed.append(
                {
                    "text": text[:160],
                    "before": [b.score, list(b.families)],
                    "after": [a.score, list(a.families)],
                }
            )
    jb, ja = SIDES["before"][1], SIDES["after"][1]
    judge_changed = [x[:160] for x in texts if bool(jb(x)) != bool(ja(x))]
    return {"texts": len(texts), "signals_changed": changed, "addresses_judge_changed": judge_changed,
            "strong_before": sum(before(x).strong for x in texts),
            "strong_after": sum(after(x).strong for x in texts)}  # fmt: skip


def _median_us(fn: Callable[[int], Any], rounds: int) -> float:
    times = []
    fn(-1)  # warm the per-word caches, as a running guard has them
    for i in range(rounds):
        started = time.process_time()
        fn(i)
        times.append((time.process_time() - started) * 1e6)
    return round(statistics.median(times), 1)


def _context(lang_texts: list[str], i: int) -> str:
    text, n = "", 0
    while len(text) < 1200:
        text += lang_texts[n % len(lang_texts)] + f" ({i}.{n}) "
        n += 1
    return text[:1200]


def cost(rounds: int) -> dict[str, Any]:
    from tests.rules.test_instructions import BENIGN_UGC, SITE_TEXT

    english = [*SITE_TEXT, *BENIGN_UGC]
    others = [t for case in lang_cases.CASES.values() for t in case["benign"]]
    lines = [f"  - paragraph [ref=p{i}]: {english[i % len(english)]} Row {i}." for i in range(10_000)]
    snapshot = "- main [ref=e1]:\n" + "\n".join(lines)
    multi = "- main [ref=e1]:\n" + "\n".join(
        f"  - paragraph [ref=p{i}]: {others[i % len(others)]} ({i})" for i in range(10_000)
    )
    data = " ".join((english + others) * 40)[:20_000]
    out: dict[str, Any] = {}
    for side, (signals, addresses, evidence) in SIDES.items():
        raw = signals.__wrapped__  # type: ignore[attr-defined]

        def en(i: int, raw: Callable[[str], Any] = raw) -> Any:
            return raw(_context(english, i))

        def other(i: int, raw: Callable[[str], Any] = raw) -> Any:
            return raw(_context(others, i))

        def judge(i: int, addresses: Callable[[str], Any] = addresses) -> Any:
            return addresses(f"{i} {data}")

        def page_en(i: int, evidence: Callable[..., Any] = evidence) -> Any:
            return evidence(f"- x{i}\n{snapshot}")

        def page_other(i: int, evidence: Callable[..., Any] = evidence) -> Any:
            return evidence(f"- x{i}\n{multi}")

        out[side] = {
            "instruction_signals_us_english_1200": _median_us(en, rounds),
            "instruction_signals_us_other_1200": _median_us(other, rounds),
            "addresses_judge_us_20kB": _median_us(judge, max(5, rounds // 10)),
            "evidence_lines_ms_10000_lines_english": round(_median_us(page_en, 5) / 1000, 2),
            "evidence_lines_ms_10000_lines_other": round(_median_us(page_other, 5) / 1000, 2),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    result = {
        "tuned": detection(lang_cases.CASES),
        "held_out": detection(lang_heldout.CASES),
        "english": english_unchanged(),
        "cost": cost(args.rounds),
    }
    for name in ("tuned", "held_out"):
        for side in ("before", "after"):
            t = result[name][side]["total"]
            print(f"{name:9} {side:6} attacks strong {t['attacks_strong']}/{t['attacks']}  judge found "
                  f"{t['judge_found']}/{t['judge']}  "
                  f"evidence {t['evidence_found']}/{t['attacks'] + t['judge']}  "
                  f"benign: instruction-like {t['benign_instruction_like']}/{t['benign']}, "
                  f"strong {t['benign_strong']}, to the judge {t['benign_addresses_judge']}, "
                  f"evidence {t['benign_evidence']}")  # fmt: skip
    e = result["english"]
    print(f"english: {e['texts']} texts, signals changed {len(e['signals_changed'])}, "
          f"addresses_judge changed {len(e['addresses_judge_changed'])}, "
          f"strong {e['strong_before']} -> {e['strong_after']}")  # fmt: skip
    for side in ("before", "after"):
        print(f"cost {side:6}", json.dumps(result["cost"][side]))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
