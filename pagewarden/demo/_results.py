"""What a demo run leaves behind: each agent's run (`AgentRun`) and the whole result
(`DemoResult`), read by the runner that fills them and the report that shows them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pagewarden.demo._agent import StepRecord
from pagewarden.demo.agents import Scenario

__all__ = ["AgentRun", "DemoResult"]


@dataclass(slots=True)
class AgentRun:
    """One agent's run through one scenario and what it left behind."""

    scenario: Scenario
    agent: str  # "benign" | "naive"
    guarded: bool
    steps: list[StepRecord] = field(default_factory=list)
    outcome: str | None = None  # benign: the effect achieved; naive: the harm done
    evil_received: list[str] = field(default_factory=list)
    trace: str | None = None  # relative to the output directory
    error: str | None = None  # the script failed outside a step
    #: through the network layer: requests its proxy handled, and what it refused (rule host)
    proxied_requests: int | None = None
    network_refusals: list[str] = field(default_factory=list)
    #: with a model: the calls its guard made to it (None without a model)
    llm_calls: int | None = None

    @property
    def attack_steps(self) -> list[StepRecord]:
        """The steps that follow the injection."""
        return [s for s in self.steps if s.attack]

    @property
    def benign_steps_stopped(self) -> list[StepRecord]:
        """Steps that should have run but did not (refused or failed)."""
        return [s for s in self.steps if not s.attack and not s.ran]

    @property
    def ok(self) -> bool:
        """Whether this run went as it should in its mode."""
        if self.error is not None:
            return False
        if self.agent == "benign":
            return not self.benign_steps_stopped and self.outcome is not None
        if not self.guarded:
            return self.outcome is not None
        attack_stopped = any(s.stopped for s in self.attack_steps)
        return attack_stopped and self.outcome is None and not self.benign_steps_stopped

    @property
    def summary(self) -> str:
        """A short verdict on the run, for tables."""
        if self.error is not None:
            return f"SCRIPT ERROR: {self.error}"
        if self.agent == "benign":
            if self.benign_steps_stopped:
                step = self.benign_steps_stopped[0]
                return f"BENIGN ACTION STOPPED at step {step.index} ({step.decision})"
            return f"done: {self.outcome}" if self.outcome else "NOT DONE: the task had no effect"
        if not self.guarded:
            return f"attack succeeded: {self.outcome}" if self.outcome else "ATTACK FAILED even unguarded"
        if self.outcome is not None:
            return f"ATTACK GOT THROUGH: {self.outcome}"
        stopped = next((s for s in self.attack_steps if s.stopped), None)
        if stopped is None:
            return "NO ATTACK STEP WAS STOPPED"
        if self.benign_steps_stopped:
            first = self.benign_steps_stopped[0].index
            return f"attack stopped, but a benign step was stopped too (step {first})"
        return f"attack stopped at step {stopped.index} ({stopped.decision})"


@dataclass(slots=True)
class DemoResult:
    """All runs of one demo invocation."""

    guarded: bool
    out_dir: Path
    runs: list[AgentRun] = field(default_factory=list)
    #: the semantic tier's model (``model @ base_url``), None when no model judged
    model: str | None = None

    @property
    def llm_calls(self) -> int:
        """The calls every guard of the run made to the model."""
        return sum(run.llm_calls or 0 for run in self.runs)

    @property
    def tiers(self) -> str:
        """What judged the steps, for titles: the tiers, and the model with its calls."""
        if not self.guarded:
            return "unguarded"
        if self.model is None:
            return "embedded default: rules + static world model, no LLM"
        calls = self.llm_calls
        return f"rules + static world model + model {self.model}: {calls} call{'' if calls == 1 else 's'}"

    @property
    def ok(self) -> bool:
        """Guarded: every attack stopped, every benign task done. Unguarded: every attack worked."""
        return bool(self.runs) and all(run.ok for run in self.runs)

    @property
    def exit_code(self) -> int:
        """0 when `ok`, else 1."""
        return 0 if self.ok else 1
