"""Policy files: YAML and JSON load into a PolicySet; every fault is named and located."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pagewarden.policies import (
    ConsentRule,
    PolicyError,
    PolicySet,
    SensitiveDataRule,
    UrlDenyRule,
    baseline_policies,
)

GOOD = """\
version: 1
policies:
  - id: P001
    category: boundary
    risk_level: high
    description: Do not visit the Profile page.
    scope: GitLab tasks
    source: {kind: organization, document: handbook.pdf, page: 3}
    rules:
      - url_deny: "/profile"
  - id: P002
    category: consent
    risk_level: medium
    description: Ask before creating a project.
    rules:
      - consent: {match: "Create project", actions: [click]}
      - sensitive_data: {values: ["555-0198"], patterns: [card_number, "re:acct-\\\\d+"]}
    references: ["clicked Create project without asking"]
"""


def _problems(text: str, name: str = "p.yaml") -> list[str]:
    with pytest.raises(PolicyError) as caught:
        PolicySet.from_text(text, source=name, fmt="json" if name.endswith(".json") else "yaml")
    return [str(p) for p in caught.value.problems]


def test_good_yaml_loads_with_typed_rules(tmp_path: Path) -> None:
    path = tmp_path / "policies.yaml"
    path.write_text(GOOD)
    policies = PolicySet.load(path)
    assert policies.ids == ["P001", "P002"]
    p1, p2 = policies
    assert p1.rules == [UrlDenyRule(patterns=["/profile"])]
    assert p1.source is not None and p1.source.page == 3
    assert isinstance(p2.rules[0], ConsentRule) and p2.rules[0].match == ["Create project"]
    assert isinstance(p2.rules[1], SensitiveDataRule) and p2.rules[1].patterns == [
        "card_number",
        r"re:acct-\d+",
    ]
    assert p2.references[0].text == "clicked Create project without asking"


def test_json_round_trip_is_identical(tmp_path: Path) -> None:
    policies = PolicySet.from_text(GOOD)
    out = tmp_path / "p.json"
    policies.dump(out)
    again = PolicySet.load(out)
    assert again.to_dict() == policies.to_dict()
    yaml_out = tmp_path / "p.yaml"
    again.dump(yaml_out)
    assert PolicySet.load(yaml_out).to_dict() == policies.to_dict()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (GOOD.replace("    risk_level: high\n", "", 1), "p.yaml:3: policy P001: risk_level: is required"),
        (
            GOOD.replace("risk_level: high", "risk_level: extreme", 1),
            "risk_level: must be one of 'low', 'medium'",
        ),
        (
            GOOD.replace("category: boundary", "category: bondary"),
            "p.yaml:4: policy P001: category: must be one of",
        ),
        (
            GOOD.replace("url_deny", "url_block"),
            "p.yaml:10: policy P001: rules[0]: unknown rule kind 'url_block'",
        ),
        (
            GOOD.replace("actions: [click]", "actions: [klick]"),
            "rules[0].consent.actions: unknown action kind",
        ),
        (
            GOOD.replace("id: P002", "id: P001"),
            "p.yaml:11: policy P001: id: duplicate id (first used by policies[0])",
        ),
        (
            GOOD.replace("scope: GitLab tasks", "scop: GitLab tasks"),
            "p.yaml:7: policy P001: scop: is not a known field",
        ),
        (GOOD.replace('"re:acct-\\\\d+"', '"re:acct-("'), "invalid regular expression"),
        (GOOD.replace("patterns: [card_number", "patterns: [credit_card"), "unknown pattern 'credit_card'"),
        (GOOD.replace("version: 1", "version: 7"), "p.yaml:1: version: unsupported version 7"),
        (GOOD.replace("description: Do not visit the Profile page.", "description: '  '"), "description"),
        ("version: 1\npolicies: {}\n", "policies: must be a list of policies"),
        ("- just a list\n", "the top level must be a mapping"),
        ("", "the file is empty"),
        ("version: 1\npolicies:\n  - id: [unclosed\n", "p.yaml:4: invalid YAML"),
        (GOOD.replace('- url_deny: "/profile"', "- {url_deny: /a, url_allow: /b}"), "exactly one key"),
        (GOOD.replace('- url_deny: "/profile"', "- action_budget: {action: click, max: -1}"), "max"),
    ],
    ids=lambda v: v[:30] if isinstance(v, str) else None,
)
def test_errors_name_file_line_policy_and_field(text: str, expected: str) -> None:
    problems = _problems(text)
    assert any(expected in p for p in problems), problems
    assert not any("Traceback" in p for p in problems)


def test_all_problems_are_reported_at_once() -> None:
    text = (
        GOOD.replace("    risk_level: high\n", "", 1)
        .replace("url_deny", "url_block")
        .replace("medium", "severe")
    )
    problems = _problems(text)
    assert len(problems) == 3, problems


def test_json_errors_are_located() -> None:
    data = json.loads(json.dumps(PolicySet.from_text(GOOD).to_dict()))
    del data["policies"][1]["risk_level"]
    text = json.dumps(data, indent=2)
    problems = _problems(text, "p.json")
    assert any(p.startswith("p.json:") and "policy P002: risk_level: is required" in p for p in problems), (
        problems
    )
    assert _problems('{"version": 1, "policies": [', "p.json")[0].startswith("p.json:1: invalid JSON")


def test_missing_and_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="file not found"):
        PolicySet.load(tmp_path / "nope.yaml")
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(PolicyError, match="cannot read"):
        PolicySet.load(binary)


def test_merging_rejects_duplicate_ids() -> None:
    policies = PolicySet.from_text(GOOD)
    with pytest.raises(PolicyError, match="duplicate id"):
        policies.merged(policies)
    merged = policies.merged(baseline_policies())
    assert merged.ids[:2] == ["P001", "P002"] and "PW-INJECTION" in merged


def test_baseline_is_valid_and_covers_the_embedded_default() -> None:
    baseline = baseline_policies()
    kinds = {rule.kind for policy in baseline for rule in policy.rules}
    assert kinds == {
        "instruction_provenance", "sensitive_data", "consent", "internal_addresses", "url_credentials",
        "lookalike_hosts",
    }  # fmt: skip
    assert all(p.risk_level.value in ("high", "medium") for p in baseline)
