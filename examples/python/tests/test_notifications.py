"""POST /apple/notifications and the jobs around it, on SQLite and PostgreSQL: hostile payloads
change nothing; a CONSUMPTION_REQUEST is answered through the queue; a subscription past its
renewal with no news is asked about; 50 notifications for one subscriber posted at once to two
fronts (with two workers running) leave one state, the oracle's."""
from __future__ import annotations

import base64
import datetime
import json
import sys
import uuid

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.x509.oid import NameOID

import iapverify
from service import PurchaseService, entitlement_view, serve
from support import ROOT, Cluster, concurrently, get, post, user_headers, wait_for
from test_subscriber_year import (ALICE, BOB, CATALOG, COIN, COINS, DAY, FAKE_DIR, MONTHLY, SUB, T0, config, renewal,
                                  transaction)

sys.path.insert(0, str(FAKE_DIR))
from fakeapi import FakeAppleAPI, b64url, sign_jws, sign_notification, tamper  # noqa: E402

NOW = T0 + 60_000



@pytest.fixture
def notified(ledger, api):
    """A service with the StoreKit 2 signer, on the test's clock."""
    clock = {"now": NOW}
    service = PurchaseService(config(), ledger, clock=lambda: clock["now"],
                              signer_config=json.loads((FAKE_DIR / "signer.json").read_text()),
                              api_base_url={"Production": api.base_url, "Sandbox": api.sandbox_url})
    service.test_clock = clock
    return service


def note(kind: str, subtype, n: int, txn=None, ren=None, **kw) -> str:
    return sign_notification(kind, subtype, uuid=str(uuid.uuid5(uuid.NAMESPACE_URL, f"n/{kind}/{n}")),
                             signed_date=T0 + n * 1000, transaction=txn, renewal=ren, fixtures_dir=FAKE_DIR, **kw)


def snapshot(ledger) -> dict:
    with ledger.transaction() as db:
        return {t: db.query(f"SELECT * FROM {t} ORDER BY 1, 2", ())
                for t in ("owners", "statements", "subscriptions", "notifications", "deliveries", "verification_jobs")}


