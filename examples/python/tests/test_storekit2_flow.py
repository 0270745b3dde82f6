"""The StoreKit 2 flow of the example service, on SQLite and on a real PostgreSQL: the app sends a
transaction id, the service reads the transaction history from a fake App Store Server API (every
page, every signed item verified by the library), delivers each purchase exactly once, and answers
with the entitlements. Apple's 429, 500 and "not in production" answers follow the library's
actions; the retries go through the ledger's work queue, on a clock the test moves."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from service import STOREKIT2, PurchaseService, job_id, serve
from support import ROOT, concurrently, post

FAKE_DIR = ROOT / "Tests" / "shared" / "fakeapple"
sys.path.insert(0, str(FAKE_DIR))
from fakeapi import FakeAppleAPI  # noqa: E402

SIGNED = 1_767_225_600_000          # 2026-01-01T00:00:00Z: when the fake's items are dated
NOW = SIGNED + 3_600_000            # the service's clock, fixed: every outcome is computed from it
COINS = "com.example.fake.coins"
PRO = "com.example.fake.pro"
CATALOG = {COINS: {"type": "consumable"}, PRO: {"type": "non_consumable", "entitlements": ["pro"]}}


def purchase(transaction_id: str, product: str = COINS, original: str = "", minute: int = 0) -> dict:
    """A transaction payload as Apple signs it (the fake adds bundleId and environment). The fake's
    history of a transaction is every transaction with its originalTransactionId."""
    return {"transactionId": transaction_id, "originalTransactionId": original or transaction_id,
            "productId": product, "purchaseDate": SIGNED - 3_600_000 + minute * 60_000,
            "originalPurchaseDate": SIGNED - 3_600_000, "quantity": 1,
            "type": "Consumable" if product == COINS else "Non-Consumable", "inAppOwnershipType": "PURCHASED",
            "signedDate": SIGNED}



def make_service(ledger, api, clock: dict) -> PurchaseService:
    config = dict(json.loads((FAKE_DIR / "verifier.json").read_text()), products=CATALOG)
    signer = json.loads((FAKE_DIR / "signer.json").read_text())
    service = PurchaseService(config, ledger, clock=lambda: clock["now"], signer_config=signer,
                              api_base_url={"Production": api.base_url, "Sandbox": api.sandbox_url})
    service.test_clock = clock
    return service


@pytest.fixture
def sk2(ledger, api):
    return make_service(ledger, api, {"now": NOW})


def history_calls(api, environment: str) -> list[str]:
    """The history requests the fake got from one environment's host, as method and path."""
    return [target for env, method, target in api.requests if env == environment and "/inApps/v2/history/" in target]


def delivered(service) -> list[str]:
    return [d["transaction_id"] for d in service.ledger.deliveries()]


def test_a_three_page_history_is_delivered_once(sk2, api):
    """Five coin purchases and an unlock in one history: three pages of two at the fake."""
    ids = [f"20000{i}" for i in range(5)]
    for i, t in enumerate(ids):
        api.add_transaction("Production", purchase(t, original="200000", minute=i))
    api.add_transaction("Production", purchase("300001", PRO, original="200000", minute=9))

    first = sk2.submit_transaction("u1", ids[2])

    assert first["status"] == "accepted", first
    assert sorted(first["delivered"]) == sorted(ids + ["300001"])
    assert first["entitlements"] == {"pro": True}
    assert [t.split("?")[1] if "?" in t else "" for t in history_calls(api, "Production")] == \
        ["", "revision=rev-2", "revision=rev-4"]
    assert sorted(delivered(sk2)) == sorted(ids + ["300001"])
    again = sk2.submit_transaction("u1", ids[-1])      # the app sends another id of it: nothing new
    assert again["status"] == "accepted" and again["delivered"] == [] and again["entitlements"] == {"pro": True}
    assert sorted(delivered(sk2)) == sorted(ids + ["300001"])
    assert sk2.ledger.pending_count() == 0


def test_50_concurrent_clients_deliver_each_consumable_once(sk2, api):
    """Five histories of four coin purchases each. 50 clients of 5 accounts send ids of them at
    once: the same id from several accounts, and different ids of one history."""
    ids = [f"4{h}000{i}" for h in range(5) for i in range(4)]
    for h in range(5):
        for i in range(4):
            api.add_transaction("Production", purchase(f"4{h}000{i}", original=f"4{h}0000", minute=i))
    server = serve(sk2, "127.0.0.1", 0, retry_every_s=None)
    url = f"http://127.0.0.1:{server.server_address[1]}/storekit2/transactions"
    try:
        results = concurrently(50, lambda i: post(url, {"user_id": f"u{i % 5}", "transaction_id": ids[(i * 7) % 20]}))
    finally:
        server.shutdown()
    # A history belongs to the first account that sent one of its ids; the others are refused.
    assert {code for code, _ in results} <= {200, 403}, results[:3]
    assert all(body["verdict"] == "owned_by_another_user" for code, body in results if code == 403)
    everything = [t for code, body in results if code == 200 for t in body["delivered"]]
    assert sorted(everything) == sorted(ids)             # each consumable once, across all requests
    assert sorted(delivered(sk2)) == sorted(ids)
    owners = {}
    for d in sk2.ledger.deliveries():                    # each history delivered to one account only
        owners.setdefault(d["transaction_id"][:2], set()).add(d["user_id"])
    assert all(len(users) == 1 for users in owners.values()) and len(owners) == 5
    for i, (code, _) in enumerate(results):              # and that account is the one that got 200
        assert (code == 200) == (owners[ids[(i * 7) % 20][:2]] == {f"u{i % 5}"})
    assert sk2.ledger.pending_count() == 0


