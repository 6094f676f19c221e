"""Warnings about policies that load but cannot do what their author meant.

`lint_policies` finds policies that can never fire on the offline (deterministic) tier and
domain patterns no host can match. These are not load errors — the file is valid, and the
semantic tier may still use a policy's description — so `pagewarden policies lint` prints
them as warnings (exit 1 only with ``--strict``).
"""

from __future__ import annotations

import re

from pagewarden._url import _normalise_host
from pagewarden.policies._loader import PolicySet, Problem
from pagewarden.policies._model import Policy

__all__ = ["domain_pattern_problem", "lint_policies"]

#: Action kinds that act on no element: `match` / `selectors` can never pick their target.
_UNTARGETED = frozenset(
    {
        "goto", "go_back", "go_forward", "reload", "new_page", "request", "evaluate", "add_script_tag",
        "add_style_tag", "add_init_script", "expose_function", "set_content", "route", "network_config",
        "cdp", "send_msg_to_user", "finish", "call_tool", "accept_dialog",
    }
)  # fmt: skip


def domain_pattern_problem(pattern: str) -> str | None:
    """Why no host can ever match domain pattern `pattern` (None when it can).

    Patterns: ``x.com`` exact, ``*.x.com`` subdomains, ``.x.com`` both, ``*`` any host; a whole
    URL (``https://x.com``) counts by its host.
    """
    text = pattern.strip()
    if text == "*":
        return None
    if not text:
        return "is empty"
    if "://" in text:
        host = re.split(r"[/?#]", text.split("://", 1)[1], maxsplit=1)[0]
        text = host.rsplit("@", 1)[-1]  # a URL counts by its host (a path is ignored)
    for char, what in (("/", "a path"), ("?", "a query"), ("#", "a fragment"), ("@", "userinfo")):
        if char in text:
            return f"contains {what} ({char!r}): a host never does; write only the host, like 'shop.test'"
    if any(c.isspace() for c in text):
        return "contains whitespace: a host never does"
    body = text
    if body.startswith("*."):
        body = body[2:]
    elif body.startswith("."):
        body = body[1:]
    if "*" in body:
        return "has '*' where it is not supported: only a whole '*' or a leading '*.' (subdomains) is"
    if body.startswith("[") and body.endswith("]"):
        return None if _normalise_host(body)[0] else "is not a valid IPv6 address"
    if body.count(":") == 1:
        host, port = body.rsplit(":", 1)
        if not port.isdigit():
            return f"has an invalid port {port!r}"
        body = host
    if body.endswith("."):
        body = body[:-1]
    if not body:
        return "names no host"
    if ".." in body or body.startswith("."):
        return "has an empty label ('..'): no host has one"
    if not _normalise_host(body)[0]:
        return "is not a valid host name (a browser refuses it)"
    return None


def _domain_warnings(policy: Policy, file: str) -> list[Problem]:
    out = []
    for index, rule in enumerate(policy.rules):
        kind = rule.kind
        subresources = [(f"rules[{index}].{kind}.subresources", p) for p in getattr(rule, "subresources", ())]
        if kind in ("domain_allow", "domain_deny"):
            patterns = [(f"rules[{index}].{kind}", p) for p in rule.patterns]  # type: ignore[union-attr]
        elif kind in ("url_allow", "url_deny"):
            patterns = [
                (f"rules[{index}].{kind}", p.split("://", 1)[1].split("/", 1)[0].split("?", 1)[0])
                for p in rule.patterns  # type: ignore[union-attr]
                if "://" in p
            ]
        elif kind == "sensitive_data":
            patterns = [
                (f"rules[{index}].sensitive_data.allow_domains", p)
                for p in rule.allow_domains  # type: ignore[union-attr]
                if p != "self"
            ]
        else:
            continue
        if kind in ("domain_allow", "domain_deny"):
            for pattern in rule.patterns:  # type: ignore[union-attr]
                if "://" in pattern and re.search(r"://[^/?#]*[/?#].", pattern):
                    out.append(
                        Problem(
                            file,
                            f"{pattern!r}: a domain rule compares hosts only; its path is ignored "
                            "(use url_allow / url_deny for paths)",
                            f"rules[{index}].{kind}",
                            policy.id,
                        )
                    )
        for where, pattern in [*patterns, *subresources]:
            why = domain_pattern_problem(pattern)
            if why is not None:
                message = f"domain pattern {pattern!r} can never match: {why}"
                out.append(Problem(file, message, where, policy.id))
        if kind == "domain_allow" and "*" in [p.strip() for p in rule.patterns]:  # type: ignore[union-attr]
            message = "'*' allows every host: this rule can never fire"
            out.append(Problem(file, message, f"rules[{index}].{kind}", policy.id))
        if kind == "domain_allow" and patterns and all(domain_pattern_problem(p) for _, p in patterns):
            out.append(
                Problem(
                    file,
                    "no pattern of this allow-list can match: every navigation would be refused",
                    f"rules[{index}].{kind}",
                    policy.id,
                )
            )
    return out


def _never_fires(policy: Policy, file: str) -> list[Problem]:
    if not policy.rules:
        return [
            Problem(
                file,
                "has no rules: with no model configured (the offline tiers) it can never fire; "
                "only the semantic tier reads its description",
                "rules",
                policy.id,
            )
        ]
    out = []
    for index, rule in enumerate(policy.rules):
        where = f"rules[{index}].{rule.kind}"
        kind = rule.kind
        if kind in ("consent", "forbid_element", "action_budget"):
            actions = set(rule.actions)  # type: ignore[union-attr]
            targeted = bool(rule.match or rule.selectors)  # type: ignore[union-attr]
            checks_value = kind == "forbid_element" and rule.check_value  # type: ignore[union-attr]
            if kind == "consent" and actions <= {"send_msg_to_user"}:
                message = "a consent rule never applies to messages to the user: it can never fire"
                out.append(Problem(file, message, where, policy.id))
            elif kind == "forbid_element" and actions <= {"send_msg_to_user", "finish"} and not checks_value:
                message = f"forbid_element never applies to {sorted(actions)}: it can never fire"
                out.append(Problem(file, message, where, policy.id))
            elif targeted and "any" not in actions and actions <= _UNTARGETED and not checks_value:
                message = (
                    f"{sorted(actions)} act on no element, so 'match' / 'selectors' can never pick a "
                    "target: this rule can never fire (drop them, or name element actions)"
                )
                out.append(Problem(file, message, where, policy.id))
        elif kind == "sequence":
            for s_index, step in enumerate(rule.steps):  # type: ignore[union-attr]
                actions = set(step.actions)
                if (step.match or step.selectors) and "any" not in actions and actions <= _UNTARGETED:
                    out.append(
                        Problem(
                            file,
                            f"step {sorted(actions)} acts on no element, so its 'match' / 'selectors' can "
                            "never pick one: the sequence can never be completed",
                            f"{where}.steps[{s_index}]",
                            policy.id,
                        )
                    )
    return out


def lint_policies(policies: PolicySet) -> list[Problem]:
    """Warnings for `policies`: policies that can never fire offline, patterns that can never match."""
    file = policies.source or "<policies>"
    out: list[Problem] = []
    for policy in policies:
        out.extend(_never_fires(policy, file))
        out.extend(_domain_warnings(policy, file))
    return out
