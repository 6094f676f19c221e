"""Policy authoring on the command line: `policies schema`, lint warnings, `check -p A -p B`,
and Rich markup in table cells shown literally."""

from __future__ import annotations

import json
from pathlib import Path

from pagewarden import Action, ElementFacts, Observation, Step
from pagewarden.policies import RULE_KINDS, reference_markdown, rule_reference

from .test_cli import run


def _policy_file(path: Path, pid: str, rule: str, description: str = "test") -> Path:
    path.write_text(
        "version: 1\npolicies:\n"
        f"  - id: {pid}\n    category: boundary\n    risk_level: high\n"
        f"    description: {json.dumps(description)}\n    rules:\n      - {rule}\n"
    )
    return path


def test_schema_prints_every_kind_and_field() -> None:
    result = run("policies", "schema")
    assert result.returncode == 0, result.stderr
    for doc in rule_reference():
        assert f"{doc.kind}:" in result.stdout
        for field in doc.fields:
            assert field.name in result.stdout
    markdown = run("policies", "schema", "--markdown")
    assert markdown.stdout == reference_markdown()
    one = run("policies", "schema", "action_budget", "--json")
    data = json.loads(one.stdout)
    assert [d["kind"] for d in data] == ["action_budget"]
    assert {f["name"] for f in data[0]["fields"]} == {"actions", "match", "selectors", "max"}
    assert data[0]["fields"][0]["aliases"] == ["action"]
    bad = run("policies", "schema", "url_block")
    assert bad.returncode == 2 and "known kinds: " + ", ".join(RULE_KINDS) in bad.stderr


def test_lint_warns_and_strict_fails(tmp_path: Path) -> None:
    path = _policy_file(tmp_path / "p.yaml", "SHOP", "domain_allow: [shop.test/, '*.bad..com']")
    result = run("policies", "lint", str(path))
    assert result.returncode == 0, result.stderr
    assert "3 warning(s)" in result.stdout  # two patterns, and an allow-list that allows nothing
    assert "warning" in result.stderr and "'shop.test/' can never match" in result.stderr
    assert "'*.bad..com' can never match" in result.stderr
    strict = run("policies", "lint", "--strict", str(path))
    assert strict.returncode == 1
    clean = _policy_file(tmp_path / "ok.yaml", "OK", "domain_allow: [shop.test]")
    assert run("policies", "lint", "--strict", str(clean)).returncode == 0


def _goto(tmp_path: Path, url: str, kind: str = "goto") -> Path:
    path = tmp_path / f"step-{kind}.json"
    step = Step(action=Action(kind=kind, value=url), observation=Observation(url="http://shop.test/"))
    path.write_text(json.dumps(step.to_dict()))
    return path


def test_check_merges_several_policy_files(tmp_path: Path) -> None:
    a = _policy_file(tmp_path / "a.yaml", "A-1", "url_deny: /admin")
    b = _policy_file(tmp_path / "b.yaml", "B-1", "domain_deny: evil.test")
    step = _goto(tmp_path, "http://evil.test/admin")
    result = run("check", str(step), "-p", str(a), "-p", str(b))
    assert result.returncode == 10, result.stderr
    assert json.loads(result.stdout)["violated_policy_ids"] == ["A-1", "B-1"]
    clash = _policy_file(tmp_path / "c.yaml", "A-1", "url_deny: /other")
    refused = run("check", str(step), "-p", str(a), "-p", str(clash))
    assert refused.returncode == 2  # bad input
    assert f"policy id 'A-1' is also defined in {a}" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_check_judges_an_unknown_action_kind_as_unclassified(tmp_path: Path) -> None:
    result = run("check", str(_goto(tmp_path, "x", kind="teleport")))
    assert result.returncode == 11, result.stdout
    verdict = json.loads(result.stdout)
    assert verdict["decision"] == "ask" and verdict["violated_policy_ids"] == ["PW-SCRIPT"]


def test_markup_in_cells_is_printed_literally(tmp_path: Path) -> None:
    description = "Never click [bold]Delete[/bold] or [/] or [red]"
    rule = "forbid_element: {match: '[/]Delete[bold]'}"
    path = _policy_file(tmp_path / "p.yaml", "MARK", rule, description)
    shown = run("policies", "show", str(path))
    assert shown.returncode == 0, shown.stderr
    flat = " ".join(shown.stdout.split())
    assert "[bold]Delete[/bold]" in flat and "[/]" in flat and "[red]" in flat
    # a recorded session whose reason quotes the markup
    lines = []
    label = "[/]Delete[bold]"
    for index in range(2):
        step = Step(
            action=Action(kind="click", selector="text=[/]Delete[bold]"),
            observation=Observation(
                url="http://shop.test/",
                target=ElementFacts(tag="button", role="button", name=label, text=label),
            ),
            index=index + 1,
        )
        lines.append(json.dumps({"step": step.to_dict(), "verdict": {"decision": "allow"}}))
    trace = tmp_path / "trace.jsonl"
    trace.write_text("\n".join(lines) + "\n")
    result = run("check", str(trace), "-p", str(path))
    assert result.returncode == 1, result.stderr  # a decision changed
    flat = "".join(result.stdout.split())
    assert "[/]Delete[bold]" in flat and "(changed)" in flat
    assert "MarkupError" not in result.stderr and "Traceback" not in result.stderr


def test_emoji_codes_are_printed_literally(tmp_path: Path) -> None:
    """Rich turns ":cd:" into an emoji by default: text from files, pages or a fingerprint's
    hex pairs must be printed as written, in tables and in error lines alike."""
    path = _policy_file(tmp_path / "p.yaml", "EMOJI", "url_deny: '/x'", "Never burn a :cd: or :skull: here")
    shown = run("policies", "show", str(path))
    assert shown.returncode == 0, shown.stderr
    assert ":cd:" in shown.stdout and ":skull:" in shown.stdout
    missing = run("policies", "show", str(tmp_path / "a:cd:b:skull:.yaml"))
    assert missing.returncode != 0
    assert "a:cd:b:skull:.yaml" in "".join(missing.stderr.split())
    assert "\N{OPTICAL DISC}" not in shown.stdout + missing.stderr