def test_429_is_retried_at_apples_retry_after(sk2, api):
    api.add_transaction("Production", purchase("500001"))
    retry_at = NOW + 7_000
    api.rate_limit_next(1, retry_at)

    first = sk2.submit_transaction("u1", "500001")

    assert first["status"] == "pending" and first["retry_after_ms"] == 7_000, first
    [job] = sk2.ledger.jobs()
    assert job["id"] == job_id("u1", STOREKIT2 + "500001") and job["next_at_ms"] == retry_at
    assert job["attempt"] == 2 and job["last_status"] == "http 429"
    calls = len(api.requests)
    sk2.test_clock["now"] = retry_at - 1
    assert sk2.run_due_jobs() == [] and len(api.requests) == calls   # not before Apple said
    sk2.test_clock["now"] = retry_at
    [second] = sk2.run_due_jobs()
    assert second["status"] == "accepted" and second["delivered"] == ["500001"]
    assert delivered(sk2) == ["500001"] and sk2.ledger.pending_count() == 0
    assert [f["outcome"] for f in sk2.ledger.finished()] == ["delivered"]


def test_500_twice_then_success(sk2, api):
    api.add_transaction("Production", purchase("600001"))
    api.server_error_next(2)

    assert sk2.submit_transaction("u1", "600001")["retry_after_ms"] == 1_000
    schedule = []
    while sk2.ledger.pending_count():
        [job] = sk2.ledger.jobs()
        schedule.append((job["attempt"], job["next_at_ms"] - NOW))
        sk2.test_clock["now"] = job["next_at_ms"]
        [result] = sk2.run_due_jobs()
    # The library's backoff: 1 s after attempt 1, 2 s after attempt 2 (no Retry-After on a 500).
    assert schedule == [(2, 1_000), (3, 3_000)]
    assert result["status"] == "accepted" and result["delivered"] == ["600001"]
    assert delivered(sk2) == ["600001"]


def test_a_sandbox_transaction_asked_in_production_is_read_from_sandbox(sk2, api):
    api.add_transaction("Sandbox", purchase("700001"))

    result = sk2.submit_transaction("u1", "700001")

    assert result["status"] == "accepted" and result["delivered"] == ["700001"], result
    assert len(history_calls(api, "Production")) == 1 and len(history_calls(api, "Sandbox")) == 1
    assert delivered(sk2) == ["700001"]


def test_a_transaction_unknown_in_both_environments_is_refused_without_a_loop(sk2, api):
    result = sk2.submit_transaction("u1", "799999")
    assert result["status"] == "rejected", result
    assert len(history_calls(api, "Production")) == 1 and len(history_calls(api, "Sandbox")) == 1
    assert delivered(sk2) == [] and sk2.ledger.pending_count() == 0


def test_a_tampered_item_on_page_two_delivers_nothing(sk2, api):
    """Page one verifies; page two carries a transaction changed after Apple signed it. The
    library refuses that answer, so nothing of the history is delivered, and nothing is queued."""
    for i in range(3):
        api.add_transaction("Production", purchase(f"80000{i}", original="800000", minute=i), tampered=i == 2)

    result = sk2.submit_transaction("u1", "800000")

    assert result["status"] == "rejected" and result["verdict"] == "signature_invalid", result
    assert len(history_calls(api, "Production")) == 2
    assert delivered(sk2) == [] and sk2.ledger.pending_count() == 0


def test_the_http_front_answers_202_then_the_worker_delivers(sk2, api):
    api.add_transaction("Production", purchase("900001"))
    api.server_error_next(1)
    server = serve(sk2, "127.0.0.1", 0, retry_every_s=None)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        code, body = post(base + "/storekit2/transactions", {"user_id": "u1", "transaction_id": "900001"})
        assert (code, body["status"], body["retry_after_ms"]) == (202, "pending", 1_000)
        assert post(base + "/storekit2/transactions", {"user_id": "u1"})[0] == 422   # no transaction_id
        assert post(base + "/storekit2/transactions", {"user_id": "u1", "transaction_id": "1", "environment": "x"})[0] == 422
        sk2.test_clock["now"] += 1_000
        code, body = post(base + "/jobs/retry", {})
        assert code == 200 and [r["delivered"] for r in body["results"]] == [["900001"]]
    finally:
        server.shutdown()
    assert delivered(sk2) == ["900001"]
