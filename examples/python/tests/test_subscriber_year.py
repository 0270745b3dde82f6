"""A subscriber's life, end to end, through a real front process (SQLite and PostgreSQL): the
fake Apple signs every notification with its Apple-shaped PKI and keeps them in its notification
history; the test posts them to POST /apple/notifications in order, shuffled, each twice, or with
a third of them never delivered (then the recovery job reads Apple's history). After each step the
user's GET /users/{id}/entitlements must equal the oracle: the library's compute_entitlements over
every statement Apple signed so far, at the same clock. The consumable is delivered once and
revoked once, whatever the order.

The year: an initial buy with an introductory offer, two renewals, a consumable, an upgrade within
the group, a failed renewal into the grace period and then billing retry, recovery, a refund of the
consumable, a Family Sharing grant to a second user and its revocation, voluntary cancellation
(auto-renew off) and expiry."""
from __future__ import annotations

import json
import random
import sys
import uuid
from pathlib import Path

import pytest

import iapverify
from service import entitlement_view
from support import ROOT, Cluster, get, operator_headers, post, user_headers

FAKE_DIR = ROOT / "Tests" / "shared" / "fakeapple"
sys.path.insert(0, str(FAKE_DIR))
from fakeapi import FakeAppleAPI, sign_jws, sign_notification  # noqa: E402

T0 = 1_767_225_600_000                  # 2026-01-01T00:00:00Z
DAY = 86_400_000
MONTHLY, YEARLY, COINS = "com.example.fake.monthly", "com.example.fake.yearly", "com.example.fake.coins"
CATALOG = {MONTHLY: {"type": "auto_renewable", "group": "pro", "level": 2, "entitlements": ["pro"]},
           YEARLY: {"type": "auto_renewable", "group": "pro", "level": 1, "entitlements": ["pro"]},
           COINS: {"type": "consumable"}}
ALICE = "6f1c2a4e-0b7d-4c35-9a51-2d8e7f3b1c90"    # the purchaser: her app sets appAccountToken to her id
BOB = "0d9b7c5e-3f1a-4e2b-8c6d-5a4f3e2d1c0b"      # a Family Sharing member
SUB, COIN, FAMILY = "1000000000000001", "1000000000000900", "2000000000000001"


def config() -> dict:
    return dict(json.loads((FAKE_DIR / "verifier.json").read_text()), products=CATALOG, grace_period="honor")


def transaction(tid: str, product: str, purchase_day: float, signed_day: float, expires_day=None, original=SUB,
                token=ALICE, **extra) -> dict:
    t = {"transactionId": tid, "originalTransactionId": original, "productId": product, "bundleId": "com.example.fake",
         "environment": "Production", "purchaseDate": T0 + int(purchase_day * DAY),
         "originalPurchaseDate": T0, "quantity": 1, "inAppOwnershipType": "PURCHASED",
         "signedDate": T0 + int(signed_day * DAY), "transactionReason": "PURCHASE", "storefront": "USA"}
    if expires_day is not None:
        t.update(expiresDate=T0 + int(expires_day * DAY), type="Auto-Renewable Subscription",
                 subscriptionGroupIdentifier="pro")
    else:
        t["type"] = "Consumable" if product == COINS else "Non-Consumable"
    if token:
        t["appAccountToken"] = token
    t.update(extra)
    return t


def renewal(signed_day: float, original=SUB, product=MONTHLY, auto_renew=1, **extra) -> dict:
    return {"originalTransactionId": original, "productId": product, "autoRenewProductId": product,
            "autoRenewStatus": auto_renew, "environment": "Production", "signedDate": T0 + int(signed_day * DAY),
            "recentSubscriptionStartDate": T0, **extra}


