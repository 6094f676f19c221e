"""The policy store: versions with causes, history, diff, export/import, delete, the Guard and
the CLI — each test once on a real SQLite file and once on a real PostgreSQL database."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from pagewarden.cli import main
from pagewarden.guard import Decision, Guard
from pagewarden.policies import PolicySet, Reference
from pagewarden.policies.store import PolicyStore, StoreError
from tests.policies.extract.handbooks import MARKDOWN
from tests.policies.store.workers import policy
from tests.rules.rulekit import act


@pytest.fixture
def store(store_target: str):
    with PolicyStore(store_target, actor="tester") as s:
        yield s


def test_every_change_is_a_version_with_its_cause(store: PolicyStore) -> None:
    first = store.put([policy("P1"), policy("P2", "Never share passwords.")], cause="import", detail="a.yaml")
    assert first is not None and first.policy_ids == ("P1", "P2") and first.cause == "import"
    assert store.put([policy("P1")]) is None  # nothing changed: no version
    edited = store.put([policy("P1", "Do not visit /admin or /root.")], cause="edit", detail="widened")
    referenced = store.update(
        "P2", lambda p: p.model_copy(update={"references": [Reference(text="typed a password")]}),
        cause="reference", detail="session abc",
    )  # fmt: skip
    assert [v.change.cause for v in store.history("P1")] == ["import", "edit"]
    assert [(v.version, v.change.cause, v.change.detail) for v in store.history("P2")] == [
        (1, "import", "a.yaml"), (2, "reference", "session abc")
    ]  # fmt: skip
    assert store.get("P2").references[0].text == "typed a password"
    assert store.version("P1", 1).description == "Do not visit /admin."
    assert store.revision() == referenced.id == edited.id + 1
    assert [c.cause for c in store.changes()] == ["import", "edit", "reference"]
    assert store.history("P1")[0].change.actor == "tester"
    diff = store.diff("P1")
    assert "-description: Do not visit /admin." in diff
    assert "+description: Do not visit /admin or /root." in diff
    with pytest.raises(ValueError, match="cause must be one of"):
        store.put([policy("P3")], cause="whim")
    with pytest.raises(StoreError, match="no version 9"):
        store.diff("P1", 1, 9)


def test_delete_keeps_history_and_ids_can_return(store: PolicyStore) -> None:
    store.put([policy("P1"), policy("P2")])
    change = store.delete("P1", detail="obsolete")
    assert change.cause == "delete" and "P1" not in store and len(store) == 1
    assert [v.policy is None for v in store.history("P1")] == [False, True]
    with pytest.raises(StoreError, match="no policy 'P9'"):
        store.delete(["P2", "P9"])
    assert "P2" in store  # the failed delete deleted nothing
    store.put([policy("P1", "Back again.")])
    assert [v.version for v in store.history("P1")] == [1, 2, 3]
    assert store.policies().ids == ["P2", "P1"]


def test_export_import_round_trip_is_lossless(
    store: PolicyStore, tmp_path: Path, another_store_target: str
) -> None:
    from pagewarden.policies.extract import extract

    md = tmp_path / "handbook.md"
    md.write_text(MARKDOWN)
    extracted = extract([md]).policies
    store.put(extracted, cause="extract", detail=str(md))
    refs = [Reference(text="went to admin")]
    store.update("HANDBOOK-002", lambda p: p.model_copy(update={"references": refs}), cause="reference")
    out = tmp_path / "export.yaml"
    exported = store.export(out)
    assert PolicySet.load(out).to_dict() == exported
    with PolicyStore(another_store_target) as copy:
        change = copy.import_policies(out)
        assert change.cause == "import" and len(change.policy_ids) == 11
        assert copy.export() == exported
        assert copy.get("HANDBOOK-002").references[0].text == "went to admin"
        assert copy.get("HANDBOOK-002").source.quote == extracted.get("HANDBOOK-002").source.quote
        assert all(p.needs_review for p in copy.policies())
    json_out = tmp_path / "export.json"
    store.export(json_out)
    assert PolicySet.load(json_out).to_dict() == exported


def test_guard_reads_the_current_version(store: PolicyStore) -> None:
    store.put([policy("P1", "Do not visit /admin.", rules=[{"url_deny": "/admin"}])])
    guard = Guard(policies=store, baseline=False)
    assert act(guard, "goto", value="https://app.test/admin").decision is Decision.BLOCK
    assert act(guard, "goto", value="https://app.test/billing").decision is Decision.ALLOW
    store.put([policy("P1", "Do not visit /billing.", rules=[{"url_deny": "/billing"}])])
    guard = Guard(policies=store, baseline=False)
    assert act(guard, "goto", value="https://app.test/billing").decision is Decision.BLOCK


def test_bad_files_and_stores_are_clear_errors(tmp_path: Path) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match=r"junk\.db"):
        PolicyStore(junk)
    with pytest.raises(StoreError, match="does not exist"):
        PolicyStore(tmp_path / "no" / "such" / "dir.db")
    with PolicyStore(tmp_path / "ok.db") as s:
        s.put([policy("P1")])
        with pytest.raises(StoreError, match="same policy id twice"):
            s.put([policy("P2"), policy("P2")])
        with pytest.raises(StoreError, match="may not change the policy id"):
            s.update("P1", lambda p: p.model_copy(update={"id": "P9"}))
    # a policy row that no longer validates is reported, not crashed on
    with sqlite3.connect(tmp_path / "ok.db") as db:
        db.execute("UPDATE policies SET body = '{\"id\": \"P1\"}'")
    with PolicyStore(tmp_path / "ok.db") as s, pytest.raises(StoreError, match="does not load"):
        s.policies()


def test_a_failed_edit_writes_nothing(store: PolicyStore) -> None:
    store.put([policy("P1")])

    def broken(p):
        raise RuntimeError("editor crashed")

    with pytest.raises(RuntimeError):
        store.update("P1", broken)
    assert store.revision() == 1 and [v.version for v in store.history("P1")] == [1]
    # a statement the database rejects mid-change rolls the whole change back
    with pytest.raises(StoreError), store._write() as tx:
        change = store._new_change(tx, "edit", "half")
        store._store_version(tx, change, "P2", '{"id": "P2"}')
        tx.execute("INSERT INTO policies (policy_id, version, position, body) VALUES (?, ?, ?, ?)",
                   ("P1", 9, 9, "duplicate key"))  # fmt: skip
    assert store.revision() == 1 and "P2" not in store and store.history("P2") == []


def test_cli_store_commands(tmp_path: Path, store_target: str) -> None:
    db = store_target
    md = tmp_path / "handbook.md"
    md.write_text(MARKDOWN)
    runner = CliRunner()
    result = runner.invoke(main, ["policies", "extract", str(md), "--store", str(db)])
    assert result.exit_code == 0 and "stored 11 policies" in result.output, result.output
    again = runner.invoke(main, ["policies", "extract", str(md), "--store", str(db)])
    assert again.exit_code == 0 and "11 already present" in again.output
    listing = runner.invoke(main, ["policies", "store", "list", str(db)])
    assert listing.exit_code == 0 and "HANDBOOK-011" in listing.output and "revision 1" in listing.output
    shown = runner.invoke(main, ["policies", "store", "show", str(db), "HANDBOOK-002"])
    assert yaml.safe_load(shown.output)["rules"] == [{"url_deny": "https://tracker.acme.test/admin/settings"}]
    exported = tmp_path / "e.yaml"
    assert runner.invoke(main, ["policies", "store", "export", str(db), "-o", str(exported)]).exit_code == 0
    text = exported.read_text().replace("risk_level: medium", "risk_level: high", 1)
    exported.write_text(text)
    imported = runner.invoke(main, ["policies", "store", "import", str(db), str(exported)])
    assert imported.exit_code == 0 and "imported 1 policies (change 2)" in imported.output
    history = runner.invoke(main, ["policies", "store", "history", str(db), "HANDBOOK-001"])
    assert "v1  change 1" in history.output and "v2  change 2" in history.output
    assert "import" in history.output
    diff = runner.invoke(main, ["policies", "store", "diff", str(db), "HANDBOOK-001"])
    assert "-risk_level: medium" in diff.output and "+risk_level: high" in diff.output
    deleted = runner.invoke(main, ["policies", "store", "delete", str(db), "HANDBOOK-001"])
    assert deleted.exit_code == 0 and "change 3" in deleted.output
    changes = runner.invoke(main, ["policies", "store", "changes", str(db)])
    assert [line.split()[2] for line in changes.output.splitlines()] == ["extract", "import", "delete"]
    missing = runner.invoke(main, ["policies", "store", "show", str(db), "HANDBOOK-001"])
    assert missing.exit_code == 1 and "no policy" in missing.output
    if not db.startswith("postgresql://"):
        absent = runner.invoke(main, ["policies", "store", "list", str(tmp_path / "absent.db")])
        assert absent.exit_code == 1 and "no such policy store" in absent.output
    # the same, with the store given by --store (or PAGEWARDEN_STORE) rather than as DB
    by_option = runner.invoke(main, ["policies", "store", "changes", "--store", db])
    assert by_option.output == changes.output
    by_env = runner.invoke(main, ["policies", "store", "changes"], env={"PAGEWARDEN_STORE": db})
    assert by_env.output == changes.output
    # with other arguments: the store given by --store goes before them, wherever it is written
    shown_by_option = runner.invoke(main, ["policies", "store", "show", "HANDBOOK-002", "--store", db])
    assert shown_by_option.exit_code == 0 and shown_by_option.output == shown.output
    env = {"PAGEWARDEN_STORE": db}
    shown_by_env = runner.invoke(main, ["policies", "store", "show", "HANDBOOK-002"], env=env)
    assert shown_by_env.exit_code == 0 and shown_by_env.output == shown.output
    again = runner.invoke(main, ["policies", "store", "import", "--store", db, str(exported)])
    assert again.exit_code == 0 and "imported 1 policies (change 4)" in again.output  # the deleted one
    # a policy file as the only argument is the FILE: the store comes from PAGEWARDEN_STORE
    by_env_import = runner.invoke(main, ["policies", "store", "import", str(exported)], env=env)
    assert by_env_import.exit_code == 0 and "holds nothing new" in by_env_import.output
    twice = runner.invoke(main, ["policies", "store", "list", "--store", db, "--store", db])
    assert twice.exit_code == 2 and "--store once" in twice.output
    neither = runner.invoke(main, ["policies", "store", "changes"], env={"PAGEWARDEN_STORE": ""})
    assert neither.exit_code == 2 and "Missing argument 'DB'" in neither.output
