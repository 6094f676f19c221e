"""The overhead benchmark measures what its rows say (a link row that never went back to its
page once made every later click wait for an element on the destination page)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _overhead() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_overhead", BENCHMARKS / "overhead.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_navigating_rows_go_back_and_policy_rows_wrap_first() -> None:
    rows = _overhead().scenarios()
    assert rows
    for row in rows:
        assert row.navigates == (row.action in ("link", "submit")), row.name
        assert row.before_wrap == row.name.startswith("before-wrap/"), row.name
    policy_rows = [r for r in rows if r.name.startswith("policies-")]
    assert {r.policies for r in policy_rows} == {100, 1000, 3000}
    assert all(r.name.split("/")[0] == f"policies-{r.policies}" for r in policy_rows)
