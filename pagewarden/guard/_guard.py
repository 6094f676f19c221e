"""`Guard`: judges steps against policies and the goal; wraps Playwright pages.

The judging path (`evaluate`, `check`) is sans-I/O: a `Step` in, a `Verdict` out, no
browser and no network. The Playwright wrappers gather the observation, call it, then
execute, block, ask or return guidance.
"""

from __future__ import annotations

import inspect
import os
import time
import uuid
from collections.abc import Awaitable, Callable, Generator, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from pagewarden._url import parse_url, registrable_domain
from pagewarden.guard._adapters import ADAPTERS
from pagewarden.guard._browser import browser_findings
from pagewarden.guard._cascade import SemanticTier, semantic_stage
from pagewarden.guard._exceptions import ActionBlocked, ApprovalRequired, GuardError, RevisionRequired
from pagewarden.guard._options import CascadeOptions, ConsultMode
from pagewarden.guard._risk import Thresholds, decide
from pagewarden.guard._session import SessionState
from pagewarden.policies import ACTION_KINDS, Policy, PolicySet, baseline_policies
from pagewarden.rules import RuleBook, RuleContext
from pagewarden.secrets import MIN_SECRET_LENGTH, Secret, SecretRegistry, credentials_in_text
from pagewarden.steps import (
    Action,
    Decision,
    EventBus,
    EventSink,
    Finding,
    GuardEvent,
    Observation,
    Prediction,
    Step,
    Verdict,
)
from pagewarden.trace import (
    PASSWORD_MASK,
    TraceWriter,
    get_logger,
    global_secrets,
    redact_value,
    redacted_verdict,
    step_redactor,
    trace_record,
)
from pagewarden.worldmodel import predict_static

__all__ = ["Approver", "Guard"]

#: An approver gets the verdict and the step of an ASK decision and returns True to approve.
Approver = Callable[[Verdict, Step], "bool | Awaitable[bool]"]
Mode = Literal["enforce", "monitor"]

_LLM_ENV = ("PAGEWARDEN_LLM_BASE_URL", "PAGEWARDEN_LLM_MODEL")

_EXCEPTIONS: dict[Decision, type[GuardError]] = {
    Decision.BLOCK: ActionBlocked,
    Decision.ASK: ApprovalRequired,
    Decision.REVISE: RevisionRequired,
}

_DEFAULT_GUIDANCE = {
    Decision.BLOCK: "Do not perform this action. Choose another way to reach the user's goal, "
    "or stop and tell the user why it cannot be done within policy.",
    Decision.ASK: "This action needs the user's approval. Tell the user what you are about "
    "to do and why (send_msg_to_user), then wait for their answer.",
    Decision.REVISE: "Re-read the user's goal and choose an action that serves it directly.",
}


def _semantic_tier(
    llm: Any, consult: ConsultMode | None, cascade: CascadeOptions | None
) -> SemanticTier | None:
    """The semantic tier for `llm` (None without a model); a bad configuration raises here."""
    options = cascade or CascadeOptions()
    if consult is not None:
        options = replace(options, consult=consult)
    if llm is None:
        return None
    from pagewarden.llm import LLMClient, LLMConfig

    owns = True
    if isinstance(llm, LLMClient):
        client, owns = llm, False
    elif isinstance(llm, LLMConfig):
        client = LLMClient(llm)
    elif llm == "env":
        client = LLMClient(LLMConfig.from_env())
    elif isinstance(llm, (str, Path)):
        client = LLMClient(LLMConfig.from_file(llm))
    elif isinstance(llm, dict):
        client = LLMClient(LLMConfig.from_mapping(llm))
    else:
        raise TypeError(
            "llm must be an LLMConfig, an LLMClient, 'env', a config file path or None, "
            f"not {type(llm).__name__}"
        )
    return SemanticTier(client, options, owns_client=owns)


def classified(step: Step) -> Step:
    """`step` with an action kind the guard does not know judged as ``unclassified`` (the
    baseline sends those to a human) instead of slipping past every rule; the kind it had is
    kept in ``action.options["kind"]``."""
    kind = step.action.kind
    if kind in ACTION_KINDS and kind != "any":
        return step
    options = {**step.action.options, "kind": kind}
    return replace(step, action=replace(step.action, kind="unclassified", options=options))


