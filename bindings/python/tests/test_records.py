"""The typed records: Transaction, RenewalInfo, Notification, AppTransaction, SubscriptionStatus.
Real StoreKit 2 fixtures with docs/examples/sandbox-any-app.json, and API answers signed by the
fake PKI of Tests/shared/fakeapple."""
import dataclasses
import json
import sys
import typing
from collections.abc import Mapping
from pathlib import Path

import pytest

import iapverify
from iapverify import (AppTransaction, Entitlement, EntitlementState, Environment, Notification, NotificationAction,
                       NotificationType, RenewalInfo, SubscriptionStatus, Transaction)

ROOT = Path(__file__).resolve().parents[3]
FAKE = ROOT / "Tests" / "shared" / "fakeapple"
NOW = 1893456000000


@pytest.fixture(scope="module")
def verifier():
    with iapverify.Verifier((ROOT / "docs/examples/sandbox-any-app.json").read_text()) as v:
        yield v


# A notification without signedDate is checked at now (as Apple's verifier does): the day after it.
EARLY_NOW = 1_646_387_008_254 + 86_400_000


def jws(verifier, fixtures, name):
    r = verifier.verify_jws((fixtures / "jws" / name).read_text(), now_ms=EARLY_NOW if "no_signedDate" in name else NOW)
    assert r.valid, r.reason
    return r


def check_hints(record):
    """Every field's value fits its type hint (Optional, Union, enums, list/dict/tuple, nested records)."""
    hints = typing.get_type_hints(type(record))
    for f in dataclasses.fields(record):
        value = getattr(record, f.name)
        assert fits(value, hints[f.name]), (type(record).__name__, f.name, value, hints[f.name])


def fits(value, hint):
    if hint is typing.Any:
        return True
    origin = typing.get_origin(hint)
    if origin is typing.Union:
        return any(fits(value, h) for h in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if origin is not None:
        return isinstance(value, origin)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, hint)


def test_transaction_fields(verifier, fixtures):
    r = jws(verifier, fixtures, "transaction_autorenew_expired_sandbox_2022-11.jws")
    t = r.transaction
    assert isinstance(t, Transaction)
    assert (t.transaction_id, t.original_transaction_id, t.product_id) == ("2000000184445477", "2000000184445477",
                                                                            "Com.VoiceRecording.Telephone.103")
    assert (t.purchase_date_ms, t.expires_date_ms, t.signed_date_ms) == (1666615873000, 1666615993000, 1667559685499)
    assert t.is_in_intro_offer_period is True and t.is_trial_period is False and t.offer_type == 1
    assert t.app_account_token == "207262da-1ac8-4e0a-a399-5aa62a82800f"
    assert t.type == "Auto-Renewable Subscription" and t.subscription_group_identifier == "21024612"
    assert t.environment is Environment.SANDBOX and t.price is None and t.extra == {}
    check_hints(t)


def test_renewal_info_fields(verifier, fixtures):
    i = jws(verifier, fixtures, "renewalinfo_autorenew_off_sandbox_2022-11.jws").renewal_info
    assert isinstance(i, RenewalInfo)
    assert (i.original_transaction_id, i.auto_renew_status, i.expiration_intent) == ("2000000184445477", False, 1)
    assert i.is_in_billing_retry_period is False and i.recent_subscription_start_date_ms == 1667369895000
    assert i.environment is Environment.SANDBOX and i.price_increase_status is None
    check_hints(i)


