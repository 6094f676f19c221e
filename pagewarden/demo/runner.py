"""Run the demo: every scenario's agents on the demo site, guarded (the default) or raw.

Guarded, each agent runs on ``Guard(goal=…, trace=…, screenshots=True).wrap(page)`` — the
embedded default: no policy file, no LLM unless one is given (then the report names the model
and counts its calls). The run passes when every planted attack is
stopped before it does harm and every benign action runs and has its effect. Unguarded
(``--unguarded``), only the naive agent runs, on the raw page, to show that the attacks are
real: the run passes when every attack does what it was planted to do.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from playwright.async_api import Browser, async_playwright

from pagewarden._browser import chromium_launch_options
from pagewarden._launch import per_context_proxy_launch_options, proxied_context_options
from pagewarden.demo._agent import Agent, AgentStopped
from pagewarden.demo._results import AgentRun, DemoResult
from pagewarden.demo.agents import SCENARIOS, Outcome, Scenario, scenario_by_id
from pagewarden.demo.site import DemoSite
from pagewarden.guard import Approver, Guard

__all__ = ["DEFAULT_OUT", "AgentRun", "DemoResult", "TraceTail", "run_agent", "run_demo", "run_demo_async"]

DEFAULT_OUT = Path("pagewarden-out") / "demo"
VIEWPORT = {"width": 1280, "height": 800}
#: Playwright's timeout for one action: a step that cannot run fails fast instead of hanging.
STEP_TIMEOUT_MS = 8000


class TraceTail:
    """Reads the trace lines a guard appended since the last call."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._offset = 0

    def __call__(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        with self.path.open("rb") as handle:
            handle.seek(self._offset)
            data = handle.read()
        end = data.rfind(b"\n")
        if end < 0:
            return []
        self._offset += end + 1
        lines = [json.loads(line) for line in data[:end].decode("utf-8").splitlines() if line.strip()]
        return [line for line in lines if line.get("kind") != "refusal"]  # steps only


async def run_agent(
    browser: Browser,
    site: DemoSite,
    scenario: Scenario,
    agent_name: str,
    *,
    guarded: bool,
    out: Path,
    approver: Approver | None = None,
    llm: Any = None,
    proxy: bool = False,
) -> AgentRun:
    """Run one agent ("benign" or "naive") through `scenario` in a fresh browser context.

    The site's state is reset first; screenshots (and, guarded, the trace) go under `out`.
    With `proxy` (guarded runs), the context goes through the guard's own network layer
    (`session_proxy`, started and checked first; the browser must come from
    `per_context_proxy_launch_options`).
    """
    script = scenario.benign if agent_name == "benign" else scenario.naive
    if script is None:
        raise ValueError(f"scenario {scenario.id} has no {agent_name} agent")
    (out / "screenshots").mkdir(parents=True, exist_ok=True)
    site.reset()
    mark = site.mark()
    run = AgentRun(scenario, agent_name, guarded)
    prefix = f"{scenario.id}-{agent_name}" + ("" if guarded else "-unguarded")
    guard = None
    network = None
    context_options: dict[str, Any] = {"viewport": VIEWPORT}
    if guarded:
        trace_path = out / "traces" / f"{prefix}.jsonl"
        trace_path.parent.mkdir(parents=True, exist_ok=True)
        trace_path.unlink(missing_ok=True)
        guard = Guard(
            goal=scenario.goal,
            secrets=scenario.secrets,
            trace=trace_path,
            screenshots=True,
            approver=approver,
            llm=llm,
        )
        if proxy:
            counter = _RequestCount()
            network = await _start_network(guard, site, counter)
            context_options = proxied_context_options(guard, network, context_options)
    try:
        context = await browser.new_context(**context_options)
    except BaseException:
        if network is not None:
            network.stop()
        if guard is not None:
            guard.close()
        raise
    try:
        if scenario.signed_in:
            await context.add_cookies([site.session_cookie(site.sign_in_session())])  # type: ignore[list-item]
        page = await context.new_page()
        page.set_default_timeout(STEP_TIMEOUT_MS)
        target: Any = page
        verdicts = None
        if guard is not None:
            target = guard.wrap(page)
            verdicts = TraceTail(trace_path)
            run.trace = trace_path.relative_to(out).as_posix()
        agent = Agent(
            target,
            agent_name,
            out_dir=out,
            shot_prefix=prefix,
            verdicts=verdicts,
            raw=page,
            secrets=guard.secrets if guard is not None else None,
        )
        try:
            await script(agent)
        except AgentStopped:
            pass
        except Exception as exc:  # noqa: BLE001 - a broken script is reported, it does not end the demo
            run.error = f"{type(exc).__name__}: {exc}"
        run.steps = agent.steps
        final_url = page.url
        if guard is not None and guard.semantic is not None:
            run.llm_calls = guard.semantic.client.stats.calls
        if network is not None and guard is not None and guard.network is not None:
            run.proxied_requests = counter.count
            run.network_refusals = [
                f"{r.rule} {r.host}" for r in guard.network.refusals if r.rule != "no_session"
            ]
    finally:
        try:
            await context.close()
        finally:
            if network is not None:
                network.stop()
            if guard is not None:
                guard.close()
    outcome = Outcome(site, mark, final_url)
    check = scenario.effect if agent_name == "benign" else scenario.harm
    run.outcome = check(outcome) if check is not None else None
    run.evil_received = outcome.evil()
    return run


class _RequestCount:
    """mitmproxy addon: how many requests of the session the proxy handled."""

    def __init__(self) -> None:
        self.count = 0

    def request(self, flow: Any) -> None:
        if flow.metadata.get("pagewarden_session"):
            self.count += 1


async def _start_network(guard: Guard, site: DemoSite, counter: _RequestCount) -> Any:
    """The guard's network layer for one run: its policies, session token and grants, the
    demo's hosts resolved by the proxy; started and checked before any page loads."""
    from pagewarden.proxy import session_proxy, verify_enforcing

    network = session_proxy(guard, host_map={"*.test": site.port}, addons=(counter,))
    await network.start_async()
    try:
        await asyncio.to_thread(verify_enforcing, network)
    except BaseException:
        network.stop()
        raise
    return network


async def run_demo_async(
    out: Path = DEFAULT_OUT,
    *,
    guarded: bool = True,
    headed: bool = False,
    scenarios: Iterable[Scenario] = SCENARIOS,
    approver: Approver | None = None,
    llm: Any = None,
    proxy: bool = False,
) -> DemoResult:
    """Run the scenarios' agents (benign and naive guarded; naive only unguarded).

    `approver` answers ASK decisions; without one an ASK stops the action. `llm` (an
    `LLMConfig`) adds the semantic tier to every guard. `proxy`: guarded runs go through
    the network layer too (each run its own proxy, as `launch(proxy=True)` does).
    """
    proxy = proxy and guarded
    out = Path(out)
    for stale in ("screenshots", "traces"):  # left by an earlier run into the same directory
        shutil.rmtree(out / stale, ignore_errors=True)
    result = DemoResult(guarded=guarded, out_dir=out)
    if guarded and llm is not None:
        result.model = llm.describe() if hasattr(llm, "describe") else str(getattr(llm, "model", llm))
    with DemoSite() as site:
        async with async_playwright() as playwright:
            if proxy:
                options = per_context_proxy_launch_options(headless=not headed)
            else:
                options = chromium_launch_options(headless=not headed, host_map={"*.test": site.port})
            browser = await playwright.chromium.launch(**options)
            try:
                for scenario in scenarios:
                    agents = ("benign", "naive") if guarded else ("naive",)
                    for name in agents:
                        if name == "naive" and scenario.naive is None:
                            continue
                        run = await run_agent(
                            browser, site, scenario, name,
                            guarded=guarded, out=out, approver=approver, llm=llm, proxy=proxy,
                        )  # fmt: skip
                        result.runs.append(run)
            finally:
                await browser.close()
    return result


def run_demo(
    out: Path = DEFAULT_OUT,
    *,
    guarded: bool = True,
    headed: bool = False,
    scenario_ids: Sequence[str] = (),
    console: Any = None,
    approver: Approver | None = None,
    llm: Any = None,
    proxy: bool = False,
) -> DemoResult:
    """Run the demo, print the table, write ``report.html`` and ``results.json`` into `out`.

    An unguarded run writes into ``out/unguarded`` so that it never overwrites the guarded report.
    """
    from pagewarden.demo.report import print_result, write_html, write_json

    out = Path(out) if guarded else Path(out) / "unguarded"
    chosen = [scenario_by_id(s) for s in scenario_ids] if scenario_ids else list(SCENARIOS)
    result = asyncio.run(
        run_demo_async(
            out, guarded=guarded, headed=headed, scenarios=chosen, approver=approver, llm=llm, proxy=proxy
        )
    )
    write_json(result, Path(out) / "results.json")
    write_html(result, Path(out) / "report.html")
    print_result(result, console)
    return result