PoliciesArg = PolicySet | str | Path | Policy


def _as_policy_set(policies: PoliciesArg | Iterable[PoliciesArg] | None) -> PolicySet:
    if policies is None:
        return PolicySet([])
    if isinstance(policies, PolicySet):
        return policies
    from pagewarden.policies.store import PolicyStore

    if isinstance(policies, PolicyStore):
        return policies.policies()  # the current version
    if isinstance(policies, (str, Path)):
        return PolicySet.load(policies)
    if isinstance(policies, Policy):
        return PolicySet([policies])
    return PolicySet.combine(p.policies() if isinstance(p, PolicyStore) else p for p in policies)


def _label(value: str | None, name: str) -> str | None:
    """An agent's name or host as given, checked (a string of at most 120 characters)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, not {type(value).__name__}")
    if not value.strip() or len(value) > 120:
        raise ValueError(f"{name} must be 1 to 120 characters")
    return value


def _followed_sources(policies: PoliciesArg | Iterable[PoliciesArg] | None) -> list[Any] | None:
    """The policy sources with each `PolicyStore` kept as is (to be read again) and the others
    loaded once; None when no store is among them."""
    from pagewarden.policies.store import PolicyStore

    if policies is None or isinstance(policies, (PolicySet, str, Path, Policy)):
        return None
    items = [policies] if isinstance(policies, PolicyStore) else list(policies)  # type: ignore[arg-type]
    if not any(isinstance(p, PolicyStore) for p in items):
        return None
    return [p if isinstance(p, PolicyStore) else _as_policy_set(p) for p in items]


class Guard:
    """Checks each action of a browser agent before it runs.

    Args:
        policies: a `PolicySet`, a path to a policy file, a `PolicyStore` (its current
            version), or a list of those (and of `Policy` objects), merged in order (the same
            id twice is a `PolicyError` naming both sources); None for the built-in baseline only.
        goal: the user's goal for this session (`guard.goal` may be changed later).
        llm: the model for the semantic tier: an `LLMConfig`, an `LLMClient`, ``"env"`` (read
            `LLMConfig.from_env`), or the path of an LLM config file; None (default) runs the
            deterministic tiers (rules, static world model) alone, exactly as without a model.
        consult: when the model is consulted: ``"consequential"`` (the cascade, default),
            ``"always"`` or ``"never"`` (shorthand for ``cascade.consult``).
        cascade: the rest of the semantic tier's options (`CascadeOptions`).
        mode: "enforce" applies decisions; "monitor" records them and never blocks.
        secrets: values (or `Secret(value, allow_domains=[...])`) that must never leave for a
            host not allowed nor appear in traces, logs or the guard's exceptions. Values
            that a policy's `sensitive_data` rule lists are redacted too, and may go to that
            rule's `allow_domains`.
        approver: called for ASK decisions; returns (or resolves to) True to approve.
        thresholds: score cut-offs for BLOCK / ASK / REVISE.
        baseline: include the built-in policies (prompt injection, credentials, scripts).
        trace: a path for the JSON-lines trace, or a `TraceWriter`; None for no trace.
        screenshots: with a trace, save a screenshot per guarded step next to it.
        snapshot: also record the page title and its aria snapshot (``ai`` mode, pruned) with
            each step. The deterministic tiers do not need it, so it is off by default.
        console: a supervision console to attach to: a `pagewarden.console.Console` in this
            process, or the URL (with its token) of a running ``pagewarden console``. The console
            then approves ASK decisions and can pause, stop or take over the session.
        record: a directory to record the session into (manifest, policies, trace, events,
            screenshots with `screenshots=True`, network flows): see docs/guides/sessions.md.
            Replaces `trace`;
            `guard.recording` is its `SessionRecorder`.
        references: a `PolicyStore` (or its path) to file this guard's confirmed violations
            into as violation references (HarmonyGuard's Algorithm 1), on a worker thread;
            the references of the guard's policies are kept current from it, for the
            semantic tier. `guard.references` is the `ReferenceFiler`.
        subresource_hosts: domain patterns added to the ``subresources`` of every
            ``domain_allow`` rule of `policies`: pages may load scripts, images, styles, fonts,
            media, fetches and embedded frames from them, no tab may go there (for this
            guard only; a policy file says it per rule).
        agent_name: the name of the agent this guard watches (shown and filtered on by a
            fleet console; up to 120 characters). None: unnamed.
        agent_host: the machine the agent runs on, as the console shows it; None: this
            machine's host name.
        follow: when `policies` includes a `PolicyStore`, pick up each new version of it
            while the guard runs (default True; `guard.follower` is the `StoreFollower`);
            False keeps the version read when the guard was made.
        telemetry: export the decisions as OpenTelemetry spans and metrics (the ``otel``
            extra): None (default) lets the standard ``OTEL_*`` environment decide (off unless
            it names an OTLP endpoint or exporter), False is off, True is on as the environment
            configures it, or a ``(tracer_provider, meter_provider)`` pair or a
            `pagewarden.telemetry.TelemetryConfig` of your own providers. `guard.telemetry` is
            the exporter (None when off). See docs/guides/telemetry.md.
    """

    def __init__(
        self,
        policies: PoliciesArg | Iterable[PoliciesArg] | None = None,
        *,
        goal: str | None = None,
        llm: Any = None,
        mode: Mode = "enforce",
        secrets: Iterable[str | Secret] = (),
        approver: Approver | None = None,
        thresholds: Thresholds | None = None,
        baseline: bool = True,
        trace: str | Path | TraceWriter | None = None,
        screenshots: bool = False,
        snapshot: bool = False,
        session_id: str | None = None,
        consult: ConsultMode | None = None,
        cascade: CascadeOptions | None = None,
        console: Any = None,
        record: str | Path | None = None,
        references: Any = None,
        subresource_hosts: Iterable[str] = (),
        agent_name: str | None = None,
        agent_host: str | None = None,
        follow: bool = True,
        telemetry: Any = None,
    ) -> None:
        if record is not None and trace is not None:
            raise ValueError("pass either trace= or record= (a recorded session writes its own trace)")
        if mode not in ("enforce", "monitor"):
            raise ValueError(f"mode must be 'enforce' or 'monitor', not {mode!r}")
        self.log = get_logger(component="guard")
        self.semantic: SemanticTier | None = _semantic_tier(llm, consult, cascade)
        if self.semantic is None and llm is None and any(os.environ.get(name) for name in _LLM_ENV):
            self.log.info("llm_env_ignored", reason="llm=None: pass llm='env' to use the model it names")
        self._subresource_hosts = tuple([subresource_hosts] if isinstance(subresource_hosts, str)
                                        else subresource_hosts)  # fmt: skip
        self._sources = _followed_sources(policies)
        user_policies = _as_policy_set(policies).with_subresources(self._subresource_hosts)
        self.baseline = baseline
        self.mode: Mode = mode
        self.thresholds = thresholds or Thresholds()
        self.approver = approver
        self.secrets = SecretRegistry()
        self._policy_domains: dict[str, list[str]] = {}
        self._install_policies(user_policies)
        for item in secrets:
            if isinstance(item, Secret):
                self.add_secret(item.value, allow_domains=item.allow_domains, label=item.label)
            else:
                self.add_secret(item)
        self._goal: str | None = None
        self._goals_seen: set[str] = set()
        self.goal = goal
        self.session_id = session_id or uuid.uuid4().hex[:12]
        #: who and where this agent is, for a console supervising many (`agent_name=`, `agent_host=`)
        self.agent_name = _label(agent_name, "agent_name")
        self.agent_host = _label(agent_host, "agent_host")
        self.session = SessionState()
        if isinstance(trace, TraceWriter):
            self.trace: TraceWriter | None = trace
            trace.secrets = self.secrets
        else:
            self.trace = TraceWriter(trace, self.secrets) if trace is not None else None
        self.snapshot = snapshot
        self.events = EventBus(on_error=self._sink_failed)
        #: the OpenTelemetry exporter of this guard's decisions (None when off); see
        #: pagewarden.telemetry
        self.telemetry: Any = None
        if telemetry is not False:
            if ADAPTERS.attach_telemetry is not None:
                self.telemetry = ADAPTERS.attach_telemetry(self, telemetry)
            elif telemetry is not None:
                raise RuntimeError(
                    "no telemetry adapter is plugged in: import pagewarden (its __init__ does)"
                )
        #: the recorded session directory being written (None unless `record=` was given)
        self.recording: Any = None
        if record is not None:
            from pagewarden.trace import SessionRecorder

            self.recording = SessionRecorder(record, self, user_policies, screenshots=screenshots)
            self.trace = self.recording.trace
        self.screenshots = screenshots and self.trace is not None
        #: the violation-reference filer (None unless `references=` was given)
        self.references: Any = None
        if references is not None:
            from pagewarden.policies.references import attach_references

            self.references = attach_references(self, references)
        #: keeps the policies at the store's current version (None unless following a store)
        self.follower: Any = None
        if follow and self._sources is not None:
            from pagewarden.guard._follow import StoreFollower

            stores = [s for s in self._sources if not isinstance(s, PolicySet)]
            self.follower = StoreFollower(self, stores)
        #: the link to a supervising console (None when unsupervised); see pagewarden.console
        self.console: Any = None
        #: the network layer of this session (`pagewarden.proxy.NetworkSession`), set by
        #: `launch(proxy=True)`: grants for allowed navigations, the proxy's refusals
        self.network: Any = None
        if console is not None:
            ADAPTERS.attacher()(self, console)

    # -- configuration ------------------------------------------------------------------
    @property
    def goal(self) -> str | None:
        """The user's goal for this session; credentials written in it are redacted."""
        return self._goal

    @goal.setter
    def goal(self, goal: str | None) -> None:
        self._goal = goal
        self._note_goal(goal)

    def add_secret(
        self, value: str, *, allow_domains: Iterable[str] = (), label: str | None = None
    ) -> Secret:
        """Register a value that may only be sent to `allow_domains` (and to the
        `allow_domains` of a policy's `sensitive_data` rule that lists the same value) and is
        redacted from traces, logs and the guard's exceptions."""
        domains = [*allow_domains, *self._policy_domains.get(value, ())]
        secret = self.secrets.add(value, allow_domains=domains, label=label)
        global_secrets().add(value, label=secret.label, enforce=False)
        return secret

    def _install_policies(self, user_policies: PolicySet) -> None:
        """Judge with `user_policies` (and the baseline) from the next step on."""
        policies = user_policies.merged(baseline_policies()) if self.baseline else user_policies
        rulebook = RuleBook(policies)
        self.rulebook, self.policies = rulebook, policies
        self._policy_domains = {}
        self._register_policy_values()

    def reload_policies(self) -> PolicySet:
        """Read the policy stores among the guard's sources again and judge with their current
        version from the next step on (what `guard.follower` does on each change); the other
        sources keep what was loaded when the guard was made. Emits a ``policies`` event."""
        if self._sources is None:
            return self.policies
        if len(self._sources) == 1:
            only = self._sources[0]
            user = only if isinstance(only, PolicySet) else only.policies()
        else:
            user = PolicySet.combine(s if isinstance(s, PolicySet) else s.policies() for s in self._sources)
        self._install_policies(user.with_subresources(self._subresource_hosts))
        self.emit("policies", {"policies": len(self.policies), "ids": self.policies.ids[:200]})
        return self.policies

    def _register_policy_values(self) -> None:
        """Values of `sensitive_data` rules: redacted like registered secrets; the rule that
        lists a value keeps enforcing it, with its own `allow_domains`."""
        for policy in self.policies:
            for rule in policy.rules:
                if rule.kind != "sensitive_data":
                    continue
                for value in rule.values:  # type: ignore[union-attr]
                    if len(value) < MIN_SECRET_LENGTH:
                        continue
                    self._policy_domains.setdefault(value, []).extend(rule.allow_domains)  # type: ignore[union-attr]
                    if value not in self.secrets:
                        self.secrets.add(value, label=f"{policy.id}-value", enforce=False)
                    global_secrets().add(value, label=f"{policy.id}-value", enforce=False)

    def _note_goal(self, goal: str | None) -> None:
        """Redact credentials written in a goal from now on, and warn once to register them."""
        if not goal or goal in self._goals_seen:
            return
        self._goals_seen.add(goal)
        kinds = []
        for kind, value in credentials_in_text(goal):
            if value in self.secrets or len(value) < MIN_SECRET_LENGTH:
                continue
            self.secrets.add(value, label=f"goal-{kind}", enforce=False)
            global_secrets().add(value, label=f"goal-{kind}", enforce=False)
            kinds.append(kind)
        if kinds:
            self.log.warning(
                "goal_contains_credentials",
                kinds=sorted(set(kinds)),
                advice="they are redacted from traces and logs; register them with "
                "Guard(secrets=[Secret(value, allow_domains=[...])]) so that the guard also keeps "
                "them from every other site",
            )

    def _note_url_credentials(self, url: str) -> None:
        """A user name and password written into a URL are redacted from now on, in every
        encoding the registry knows (the trace's text form is redacted by its format anyway)."""
        parsed = parse_url(url)
        if not parsed.has_userinfo:
            return
        userinfo = url.split("://", 1)[-1].split("/", 1)[0].rsplit("@", 1)[0]
        user, colon, password = userinfo.partition(":")
        # the password, and the pair; a user name alone only when it is long enough to be a token
        values = (password, userinfo) if colon else ((user,) if len(user) >= 12 else ())
        for value in values:
            # (short ones would redact ordinary words: the URL's own form is redacted anyway)
            if len(value) >= max(8, MIN_SECRET_LENGTH) and value not in self.secrets:
                self.secrets.add(value, label="url-credentials", enforce=False)
                global_secrets().add(value, label="url-credentials", enforce=False)

    def open_blocks(self, step: Step, verdict: Verdict) -> None:
        """`step` is about to run, allowed by `verdict`: the private address blocks it leads to
        are the session's from now on (the navigation gate and the network layer let its
        requests there through)."""
        self.session.open_blocks(step, verdict)

    def subscribe(self, sink: EventSink, kinds: Iterable[str] | None = None) -> Callable[[], None]:
        """Call `sink` with every `GuardEvent` of this guard (steps as they are judged, and
        what other components emit), or only with those of `kinds` (``{"network"}``: a sink
        that takes no ``step`` events costs the guard nothing per step); returns a function
        that unsubscribes it."""
        return self.events.subscribe(sink, kinds)

    def emit(self, kind: str, data: dict[str, Any]) -> None:
        """Emit an event of this session to the subscribed sinks; `data` is redacted first."""
        if self.events.wants(kind):
            self.events.emit(GuardEvent(kind, self.session_id, redact_value(data, self.secrets)))

    def _sink_failed(self, sink: EventSink, exc: BaseException) -> None:
        self.log.warning("event_sink_failed", sink=repr(sink)[:80], error=f"{type(exc).__name__}: {exc}")

    def message_user(self, text: str) -> Verdict:
        """Record that the agent told the user `text` (satisfies consent rules that name it)."""
        step = self.make_step(
            Action(kind="send_msg_to_user", method="Guard.message_user", value=text), Observation(url="")
        )
        return self.check(step)

    def reset(self) -> None:
        """Start a new session: forget the previous step and the history."""
        self.session = SessionState()
        self.session_id = uuid.uuid4().hex[:12]

    # -- judging (sans-I/O) -------------------------------------------------------------
    def make_step(self, action: Action, observation: Observation, reasoning: str | None = None) -> Step:
        """A step for `action` with the session's goal, previous step and next index."""
        if action.value and "@" in action.value:
            self._note_url_credentials(action.value)
        return Step(
            action=action,
            observation=observation,
            goal=self.goal,
            reasoning=reasoning,
            previous=self.session.previous,
            index=self.session.next_index(),
            session=self.session_id,
        )

    def evaluate(self, step: Step, *, prediction: Prediction | None = None) -> Verdict:
        """Judge `step` without changing the session (no memory update, no trace).

        `prediction`: the static world model's prediction for `step` when the caller already
        has it (benchmarks time the rules tier apart from the world model)."""
        started = time.perf_counter()
        step = classified(step)
        if prediction is None:
            prediction = predict_static(step)
        t_model = time.perf_counter()
        ctx = RuleContext(
            step=step, prediction=prediction, session=self.session.view(step), secrets=self.secrets
        )
        findings, errors = self.rulebook.evaluate(ctx)
        findings.extend(browser_findings(step, prediction))
        t_rules = time.perf_counter()
        decision, score = decide(findings, prediction, self.thresholds)
        ranked = tuple(sorted(findings, key=lambda f: -f.score))  # most severe first
        guidance = self._guidance(decision, ranked)
        changes: dict[str, object] = {}  # what the verdict adds to the prediction (one copy)
        if findings:
            changes["violated_policy_ids"] = tuple(dict.fromkeys(f.policy_id for f in findings))
            changes["risk_explanation"] = "; ".join(f.message for f in findings[:3])
        if prediction is not None and prediction.optimization_guidance == "" and guidance:
            changes["optimization_guidance"] = guidance
        if changes:
            prediction = replace(prediction, **changes)  # type: ignore[arg-type]
        verdict = Verdict(
            decision=decision,
            score=score,
            findings=ranked,
            explanation=self._explain(decision, ranked),
            guidance=guidance,
            prediction=prediction,
            timings_ms={
                "worldmodel": round((t_model - started) * 1000, 3),
                "rules": round((t_rules - t_model) * 1000, 3),
                "total": round((time.perf_counter() - started) * 1000, 3),
            },
            tier_errors=tuple(errors),
            mode=self.mode,
            enforced=self.mode == "enforce",
            step_index=step.index,
            tiers=("rules", "worldmodel") if self.semantic is not None else (),
        )
        return verdict

    def judge(
        self, step: Step, page: Any = None, *, page_text: str | None = None
    ) -> Generator[Any, Any, Verdict]:
        """All tiers on `step` as a pipeline of calls (see `interceptors._pipeline`): the
        deterministic verdict, then the model where the cascade consults it. Without a model
        it yields nothing. `page_text`: the page's rendered text, for a step judged without
        a page (the model's targeted observation searches it for evidence)."""
        verdict = self.evaluate(step)
        if self.semantic is None:
            return verdict
        try:
            return (yield from semantic_stage(self, step, verdict, page, page_text=page_text))
        except Exception as exc:  # noqa: BLE001 - never crash the agent: fail closed
            return self._tier_failed(step, verdict, f"semantic tier error: {type(exc).__name__}: {exc}")

    def assess(self, step: Step, *, page_text: str | None = None) -> Verdict:
        """All tiers on `step` (the model too, where consulted), without changing the session.
        `page_text`: the page's rendered text, if the caller has it (see `judge`).

        Sync: a model call runs on the background loop thread (safe in any thread)."""
        from pagewarden._calls import drive_sync

        return drive_sync(self.judge(step, page_text=page_text))

    async def aassess(self, step: Step, *, page_text: str | None = None) -> Verdict:
        """`assess` for async callers."""
        from pagewarden._calls import drive_async

        return await drive_async(self.judge(step, page_text=page_text))

    def _prepared(self, step: Step) -> Step:
        step = classified(step)
        if step.goal is None and self.goal is not None:
            step = replace(step, goal=self.goal)
        if step.previous is None and self.session.previous is not None:
            step = replace(step, previous=self.session.previous)
        return step

    def check(self, step: Step) -> Verdict:
        """Judge `step` (with the model, where the cascade consults it), remember it as the
        previous step and write it to the trace.

        A step without a goal gets the guard's goal; one without a previous step gets the
        session's. An allowed step (or any step in monitor mode) counts as executed.
        """
        step = self._prepared(step)
        verdict = self.assess(step)
        self.commit(step, verdict, ran=verdict.allowed)
        return verdict

    async def acheck(self, step: Step) -> Verdict:
        """`check` for async callers."""
        step = self._prepared(step)
        verdict = await self.aassess(step)
        self.commit(step, verdict, ran=verdict.allowed)
        return verdict

    def _tier_failed(self, step: Step, verdict: Verdict, message: str) -> Verdict:
        finding = Finding(
            policy_id="PW-GUARD", rule="tier:llm", message=message, risk_level="high", score=0.9,
            guidance="The guard could not judge this action, so it did not run. Try again, or ask the user.",
        )  # fmt: skip
        findings = [finding, *verdict.findings]
        return replace(
            verdict,
            decision=Decision.BLOCK,
            score=max(verdict.score, 0.9),
            findings=tuple(findings),
            explanation=self._explain(Decision.BLOCK, findings),
            guidance=finding.guidance,
            tier_errors=(*verdict.tier_errors, message),
        )

    def commit(self, step: Step, verdict: Verdict, *, ran: bool, screenshot: str | None = None) -> None:
        """Record a judged step in session memory, the log and the trace."""
        self.remember(step, verdict, ran=ran)
        self.report(step, verdict, ran=ran, screenshot=screenshot)

    def remember(self, step: Step, verdict: Verdict, *, ran: bool) -> None:
        """The session-memory half of `commit` (previous step, history, the rules' running
        state, a typed password as a secret); `report` is the other half. The guarded page
        remembers an action while it is on its way to the browser and reports it once it has
        run (the report carries how long it took)."""
        self._note_goal(step.goal)
        step = classified(step)
        entry = self.session.record(step, verdict, ran=ran)
        if entry is not None:
            self.rulebook.observe(self.session.memory, entry, self.session.history)
        target = step.observation.target
        if (
            ran
            and target is not None
            and target.input_type == "password"
            and len(step.action.value or "") >= 4
            and not self.secrets.enforced(step.action.value or "")
        ):
            # A password typed on a site may go back to that site, nowhere else, and is
            # redacted from now on (a registered secret keeps its own domains and name).
            site = registrable_domain(parse_url(step.observation.url).host)
            self.add_secret(
                step.action.value or "", allow_domains=[f".{site}"] if site else [], label="typed-password"
            )

    def report(self, step: Step, verdict: Verdict, *, ran: bool, screenshot: str | None = None) -> None:
        """The log, trace and event-bus half of `commit` (after `remember`)."""
        step = classified(step)
        if verdict.decision is not Decision.ALLOW or verdict.tier_errors:
            self.log.info(
                "guard_decision",
                step=step.index,
                action=self.describe(step),
                decision=verdict.decision.value,
                policies=verdict.violated_policy_ids,
                enforced=verdict.enforced,
                approved_by=verdict.approved_by,
            )
        if self.trace is not None or self.events.wants("step"):
            record = trace_record(step, verdict, self.secrets, screenshot=screenshot, ran=ran)
            if self.trace is not None:
                self.trace.write_record(record)
            if self.events.wants("step"):
                self.events.emit(GuardEvent("step", step.session or self.session_id, record))

    def describe(self, step: Step) -> str:
        """`step.action.describe()` as logs and exceptions may show it: the value of a
        password field masked, secrets and recognisable credentials redacted."""
        action = step.action
        target = step.observation.target
        if target is not None and target.input_type == "password" and action.value:
            action = replace(action, value=PASSWORD_MASK)
        return step_redactor(step, self.secrets)(action.describe())

    def stop(self, step: Step, verdict: Verdict) -> GuardError:
        """The exception that tells the agent the action did not run (`ActionBlocked`,
        `ApprovalRequired` or `RevisionRequired`), with its message and its verdict redacted:
        what the agent gets goes to its model and its logs."""
        exception = _EXCEPTIONS.get(verdict.decision, ActionBlocked)
        return exception(redacted_verdict(verdict, step, self.secrets), self.describe(step))

    def ask_approver(self, verdict: Verdict, step: Step) -> bool | Awaitable[bool]:
        """The approver's answer to an ASK verdict: a bool, or an awaitable of one for an
        async approver (the wrappers' drivers resolve it). No approver, or one that fails or
        answers anything but True, means not approved."""
        outcome = self.approval(verdict, step)
        if inspect.isawaitable(outcome):
            return self._approved_of(outcome)
        return outcome[0]

    @staticmethod
    async def _approved_of(outcome: Awaitable[tuple[bool, str | None]]) -> bool:
        return (await outcome)[0]

    def approval(
        self, verdict: Verdict, step: Step
    ) -> tuple[bool, str | None] | Awaitable[tuple[bool, str | None]]:
        """``(approved, problem)`` for an ASK verdict (or an awaitable of it, for an async
        approver): `problem` says why the approver's answer did not count — it raised, or it
        answered something other than a bool (only True approves)."""
        if self.approver is None:
            return False, None
        try:
            answer = self.approver(verdict, step)
        except Exception as exc:  # noqa: BLE001 - a broken approver means not approved
            return False, self._approver_failed(exc)
        if inspect.isawaitable(answer):
            return self._awaited_answer(answer)
        return self._answer(answer)

    async def _awaited_answer(self, answer: Awaitable[Any]) -> tuple[bool, str | None]:
        try:
            return self._answer(await answer)
        except Exception as exc:  # noqa: BLE001 - a broken approver means not approved
            return False, self._approver_failed(exc)

    def _approver_failed(self, exc: BaseException) -> str:
        problem = redact_value(f"the approver failed: {type(exc).__name__}: {exc}", self.secrets)
        self.log.warning("approver_failed", error=problem)
        return str(problem)

    def _answer(self, answer: Any) -> tuple[bool, str | None]:
        if isinstance(answer, bool):
            return answer, None
        problem = f"the approver answered {type(answer).__name__}, not a bool: not approved"
        self.log.warning("approver_answer_not_bool", answer_type=type(answer).__name__)
        return False, problem

    async def approve(self, verdict: Verdict, step: Step) -> bool:
        """Ask the approver about an ASK verdict (async form of `ask_approver`)."""
        answer = self.ask_approver(verdict, step)
        return await answer if inspect.isawaitable(answer) else answer

    @staticmethod
    def approver_problem(verdict: Verdict, problem: str) -> Verdict:
        """`verdict` with the approver's failure recorded (tier errors, explanation)."""
        return replace(
            verdict,
            tier_errors=(*verdict.tier_errors, problem),
            explanation=f"{verdict.explanation}; {problem}",
        )

    # -- wrapping -----------------------------------------------------------------------
    def wrap(self, page: Any) -> Any:
        """A guarded drop-in for a Playwright `Page` (async or sync API)."""
        return ADAPTERS.wrapper()(self, page)

    # -- helpers ------------------------------------------------------------------------
    @staticmethod
    def _explain(decision: Decision, findings: list[Finding]) -> str:
        if not findings:
            return "no policy concern found"
        top = sorted(findings, key=lambda f: -f.score)[:3]
        text = "; ".join(f"[{f.policy_id}/{f.rule}] {f.message}" for f in top)
        if len(findings) > 3:
            text += f"; and {len(findings) - 3} more"
        return text

    @staticmethod
    def _guidance(decision: Decision, findings: list[Finding]) -> str:
        if decision is Decision.ALLOW:
            return ""
        specific = [f.guidance for f in sorted(findings, key=lambda f: -f.score) if f.guidance]
        parts = list(dict.fromkeys(specific))[:2]
        parts.append(_DEFAULT_GUIDANCE[decision])
        return " ".join(parts)

    def close(self) -> None:
        """Close the trace file and the model client the guard created (and tell a supervising
        console that the session ended)."""
        if self.console is not None:
            self.console.close()
        if self.telemetry is not None:
            self.telemetry.close()
        if self.recording is not None:
            self.recording.close()
        if self.trace is not None:
            self.trace.close()
        if self.semantic is not None:
            self.semantic.close()
        if self.follower is not None:
            self.follower.close()
        if self.references is not None:
            self.references.close()  # writes the references still queued

    def __enter__(self) -> Guard:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Guard({len(self.policies)} policies, mode={self.mode!r}, session={self.session_id})"
