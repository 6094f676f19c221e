"""The policy model: `Policy`, its provenance and violation references."""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from pagewarden.policies._rules_schema import Rule, parse_rule, rule_to_dict

__all__ = ["Category", "Policy", "PolicySource", "Reference", "RiskLevel"]

_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:\-]*$")


class Category(StrEnum):
    """What a policy is about (DESIGN.md, "Policies")."""

    BOUNDARY = "boundary"
    CONSENT = "consent"
    EXECUTION = "execution"
    DATA = "data"
    INJECTION = "injection"
    HIERARCHY = "hierarchy"
    GOAL = "goal"
    ERROR_HANDLING = "error_handling"


class RiskLevel(StrEnum):
    """How bad a violation is; required on every policy, with no silent default."""

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


class PolicySource(BaseModel):
    """Where a policy came from (document, page, section) for audit."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: str = Field(description="organization | user | benchmark | builtin | extracted")
    document: str | None = None
    page: int | None = None
    section: str | None = None
    quote: str | None = None
    task_id: str | int | None = None


class Reference(BaseModel):
    """A violation example kept with a policy (HarmonyGuard's reference queue)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    text: str = Field(min_length=1)
    added: str | None = None


class Policy(BaseModel):
    """One organisational or user policy, with optional machine-checkable rules."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    category: Category
    risk_level: RiskLevel
    description: str = Field(min_length=1)
    scope: str | None = None
    definitions: list[str] = Field(default_factory=list)
    source: PolicySource | None = None
    rules: list[Rule] = Field(default_factory=list)
    references: list[Reference] = Field(default_factory=list)
    #: extracted by the offline extractor (or not yet confirmed by a person): check it
    needs_review: bool = False

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        if not _ID_RE.match(value):
            raise ValueError(
                "id must start with a letter or digit and use only letters, digits, '_', '.', ':', '-'"
            )
        return value

    @field_validator("description")
    @classmethod
    def _description(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("description must not be blank")
        return value.strip()

    @field_validator("rules", mode="before")
    @classmethod
    def _rules(cls, value: Any) -> Any:
        if value is None:
            return []
        if not isinstance(value, list):
            raise ValueError("rules must be a list of one-key mappings")
        return [parse_rule(item) if isinstance(item, dict) else item for item in value]

    @field_validator("references", mode="before")
    @classmethod
    def _references(cls, value: Any) -> Any:
        if value is None:
            return []
        if isinstance(value, list):
            return [{"text": item} if isinstance(item, str) else item for item in value]
        return value

    def to_dict(self) -> dict[str, Any]:
        """The policy as written in a policy file (rules in their one-key form)."""
        data = self.model_dump(mode="json", exclude_none=True)
        data["rules"] = [rule_to_dict(rule) for rule in self.rules]
        if not self.needs_review:
            del data["needs_review"]  # the default; files written before it existed stay as they were
        return data