def year() -> list[dict]:
    """The notifications of the year, in the order Apple signed them."""
    t1 = transaction("1000000000000001", MONTHLY, 0, 0, 30, offerType=1, offerDiscountType="FREE_TRIAL")
    t2 = transaction("1000000000000002", MONTHLY, 30, 30, 60, transactionReason="RENEWAL")
    t3 = transaction("1000000000000003", MONTHLY, 60, 60, 90, transactionReason="RENEWAL")
    t4 = transaction("1000000000000004", YEARLY, 75, 75, 440)
    t5 = transaction("1000000000000005", YEARLY, 450, 450, 815, transactionReason="RENEWAL")
    coins = transaction(COIN, COINS, 35, 35, original=COIN)
    shared = transaction(FAMILY, YEARLY, 80, 80, 440, original=FAMILY, inAppOwnershipType="FAMILY_SHARED")
    steps = [
        ("SUBSCRIBED", "INITIAL_BUY", 0, t1, renewal(0)),
        ("DID_RENEW", None, 30, t2, renewal(30)),
        ("ONE_TIME_CHARGE", None, 35, coins, None),
        ("DID_RENEW", None, 60, t3, renewal(60)),
        ("DID_CHANGE_RENEWAL_PREF", "UPGRADE", 75, t4, renewal(75, product=YEARLY)),
        ("SUBSCRIBED", "INITIAL_BUY", 80, shared, renewal(80, original=FAMILY, product=YEARLY)),
        ("DID_FAIL_TO_RENEW", "GRACE_PERIOD", 440, dict(t4, signedDate=T0 + 440 * DAY),
         renewal(440, product=YEARLY, isInBillingRetryPeriod=True, gracePeriodExpiresDate=T0 + 446 * DAY)),
        ("GRACE_PERIOD_EXPIRED", None, 446, dict(t4, signedDate=T0 + 446 * DAY),
         renewal(446, product=YEARLY, isInBillingRetryPeriod=True, gracePeriodExpiresDate=T0 + 446 * DAY)),
        ("DID_RENEW", "BILLING_RECOVERY", 450, t5, renewal(450, product=YEARLY)),
        ("REFUND", None, 460, dict(coins, signedDate=T0 + 460 * DAY, revocationDate=T0 + 460 * DAY,
                                   revocationReason=0, revocationType="REFUND_FULL"), None),
        ("REVOKE", None, 470, dict(shared, signedDate=T0 + 470 * DAY, revocationDate=T0 + 470 * DAY,
                                   revocationReason=0, revocationType="FAMILY_REVOKE"),
         renewal(470, original=FAMILY, product=YEARLY, auto_renew=0)),
        ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", 500, dict(t5, signedDate=T0 + 500 * DAY),
         renewal(500, product=YEARLY, auto_renew=0)),
        ("EXPIRED", "VOLUNTARY", 815, dict(t5, signedDate=T0 + 815 * DAY),
         renewal(815, product=YEARLY, auto_renew=0, expirationIntent=1)),
    ]
    out = []
    for i, (kind, subtype, day, txn, ren) in enumerate(steps):
        signed = T0 + int(day * DAY) + 1000
        payload = sign_notification(kind, subtype, uuid=str(uuid.uuid5(uuid.NAMESPACE_URL, f"year/{i}")),
                                    signed_date=signed, transaction=txn, renewal=ren, fixtures_dir=FAKE_DIR)
        owner = BOB if txn.get("originalTransactionId") == FAMILY else ALICE
        out.append({"name": f"{i}:{kind}/{subtype}", "payload": payload, "signed": signed, "owner": owner,
                    "family_purchase": shared})
    return out


class Oracle:
    """compute_entitlements over every statement of the notifications Apple sent so far."""

    def __init__(self):
        self.verifier = iapverify.Verifier(config())
        self.statements: dict[str, dict] = {ALICE: {"transactions": [], "renewal_info": []},
                                            BOB: {"transactions": [], "renewal_info": []}}

    def add(self, step: dict) -> None:
        r = self.verifier.verify_jws(step["payload"], now_ms=step["signed"])
        assert r.valid, r.reason
        n = r.notification
        if n["transaction"]:
            self.statements[step["owner"]]["transactions"].append(n["transaction"])
        if n["renewal_info"]:
            self.statements[step["owner"]]["renewal_info"].append(n["renewal_info"])

    def add_transaction(self, user: str, normalised: dict) -> None:
        self.statements[user]["transactions"].append(normalised)

    def entitlements(self, user: str, now: int) -> list[dict]:
        r = self.verifier.compute_entitlements(self.statements[user], now_ms=now)
        assert r.valid, r.reason
        return sorted((entitlement_view(e) for e in r.raw["entitlements"]), key=lambda e: e["id"])



@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request):
    return "" if request.param == "sqlite" else request.getfixturevalue("pg_url")


