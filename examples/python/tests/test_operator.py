"""What an operator lives with (one test per defect found running the service): keep-alive
requests are not held by Nagle's algorithm, and the recurring recovery jobs do not count as a
purchase waiting on Apple."""
from __future__ import annotations

import json
import socket

from http_api import bind
from service import PurchaseService
from support import config
from test_subscriber_year import FAKE_DIR


def test_accepted_connections_send_without_delay():
    """asyncio sets TCP_NODELAY only on sockets whose protocol is IPPROTO_TCP; a listening socket
    made with protocol 0 left every keep-alive response after the first waiting on a delayed ACK."""
    listener = bind("127.0.0.1", 0)
    client = socket.create_connection(listener.getsockname())
    try:
        conn, _ = listener.accept()
        with conn:
            assert conn.proto == socket.IPPROTO_TCP           # what asyncio checks before it sets nodelay
            assert conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
    finally:
        client.close()
        listener.close()


def test_recovery_jobs_do_not_age_the_queue(ledger, api):
    """The recurring history reads stay in the queue for good: counting them, the 'above an hour:
    Apple is failing' alert fired an hour after start and never stopped."""
    clock = {"now": 1_767_225_600_000}
    service = PurchaseService(config(), ledger, clock=lambda: clock["now"],
                              signer_config=json.loads((FAKE_DIR / "signer.json").read_text()),
                              api_base_url={"Production": api.base_url, "Sandbox": api.sandbox_url})
    service.ensure_recovery_jobs()
    clock["now"] += 3 * 3_600_000
    jobs = service.health()["jobs"]
    assert jobs["pending"] >= 1                      # the recovery jobs are there...
    assert jobs["oldest_pending_age_ms"] == 0        # ...and no purchase is waiting


def test_an_outage_parks_purchases_for_a_minute_and_apples_return_wakes_them(service, apple):
    """Apple failing past the library's back-off (1, 2, 4, 8 s) used to park a purchase for 15
    minutes: now the next round is a minute away, the first answer Apple gives again makes every
    waiting purchase due at once, and so does the operator's retry."""
    from service import OUTAGE_RETRY_MS
    from support import consumable
    clock = service.test_clock
    apple.go_down("503")
    for r in ("A", "B"):
        assert service.submit_receipt(f"u{r}", r)["status"] == "pending"
    while True:                                   # the back-off runs out while Apple is down
        clock["now"] = min(j["next_at_ms"] for j in service.ledger.jobs())
        results = service.run_due_jobs()
        if all(r.get("retry_after_ms") == OUTAGE_RETRY_MS for r in results) and len(results) == 2:
            break
    assert all(j["next_at_ms"] == clock["now"] + OUTAGE_RETRY_MS for j in service.ledger.jobs())
    apple.come_back()
    apple.answer_with(lambda endpoint, receipt, n: consumable("7" + receipt))
    clock["now"] += 5_000                         # Apple is back; the parked jobs are not due yet
    assert service.health()["jobs"]["due"] == 0
    assert service.submit_receipt("uC", "C")["status"] == "accepted"     # a front's call succeeds...
    assert service.health()["jobs"]["due"] == 2                          # ...and wakes both
    delivered = sorted(t for r in service.run_due_jobs() for t in r.get("delivered", []))
    assert delivered == ["7A", "7B"]


def test_the_operators_retry_reaches_waiting_purchases(service, apple):
    from service import OUTAGE_RETRY_MS
    from support import consumable
    apple.go_down("503")
    assert service.submit_receipt("u1", "R")["status"] == "pending"
    while service.ledger.jobs()[0]["attempt"] != 1 or service.ledger.jobs()[0]["tries"] == 0:
        service.test_clock["now"] = service.ledger.jobs()[0]["next_at_ms"]   # through the back-off
        service.run_due_jobs()
    apple.come_back()
    apple.answer_with(lambda endpoint, receipt, n: consumable("7" + receipt))
    [job] = service.ledger.jobs()
    assert job["next_at_ms"] > service.test_clock["now"]        # not due: a worker would wait
    [result] = service.retry_pending()                           # POST /jobs/retry
    assert result["delivered"] == ["7R"]
    assert OUTAGE_RETRY_MS < 15 * 60 * 1000
