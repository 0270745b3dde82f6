"""Faults with real processes: fronts and workers run as `python service.py front|worker|all`
against a real PostgreSQL (SQLite for the single-process default) and a fake Apple in this
process. All of them read the time from a file the test moves, so leases and backoff end when
the test says; slow or absent answers last until the test releases them. No outcome depends on
timing: every wait is for a condition, with a deadline that only ends a hung test."""
import collections
import signal

import pytest

from ledger import Ledger
from service import LEASE_MS, OUTAGE_RETRY_MS, job_id
from support import Cluster, NOW, consumable, concurrently, get, operator_headers, post, wait_for, signed_receipt

MERCURY_ID = "com.test.app.mercury"
TEMPORARY = b'{"status": 21005}'


def txn(receipt: str) -> str:
    return "7" + receipt.rjust(15, "0")


def answers(temporary: int):
    """Apple's answers per receipt: `temporary` times 21005, then the purchase (its own transaction)."""
    return lambda endpoint, receipt, n: TEMPORARY if n < temporary else consumable(txn(receipt))


@pytest.fixture
def view(pg_url):
    """The test's own connection to the database the processes share."""
    ledger = Ledger(url=pg_url)
    yield ledger
    ledger.close()


@pytest.fixture
def cluster(tmp_path, apple, pg_url):
    c = Cluster(tmp_path, apple.url, pg_url)
    yield c
    apple.release()
    c.stop()


def buy(front: str, user: str, receipt: str) -> str:
    """The app: an order, then the receipt. Returns the order id."""
    status, order = post(front + "/orders", {"user_id": user, "product_id": MERCURY_ID})
    assert status == 201, order
    status, result = post(front + "/receipts", {"user_id": user, "receipt": signed_receipt(receipt)})
    assert status == 202 and result["status"] == "pending", result
    return order["order_id"]


def assert_each_delivered_once(view: Ledger, users: dict[str, str]) -> None:
    """users: receipt -> user. One delivery per receipt, to its user; each order paid by it."""
    assert sorted((d["transaction_id"], d["user_id"]) for d in view.deliveries()) == \
        sorted((txn(r), u) for r, u in users.items())
    assert sorted((o["user_id"], o["status"], o["transaction_id"]) for o in view.orders()) == \
        sorted((u, "paid", txn(r)) for r, u in users.items())
    assert view.pending_count() == 0


def test_a_worker_killed_in_the_middle_of_a_batch_loses_nothing(cluster, apple, view):
    apple.answer_with(answers(temporary=1))
    front = cluster.front()
    users = {f"{i}": f"u{i}" for i in range(10)}
    for receipt, user in users.items():
        buy(front, user, receipt)
    assert view.pending_count() == 10

    apple.hold_from(4)                               # the worker's 4th call to Apple hangs
    doomed = cluster.worker("--batch", "10")
    cluster.advance(1000)                            # all 10 due: one claim takes them all
    apple.wait_until(lambda a: a.held == 1)
    assert len(view.deliveries()) == 3
    doomed.send_signal(signal.SIGKILL)               # dies holding 7 leases, one of them mid-call
    doomed.wait()
    apple.release()
    counts = view.queue_counts(cluster.now)
    assert (counts["leased"], counts["pending"]) == (7, 0)

    cluster.worker("--batch", "10")
    cluster.advance(LEASE_MS)                        # the dead worker's leases end
    wait_for(lambda: view.pending_count() == 0, "the second worker to finish", on_fail=cluster.log_text)

    assert_each_delivered_once(view, users)
    assert [f["outcome"] for f in view.finished()] == ["delivered"] * 10
    # The front's call, then one per claim: the job that was mid-call when the worker died was asked twice.
    calls = collections.Counter(r for _, r in apple.calls)
    assert sorted(calls.values()) == [2] * 9 + [3]
    assert sorted(f["tries"] for f in view.finished()) == [1] * 3 + [2] * 7


