"""Signs the tokens run-tests.sh posts to the Swift example, with the project's fake Apple PKI
(Tests/shared/fakeapple: Apple's names, our keys; verifier.json trusts only its root). Prints one
JSON object: name -> token. Every date is fixed, so the run is the same each time.

    python3 examples/swift/tests/make_tokens.py > tokens.json      # needs the cryptography package
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
FAKE_DIR = ROOT / "Tests" / "shared" / "fakeapple"
sys.path.insert(0, str(FAKE_DIR))
from fakeapi import sign_jws, sign_notification, tamper  # noqa: E402

T0 = 1_767_225_600_000                       # 2026-01-01T00:00:00Z
NOW = T0 + 60_000                            # the server's fixed clock (IAPV_EXAMPLE_NOW_MS)
DAY = 86_400_000
ALICE = "6f1c2a4e-0b7d-4c35-9a51-2d8e7f3b1c90"   # her app sets appAccountToken to her user id
BOB = "0d9b7c5e-3f1a-4e2b-8c6d-5a4f3e2d1c0b"
LIFETIME, ALBUM = "com.example.fake.lifetime", "com.example.fake.album"
MONTHLY, COINS = "com.example.fake.monthly", "com.example.fake.coins"
SUB, COIN = "1000000000000001", "1000000000000900"


def transaction(tid: str, product: str, signed: int, *, original: str | None = None, token: str | None = ALICE,
                expires: int | None = None, kind: str = "Non-Consumable", **extra) -> dict:
    t = {"transactionId": tid, "originalTransactionId": original or tid, "productId": product,
         "bundleId": "com.example.fake", "environment": "Production", "purchaseDate": signed,
         "originalPurchaseDate": signed, "quantity": 1, "inAppOwnershipType": "PURCHASED", "signedDate": signed,
         "transactionReason": "PURCHASE", "storefront": "USA", "type": kind}
    if expires is not None:
        t.update(expiresDate=expires, type="Auto-Renewable Subscription", subscriptionGroupIdentifier="pro")
    if token:
        t["appAccountToken"] = token
    t.update(extra)
    return t


def renewal(signed: int, auto_renew: int = 1) -> dict:
    return {"originalTransactionId": SUB, "productId": MONTHLY, "autoRenewProductId": MONTHLY,
            "autoRenewStatus": auto_renew, "environment": "Production", "signedDate": signed,
            "recentSubscriptionStartDate": T0}


def note(kind: str, subtype: str | None, n: int, signed: int, txn: dict | None = None, ren: dict | None = None) -> str:
    return sign_notification(kind, subtype, uuid=f"00000000-0000-4000-8000-{n:012d}", signed_date=signed,
                             transaction=txn, renewal=ren, fixtures_dir=FAKE_DIR)


def main() -> None:
    lifetime = sign_jws(transaction("2000000000000001", LIFETIME, T0), FAKE_DIR)
    monthly = transaction(SUB, MONTHLY, T0 + 1000, expires=T0 + 30 * DAY)
    coins = transaction(COIN, COINS, T0 + 2000, kind="Consumable")
    subscribed = note("SUBSCRIBED", "INITIAL_BUY", 1, T0 + 1000, monthly, renewal(T0 + 1000))
    tokens = {
        "now_ms": NOW,
        "alice": ALICE,
        "bob": BOB,
        # POST /transactions
        "lifetime": lifetime,                                     # Alice's (appAccountToken)
        "album": sign_jws(transaction("2000000000000002", ALBUM, T0, token=None), FAKE_DIR),   # no token: first claim
        "foreign": sign_jws(transaction("2000000000000003", LIFETIME, T0, bundleId="com.other.app"), FAKE_DIR),
        "tampered": tamper(lifetime, productId="com.example.fake.everything"),
        "not_a_transaction": subscribed,
        # POST /apple/notifications
        "subscribed": subscribed,
        # signed before the one above: stale; applied, it would turn auto-renew off
        "stale": note("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", 2, T0 + 500, None, renewal(T0 + 500, 0)),
        "coins": note("ONE_TIME_CHARGE", None, 3, T0 + 2000, coins),
        "refund": note("REFUND", None, 4, T0 + 30_000,
                       dict(coins, signedDate=T0 + 30_000, revocationDate=T0 + 30_000, revocationReason=0,
                            revocationType="REFUND_FULL")),
        # Alice's subscription renewed with Bob's appAccountToken: refused
        "someone_else": note("DID_RENEW", None, 5, T0 + 40_000,
                             transaction("1000000000000002", MONTHLY, T0 + 40_000, original=SUB, token=BOB,
                                         expires=T0 + 60 * DAY, transactionReason="RENEWAL")),
        "forged": tamper(subscribed, notificationType="REFUND"),
    }
    json.dump(tokens, sys.stdout)


if __name__ == "__main__":
    main()
