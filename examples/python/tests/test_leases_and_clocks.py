"""Time, the way the service uses it (each of these failed on the previous service):
- a job slower than its lease keeps its lease (the heartbeat), so no second worker takes it;
- a call to Apple ends at its deadline even when Apple sends a byte at a time;
- lease ends and order times come from the database's clock, not the host's;
- the example config accepts Production only; Sandbox needs --allow-sandbox."""
from __future__ import annotations

import time

import pytest

import ledger_database as database_module
from ledger import Ledger
from service import LEASE_MS, PurchaseService, job_id
from support import CONSUMABLE, FROM_TEST_ENV, NOW, Cluster, config, consumable, post, wait_for, signed_receipt

MERCURY_ID = "com.test.app.mercury"


def test_a_job_slower_than_its_lease_is_not_taken_by_another_worker(tmp_path, apple, pg_url):
    apple.answer_with(lambda endpoint, receipt, n: b'{"status": 21005}' if n == 0 else consumable("7000000000000001"))
    cluster = Cluster(tmp_path, apple.url, pg_url)
    view = Ledger(url=pg_url)
    try:
        front = cluster.front()
        assert post(front + "/receipts", {"user_id": "u1", "receipt": signed_receipt("SLOW")})[0] == 202
        apple.hold_from(1)                                   # the worker's call hangs until released
        lease = 10_000
        cluster.worker("--lease-ms", str(lease), "--heartbeat-ms", "20")
        cluster.advance(1000)                                # due: the first worker claims it
        apple.wait_until(lambda a: a.held == 1)
        cluster.worker("--lease-ms", str(lease), "--heartbeat-ms", "20")   # a second worker, polling
        for _ in range(6):                                   # three leases' worth of time passes
            cluster.advance(lease // 2)
            wait_for(lambda: view.jobs()[0]["next_at_ms"] == cluster.now + lease,
                     "the heartbeat to extend the lease", on_fail=cluster.log_text)
        assert view.jobs()[0]["tries"] == 1 and apple.held == 1     # never claimed twice
        apple.release()
        wait_for(lambda: view.pending_count() == 0, "the job to finish", on_fail=cluster.log_text)
        assert [(f["outcome"], f["tries"]) for f in view.finished()] == [("delivered", 1)]
        assert apple.calls_for("SLOW") == 2                  # the front's, then the one worker's
    finally:
        apple.release()
        cluster.stop()
        view.close()


def test_a_call_to_apple_ends_at_its_deadline_however_apple_drips(service, apple):
    service.apple.timeout_s = 1.0
    apple.go_down("drip")                                    # a byte every 0.2 s: no single read times out
    try:
        result = service.submit_receipt("u1", signed_receipt("DRIP"))
    finally:
        apple.come_back()
    assert result == {"status": "pending", "retry_after_ms": 1000, "why": "timeout"}
    assert service.ledger.pending_count() == 1


@pytest.fixture
def host_clock_ahead(monkeypatch):
    """This host's clock an hour ahead of the database's (a badly synchronised worker)."""
    ahead = 3_600_000
    monkeypatch.setattr(database_module, "now_ms", lambda: time.time_ns() // 1_000_000 + ahead)
    monkeypatch.setattr(time, "time", lambda real=time.time: real() + ahead / 1000)
    return ahead


def test_leases_and_orders_use_the_database_clock(pg_url, apple, host_clock_ahead):
    apple.script("R", "production", b'{"status": 21005}')
    honest = PurchaseService(config(), Ledger(url=pg_url), "secret", apple.url, worker_id="honest")
    fast = PurchaseService(config(), Ledger(url=pg_url), "secret", apple.url, worker_id="fast")
    try:
        assert honest.submit_receipt("u1", signed_receipt("R"))["status"] == "pending"
        with honest.ledger.transaction() as db:
            db.execute("UPDATE verification_jobs SET next_at_ms = 0", ())     # due now
        [job] = honest.ledger.claim("honest", None, LEASE_MS, 1)
        # The fast host sees the honest worker's lease as long over by its own clock; by the
        # database's it has 5 minutes left, so there is nothing to take.
        assert fast.ledger.claim("fast", None, LEASE_MS, 1) == []
        order = fast.create_order("u1", MERCURY_ID)
        with fast.ledger.transaction() as db:
            created = db.query("SELECT created_ms FROM orders WHERE order_id = ?", (order,))[0][0]
            db_now = fast.ledger.now(db)
        assert abs(db_now - created) < host_clock_ahead / 2   # the database's time, not the host's
        assert job.id == job_id("u1", "receipt", signed_receipt("R"))
    finally:
        honest.ledger.close()
        fast.ledger.close()


def test_the_example_config_accepts_production_only(ledger, apple):
    """App Review buys in the sandbox: without --allow-sandbox a sandbox receipt grants nothing."""
    apple.script("R", "production", FROM_TEST_ENV)
    apple.script("R", "sandbox", CONSUMABLE)
    strict = PurchaseService(config(sandbox=False), ledger, "secret", apple.url, clock=lambda: NOW)
    result = strict.submit_receipt("u1", signed_receipt("R"))
    assert result["status"] == "rejected" and result["verdict"] == "wrong_environment", result
    assert ledger.deliveries() == []
