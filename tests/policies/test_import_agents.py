"""Importers of HarmonyGuard and SafePred policy files: their field names, a missing risk level
an error naming the policy, rules compiled, the CLI into a file and a store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pagewarden.cli import main
from pagewarden.policies import PolicyError, PolicySet
from pagewarden.policies.importers import import_agent_policies
from pagewarden.policies.store import PolicyStore

SAFEPRED = [
    {"policy_id": "P001", "definitions": ["Task Goal: what the agent must do"],
     "scope": "All web tasks.", "policy_description": "Never visit https://gitlab.test/admin.",
     "risk_level": "high", "reference": []},
    {"definitions": [], "policy_description": "The agent must not share passwords with other sites.",
     "risk_level": "Medium", "reference": ["typed the password into evil.test"], "policy_id": "P002"},
]  # fmt: skip
HARMONYGUARD = {"policies": [
    {"id": "HG-1", "description": "Always ask the user before deleting a repository.", "severity": "HIGH",
     "category": "consent", "definitions": {"repository": "a GitLab project"}},
    {"id": "HG-2", "description": "Stay on the task the user gave.", "severity": "low",
     "references": [{"text": "browsed the profile page instead"}]},
]}  # fmt: skip


def _write(tmp_path: Path, name: str, data) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def test_safepred_fields(tmp_path: Path) -> None:
    policies = import_agent_policies(_write(tmp_path, "sp.json", SAFEPRED), "safepred")
    p1, p2 = policies
    assert (p1.id, p1.risk_level.value, p1.scope) == ("P001", "high", "All web tasks.")
    assert p1.to_dict()["rules"] == [{"url_deny": "https://gitlab.test/admin"}]
    assert p1.category.value == "boundary"
    assert p2.risk_level.value == "medium" and p2.references[0].text == "typed the password into evil.test"
    assert p2.to_dict()["rules"] == [{"sensitive_data": {"patterns": ["password"]}}]
    assert p1.source.kind == "safepred" and all(p.needs_review for p in policies)


def test_harmonyguard_fields(tmp_path: Path) -> None:
    hg1, hg2 = import_agent_policies(_write(tmp_path, "hg.json", HARMONYGUARD), "harmonyguard")
    assert hg1.category.value == "consent" and hg1.risk_level.value == "high"
    assert hg1.definitions == ["repository: a GitLab project"]
    assert hg1.to_dict()["rules"] == [{"consent": {"match": ["delete"]}}]
    assert hg2.references[0].text == "browsed the profile page instead" and hg2.risk_level.value == "low"


def test_missing_or_unknown_risk_is_an_error_naming_the_policy(tmp_path: Path) -> None:
    bad = [{"policy_id": "P9", "policy_description": "Never delete anything."},
           {"policy_id": "P10", "policy_description": "Be nice.", "risk_level": "spicy"},
           {"policy_id": "P11", "risk_level": "low"}]  # fmt: skip
    with pytest.raises(PolicyError) as info:
        import_agent_policies(_write(tmp_path, "bad.json", bad), "safepred")
    text = str(info.value)
    assert "P9" in text and "no risk level" in text and "refusing to guess" in text
    assert "P10" in text and "spicy" in text and "P11" in text and "no description" in text
    with pytest.raises(PolicyError, match="expected a list"):
        import_agent_policies(_write(tmp_path, "x.json", {"version": 1}), "safepred")
    with pytest.raises(PolicyError, match="file not found"):
        import_agent_policies(tmp_path / "none.json", "harmonyguard")


def test_cli_import_into_file_and_store(tmp_path: Path) -> None:
    sp = _write(tmp_path, "sp.json", SAFEPRED)
    hg = _write(tmp_path, "hg.json", HARMONYGUARD)
    out, db = tmp_path / "p.yaml", tmp_path / "p.db"
    runner = CliRunner()
    result = runner.invoke(main, ["policies", "import", "safepred", str(sp), "-o", str(out)])
    assert result.exit_code == 0 and "2 new" in result.output, result.output
    result = runner.invoke(main, ["policies", "import", "harmonyguard", str(hg), "-o", str(out)])
    assert result.exit_code == 0 and "previous version kept" in result.output
    assert PolicySet.load(out).ids == ["P001", "P002", "HG-1", "HG-2"]
    result = runner.invoke(main, ["policies", "import", "harmonyguard", str(hg), "--store", str(db)])
    assert result.exit_code == 0 and "change 1" in result.output
    with PolicyStore(db) as store:
        assert store.policies().ids == ["HG-1", "HG-2"] and store.changes()[0].cause == "import"
    bad = _write(tmp_path, "bad.json", [{"policy_id": "P9", "policy_description": "Never delete anything."}])
    result = runner.invoke(main, ["policies", "import", "safepred", str(bad)])
    assert result.exit_code == 1 and "P9" in result.output and "no risk level" in result.output
