"""The rules tier: each rule kind compiled into an evaluator; `RuleBook` runs them."""

# Importing the kind modules registers their evaluators.
from pagewarden.rules import (  # noqa: F401
    addresses,
    budget,
    consent,
    elements,
    inputs,
    provenance,
    sensitive,
    sequence,
    urls,
)
from pagewarden.rules._addresses import (
    INTERNAL_URL_GLOBS,
    AddressRules,
    InternalAccess,
    blocks_reached,
    internal_url,
)
from pagewarden.rules._base import (
    RISK_BASE,
    CompiledRule,
    HistoryEntry,
    RuleContext,
    RuleMemory,
    SessionView,
    register,
    rule_class,
)
from pagewarden.rules._book import RuleBook
from pagewarden.rules._downloads import DOWNLOAD_POLICY, DownloadGrants, download_refusal, saved_file
from pagewarden.rules._egress import (
    AGENT_ACTIONS,
    NETWORK_POLICY,
    REFUSALS_KEPT,
    EgressRules,
    Refusal,
    RefusalSink,
    refusals_verdict,
    reported_to_agent,
    split_pending,
)
from pagewarden.rules._instructions import (
    goal_supports_text,
    goal_supports_url,
    instruction_signals,
    reasoning_cites_page,
    reasoning_follows_page,
    significant_tokens,
    unjoin,
)
from pagewarden.rules._matching import SelectorError, compile_selector
from pagewarden.rules._multilingual import judge_phrases, trigger_positions
from pagewarden.rules._normalise import LOOKALIKES_TO_LATIN, fold
from pagewarden.rules._taint import TabMemory

__all__ = [
    "AGENT_ACTIONS",
    "DOWNLOAD_POLICY",
    "INTERNAL_URL_GLOBS",
    "LOOKALIKES_TO_LATIN",
    "NETWORK_POLICY",
    "REFUSALS_KEPT",
    "RISK_BASE",
    "AddressRules",
    "CompiledRule",
    "DownloadGrants",
    "EgressRules",
    "HistoryEntry",
    "InternalAccess",
    "Refusal",
    "RefusalSink",
    "RuleBook",
    "RuleContext",
    "RuleMemory",
    "SelectorError",
    "SessionView",
    "TabMemory",
    "blocks_reached",
    "compile_selector",
    "download_refusal",
    "fold",
    "goal_supports_text",
    "goal_supports_url",
    "instruction_signals",
    "internal_url",
    "judge_phrases",
    "reasoning_cites_page",
    "reasoning_follows_page",
    "refusals_verdict",
    "register",
    "reported_to_agent",
    "rule_class",
    "saved_file",
    "significant_tokens",
    "split_pending",
    "trigger_positions",
    "unjoin",
]