def test_two_fronts_two_workers_and_50_clients(cluster, apple, view):
    apple.answer_with(answers(temporary=3))          # 2 fronts' calls, the first worker attempt, then the purchase
    fronts = [cluster.front(), cluster.front()]
    for _ in range(2):
        cluster.worker("--batch", "5")
    users = {f"{i}": f"u{i}" for i in range(50)}

    def client(i: int) -> None:                      # each app sends its receipt to both fronts at once
        buy(fronts[i % 2], f"u{i}", f"{i}")
        status, result = post(fronts[(i + 1) % 2] + "/receipts", {"user_id": f"u{i}", "receipt": signed_receipt(f"{i}")})
        assert status == 202, result
    concurrently(50, client)
    assert view.pending_count() == 50                # one job per receipt, however many fronts stored it

    cluster.advance(1000)                            # attempt 2: Apple still says 21005
    wait_for(lambda: all(j["attempt"] == 3 and j["lease_owner"] is None for j in view.jobs()),
             "every job's second attempt", on_fail=cluster.log_text)
    assert [j["next_at_ms"] for j in view.jobs()] == [cluster.now + 2000] * 50   # the library's backoff
    cluster.advance(2000)                            # attempt 3: the purchase
    wait_for(lambda: view.pending_count() == 0, "every job's third attempt", on_fail=cluster.log_text)

    assert_each_delivered_once(view, users)
    assert [(f["outcome"], f["tries"]) for f in view.finished()] == [("delivered", 2)] * 50
    calls = collections.Counter(r for _, r in apple.calls)   # 2 fronts + 1 per due job per attempt
    assert calls == {r: 4 for r in users}
    status, health = get(fronts[0] + "/jobs", headers=operator_headers())
    assert status == 200 and health["jobs"]["finished"] == {"delivered": 50} and health["jobs"]["leased"] == 0


def test_apple_down_for_a_while_then_back_loses_nothing(cluster, apple, view):
    apple.answer_with(answers(temporary=0))
    front = cluster.front()
    cluster.worker("--apple-timeout-s", "1")
    apple.go_down("refuse")
    users = {f"{i}": f"u{i}" for i in range(3)}
    for receipt, user in users.items():
        buy(front, user, receipt)                    # connection refused: stored, attempt 2 in 1 s

    def next_round(outage: str, advance_ms: int, attempt: int, wait_ms: int) -> None:
        apple.go_down(outage)
        cluster.advance(advance_ms)
        wait_for(lambda: all(j["attempt"] == attempt and j["lease_owner"] is None for j in view.jobs()),
                 f"attempt {attempt} after {outage}", on_fail=cluster.log_text)
        assert [j["next_at_ms"] for j in view.jobs()] == [cluster.now + wait_ms] * 3

    next_round("503", 1000, 3, 2000)                 # the library's backoff: 1 s, 2 s, 4 s, 8 s ...
    next_round("21005", 2000, 4, 4000)
    next_round("timeout", 4000, 5, 8000)
    next_round("refuse", 8000, 1, OUTAGE_RETRY_MS)   # ... then give_up: a new round a minute later
    assert {j["last_status"].split(":")[0] for j in view.jobs()} == {"unreachable"}
    apple.come_back()
    cluster.advance(OUTAGE_RETRY_MS)
    wait_for(lambda: view.pending_count() == 0, "delivery once Apple is back", on_fail=cluster.log_text)

    assert_each_delivered_once(view, users)
    assert [(f["outcome"], f["tries"]) for f in view.finished()] == [("delivered", 5)] * 3
    # Refused connections never reach Apple; each other attempt is one call: 503, 21005, timeout, answer.
    assert collections.Counter(r for _, r in apple.calls) == {r: 4 for r in users}


def test_sqlite_single_process_restarts_after_a_kill(tmp_path, apple):
    apple.answer_with(answers(temporary=1))
    cluster = Cluster(tmp_path, apple.url)           # no DATABASE_URL: SQLite, front and worker in one process
    view = Ledger(url="", sqlite_path=str(tmp_path / "purchases.db"))
    try:
        service = cluster.all_in_one()
        buy(service, "u1", "1")
        apple.hold_from(1)
        cluster.advance(1000)
        apple.wait_until(lambda a: a.held == 1)      # the retry is mid-call
        cluster.procs[0].send_signal(signal.SIGKILL)
        cluster.procs[0].wait()
        apple.release()
        assert [j["id"] for j in view.jobs()] == [job_id("u1", "receipt", signed_receipt("1"))]

        service = cluster.all_in_one()
        cluster.advance(LEASE_MS)
        wait_for(lambda: view.pending_count() == 0, "the restarted service to deliver", on_fail=cluster.log_text)
        assert_each_delivered_once(view, {"1": "u1"})
        assert apple.calls_for("1") == 3
        assert get(service + "/jobs", headers=operator_headers())[1]["jobs"]["finished"] == {"delivered": 1}
    finally:
        apple.release()
        cluster.stop()
