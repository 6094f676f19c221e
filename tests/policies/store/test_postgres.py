"""What only the PostgreSQL backend has: URLs, their passwords kept out of every message, clear
errors for a wrong address, and notifications of changes to followers."""

from __future__ import annotations

import threading
import time

import pytest
from click.testing import CliRunner

from pagewarden.cli import main
from pagewarden.policies.store import PolicyStore, PostgresBackend, StoreError, redact_url
from pagewarden.trace import global_secrets
from tests.policies.store.workers import policy
from tests.postgres_server import PostgresServer


def test_urls_are_redacted() -> None:
    assert redact_url("postgresql://ann:s3cr%40t@db.example:5432/pw?sslmode=require") == (
        "postgresql://ann:***@db.example:5432/pw?sslmode=require"
    )
    assert redact_url("postgresql://ann@db.example/pw") == "postgresql://ann@db.example/pw"
    assert redact_url("postgres://db/pw") == "postgres://db/pw"
    with pytest.raises(StoreError, match="not a postgresql:// URL"):
        PostgresBackend("mysql://root:hunter22@db/x")


def test_the_password_never_appears(postgres_server: PostgresServer, postgres_url: str) -> None:
    password = postgres_server.password
    with PolicyStore(postgres_url) as store:
        store.put([policy("P1")])
        for text in (repr(store), repr(store.backend), store.backend.describe(), store.policies().source):
            assert password not in text and "pagewarden:***@127.0.0.1" in text
        assert password in global_secrets()  # so traces and logs redact it too
    wrong = postgres_url.replace(password, "not-the-password-1234")
    with pytest.raises(StoreError) as failed:
        PolicyStore(wrong)
    message = str(failed.value)
    assert "password authentication failed" in message and "cannot connect" in message
    assert "not-the-password-1234" not in message and password not in message
    assert "pagewarden:***@" in message
    result = CliRunner().invoke(main, ["policies", "store", "list", "--store", wrong])
    assert result.exit_code == 1 and "password authentication failed" in result.output
    assert "not-the-password-1234" not in result.output
    listed = CliRunner().invoke(main, ["policies", "store", "list", postgres_url])
    assert listed.exit_code == 0 and "P1" in listed.output and password not in listed.output


def test_wrong_addresses_are_clear_errors(postgres_server: PostgresServer) -> None:
    with pytest.raises(StoreError, match='database "no_such_db" does not exist'):
        PolicyStore(postgres_server.url("no_such_db"))
    closed = postgres_server.url("postgres").replace(f":{postgres_server.port}/", ":1/")
    with pytest.raises(StoreError, match="cannot connect"):
        PolicyStore(closed)


def test_a_held_write_lock_times_out_clearly(postgres_url: str) -> None:
    with PolicyStore(postgres_url) as store:
        store.put([policy("P1")])
    holder = PostgresBackend(postgres_url)
    waiter = PolicyStore(postgres_url, busy_timeout=0.3)
    try:
        with holder.transaction(write=True):  # another guard in the middle of a change
            started = time.monotonic()
            with pytest.raises(StoreError, match="locked by another writer"):
                waiter.put([policy("P2")])
            assert time.monotonic() - started < 5
            assert waiter.get("P1") is not None  # reads go on
        assert waiter.put([policy("P2")]) is not None  # released with the transaction
    finally:
        waiter.close()
        holder.close()


def test_followers_are_notified_of_each_change(postgres_url: str) -> None:
    with PolicyStore(postgres_url) as store, PolicyStore(postgres_url) as writer:
        stop = threading.Event()
        assert store.backend.wait_for_change(0.3, stop) is True  # just listening: may have missed one
        assert store.backend.wait_for_change(0.3, stop) is False  # nothing happened: timed out
        woke: list[float] = []
        listening = threading.Event()

        def follow() -> None:
            store.backend.wait_for_change(0.01, stop)  # LISTEN in place
            listening.set()
            if store.backend.wait_for_change(20, stop):
                woke.append(time.monotonic())

        thread = threading.Thread(target=follow)
        thread.start()
        assert listening.wait(10)
        wrote = time.monotonic()
        writer.put([policy("P1")])
        thread.join(20)
        assert woke and 0 <= woke[0] - wrote < 2.0  # told at once, not at the end of the wait
        store.backend.end_wait()
        store.close()


def test_connections_the_server_dropped_are_replaced(
    postgres_server: PostgresServer, postgres_url: str
) -> None:
    """After a server restart or failover every pooled connection is dead: the next calls
    go on with new ones instead of failing (a reference filed then is not lost)."""
    import psycopg

    with PolicyStore(postgres_url, actor="guard") as store:
        store.put([policy("P1")])
        with store.backend.transaction(write=False), store.backend.transaction(write=False):
            pass  # two connections in the pool
        with psycopg.connect(postgres_server.url("postgres"), autocommit=True) as admin:
            killed = admin.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE application_name = 'pagewarden' AND pid <> pg_backend_pid()"
            ).fetchone()[0]
        assert killed >= 2
        assert store.update("P1", lambda p: p.model_copy(update={"description": "after"})) is not None
        assert store.get("P1").description == "after" and store.revision() == 2
