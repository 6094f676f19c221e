"""`pagewarden eval judge`: the semantic tier alone over labelled actions, against any model.

A labelled set is a JSONL file (`_items`: goal, action, target facts, page text, prior steps,
policies, label allow/ask/block and why); converters read Mind2Web-SC and ST-WebAgentBench
from a path. `run_items` judges every item through the guard's own pipeline and measures it;
`summarise` gives per-label precision and recall, missed violations, false blocks, latency
p50/p95, tokens and model calls per item; `render` prints it, `write_json` saves it.
`SAMPLE` is a small set shipped with the package (benign work, injections, policy breaches).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from pagewarden.eval.judge._items import (
    LABELS,
    ItemFormatError,
    LabelledItem,
    load_items,
    parse_items,
    write_items,
)
from pagewarden.eval.judge._metrics import DECISIONS, JudgeReport, LabelMetrics, percentile, summarise
from pagewarden.eval.judge._mind2web_sc import MIND2WEB_SC_POLICIES, convert_mind2web_sc
from pagewarden.eval.judge._report import render, write_json
from pagewarden.eval.judge._runner import ItemResult, JudgeOptions, judge_item, run_items
from pagewarden.eval.judge._stwebagentbench import convert_stwebagentbench

__all__ = [
    "DECISIONS",
    "FORMATS",
    "LABELS",
    "MIND2WEB_SC_POLICIES",
    "ItemFormatError",
    "ItemResult",
    "JudgeOptions",
    "JudgeReport",
    "LabelMetrics",
    "LabelledItem",
    "convert_mind2web_sc",
    "convert_stwebagentbench",
    "judge_item",
    "load_items",
    "parse_items",
    "percentile",
    "read_dataset",
    "render",
    "run_items",
    "sample_path",
    "summarise",
    "write_items",
    "write_json",
]

#: The dataset formats `read_dataset` reads.
FORMATS = ("jsonl", "mind2web-sc", "stwebagentbench")


def sample_path() -> Path:
    """The labelled sample set shipped with pagewarden (`sample.jsonl`)."""
    return Path(str(resources.files("pagewarden.eval.judge").joinpath("sample.jsonl")))


def read_dataset(path: str | Path, fmt: str = "jsonl") -> list[LabelledItem]:
    """Labelled items from `path` in format `fmt` (one of `FORMATS`); `ItemFormatError` on bad input."""
    if fmt == "jsonl":
        return load_items(path)
    if fmt == "mind2web-sc":
        return convert_mind2web_sc(path)
    if fmt == "stwebagentbench":
        return convert_stwebagentbench(path)
    raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {fmt!r}")
