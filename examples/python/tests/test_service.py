"""The purchase service against a fake Apple that replays real /verifyReceipt responses, with
an SQLite ledger and with a real PostgreSQL (fixtures in conftest.py)."""
import json
import threading

from http_api import Limits
from service import PurchaseService, serve
from support import config, CONSUMABLE, FROM_TEST_ENV, MERCURY, NOW, post, signed_receipt


def refunded(body: bytes) -> bytes:
    """The same real response, as Apple answers after refunding the consumable."""
    doc = json.loads(body)
    for t in doc["receipt"]["in_app"]:
        if t["transaction_id"] == MERCURY:
            t["cancellation_date_ms"] = str(NOW - 1000)
            t["cancellation_reason"] = "0"
    return json.dumps(doc).encode()


def test_50_concurrent_submissions_deliver_once(service, apple):
    apple.script("R1", "production", CONSUMABLE)
    # 50 claims of one user at once, each asking Apple, is the point here: not something to rate-limit or queue
    server = serve(service, "127.0.0.1", 0, retry_every_s=None,
                   limits=Limits(claims_per_user=100, claims_per_address=100, apple_concurrency=64))
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        service.test_clock["now"] = 1604059000000   # the app created the order just before buying
        status, order = post(url + "/orders", {"user_id": "u1", "product_id": "com.test.app.mercury"})
        assert status == 201
        service.test_clock["now"] = NOW
        results = []
        threads = [threading.Thread(target=lambda: results.append(post(url + "/receipts", {"user_id": "u1", "receipt": signed_receipt("R1")})))
                   for _ in range(50)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        server.shutdown()
    assert len(results) == 50 and all(code == 200 for code, _ in results), results[:3]
    delivered = [txn for _, body in results for txn in body["delivered"]]
    assert delivered == [MERCURY]                      # exactly once across 50 racing requests
    assert [d["transaction_id"] for d in service.ledger.deliveries()] == [MERCURY]
    assert all(body["entitlements"] == {"premium": True} for _, body in results)
    assert service.ledger.order(order["order_id"]) == {"status": "paid", "transaction_id": MERCURY}


def test_21007_is_followed_by_a_sandbox_call(service, apple):
    apple.script("R2", "production", FROM_TEST_ENV)
    apple.script("R2", "sandbox", CONSUMABLE)
    result = service.submit_receipt("u2", signed_receipt("R2"))
    assert result["status"] == "accepted" and result["delivered"] == [MERCURY]
    assert [c[0] for c in apple.calls] == ["production", "sandbox"]


def test_21005_is_retried_later_then_delivered(service, apple):
    apple.script("R3", "production", b'{"status": 21005}', CONSUMABLE)
    first = service.submit_receipt("u3", signed_receipt("R3"))
    assert first == {"status": "pending", "retry_after_ms": 1000, "why": "21005"}
    assert service.retry_pending() == []                # not due yet
    service.test_clock["now"] += 1000
    [second] = service.retry_pending()
    assert second["status"] == "accepted" and second["delivered"] == [MERCURY]
    assert service.ledger.pending_count() == 0


def test_timeouts_are_stored_for_later(ledger):
    s = PurchaseService(config(), ledger, apple_base_url="http://127.0.0.1:9", clock=lambda: NOW, timeout_s=0.5)
    result = s.submit_receipt("u5", signed_receipt("R5"))  # nothing listens on port 9: Apple unreachable
    assert result["status"] == "pending" and result["why"].startswith("unreachable")
    assert ledger.pending_count() == 1


def test_an_http_error_from_verify_receipt_takes_the_librarys_backoff(service, apple):
    """Not a 200 is given to the library as the status it is (http_status), not as a status 21005
    body: the same backoff, attempt after attempt, and the status in the job's reason."""
    apple.go_down("503")
    try:
        first = service.submit_receipt("u6", signed_receipt("R6"))
        assert first == {"status": "pending", "retry_after_ms": 1000, "why": "http 503"}
        service.test_clock["now"] += 1000
        [second] = service.retry_pending()
        assert second == {"status": "pending", "retry_after_ms": 2000, "why": "http 503"}
    finally:
        apple.come_back()
    assert 'apple_calls_total{api="verifyReceipt",outcome="http 503"} 2.0' in service.metrics.text().decode()


def test_a_refund_shows_up_in_to_revoke(service, apple):
    apple.script("R4", "production", CONSUMABLE, refunded(CONSUMABLE))
    assert service.submit_receipt("u4", signed_receipt("R4"))["delivered"] == [MERCURY]
    later = service.submit_receipt("u4", signed_receipt("R4"))
    assert later["delivered"] == [] and later["revoked"] == [MERCURY]
    assert service.ledger.deliveries()[0]["revoked_ms"] == NOW