def test_notification_fields(verifier, fixtures):
    r = jws(verifier, fixtures, "notification_REFUND_sandbox_2025-02a.jws")
    n = r.notification
    assert isinstance(n, Notification) and isinstance(n.transaction, Transaction) and n.renewal_info is None
    assert n.notification_type is NotificationType.REFUND and n.subtype is None
    assert n.action is NotificationAction.APPLY and n.effect == "refunded"
    assert n.notification_uuid == "d562127d-2495-4187-9081-d3a80b50d426" and n.signed_date_ms == 1738826407576
    t = n.transaction
    assert (t.cancellation_date_ms, t.cancellation_reason, t.price, t.currency) == (1738826397000, "0", 4990, "USD")
    assert (t.storefront, t.storefront_id, t.transaction_reason) == ("USA", "143441", "PURCHASE")
    assert (r.notification_type, r.action, r.effect) == (n.notification_type, n.action, n.effect)
    check_hints(n)
    check_hints(t)
    renew = jws(verifier, fixtures, "notification_DID_RENEW_sandbox_2022-03_no_signedDate.jws").notification
    assert isinstance(renew.renewal_info, RenewalInfo) and renew.renewal_info.auto_renew_status is True
    assert renew.signed_date_ms is None
    test = jws(verifier, fixtures, "notification_TEST_sandbox_2022-09.jws").notification
    assert test.notification_type is NotificationType.TEST and test.transaction is None


def test_apple_names(verifier, fixtures):
    n = jws(verifier, fixtures, "notification_DID_RENEW_sandbox_2022-03_no_signedDate.jws").notification
    t, i = n.transaction, n.renewal_info
    assert t.transactionId == t.transaction_id == "2000000004047119"
    assert t.originalTransactionId == "2000000000842607" and t.productId == t.product_id
    assert t.expiresDate == t.expires_date_ms == 1646387196000 and t.purchaseDate == t.purchase_date_ms
    assert t.webOrderLineItemId == "2000000000302832" and t.inAppOwnershipType == "PURCHASED"
    assert t.revocationDate is None and t.signedDate == 1646387008254
    assert i.autoRenewStatus is True and i.autoRenewProductId == "com.audaos.audarecorder.vip.m2"
    assert i.originalTransactionId == t.originalTransactionId and i.signedDate == 1646387008228
    assert n.notificationType == "DID_RENEW" and n.notificationUUID == "469bf30e-7715-4f9f-aae3-a7bfc12aea77"
    with pytest.raises(AttributeError):
        t.transactionID


def test_mapping_access(verifier, fixtures):
    r = jws(verifier, fixtures, "notification_ONE_TIME_CHARGE_sandbox_2025-02.jws")
    n, raw = r.notification, r.raw["notification"]
    assert isinstance(n, Mapping) and isinstance(n.transaction, Mapping)
    assert n["notification_type"] == "ONE_TIME_CHARGE" and type(n["notification_type"]) is str
    assert n["transaction"]["transaction_id"] == "2000000848445242"       # item access: the JSON values
    assert n.get("transaction").get("price") == 990 and n.get("nothing", 7) == 7
    assert list(n) == list(raw) and list(n.keys()) == list(raw) and len(n) == len(raw)
    assert dict(n.items()) == raw and list(n.values()) == list(raw.values()) and dict(n) == raw
    assert "effect" in n and "transactionId" not in n and n == raw
    with pytest.raises(KeyError):
        n["transactionId"]
    t = n.transaction
    assert (t.get("original_transaction_id") or t["transaction_id"]) == "2000000848445242"
    assert {**t} == raw["transaction"]


def test_to_dict_round_trip(verifier, fixtures):
    t = jws(verifier, fixtures, "transaction_autorenew_sandbox_2022-11.jws").transaction
    i = jws(verifier, fixtures, "renewalinfo_autorenew_off_sandbox_2022-11.jws").renewal_info
    d = t.to_dict()
    assert d == jws(verifier, fixtures, "transaction_autorenew_sandbox_2022-11.jws").raw["transaction"]
    d["transaction_id"] = "changed"                                       # a copy: the record is unchanged
    assert t["transaction_id"] == t.transaction_id == "2000000191896422"
    assert Transaction.from_dict(t.to_dict()) == t and RenewalInfo.from_dict(i) == i
    now = 1667390000000
    as_dicts = verifier.compute_entitlements({"transactions": [t.to_dict()], "renewal_info": [i.to_dict()]}, now_ms=now)
    as_records = verifier.compute_entitlements({"transactions": [t], "renewal_info": [i]}, now_ms=now)
    in_options = verifier.compute_entitlements({"transactions": (t,), "renewal_info": []}, now_ms=now,
                                               options={"renewal_info": [i]})
    assert as_records.raw == as_dicts.raw == in_options.raw
    e = as_records.entitlements[0]
    assert e.state is EntitlementState.ACTIVE and e.will_renew is False and e.transaction_id == t.transaction_id
    for e in as_records.entitlements:
        check_hints(e)
        assert isinstance(e, Entitlement)


