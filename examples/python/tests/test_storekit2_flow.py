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

from http_api import Limits
from service import STOREKIT2_SIGNED, PurchaseService, job_id, serve
from support import ROOT, concurrently, post

FAKE_DIR = ROOT / "Tests" / "shared" / "fakeapple"
sys.path.insert(0, str(FAKE_DIR))
from fakeapi import FakeAppleAPI  # noqa: E402

SIGNED = 1_767_225_600_000          # 2026-01-01T00:00:00Z: when the fake's items are dated
NOW = SIGNED + 3_600_000            # the service's clock, fixed: every outcome is computed from it
COINS = "com.example.fake.coins"
PRO = "com.example.fake.pro"
CATALOG = {COINS: {"type": "consumable"}, PRO: {"type": "non_consumable", "entitlements": ["pro"]}}


U1 = "3f0c6b1e-7d2a-4e59-8b61-0c9a4d2e7f15"   # a user whose app sets appAccountToken to the user id


def purchase(transaction_id: str, product: str = COINS, original: str = "", minute: int = 0,
             token: str = "") -> dict:
    """A transaction payload as Apple signs it (the fake adds bundleId and environment). The fake's
    history of a transaction is every transaction with its originalTransactionId."""
    return {**({"appAccountToken": token} if token else {}),"transactionId": transaction_id, "originalTransactionId": original or transaction_id,
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

    first = sk2.submit_signed_transaction("u1", api.signed_transaction("Production", ids[2]))

    assert first["status"] == "accepted", first
    assert sorted(first["delivered"]) == sorted(ids + ["300001"])
    assert first["entitlements"] == {"pro": True}
    assert [t.split("?")[1] if "?" in t else "" for t in history_calls(api, "Production")] == \
        ["", "revision=rev-2", "revision=rev-4"]
    assert sorted(delivered(sk2)) == sorted(ids + ["300001"])
    again = sk2.submit_signed_transaction("u1", api.signed_transaction("Production", ids[-1]))      # the app sends another id of it: nothing new
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
    # each claim asks Apple itself (the race is the point), none is queued for a worker
    server = serve(sk2, "127.0.0.1", 0, retry_every_s=None, limits=Limits(apple_concurrency=64))
    url = f"http://127.0.0.1:{server.server_address[1]}/storekit2/transactions"
    try:
        proofs = {t: api.signed_transaction("Production", t) for t in ids}
        results = concurrently(50, lambda i: post(url, {"user_id": f"u{i % 5}",
                                                        "signed_transaction": proofs[ids[(i * 7) % 20]]}))
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

    first = sk2.submit_signed_transaction("u1", api.signed_transaction("Production", "500001"))

    assert first["status"] == "pending" and first["retry_after_ms"] == 7_000, first
    [job] = sk2.ledger.jobs()
    assert job["id"] == job_id("u1", STOREKIT2_SIGNED, "500001") and job["next_at_ms"] == retry_at
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

    assert sk2.submit_signed_transaction("u1", api.signed_transaction("Production", "600001"))["retry_after_ms"] == 1_000
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
    api.add_transaction("Sandbox", purchase("700001", token=U1))

    result = sk2.submit_transaction(U1, "700001")   # an id, its appAccountToken naming the sender

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

    result = sk2.submit_signed_transaction("u1", api.signed_transaction("Production", "800000"))

    assert result["status"] == "rejected" and result["verdict"] == "signature_invalid", result
    assert len(history_calls(api, "Production")) == 2
    assert delivered(sk2) == [] and sk2.ledger.pending_count() == 0


def test_the_http_front_answers_202_then_the_worker_delivers(sk2, api):
    api.add_transaction("Production", purchase("900001", token=U1))
    api.server_error_next(1)
    server = serve(sk2, "127.0.0.1", 0, retry_every_s=None)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        code, body = post(base + "/storekit2/transactions", {"user_id": U1, "transaction_id": "900001"})
        assert (code, body["status"], body["retry_after_ms"]) == (202, "pending", 1_000)
        assert post(base + "/storekit2/transactions", {"user_id": U1})[0] == 422   # no transaction_id
        assert post(base + "/storekit2/transactions", {"user_id": U1, "transaction_id": "1", "environment": "x"})[0] == 422
        sk2.test_clock["now"] += 1_000
        code, body = post(base + "/jobs/retry", {})
        assert code == 200 and [r["delivered"] for r in body["results"]] == [["900001"]]
    finally:
        server.shutdown()
    assert delivered(sk2) == ["900001"]


def test_guessed_transaction_ids_win_nothing_and_are_rate_limited(sk2, api):
    """The defect: an id was proof enough, so a user who sent 100 guessed ids won someone's coins
    and spent 200 of the app's Server API calls. Now an id alone proves nothing unless the
    purchase's appAccountToken names the sender, and a user gets 20 claims a minute."""
    api.add_transaction("Production", purchase("950007"))          # someone's coins, no appAccountToken
    server = serve(sk2, "127.0.0.1", 0, retry_every_s=None)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        answers = [post(base + "/storekit2/transactions", {"user_id": "mallory", "transaction_id": f"9500{i:02d}"})
                   for i in range(100)]
        codes = [code for code, _ in answers]
        assert codes[:20] == [403] * 20 and codes[20:] == [429] * 80, codes
        assert answers[7][1]["verdict"] == "claim_not_proven"
        assert all(body["error"].startswith("too many purchase claims") for _, body in answers[20:])
        assert len(history_calls(api, "Production")) + len(history_calls(api, "Sandbox")) <= 40
        assert delivered(sk2) == [] and sk2.ledger.pending_count() == 0
        # A minute later (this address was over its limit too), the buyer's app sends the signed
        # transaction StoreKit 2 gave it: the coins are theirs.
        sk2.test_clock["now"] += 60_000
        code, body = post(base + "/storekit2/transactions",
                          {"user_id": "buyer", "signed_transaction": api.signed_transaction("Production", "950007")})
        assert (code, body["delivered"]) == (200, ["950007"]), body
        # A forged or foreign token is refused before Apple is asked.
        calls = len(api.requests)
        forged = api.signed_transaction("Production", "950007")[:-8] + "AAAAAAAA"
        code, body = post(base + "/storekit2/transactions", {"user_id": "buyer", "signed_transaction": forged})
        assert (code, body["status"]) == (400, "invalid") and len(api.requests) == calls
    finally:
        server.shutdown()
    metrics = sk2.metrics.text().decode()
    assert 'claim_refusals_total{entry_point="storekit2",reason="rate_limited"} 80.0' in metrics
    assert 'claim_refusals_total{entry_point="storekit2",reason="claim_not_proven"} 1.0' in metrics


def test_claims_are_limited_per_address_too_and_each_minute_starts_again():
    from http_api import ClaimLimiter
    limiter = ClaimLimiter(per_user=2, per_address=3)
    minute = 60_000 * 1000
    assert [limiter.admit(f"u{i}", "10.0.0.1", minute) for i in range(3)] == [None] * 3
    assert limiter.admit("u9", "10.0.0.1", minute + 30_000) == 30       # the address is over: 30 s left
    assert limiter.admit("u9", "10.0.0.2", minute) is None               # another address is not
    assert limiter.admit("u9", "10.0.0.3", minute) == 60                 # but the user is (u9's third)
    assert limiter.admit("u1", "10.0.0.1", minute + 60_000) is None      # the next minute starts again
