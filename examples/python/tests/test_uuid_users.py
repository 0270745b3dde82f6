"""User ids and appAccountTokens are compared as UUIDs (issue 42): the app sets appAccountToken
to the user's id, and Swift's `UUID().uuidString` is upper case while Apple's JSON gives the token
in lower case. Before, the service lower-cased the token but not the user id: the user's own
signed transaction was refused `owned_by_another_user` and a notification delivered to a
lower-case id that was no one's. Through the receipt, StoreKit 2 and notification paths, with
the user's token naming the upper-case id."""
from __future__ import annotations

import json

from service import serve
from support import CONSUMABLE, MERCURY, get, post, signed_receipt, user_headers
from test_notifications import note, notified  # noqa: F401 (a fixture)
from test_storekit2_flow import purchase, sk2  # noqa: F401 (a fixture)
from test_subscriber_year import ALICE, MONTHLY, renewal, transaction

UPPER = ALICE.upper()       # what Swift's uuidString gives the app; ALICE is its lower-case form


def test_a_receipt_whose_token_is_the_upper_case_user_is_theirs(service, apple):
    doc = json.loads(CONSUMABLE)
    for t in doc["receipt"]["in_app"]:
        t["app_account_token"] = ALICE
    apple.script("R", "production", json.dumps(doc).encode())
    server = serve(service, "127.0.0.1", 0, retry_every_s=None)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        code, body = post(base + "/receipts", {"receipt": signed_receipt("R")}, headers=user_headers(UPPER))
        assert code == 200 and body["refused"] == [] and MERCURY in body["delivered"], body
        code, body = get(base + f"/users/{UPPER}/entitlements", headers=user_headers(UPPER))
        assert code == 200 and body["user_id"] == ALICE and body["entitlements"], body
        # The same person's lower-case spelling is the same user.
        assert get(base + f"/users/{ALICE}/entitlements", headers=user_headers(UPPER))[0] == 200
    finally:
        server.shutdown()
    assert {d["user_id"] for d in service.ledger.deliveries()} == {ALICE}


def test_a_storekit2_claim_by_the_upper_case_user_is_theirs(sk2, api):  # noqa: F811
    api.add_transaction("Production", purchase("710001", token=ALICE))
    api.add_transaction("Production", purchase("710002", token=ALICE))
    result = sk2.submit_signed_transaction(UPPER, api.signed_transaction("Production", "710001"))
    assert result["status"] == "accepted" and result["delivered"] == ["710001"], result
    result = sk2.submit_transaction(UPPER, "710002")     # an id alone: the token names the sender
    assert result["status"] == "accepted" and result["delivered"] == ["710002"], result


def test_a_notification_reaches_the_upper_case_user(notified):  # noqa: F811
    """The user claims the subscription with their upper-case id; Apple's notification (its token
    lower case) is theirs, not another user's (409), and their entitlements show it."""
    t1 = transaction("1000000000000001", MONTHLY, 0, 0, 30)
    status, body = notified.handle_notification(note("SUBSCRIBED", "INITIAL_BUY", 1, t1, renewal(0)))
    assert (status, body["user_id"]) == (200, ALICE)
    t2 = transaction("1000000000000002", MONTHLY, 30, 30, 60, transactionReason="RENEWAL")
    notified.test_clock["now"] = t2["purchaseDate"] + 60_000
    status, body = notified.handle_notification(note("DID_RENEW", None, 2, t2, renewal(30)))
    assert (status, body["status"], body["user_id"]) == (200, "apply", ALICE), body
    doc = notified.entitlements(UPPER)
    assert doc["user_id"] == ALICE and [e["active"] for e in doc["entitlements"]] == [True]


def test_upper_case_user_ids_stored_before_are_moved_to_lower_case(tmp_path):
    import ledger_schema
    from ledger import Ledger
    released = ledger_schema.MIGRATIONS
    ledger_schema.MIGRATIONS = released[:2]
    try:
        old = Ledger(url="", sqlite_path=str(tmp_path / "p.db"))
        with old.transaction() as db:
            db.execute("INSERT INTO owners VALUES ('1', ?, 'first_claim', 0)", (UPPER,))
            db.execute("INSERT INTO owners VALUES ('2', 'Some-User', 'first_claim', 0)", ())
            db.execute("INSERT INTO orders (order_id, user_id, product_id, created_ms) VALUES ('o', ?, 'p', 0)", (UPPER,))
        old.close()
    finally:
        ledger_schema.MIGRATIONS = released
    new = Ledger(url="", sqlite_path=str(tmp_path / "p.db"))
    with new.transaction() as db:
        assert db.query("SELECT user_id FROM owners ORDER BY 1", ()) == [(ALICE,), ("Some-User",)]
        assert db.query("SELECT user_id FROM orders", ()) == [(ALICE,)]
    new.close()