def test_unknown_members_and_values_are_kept(verifier, fixtures):
    raw = jws(verifier, fixtures, "notification_DID_RENEW_sandbox_2022-03_no_signedDate.jws").raw["notification"]
    newer = {**raw, "notification_type": "SOMETHING_NEW", "future_member": {"a": [1]},
             "transaction": {**raw["transaction"], "environment": "LocalTesting", "new_field": 5}}
    n = Notification.from_dict(newer)
    assert n.notification_type == "SOMETHING_NEW" and type(n.notification_type) is str
    assert n.extra == {"future_member": {"a": [1]}} and n["future_member"] == {"a": [1]}
    assert n.transaction.extra == {"new_field": 5} and n.transaction.environment == "LocalTesting"
    assert n.to_dict() == newer and n.transaction.to_dict() == newer["transaction"]
    r = verifier.compute_entitlements({"transactions": [n.transaction], "renewal_info": [n.renewal_info]}, now_ms=NOW)
    assert r.valid and r.entitlements[0].transaction_id == "2000000004047119"
    # A record built by hand writes the members it has; a missing one takes its default.
    hand = Transaction(transaction_id="1", product_id="p", purchase_date_ms=1, extra={"note": "x"})
    assert hand["transaction_id"] == "1" and hand["quantity"] == 1 and hand["note"] == "x" and "price" not in hand
    assert Transaction.from_dict({"transaction_id": "2"}).product_id is None