def untrusted_chain_jws(payload: dict) -> str:
    """A JWS shaped like Apple's (ES256, x5c of three) from a throwaway CA nobody trusts."""
    now = datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc)
    keys = [ec.generate_private_key(ec.SECP384R1()), ec.generate_private_key(ec.SECP256R1()),
            ec.generate_private_key(ec.SECP256R1())]
    names = [x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, n)]) for n in
             ("Apple Root CA - G3", "Apple Worldwide Developer Relations Certification Authority", "Prod ECC leaf")]
    certs = []
    for i in range(3):
        issuer = names[max(i - 1, 0)]
        builder = (x509.CertificateBuilder().subject_name(names[i]).issuer_name(issuer).public_key(keys[i].public_key())
                   .serial_number(i + 1).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=3650))
                   .add_extension(x509.BasicConstraints(ca=i < 2, path_length=None), critical=True))
        certs.append(builder.sign(keys[max(i - 1, 0)], hashes.SHA384() if i < 2 else hashes.SHA256()))
    header = {"alg": "ES256", "x5c": [base64.b64encode(c.public_bytes(serialization.Encoding.DER)).decode()
                                      for c in reversed(certs)]}
    signing_input = b64url(json.dumps(header).encode()) + "." + b64url(json.dumps(payload).encode())
    r, s = decode_dss_signature(keys[2].sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
    return signing_input + "." + b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big"))


def test_hostile_notifications_change_nothing(notified):
    t1 = transaction("1000000000000001", MONTHLY, 0, 0, 30)
    status, body = notified.handle_notification(note("SUBSCRIBED", "INITIAL_BUY", 1, t1, renewal(0)))
    assert (status, body["status"], body["user_id"]) == (200, "apply", ALICE)
    before = snapshot(notified.ledger)

    genuine = note("DID_RENEW", None, 2, transaction("1000000000000002", MONTHLY, 30, 30, 60))
    forged = tamper(genuine, notificationType="REFUND")
    foreign = note("DID_RENEW", None, 3, dict(transaction("1000000000000003", MONTHLY, 30, 30, 60),
                                              bundleId="com.other.app"), bundle_id="com.other.app")
    untrusted = untrusted_chain_jws({"notificationType": "DID_RENEW", "notificationUUID": str(uuid.uuid4()),
                                     "signedDate": T0 + 4000, "version": "2.0",
                                     "data": {"bundleId": "com.example.fake", "environment": "Production"}})
    not_a_notification = sign_jws(transaction("1000000000000004", MONTHLY, 30, 30, 60), FAKE_DIR)
    someone_else = note("DID_RENEW", None, 5, transaction("1000000000000005", MONTHLY, 30, 30, 60,
                                                          token="11111111-2222-4333-8444-555555555555"))
    answers = {name: notified.handle_notification(payload) for name, payload in [
        ("forged", forged), ("foreign", foreign), ("untrusted", untrusted), ("transaction", not_a_notification),
        ("someone_else", someone_else)]}

    assert {k: (s, b["verdict"]) for k, (s, b) in answers.items()} == {
        "forged": (400, "signature_invalid"), "foreign": (400, "bundle_mismatch"),
        "untrusted": (400, "untrusted_chain"), "transaction": (400, "malformed"),
        "someone_else": (409, "owned_by_another_user")}
    assert snapshot(notified.ledger) == before
    # Over HTTP: the same 4xx, and a body that is not a notification request at all is 422.
    server = serve(notified, "127.0.0.1", 0, retry_every_s=None)
    url = f"http://127.0.0.1:{server.server_address[1]}/apple/notifications"
    try:
        assert post(url, {"signedPayload": forged})[0] == 400
        assert post(url, {"signedPayload": someone_else})[0] == 409
        assert post(url, {"payload": genuine})[0] == 422
        assert post(url, {"signedPayload": 7})[0] == 422
    finally:
        server.shutdown()
    assert snapshot(notified.ledger) == before


def test_a_consumption_request_is_answered_through_the_queue(notified, api):
    coins = transaction(COIN, COINS, 1, 1, original=COIN)
    assert notified.handle_notification(note("ONE_TIME_CHARGE", None, 1, coins))[1]["delivered"] == [COIN]
    status, body = notified.handle_notification(note("CONSUMPTION_REQUEST", None, 2, dict(coins, signedDate=T0 + 2000)))
    assert (status, body["status"]) == (200, "send_consumption_info")
    [job] = notified.ledger.jobs()
    assert job["environment"] == "Production" and api.consumption == []
    assert notified.retry_pending() == [{"status": "sent", "transaction_id": COIN}]
    assert api.consumption == [("Production", COIN, {"customerConsented": True, "sampleContentProvided": False,
                                                      "deliveryStatus": "DELIVERED"})]
    assert notified.ledger.pending_count() == 0
    # Apple sends it again: a duplicate, nothing queued twice.
    assert notified.handle_notification(note("CONSUMPTION_REQUEST", None, 2, dict(coins, signedDate=T0 + 2000)))[1][
        "status"] == "ignore_duplicate"
    assert notified.ledger.pending_count() == 0


def test_a_subscription_past_its_renewal_with_no_news_is_asked_about(notified, api):
    t1 = transaction("1000000000000001", MONTHLY, 0, 0, 30)
    notified.handle_notification(note("SUBSCRIBED", "INITIAL_BUY", 1, t1, renewal(0)))
    notified.ensure_recovery_jobs()
    assert {r["status"] for r in notified.retry_pending()} == {"recovered"}     # nothing to recover yet
    # The renewal happened at Apple; its notification never came and is not in the history.
    t2 = transaction("1000000000000002", MONTHLY, 30, 30, 60, transactionReason="RENEWAL")
    api.add_transaction("Production", t1)
    api.add_transaction("Production", t2)
    api.set_renewal("Production", renewal(30), status=1)
    notified.test_clock["now"] = T0 + 30 * DAY + 30 * 60_000                  # renewal due 30 min ago: not yet
    assert [r["statuses"] for r in notified.retry_pending()] == [0, 0]
    assert notified.entitlements(ALICE)["entitlements"][0]["state"] == "expired"
    notified.test_clock["now"] = T0 + 30 * DAY + 2 * 3_600_000                # the next run; 2 h overdue
    results = notified.retry_pending()
    assert sorted(r["statuses"] for r in results) == [0, 1], results
    [pro] = notified.entitlements(ALICE)["entitlements"]
    assert (pro["state"], pro["active"], pro["expires_date_ms"]) == ("active", True, T0 + 60 * DAY)
    assert sum("/inApps/v1/subscriptions/" in target for _, _, target in api.requests) == 1


def test_50_notifications_at_once_on_two_fronts_and_two_workers(tmp_path, api, pg_url):
    """One subscriber, 50 renewals (and copies) posted together: every answer 200, one state."""
    (tmp_path / "config.json").write_text(json.dumps(config()))
    cluster = Cluster(tmp_path, "http://127.0.0.1:9", pg_url, start_ms=T0 + 100 * 30 * DAY)
    cluster.env.update(APPLE_API_KEY_FILE=str(FAKE_DIR / "signer.json"),
                       APPLE_API_BASE_URL=json.dumps({"Production": api.base_url, "Sandbox": api.sandbox_url}))
    try:
        fronts = [cluster.front("--config", str(tmp_path / "config.json")) for _ in range(2)]
        for _ in range(2):
            cluster.worker("--config", str(tmp_path / "config.json"))
        payloads = [note("DID_RENEW", None, 10 + i,
                         transaction(f"10000000000001{i:02}", MONTHLY, 30 * i, 30 * i, 30 * (i + 1)),
                         renewal(30 * i)) for i in range(50)]
        sends = payloads + payloads[::5]                  # every fifth one twice
        results = concurrently(len(sends), lambda i: post(fronts[i % 2] + "/apple/notifications",
                                                         {"signedPayload": sends[i]}))
        assert {status for status, _ in results} == {200}, [r for r in results if r[0] != 200][:3]
        assert sorted(b["status"] for _, b in results).count("ignore_duplicate") >= 10
        oracle = iapverify.Verifier(config())
        statements = {"transactions": [], "renewal_info": []}
        for p in payloads:
            n = oracle.verify_jws(p, now_ms=cluster.now).notification
            statements["transactions"].append(n["transaction"])
            statements["renewal_info"].append(n["renewal_info"])
        expected = [entitlement_view(e) for e in
                    oracle.compute_entitlements(statements, now_ms=cluster.now).raw["entitlements"]]
        status, body = get(fronts[0] + f"/users/{ALICE}/entitlements", headers=user_headers(ALICE))
        assert status == 200 and body["entitlements"] == expected
        assert body["entitlements"][0]["expires_date_ms"] == T0 + 50 * 30 * DAY
        from ledger import Ledger
        view = Ledger(url=pg_url)
        try:
            counts = view.table_counts()
            assert (counts["notifications"], counts["statements"], counts["owners"]) == (50, 51, 1)
            with view.transaction() as db:
                assert view.subscription(db, SUB)["last_signed_date_ms"] == T0 + 59 * 1000
        finally:
            view.close()
    except BaseException:
        print(cluster.log_text())
        raise
    finally:
        cluster.stop()


def test_bob_cannot_take_alices_storekit2_purchase(notified, api):
    """The defect this replaces: any user could claim a transaction by posting its id."""
    t1 = transaction("1000000000000001", MONTHLY, 0, 0, 30)
    api.add_transaction("Production", t1)
    assert notified.submit_transaction(BOB, "1000000000000001") == {
        "status": "rejected", "verdict": "owned_by_another_user", "reason": "every purchase in it belongs to another user"}
    assert notified.submit_transaction(ALICE, "1000000000000001")["entitlements"] == {"pro": True}
    assert notified.entitlements(BOB)["entitlements"][0]["active"] is False
