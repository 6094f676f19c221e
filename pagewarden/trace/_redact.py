"""Redaction of one judged step: what a trace line, an event, a log line or the guard's
exception may show of it.

Three things are never shown in clear: registered secrets (`SecretRegistry`, in their
common encodings), credentials recognisable by their format (API keys, private keys, JWTs,
card numbers), and the values of password fields — the one typed by the action and those
a form would submit, registered or not (a password typed into a field the guard then
blocked never gets registered, yet must not leak through the exception that says so).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pagewarden.secrets import MIN_SECRET_LENGTH, SecretRegistry, redact_credentials
from pagewarden.steps import Step, Verdict

__all__ = [
    "PASSWORD_MASK",
    "Redact",
    "mask_password_fields",
    "password_values",
    "redact_tree",
    "redacted_step_data",
    "redacted_verdict",
    "step_redactor",
]

PASSWORD_MASK = "[REDACTED:password]"
Redact = Callable[[str], str]


def password_values(step: Step) -> list[str]:
    """Values of password fields in `step`: typed by its action, or in a form it would submit."""
    values: list[str] = []
    target = step.observation.target
    if target is not None and target.input_type == "password":
        values += [v for v in (step.action.value, target.value, target.attrs.get("value")) if v]
    for facts in (target, step.observation.drop_target):
        if facts is not None and facts.form is not None:
            values += [f.value for f in facts.form.fields if f.type == "password" and f.value]
    return list(dict.fromkeys(values))


def step_redactor(step: Step | None, secrets: SecretRegistry) -> Redact:
    """A function that redacts a text about `step` (secrets, credentials, its passwords)."""
    extra = sorted(
        (v for v in (password_values(step) if step is not None else ()) if len(v) >= MIN_SECRET_LENGTH),
        key=len,
        reverse=True,
    )

    def redact(text: str) -> str:
        text = secrets.redact(text)
        for value in extra:
            if value in text:
                text = text.replace(value, PASSWORD_MASK)
        return redact_credentials(text)

    return redact


def redact_tree(value: Any, redact: Redact) -> Any:
    """`value` with `redact` applied to every string, recursively through dicts and lists
    (containers are copied, never changed in place)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: redact_tree(v, redact) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redact_tree(v, redact) for v in value)
    return value


def mask_password_fields(data: dict[str, Any]) -> None:
    """Mask, in place, the password-field values of a step's fresh JSON form."""
    obs = data.get("observation", {})
    target = obs.get("target") or {}
    if target.get("input_type") == "password":
        action = data.get("action", {})
        if action.get("value"):
            action["value"] = PASSWORD_MASK
        if target.get("value"):
            target["value"] = PASSWORD_MASK
        if "value" in target.get("attrs", {}):
            target["attrs"]["value"] = PASSWORD_MASK
    for facts in (target, obs.get("drop_target") or {}):
        for field in (facts.get("form") or {}).get("fields", []):
            if field.get("type") == "password" and field.get("value"):
                field["value"] = PASSWORD_MASK


def redacted_step_data(step: Step, secrets: SecretRegistry, redact: Redact | None = None) -> dict[str, Any]:
    """`Step.to_dict()` with password-field values masked and everything else redacted."""
    data = step.to_dict()  # a fresh tree: masked in place, then copied once by redact_tree
    mask_password_fields(data)
    return redact_tree(data, redact or step_redactor(step, secrets))


def redacted_verdict(verdict: Verdict, step: Step | None, secrets: SecretRegistry) -> Verdict:
    """A copy of `verdict` whose texts (explanation, findings, evidence, prediction) are
    redacted as a trace line of `step` would be."""
    return Verdict.from_dict(redact_tree(verdict.to_dict(), step_redactor(step, secrets)))
