"""The ledger's database: PostgreSQL restarting or away (on a server of each test's own, so the
session's shared server is left alone), readiness pings, and schema versions on both databases.

No outcome here depends on how long something took: a thread joined with a deadline only ends a
test that would otherwise hang."""
from __future__ import annotations

import shutil
import sqlite3
import subprocess
import tempfile
import threading
from pathlib import Path

import pytest

import ledger_schema as schema_module
from conftest import _pg_bin, _run_as
from ledger import Ledger, SchemaTooNew

HANG_GUARD_S = 60   # far above any outcome asserted here; only there so a regression fails instead of hanging


class OwnServer:
    """A PostgreSQL server for one test, on a Unix socket, which the test may stop and restart."""

    def __init__(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="iapv-db-pg-"))
        self.data, self.sock = self.tmp / "data", self.tmp / "sock"
        self.sock.mkdir()
        if _run_as():
            shutil.chown(self.tmp, "postgres")
            shutil.chown(self.sock, "postgres")
        subprocess.run(_run_as() + [str(_pg_bin() / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust"],
                       check=True, capture_output=True)
        self.start()
        self.url = f"postgresql://postgres@/postgres?host={self.sock}"

    def ctl(self, *args: str) -> None:
        subprocess.run(_run_as() + [str(_pg_bin() / "pg_ctl"), "-D", str(self.data), "-l", str(self.tmp / "log"), "-w",
                                    "-o", f"-k {self.sock} -c listen_addresses='' -c fsync=off", *args],
                       check=True, capture_output=True)

    def start(self) -> None:
        self.ctl("start")

    def stop(self) -> None:
        self.ctl("stop", "-m", "fast")

    def restart(self) -> None:
        self.ctl("restart", "-m", "fast")   # every open connection is cut

    def remove(self) -> None:
        subprocess.run(_run_as() + [str(_pg_bin() / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop"],
                       capture_output=True)
        shutil.rmtree(self.tmp, ignore_errors=True)


@pytest.fixture
def server():
    s = OwnServer()
    yield s
    s.remove()


def outcome(fn) -> tuple[object, BaseException | None]:
    """(result, exception) of fn(), run in a thread that may take up to HANG_GUARD_S."""
    box: dict = {}

    def call() -> None:
        try:
            box["result"] = fn()
        except BaseException as e:
            box["error"] = e
    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    thread.join(HANG_GUARD_S)
    assert not thread.is_alive(), f"hung: still running after {HANG_GUARD_S} s"
    return box.get("result"), box.get("error")


def fill_pool(ledger: Ledger, n: int) -> None:
    """Opens n pooled connections: n transactions that wait for each other before ending."""
    barrier = threading.Barrier(n, timeout=HANG_GUARD_S)
    threads = [threading.Thread(target=ledger.run, args=(lambda db: barrier.wait(),)) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(HANG_GUARD_S)
    assert ledger._pool.get_stats()["pool_available"] == n


# -- PostgreSQL restarting or away ---------------------------------------------------------------

def test_after_a_restart_the_next_call_gets_a_working_connection(server):
    # With the pool's own check every stale connection met cost a growing pause (1, 2, 4, 8 s...):
    # ten of them took the whole 30 s pool timeout, and the call failed.
    ledger = Ledger(url=server.url, pool_size=10)
    try:
        fill_pool(ledger, 10)
        ledger.create_order("o1", "u1", "p", 1)
        server.restart()
        result, error = outcome(lambda: ledger.order("o1"))
        assert error is None, repr(error)
        assert result == {"status": "pending", "transaction_id": None}
        assert outcome(ledger.pending_count) == (0, None)   # and the pool holds no broken connection after it
    finally:
        ledger.close()


def test_a_transaction_cut_by_a_restart_runs_again(server):
    ledger = Ledger(url=server.url)
    attempts = []

    def work(db) -> int:
        attempts.append(1)
        db.execute("INSERT INTO service_marks (name, value_ms) VALUES (?, ?)", ("m", 7))
        if len(attempts) == 1:
            server.restart()   # this transaction's connection is cut before it commits
        return int(db.query("SELECT value_ms FROM service_marks WHERE name = ?", ("m",))[0][0])
    try:
        result, error = outcome(lambda: ledger.run(work))
        assert error is None, repr(error)
        assert result == 7 and len(attempts) == 2
        with ledger.transaction() as db:
            assert db.query("SELECT COUNT(*) FROM service_marks", ()) == [(1,)]
    finally:
        ledger.close()


def test_with_postgresql_stopped_ping_and_calls_fail_instead_of_waiting(server):
    from psycopg_pool import PoolTimeout
    ledger = Ledger(url=server.url, pool_size=4, pool_timeout_s=2)
    try:
        fill_pool(ledger, 4)
        ledger.ping(timeout_s=1)
        server.stop()
        _, error = outcome(lambda: ledger.ping(timeout_s=1))
        assert error is not None
        _, error = outcome(ledger.pending_count)
        assert isinstance(error, PoolTimeout), repr(error)

        server.start()
        assert outcome(lambda: ledger.ping(timeout_s=1)) == (None, None)
        # The pool comes back too: its reconnection attempts stop after pool_timeout_s and a call starts one.
        result, error = outcome(ledger.pending_count)
        assert (result, error) == (0, None), repr(error)
    finally:
        ledger.close()


def test_ping_on_sqlite_fails_when_the_file_is_gone(tmp_path):
    ledger = Ledger(url="", sqlite_path=str(tmp_path / "p.db"))
    ledger.ping(timeout_s=1)
    (tmp_path / "p.db").unlink()
    with pytest.raises(sqlite3.OperationalError):
        ledger.ping(timeout_s=1)
    assert not (tmp_path / "p.db").exists()   # the ping did not create an empty database in its place


# -- schema versions -------------------------------------------------------------------------------

@pytest.fixture(params=["sqlite", "postgresql"])
def database(request, tmp_path):
    """(open a Ledger, run SQL directly) on an empty database of either kind."""
    if request.param == "sqlite":
        path = str(tmp_path / "purchases.db")

        def sql(*statements: str) -> list:
            conn = sqlite3.connect(path, isolation_level=None)
            try:
                rows = [conn.execute(s).fetchall() for s in statements]
            finally:
                conn.close()
            return rows[-1]
        return (lambda: Ledger(url="", sqlite_path=path)), sql
    import psycopg
    url = request.getfixturevalue("pg_url")

    def pg_sql(*statements: str) -> list:
        with psycopg.connect(url, autocommit=True) as conn:
            rows = [conn.execute(s) for s in statements]
            return rows[-1].fetchall() if rows[-1].description else []
    return (lambda: Ledger(url=url)), pg_sql


def test_a_database_from_before_versions_is_recognised_as_version_1(database):
    open_ledger, sql = database
    # What the service created before schema_version existed: the same statements, run at every start.
    sql(*schema_module.SCHEMA_V1, "INSERT INTO orders (order_id, user_id, product_id, created_ms) VALUES ('o1', 'u1', 'p', 1)")
    ledger = open_ledger()
    try:
        # recognised as version 1, then brought to the newest
        assert ledger.schema_version() == len(schema_module.MIGRATIONS)
        assert sql("SELECT version FROM schema_version ORDER BY version") == [
            (v,) for v in range(1, len(schema_module.MIGRATIONS) + 1)]
        assert ledger.order("o1") == {"status": "pending", "transaction_id": None}
    finally:
        ledger.close()


def test_a_new_database_gets_every_version_once(database):
    open_ledger, sql = database
    for _ in range(2):
        ledger = open_ledger()
        ledger.close()
    assert sql("SELECT version FROM schema_version ORDER BY version") == [
        (v,) for v in range(1, len(schema_module.MIGRATIONS) + 1)]


def test_a_database_newer_than_the_code_is_refused(database):
    open_ledger, sql = database
    open_ledger().close()
    future = len(schema_module.MIGRATIONS) + 1
    sql(f"INSERT INTO schema_version (version, applied_ms) VALUES ({future}, 0)")
    with pytest.raises(SchemaTooNew, match=f"version {future}.*up to {future - 1}"):
        open_ledger()


def test_an_appended_migration_reaches_an_existing_database(database, monkeypatch):
    open_ledger, sql = database
    open_ledger().close()
    monkeypatch.setattr(schema_module, "MIGRATIONS", schema_module.MIGRATIONS + ["ALTER TABLE orders ADD COLUMN note TEXT"])
    for _ in range(2):   # applied once: the second start finds nothing to do (a second ADD COLUMN would fail)
        ledger = open_ledger()
        ledger.close()
    assert sql("SELECT MAX(version) FROM schema_version") == [(len(schema_module.MIGRATIONS),)]
    assert sql("SELECT note FROM orders") == []


def test_a_failing_migration_changes_nothing(database, monkeypatch):
    open_ledger, sql = database
    open_ledger().close()
    released = schema_module.MIGRATIONS
    monkeypatch.setattr(schema_module, "MIGRATIONS", released + [
        ("ALTER TABLE orders ADD COLUMN note TEXT", "ALTER TABLE no_such_table ADD COLUMN x TEXT")])
    with pytest.raises(Exception, match="no_such_table"):
        open_ledger()
    assert sql("SELECT MAX(version) FROM schema_version") == [(len(released),)]
    # The column of the failed version's first statement was not kept: adding it again works.
    monkeypatch.setattr(schema_module, "MIGRATIONS", released + ["ALTER TABLE orders ADD COLUMN note TEXT"])
    open_ledger().close()
    assert sql("SELECT MAX(version) FROM schema_version") == [(len(released) + 1,)]


def test_version_2_gives_old_jobs_a_kind_and_keeps_their_ids(database):
    """A queue written by the service before version 2 (prefixes in the receipt column, the
    environment in `endpoint`) reads as kinds and subjects, with the same job ids, so a claim sent
    again after the upgrade still finds its job."""
    from work_queue import CONSUMPTION, RECEIPT, RECOVERY, STOREKIT2, STOREKIT2_SIGNED, job_id
    open_ledger, sql = database
    old = {RECEIPT: "MIIT", STOREKIT2: "storekit2:2001", STOREKIT2_SIGNED: "storekit2-signed:2002",
           RECOVERY: "recovery:production", CONSUMPTION: "consumption:2003"}
    ids = {kind: job_id("u1", kind, text.split(":", 1)[-1]) for kind, text in old.items()}
    rows = ", ".join(f"('{ids[kind]}', 'u1', '{text}', 'Production', 1, 0, 0)" for kind, text in old.items())
    sql(*schema_module.SCHEMA_V1,
        "INSERT INTO verification_jobs (id, user_id, receipt, endpoint, attempt, next_at_ms, created_ms) VALUES " + rows,
        "INSERT INTO finished_jobs (id, user_id, receipt, outcome, tries, created_ms, finished_ms)"
        " VALUES ('f1', 'u1', 'storekit2:9', 'delivered', 1, 0, 0)")
    ledger = open_ledger()
    try:
        jobs = {j.kind: j for j in ledger.claim("w", 1, 1000, 10)}
        assert {kind: (j.id, j.subject, j.environment) for kind, j in jobs.items()} == \
            {kind: (ids[kind], text.split(":", 1)[-1], "Production") for kind, text in old.items()}
        assert sql("SELECT kind, subject FROM finished_jobs") == [("storekit2", "9")]
    finally:
        ledger.close()