def test_records_are_frozen(verifier, fixtures):
    n = jws(verifier, fixtures, "notification_DID_RENEW_sandbox_2022-03_no_signedDate.jws").notification
    for record, name in ((n, "notification_type"), (n.transaction, "expires_date_ms"), (n.transaction, "expiresDate"),
                         (n.renewal_info, "auto_renew_status"), (n.transaction, "anything_new")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(record, name, None)
    with pytest.raises(TypeError):
        n["effect"] = "x"
    later = dataclasses.replace(n.transaction, expires_date_ms=1)
    assert later["expires_date_ms"] == 1 and n.transaction["expires_date_ms"] == 1646387196000
    assert hash(n.transaction) == hash(Transaction.from_dict(n.transaction.to_dict()))
    assert len({n.transaction, Transaction.from_dict(n.transaction.to_dict())}) == 1


def test_api_result_records():
    sys.path.insert(0, str(FAKE))
    from fakeapi import sign_jws, sign_notification
    signed = 1767225600000
    app = {"bundleId": "com.example.fake", "receiptType": "Production", "appAppleId": 1234567890,
           "applicationVersion": "3", "originalApplicationVersion": "1", "originalPurchaseDate": signed - 1000,
           "signedDate": signed, "appTransactionId": "7", "originalPlatform": "iOS", "somethingNew": True}
    txn = {"transactionId": "9001", "originalTransactionId": "9000", "bundleId": "com.example.fake", "productId": "pro.monthly",
           "purchaseDate": signed - 1000, "originalPurchaseDate": signed - 1000, "expiresDate": signed + 86400000,
           "quantity": 1, "type": "Auto-Renewable Subscription", "inAppOwnershipType": "PURCHASED", "signedDate": signed,
           "environment": "Production", "subscriptionGroupIdentifier": "group.pro"}
    renewal = {"originalTransactionId": "9000", "autoRenewProductId": "pro.monthly", "productId": "pro.monthly",
               "autoRenewStatus": 1, "signedDate": signed, "environment": "Production"}
    statuses = {"environment": "Production", "bundleId": "com.example.fake", "appAppleId": 1234567890,
                "data": [{"subscriptionGroupIdentifier": "group.pro", "lastTransactions": [
                    {"originalTransactionId": "9000", "status": 1, "signedTransactionInfo": sign_jws(txn),
                     "signedRenewalInfo": sign_jws(renewal)}]}]}
    history = {"hasMore": False, "notificationHistory": [{"signedPayload": sign_notification(
        "DID_RENEW", uuid="00000000-0000-4000-8000-000000000009", signed_date=signed, transaction=txn, renewal=renewal)}]}
    with iapverify.Verifier((FAKE / "verifier.json").read_text()) as v:
        def ask(endpoint, body):
            r = v.interpret_api_response(json.dumps(body), endpoint=endpoint, http_status=200, now_ms=signed)
            assert r.valid, r.reason
            return r

        a = ask("app_transaction_info", {"signedAppTransactionInfo": sign_jws(app)}).app_transaction
        assert isinstance(a, AppTransaction) and a.receipt_type is Environment.PRODUCTION and a.app_apple_id == 1234567890
        assert (a.bundle_id, a.application_version, a.original_purchase_date_ms) == ("com.example.fake", "3", signed - 1000)
        assert a.appAppleId == a["appAppleId"] == 1234567890 and a.extra == {"somethingNew": True}
        check_hints(a)

        r = ask("subscription_statuses", statuses)
        s = r.subscription_statuses[0]
        assert isinstance(s, SubscriptionStatus) and (s.original_transaction_id, s.apple_status, s.apple_state) == ("9000", 1, "active")
        assert s.engine_state is EntitlementState.ACTIVE and s.agrees is True and s.originalTransactionId == "9000"
        assert r.status_disagreements == [] and s["agrees"] is True
        assert [type(x) for x in r.transactions + r.renewal_info] == [Transaction, RenewalInfo]
        assert r.transactions[0].transactionId == "9001" and r.renewal_info[0].autoRenewStatus is True
        check_hints(s)

        r = ask("notification_history", history)
        n = r.notifications[0]
        assert isinstance(n, Notification) and n.notification_type is NotificationType.DID_RENEW
        assert n.notificationUUID == "00000000-0000-4000-8000-000000000009" and n.transaction is None
        assert r.transactions[0]["transaction_id"] == "9001"
        check_hints(n)
        # the options' renewal_info takes records too
        r = v.interpret_api_response(b"", endpoint="finish_transaction", http_status=200, now_ms=signed,
                                     options={"renewal_info": [r.renewal_info[0]]})
        assert r.valid


def test_receipt_and_response_in_app_have_one_shape(verifier, fixtures):
    receipt = verifier.verify_receipt((fixtures / "receipts" / "sandbox_2020-07-22_com.revenuecat.sampleapp.der").read_bytes(),
                                      now_ms=NOW)
    body = {"status": 0, "environment": "Sandbox",
            "receipt": {"bundle_id": "x", "in_app": [{"transaction_id": "7", "product_id": "p", "purchase_date_ms": "1000"}]}}
    response = verifier.interpret_response(body, endpoint="sandbox", now_ms=2000)
    assert receipt.in_app and len(response.in_app) == 1
    for t in receipt.in_app + response.in_app:
        assert isinstance(t, Transaction) and isinstance(t.transaction_id, str) and t.quantity >= 1
        check_hints(t)
    extras = {"product_type", "unknown_attributes"}
    assert set(receipt.in_app[0].keys()) - extras == set(response.in_app[0].keys())
    assert list(receipt.raw["receipt"]["in_app"][0])[:16] == list(response.raw["receipt"]["in_app"][0])
    assert receipt.in_app[0].is_upgraded is False and receipt.in_app[0].in_app_ownership_type is None
