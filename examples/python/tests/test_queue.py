"""The work queue in the ledger, on SQLite and on a real PostgreSQL, driven by a clock the test
moves: claims lease instead of delete, an expired lease makes a job due again, the outcome is
written only by the lease holder, and a job ends only when done or given up, with its reason."""
import json
import threading

from ledger import Ledger
from service import GIVE_UP_DELAY_MS, LEASE_MS, OUTAGE_RETRY_MS, PurchaseService, job_id, serve
from support import config, CONSUMABLE, MERCURY, NOW, concurrently, consumable, get, operator_headers, signed_receipt

TEMPORARY = b'{"status": 21005}'


def queue_one(service, apple, receipt: str = "R", *later: bytes) -> None:
    """The app sends a receipt while Apple answers 21005: the front stores it, due in 1 s."""
    apple.script(receipt, "production", TEMPORARY, *(later or (CONSUMABLE,)))
    assert service.submit_receipt("u1", signed_receipt(receipt)) == {"status": "pending", "retry_after_ms": 1000, "why": "21005"}
    service.test_clock["now"] += 1000


def test_a_claim_leases_the_job_and_keeps_it_in_the_table(service, apple):
    queue_one(service, apple)
    [job] = service.ledger.claim("w1", service.test_clock["now"], LEASE_MS, 10)
    assert (job.user_id, job.subject, job.attempt, job.tries) == ("u1", signed_receipt("R"), 2, 1)
    assert service.ledger.claim("w2", service.test_clock["now"], LEASE_MS, 10) == []  # held by w1
    assert service.ledger.pending_count() == 1
    counts = service.health()["jobs"]
    assert (counts["pending"], counts["leased"], counts["due"], counts["retried"]) == (0, 1, 0, 1)


def test_an_expired_lease_is_due_again_and_the_late_holder_writes_nothing(service, apple):
    queue_one(service, apple)
    [first] = service.ledger.claim("w1", service.test_clock["now"], LEASE_MS, 10)
    service.test_clock["now"] += LEASE_MS - 1
    assert service.ledger.claim("w2", service.test_clock["now"], LEASE_MS, 10) == []
    service.test_clock["now"] += 1                                          # w1's lease ends: w1 looks dead
    [second] = service.ledger.claim("w2", service.test_clock["now"], LEASE_MS, 10)
    assert second.id == first.id and second.lease_token != first.lease_token and second.tries == 2

    assert service.run_job(second)["delivered"] == [MERCURY]
    assert service.run_job(first) == {"status": "lease_lost", "job": first.id}  # w1 wakes up: no write at all
    assert [d["transaction_id"] for d in service.ledger.deliveries()] == [MERCURY]
    assert [(f["outcome"], f["tries"]) for f in service.ledger.finished()] == [("delivered", 2)]
    assert service.ledger.pending_count() == 0


def test_a_job_still_temporary_after_give_up_after_ms_is_given_up_and_kept(ledger, apple):
    clock = {"now": NOW}
    service = PurchaseService(config(), ledger, "secret", apple.url, clock=lambda: clock["now"],
                              give_up_after_ms=OUTAGE_RETRY_MS + 15_000)
    apple.script("R", "production", TEMPORARY)
    assert service.submit_receipt("u1", signed_receipt("R"))["retry_after_ms"] == 1000
    waits = []
    while service.ledger.pending_count():
        [job] = service.ledger.jobs()
        clock["now"] = job["next_at_ms"]
        [result] = service.run_due_jobs()
        waits.append((job["attempt"], result.get("retry_after_ms", result["status"])))
    # The library's backoff, its give_up after attempt 5, a new round a minute later, and the end.
    assert waits == [(2, 2000), (3, 4000), (4, 8000), (5, OUTAGE_RETRY_MS),
                     (1, 1000), (2, 2000), (3, 4000), (4, 8000), (5, "given_up")]
    [end] = service.ledger.finished()
    assert (end["outcome"], end["tries"], end["id"]) == ("given_up", 9, job_id("u1", "receipt", signed_receipt("R")))
    assert "21005" in end["reason"]
    with ledger.transaction() as db:  # the receipt stays, for an operator to queue again
        assert db.query("SELECT subject FROM finished_jobs", ()) == [(signed_receipt("R"),)]
    assert service.health()["jobs"]["given_up"] == 1
    assert len(apple.calls) == 10  # the front's call and one per attempt


def test_a_receipt_apple_refuses_ends_as_rejected(service, apple):
    queue_one(service, apple, "R", b'{"status": 21010}')
    [result] = service.retry_pending()
    assert result["status"] == "rejected"
    [end] = service.ledger.finished()
    assert end["outcome"] == "rejected" and "21010" in end["reason"]
    assert service.ledger.pending_count() == 0


