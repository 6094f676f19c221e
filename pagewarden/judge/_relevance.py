"""Which policies can apply to a step: by their rules' action kinds and destinations, and by
a scope that names sites.

A prompt shows a policy only when it could be violated by this action: a URL or domain
rule needs an action that goes somewhere, a consent or forbidden-element rule needs one of
its action kinds, an input rule needs typed data, and so on. A policy without rules is
judged by its text alone, so it always can apply — unless its scope names sites and the
step touches none of them. Sans-I/O and cheap (no regular expressions over the page).
"""

from __future__ import annotations

import re

from pagewarden._url import host_matches, parse_url
from pagewarden.policies import (
    ActionBudgetRule,
    ConsentRule,
    DomainAllowRule,
    DomainDenyRule,
    ForbidElementRule,
    InputAllowRule,
    Policy,
    Rule,
    SensitiveDataRule,
    SequenceRule,
    UrlAllowRule,
    UrlDenyRule,
)
from pagewarden.steps import Prediction, Step

__all__ = ["policy_applies", "step_hosts"]

#: Actions that put data into the page (a field, a file input, a key).
_INPUT = frozenset(
    {"fill", "type", "press", "press_sequentially", "select_option", "set_input_files", "clear"}
)
#: Actions that take the browser (or a request) somewhere by themselves.
_GOING = frozenset({"goto", "new_page", "request", "go_back", "go_forward", "reload"})
#: Actions that hand data to someone other than a page.
_TELLING = frozenset({"send_msg_to_user", "finish", "call_tool", "evaluate", "cdp", "unclassified"})
_HOSTLIKE = re.compile(r"(?<![\w.-])(?:\*\.)?((?:[a-z0-9-]+\.)+([a-z]{2,}))(?![\w-])", re.IGNORECASE)
#: Top-level domains that make a word of a scope a site name ("Node.js projects" names none).
_TLDS = frozenset(
    ("com", "org", "net", "io", "dev", "app", "ai", "co", "edu", "gov", "int", "mil", "info", "biz",
     "test", "example", "local", "localhost", "internal", "corp", "lan", "home", "uk", "de", "fr", "nl",
     "es", "ch", "se", "dk", "fi", "pl", "cz", "eu", "ca", "au", "nz", "jp", "cn", "br", "ru")
)  # fmt: skip


def step_hosts(step: Step, prediction: Prediction | None) -> set[str]:
    """The hosts a step touches: the page's and any destination's."""
    urls = [step.observation.url]
    if prediction is not None:
        if prediction.navigation is not None:
            urls.append(prediction.navigation.url)
        if prediction.submission is not None:
            urls.append(prediction.submission.url)
    if step.action.kind in _GOING and step.action.value:
        urls.append(step.action.value)
    hosts = set()
    for url in urls:
        host = parse_url(url or "").host if url else ""
        if host:
            hosts.add(host)
    return hosts


def _goes_somewhere(step: Step, prediction: Prediction | None) -> bool:
    if step.action.kind in _GOING:
        return True
    if prediction is not None and (prediction.navigation is not None or prediction.submission is not None):
        return True
    el = step.observation.target
    return el is not None and bool(el.href)


def _kind_in(kind: str, kinds: list[str]) -> bool:
    return "any" in kinds or kind in kinds


def _rule_applies(rule: Rule, step: Step, goes: bool) -> bool:
    kind = step.action.kind
    if isinstance(rule, UrlDenyRule | UrlAllowRule | DomainAllowRule | DomainDenyRule):
        return goes
    if isinstance(rule, ConsentRule):
        return _kind_in(kind, rule.actions)
    if isinstance(rule, ForbidElementRule):
        return _kind_in(kind, rule.actions) or (rule.check_value and kind in _INPUT)
    if isinstance(rule, ActionBudgetRule):
        return _kind_in(kind, rule.actions)
    if isinstance(rule, SequenceRule):
        return kind == "finish" or any(_kind_in(kind, s.actions) for s in rule.steps)
    if isinstance(rule, InputAllowRule):
        return kind in _INPUT
    if isinstance(rule, SensitiveDataRule):
        return goes or kind in _INPUT or kind in _TELLING
    return True  # instruction provenance, and any rule kind added later


def _scope_applies(scope: str | None, hosts: set[str]) -> bool:
    """False only when the scope names sites and the step touches none of them."""
    named = [name.lower() for name, tld in _HOSTLIKE.findall(scope or "") if tld.lower() in _TLDS]
    if not named:
        return True
    return any(host_matches(host, "." + name) for host in hosts for name in named)


def policy_applies(policy: Policy, step: Step, prediction: Prediction | None) -> bool:
    """Whether `policy` could be violated by this step (see the module's docstring)."""
    if not _scope_applies(policy.scope, step_hosts(step, prediction)):
        return False
    if not policy.rules:
        return True
    goes = _goes_somewhere(step, prediction)
    return any(_rule_applies(rule, step, goes) for rule in policy.rules)