def start_front(tmp_path: Path, api: FakeAppleAPI, database_url: str) -> tuple[Cluster, str]:
    (tmp_path / "config.json").write_text(json.dumps(config()))
    cluster = Cluster(tmp_path, "http://127.0.0.1:9", database_url, start_ms=T0 - DAY)
    cluster.env.update(APPLE_API_KEY_FILE=str(FAKE_DIR / "signer.json"),
                       APPLE_API_BASE_URL=json.dumps({"Production": api.base_url, "Sandbox": api.sandbox_url}))
    return cluster, cluster.front("--config", str(tmp_path / "config.json"))


def entitlements(front: str, user: str) -> list[dict]:
    status, body = get(f"{front}/users/{user}/entitlements", headers=user_headers(user))
    assert status == 200, body
    return sorted(body["entitlements"], key=lambda e: e["id"])


def run_year(tmp_path: Path, api: FakeAppleAPI, database_url: str, way: str) -> None:
    steps = year()
    oracle = Oracle()
    cluster, front = start_front(tmp_path, api, database_url)
    try:
        # The recovery job's first run (at start) marks where Apple's history starts to matter.
        assert post(front + "/jobs/retry", {}, headers=operator_headers())[0] == 200
        # Bob's device sends his Family Sharing transaction: he owns it from now on.
        shared = steps[0]["family_purchase"]
        api.add_transaction("Production", shared)
        status, body = post(front + "/storekit2/transactions", {"signed_transaction": sign_jws(shared, FAKE_DIR)},
                            headers=user_headers(BOB))
        assert status == 200, body
        oracle.add_transaction(BOB, iapverify.Verifier(config()).verify_jws(
            sign_jws(shared, FAKE_DIR), now_ms=T0).transaction)

        order = list(range(len(steps)))
        if way == "shuffled":
            random.Random(20261125).shuffle(order)
        sends = [i for i in order for _ in range(2 if way == "twice" else 1)]
        answers: list[dict] = []
        recovered = 0
        clock = cluster.now
        for i in sends:
            step = steps[i]
            clock = max(clock, step["signed"] + 60_000)    # a notification arrives after Apple signed it
            cluster.set_clock(clock)
            api.add_notification("Production", step["payload"], step["signed"])   # in Apple's history either way
            oracle.add(step)
            if way != "dropped" or i % 3 != 2:               # dropped: the service was down, Apple gave up
                status, body = post(front + "/apple/notifications", {"signedPayload": step["payload"]})
                assert status == 200, (step["name"], body)
                answers.append(body)
            if way == "dropped":                              # the recovery job's next run (a worker's, or cron's)
                clock += 2 * 3_600_000
                cluster.set_clock(clock)
                status, body = post(front + "/jobs/retry", {}, headers=operator_headers())
                assert status == 200 and {r["status"] for r in body["results"]} == {"recovered"}, body
                recovered += sum(r["recovered"] for r in body["results"])
            for user in (ALICE, BOB):
                assert entitlements(front, user) == oracle.entitlements(user, clock), (way, step["name"], user)
        if way == "dropped":
            assert recovered == sum(1 for i in range(len(steps)) if i % 3 == 2)

        final = {e["id"]: e for e in entitlements(front, ALICE)}
        assert final["pro"]["state"] == "expired" and final["pro"]["active"] is False
        assert {e["id"]: e["state"] for e in entitlements(front, BOB)}["pro"] == "refunded"
        # The consumable: delivered once, revoked once, whatever the order or the copies.
        delivered = [t for a in answers for t in a.get("delivered", [])]
        revoked = [t for a in answers for t in a.get("revoked", [])]
        assert delivered.count(COIN) <= 1 and revoked.count(COIN) <= 1
        from ledger import Ledger
        view = Ledger(url=database_url, sqlite_path=str(tmp_path / "purchases.db"))
        try:
            [d] = view.deliveries()
            assert (d["transaction_id"], d["user_id"]) == (COIN, ALICE) and d["revoked_ms"] is not None
            notes = view.notifications()
            assert len(notes) == len(steps)                 # one row per notification, copies included
            assert {n["user_id"] for n in notes} == {ALICE, BOB}
        finally:
            view.close()
    except BaseException:
        print(cluster.log_text())
        raise
    finally:
        cluster.stop()


@pytest.mark.parametrize("way", ["in_order", "shuffled", "twice", "dropped"])
def test_a_year_in_a_subscribers_life(tmp_path, api, database_url, way):
    run_year(tmp_path, api, database_url, way)