def test_a_wrong_shared_secret_keeps_the_receipt_until_it_is_fixed(service, apple):
    apple.script("R", "production", b'{"status": 21004}', b'{"status": 21004}', CONSUMABLE)
    result = service.submit_receipt("u1", signed_receipt("R"))
    assert result["status"] == "pending" and result["why"].startswith("fix_configuration")
    assert service.health()["jobs"]["misconfigured"] == 1
    for _ in range(2):  # 21004 once more, then the secret is fixed: never given up for it
        service.test_clock["now"] += GIVE_UP_DELAY_MS
        [result] = service.retry_pending()
    assert result["delivered"] == [MERCURY]
    assert [f["outcome"] for f in service.ledger.finished()] == ["delivered"]


def test_a_stopping_worker_gives_back_the_jobs_it_has_not_started(service, apple):
    apple.answer_with(lambda endpoint, receipt, n: TEMPORARY if n == 0 else consumable("7" + receipt))
    for i in range(3):
        service.submit_receipt(f"u{i}", signed_receipt(f"{i}"))
    service.test_clock["now"] += 1000
    stop = threading.Event()
    stop.set()
    assert service.run_due_jobs(10, stop) == []
    assert [(j["lease_owner"], j["next_at_ms"]) for j in service.ledger.jobs()] == [(None, service.test_clock["now"])] * 3
    assert len(service.run_due_jobs(10)) == 3 and service.ledger.pending_count() == 0


def test_a_receipt_sent_again_and_accepted_ends_the_queued_job(service, apple):
    queue_one(service, apple)
    assert service.submit_receipt("u1", signed_receipt("R"))["delivered"] == [MERCURY]
    assert [f["outcome"] for f in service.ledger.finished()] == ["superseded"]
    assert service.ledger.pending_count() == 0 and service.retry_pending() == []


def test_a_job_a_worker_holds_is_left_to_that_worker(service, apple):
    queue_one(service, apple, "R", CONSUMABLE, CONSUMABLE)
    [job] = service.ledger.claim("w1", service.test_clock["now"], LEASE_MS, 10)
    assert service.submit_receipt("u1", signed_receipt("R"))["delivered"] == [MERCURY]     # the app sent it again meanwhile
    assert service.ledger.pending_count() == 1
    result = service.run_job(job)
    assert result["status"] == "accepted" and result["delivered"] == []
    assert [(f["outcome"], f["reason"]) for f in service.ledger.finished()] == [("delivered", "nothing new")]


def test_concurrent_claims_never_hand_out_one_job_twice(ledger):
    for i in range(60):
        with ledger.transaction() as db:
            ledger.enqueue(db, f"j{i:02}", f"u{i}", "receipt", f"R{i}", "production", 2, NOW - i, NOW - 100, "21005")

    def drain(w: int) -> list[str]:
        mine = []
        while True:
            jobs = ledger.claim(f"w{w}", NOW, LEASE_MS, 4)
            if not jobs:
                return mine
            for job in jobs:
                def end(db, job=job):
                    assert ledger.hold_lease(db, job)
                    ledger.finish(db, job, "delivered", "test", NOW)
                ledger.run(end)
                mine.append(job.id)

    claimed = [job for mine in concurrently(6, drain) for job in mine]
    assert sorted(claimed) == [f"j{i:02}" for i in range(60)]  # each exactly once
    assert len(ledger.finished()) == 60 and ledger.pending_count() == 0


def test_health_reports_the_queue(service, apple):
    server = serve(service, "127.0.0.1", 0, retry_every_s=None)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        apple.answer_with(lambda endpoint, receipt, n: TEMPORARY if n == 0 else consumable("7" + receipt))
        for i in range(3):
            assert service.submit_receipt(f"u{i}", signed_receipt(f"{i}"))["status"] == "pending"
        service.test_clock["now"] += 1000
        service.ledger.claim("w1", service.test_clock["now"], LEASE_MS, 1)
        assert get(url + "/health") == (200, {"ok": True, "ledger": service.ledger.kind})   # no business counts
        assert get(url + "/jobs")[0] == 401
        status, body = get(url + "/jobs", headers=operator_headers())
        assert status == 200 and body["ok"] and body["ledger"] == service.ledger.kind
        assert {k: body["jobs"][k] for k in ("pending", "due", "leased", "retried", "given_up")} == \
            {"pending": 2, "due": 2, "leased": 1, "retried": 1, "given_up": 0}
        assert body["jobs"]["oldest_pending_age_ms"] == 1000
    finally:
        server.shutdown()


def test_health_is_503_without_the_database(tmp_path, apple):
    ledger = Ledger(url="", sqlite_path=str(tmp_path / "p.db"))
    service = PurchaseService(config(), ledger, "", apple.url)
    server = serve(service, "127.0.0.1", 0, retry_every_s=None)
    try:
        (tmp_path / "p.db").unlink()
        (tmp_path / "p.db").mkdir()  # the database file is gone and cannot be made again
        status, body = get(f"http://127.0.0.1:{server.server_address[1]}/health")
        assert status == 503 and body["ok"] is False
    finally:
        server.shutdown()
