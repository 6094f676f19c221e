"""Importers for the policy files of HarmonyGuard and SafePred (their Policy Agents' output).

Both write a JSON (or YAML) list of policies, with different field names:

=============  ===========================  ===========================
pagewarden     HarmonyGuard                 SafePred
=============  ===========================  ===========================
id             ``id`` (or ``policy_id``)    ``policy_id`` (or ``id``)
description    ``description``              ``policy_description``
risk_level     ``severity`` / ``risk_level``  ``risk_level`` / ``severity``
references     ``references`` / ``reference`` (strings or ``{"text": …}``)
=============  ===========================  ===========================

``definitions`` (a list, or a mapping of term → meaning) and ``scope`` carry over; a valid
``category`` is kept, otherwise it is inferred from the wording. A missing or unknown risk
level is an error that names the policy — never a silent default (HarmonyGuard's own loader
dropped it). Rules are compiled from each description as for extracted policies, so the
imported policies are marked ``needs_review``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from pagewarden.policies._loader import PolicyError, PolicySet, Problem
from pagewarden.policies._model import Category, Policy, PolicySource
from pagewarden.policies.extract import category_of, compile_rules

__all__ = ["FORMATS", "import_agent_policies"]

FORMATS = ("harmonyguard", "safepred")
_RISK = {"low": "low", "medium": "medium", "moderate": "medium", "high": "high", "critical": "high",
         "severe": "high", "minor": "low"}  # fmt: skip


def _first(raw: dict[str, Any], *names: str) -> Any:
    for name in names:
        if raw.get(name) not in (None, ""):
            return raw[name]
    return None


def _references(value: Any) -> list[dict[str, str]]:
    out = []
    items = value if isinstance(value, list) else [value] if value else []
    for item in items:
        text = item
        if isinstance(item, dict):
            text = _first(item, "text", "reference", "content")
        if isinstance(text, str) and text.strip():
            out.append({"text": text.strip()})
    return out


def _definitions(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [f"{k}: {v}" for k, v in value.items()]
    if isinstance(value, list):
        return [
            "; ".join(f"{k}: {x}" for k, x in v.items()) if isinstance(v, dict) else str(v) for v in value
        ]
    return [str(value)] if value else []


def import_agent_policies(path: str | Path, fmt: str) -> PolicySet:
    """Read a HarmonyGuard or SafePred policy file (JSON or YAML) into a checked `PolicySet`."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, not {fmt!r}")
    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PolicyError([Problem(file, "file not found")]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PolicyError([Problem(file, f"cannot read: {exc}")]) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise PolicyError([Problem(file, f"neither JSON nor YAML: {exc}")]) from None
    if isinstance(data, dict):
        data = data.get("policies", data.get("policy_list"))
    if not isinstance(data, list):
        raise PolicyError([Problem(file, f"expected a list of {fmt} policies (or {{'policies': [...]}})")])
    problems: list[Problem] = []
    policies: list[Policy] = []
    seen: set[str] = set()
    for index, raw in enumerate(data):
        where = f"policies[{index}]"
        if not isinstance(raw, dict):
            problems.append(Problem(file, "each policy must be a mapping", where))
            continue
        policy_id = str(_first(raw, "id", "policy_id") or f"{fmt.upper()}-{index + 1:03d}")
        description = _first(raw, "description", "policy_description", "policy", "content")
        risk = _first(raw, "risk_level", "severity", "risk")
        name = f"{where} ({policy_id})"
        if not isinstance(description, str) or not description.strip():
            message = "has no description (description / policy_description)"
            problems.append(Problem(file, message, name, policy_id))
            continue
        if risk is None:
            message = "has no risk level (severity / risk_level): refusing to guess"
            problems.append(Problem(file, message, name, policy_id))
            continue
        level = _RISK.get(str(risk).strip().lower())
        if level is None:
            message = f"unknown risk level {risk!r} (low / medium / high)"
            problems.append(Problem(file, message, name, policy_id))
            continue
        if policy_id in seen:
            problems.append(Problem(file, "duplicate id", name, policy_id))
            continue
        seen.add(policy_id)
        compiled = compile_rules(description)
        category = str(raw.get("category") or "").strip().lower()
        if category not in {c.value for c in Category}:
            category = category_of(description, compiled.kinds)
        try:
            policies.append(Policy.model_validate({
                "id": policy_id,
                "category": category,
                "risk_level": level,
                "description": description,
                "scope": _first(raw, "scope"),
                "definitions": _definitions(raw.get("definitions")),
                "source": PolicySource(kind=fmt, document=file),
                "rules": compiled.rules,
                "references": _references(_first(raw, "references", "reference")),
                "needs_review": True,
            }))  # fmt: skip
        except ValueError as exc:
            problems.append(Problem(file, str(exc).splitlines()[0], name, policy_id))
    if problems:
        raise PolicyError(problems)
    return PolicySet(policies, source=file)
