#!/usr/bin/env python3
"""Writes the seeds of the `api` and `apicall` fuzz targets (Fuzz/seeds/api, Fuzz/seeds/apicall)
and the benchmark's transaction_history page (Benchmarks/api/transaction_history_20.json).

Answers are shaped like the App Store Server API's and signed with the fake Apple-shaped PKI in
Tests/shared/fakeapple (leaf.key.pem, x5c = leaf, WWDR, root), so the fuzzer starts from bodies
whose every signed item verifies. The `api` input layout is described in
Sources/iapverify-fuzz/APIHarness.swift. ECDSA signatures are randomised: rerunning this changes
the bytes, not the meaning. The outputs are committed; tests never run this.
"""
import base64
import json
import os
import shutil
import struct

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
PKI = os.path.join(ROOT, "Tests", "shared", "fakeapple")
BUNDLE = "com.example.fake"
NOW = 1_893_456_000_000          # Harness.now: 2030-01-01
DAY = 86_400_000
SIGNED = NOW - 5 * DAY

ENDPOINTS = ["transaction_info", "transaction_history", "subscription_statuses", "order_lookup", "refund_history",
             "app_transaction_info", "consumption_info", "set_app_account_token", "extend_renewal_date",
             "mass_extend_renewal_date", "mass_extend_status", "notification_history", "test_notification",
             "test_notification_status", "finish_transaction"]
STATUSES = [200, 200, 200, 200, 201, 204, 400, 401, 404, 429, 500, 503, 302, 100, 599, 299]
# Indexes into APIHarness.retryAfters; 15 = the seed's own text.
RA = {"none": 0, "empty": 1, "zero": 2, "in_1s": 3, "now": 4, "past": 5, "18_digits": 6, "19_digits": 7,
      "padded": 8, "seconds": 9, "http_date": 10, "negative": 11, "fraction": 12, "control": 13, "long": 14}


def read(name):
    with open(os.path.join(PKI, name), "rb") as f:
        return f.read()


leaf_key = serialization.load_pem_private_key(read("leaf.key.pem"), None)
chain = [x509.load_pem_x509_certificate(read(n)) for n in ("leaf.pem", "wwdr.pem", "root.pem")]
X5C = [base64.b64encode(c.public_bytes(serialization.Encoding.DER)).decode() for c in chain]
stranger = ec.generate_private_key(ec.SECP256R1())


def b64u(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def sign(payload, key=None, header=None):
    head = b64u(json.dumps(header or {"alg": "ES256", "x5c": X5C}, separators=(",", ":")).encode())
    body = b64u(json.dumps(payload, separators=(",", ":")).encode())
    der = (key or leaf_key).sign(f"{head}.{body}".encode(), ec.ECDSA(hashes.SHA256()))
    r, s = decode_dss_signature(der)
    return f"{head}.{body}.{b64u(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"


def txn(tid, env="Production", product="pro.monthly", original="1000", purchase=SIGNED - DAY, expires=SIGNED + 29 * DAY,
        kind="Auto-Renewable Subscription", **extra):
    p = {"transactionId": tid, "originalTransactionId": original, "webOrderLineItemId": f"w{tid}", "bundleId": BUNDLE,
         "productId": product, "subscriptionGroupIdentifier": "g1", "purchaseDate": purchase,
         "originalPurchaseDate": SIGNED - 40 * DAY, "expiresDate": expires, "quantity": 1, "type": kind,
         "inAppOwnershipType": "PURCHASED", "signedDate": SIGNED, "environment": env, "transactionReason": "PURCHASE",
         "storefront": "USA", "storefrontId": "143441", "price": 4990, "currency": "USD"}
    if expires is None:
        del p["expiresDate"]
    p.update(extra)
    return p


def renewal(original="1000", env="Production", **extra):
    p = {"originalTransactionId": original, "autoRenewProductId": "pro.monthly", "productId": "pro.monthly",
         "autoRenewStatus": 1, "signedDate": SIGNED, "environment": env, "recentSubscriptionStartDate": SIGNED - 40 * DAY,
         "renewalDate": SIGNED + 29 * DAY}
    p.update(extra)
    return p


def notification(kind, env="Production", subtype=None, t=None, r=None, uuid="00000000-0000-4000-8000-000000000001"):
    data = {"bundleId": BUNDLE, "environment": env, "appAppleId": 1234}
    if t:
        data["signedTransactionInfo"] = sign(t)
    if r:
        data["signedRenewalInfo"] = sign(r)
    p = {"notificationType": kind, "notificationUUID": uuid, "version": "2.0", "signedDate": SIGNED, "data": data}
    if subtype:
        p["subtype"] = subtype
    return p


def history(n, env="Production", more=False, first=1001):
    items = [sign(txn(str(first + i), env=env, product="pro.monthly" if i % 3 else "coins.100",
                      kind="Auto-Renewable Subscription" if i % 3 else "Consumable",
                      expires=SIGNED + (29 - i) * DAY if i % 3 else None,
                      original="1000" if i % 3 else str(first + i))) for i in range(n)]
    return {"revision": "rev-" + str(first + n), "bundleId": BUNDLE, "appAppleId": 1234, "environment": env,
            "hasMore": more, "signedTransactions": items}


def table(endpoint, status=200, sandbox=False, attempt=1, retry="none", own_retry=None):
    flags = (1 if sandbox else 0) | (attempt - 1) << 1 | (15 if own_retry is not None else RA[retry]) << 4
    head = bytes([ENDPOINTS.index(endpoint), STATUSES.index(status), flags])
    if own_retry is not None:
        text = own_retry.encode()
        head += bytes([len(text)]) + text
    return head


def with_options(options):
    text = json.dumps(options, separators=(",", ":")).encode()
    return b"\xff" + struct.pack(">H", len(text)) + text


def body(obj):
    return obj if isinstance(obj, bytes) else json.dumps(obj, separators=(",", ":")).encode()


api = {}


def seed(name, head, content=b""):
    api[name] = head + body(content)


# 200 answers, every signed kind.
seed("transaction_info", table("transaction_info"), {"signedTransactionInfo": sign(txn("1001"))})
seed("transaction_info_sandbox", table("transaction_info", sandbox=True), {"signedTransactionInfo": sign(txn("1001", env="Sandbox"))})
seed("history_page_more", table("transaction_history"), history(3, more=True))
seed("history_page_last", table("transaction_history"), history(4, more=False, first=2001))
seed("history_page_20", table("transaction_history"), history(20))
seed("history_sandbox", table("transaction_history", sandbox=True), history(2, env="Sandbox", more=True))
seed("history_empty", table("transaction_history"), {"revision": "r", "hasMore": False, "signedTransactions": [],
                                                       "bundleId": BUNDLE, "environment": "Production"})
seed("history_201", table("transaction_history", status=201), history(1))
seed("refund_history", table("refund_history"),
     {"hasMore": True, "revision": "rev-9", "signedTransactions": [sign(txn("1001", revocationDate=SIGNED, revocationReason=1))]})
seed("order_lookup_valid", table("order_lookup"), {"status": 0, "signedTransactions": [sign(txn("1001")), sign(txn("1002", original="1002",
     product="lifetime", kind="Non-Consumable", expires=None))]})
seed("order_lookup_invalid", table("order_lookup"), {"status": 1})
statuses = []
for s, extra_t, extra_r in [(1, {}, {}), (2, {"expiresDate": SIGNED - DAY}, {"autoRenewStatus": 0, "expirationIntent": 1}),
                            (3, {"expiresDate": SIGNED - DAY}, {"isInBillingRetryPeriod": True}),
                            (4, {"expiresDate": NOW - DAY}, {"isInBillingRetryPeriod": True, "gracePeriodExpiresDate": NOW + 5 * DAY}),
                            (5, {"revocationDate": SIGNED, "revocationReason": 0}, {})]:
    original = str(5000 + s)
    statuses.append({"status": s, "originalTransactionId": original,
                     "signedTransactionInfo": sign(txn(str(6000 + s), original=original, **extra_t)),
                     "signedRenewalInfo": sign(renewal(original=original, **extra_r))})
seed("subscription_statuses", table("subscription_statuses"),
     {"environment": "Production", "bundleId": BUNDLE, "appAppleId": 1234,
      "data": [{"subscriptionGroupIdentifier": "g1", "lastTransactions": statuses[:3]},
               {"subscriptionGroupIdentifier": "g2", "lastTransactions": statuses[3:]}]})
seed("subscription_statuses_no_renewal", table("subscription_statuses"),
     {"data": [{"subscriptionGroupIdentifier": "g1", "lastTransactions": [
         {"status": 1, "originalTransactionId": "1000", "signedTransactionInfo": sign(txn("1001"))}]}]})
seed("subscription_statuses_mismatch", table("subscription_statuses"),
     {"data": [{"subscriptionGroupIdentifier": "g1", "lastTransactions": [
         {"status": 1, "originalTransactionId": "9999", "signedTransactionInfo": sign(txn("1001"))}]}]})
app_txn = {"receiptType": "Production", "environment": "Production", "bundleId": BUNDLE, "appAppleId": 1234,
           "applicationVersion": "3", "originalApplicationVersion": "1", "receiptCreationDate": SIGNED,
           "originalPurchaseDate": SIGNED - 90 * DAY, "signedDate": SIGNED, "deviceVerification": "AAAA",
           "deviceVerificationNonce": "00000000-0000-4000-8000-000000000009", "appTransactionId": "7000"}
seed("app_transaction", table("app_transaction_info"), {"signedAppTransactionInfo": sign(app_txn)})
seed("app_transaction_sandbox", table("app_transaction_info", sandbox=True),
     {"signedAppTransactionInfo": sign({**app_txn, "receiptType": "Sandbox", "environment": "Sandbox"})})
seed("notification_history", table("notification_history"),
     {"hasMore": True, "paginationToken": "token-2",
      "notificationHistory": [
          {"signedPayload": sign(notification("SUBSCRIBED", subtype="INITIAL_BUY", t=txn("1001"), r=renewal())),
           "sendAttempts": [{"attemptDate": SIGNED, "sendAttemptResult": "SUCCESS"}]},
          {"signedPayload": sign(notification("DID_RENEW", t=txn("1002", purchase=SIGNED), r=renewal(),
                                              uuid="00000000-0000-4000-8000-000000000002"))},
          {"signedPayload": sign(notification("REFUND", t=txn("1003", product="coins.100", kind="Consumable", expires=None,
                                                              original="1003", revocationDate=SIGNED, revocationReason=1),
                                              uuid="00000000-0000-4000-8000-000000000003"))}]})
seed("notification_history_last", table("notification_history"), {"hasMore": False, "notificationHistory": []})
seed("test_notification", table("test_notification"), {"testNotificationToken": "5d2e4b1a-test_1700000000"})
seed("test_notification_status", table("test_notification_status"),
     {"signedPayload": sign(notification("TEST")), "sendAttempts": [{"attemptDate": SIGNED, "sendAttemptResult": "SUCCESS"}]})
seed("extend_renewal_date", table("extend_renewal_date"),
     {"originalTransactionId": "1000", "webOrderLineItemId": "w1001", "success": True, "effectiveDate": SIGNED + 40 * DAY})
seed("mass_extend", table("mass_extend_renewal_date"), {"requestIdentifier": "e5c1b9d4-8a0f-4c6e-9d2b-7f3a1c5e8b20"})
seed("mass_extend_status", table("mass_extend_status"),
     {"requestIdentifier": "e5c1b9d4-8a0f-4c6e-9d2b-7f3a1c5e8b20", "complete": True, "completeDate": SIGNED,
      "succeededCount": 30, "failedCount": 2})
seed("consumption_empty", table("consumption_info", status=204))
seed("set_token_empty_object", table("set_app_account_token"), b"{}")
seed("finish_transaction", table("finish_transaction"))

# Bodies that must not be trusted.
good = sign(txn("1001"))
h, p, s = good.split(".")
seed("tampered_payload", table("transaction_info"),
     {"signedTransactionInfo": f"{h}.{b64u(json.dumps(txn('1001', expires=NOW + 900 * DAY)).encode())}.{s}"})
seed("stranger_key", table("transaction_history"), {**history(2), "signedTransactions": [good, sign(txn("1002"), key=stranger)]})
seed("sandbox_item_from_production", table("transaction_history"),
     {"hasMore": False, "signedTransactions": [good, sign(txn("1002", env="Sandbox"))]})
seed("wrong_bundle", table("transaction_history"), {"hasMore": False, "signedTransactions": [sign(txn("1001", bundleId="com.example.other"))]})
seed("body_wrong_bundle", table("transaction_history"), {**history(1), "bundleId": "com.example.other"})
seed("body_wrong_environment", table("transaction_history"), {**history(1), "environment": "Sandbox"})
seed("renewal_as_transaction", table("transaction_info"), {"signedTransactionInfo": sign(renewal())})
seed("alg_none", table("transaction_info"), {"signedTransactionInfo": sign(txn("1001"), header={"alg": "none", "x5c": X5C})})
seed("more_without_revision", table("transaction_history"), {"hasMore": True, "signedTransactions": [good]})
seed("more_not_bool", table("transaction_history"), {"hasMore": "yes", "revision": "r", "signedTransactions": [good]})
seed("items_not_array", table("transaction_history"), {"hasMore": False, "signedTransactions": good})
seed("item_not_string", table("transaction_history"), {"hasMore": False, "signedTransactions": [1001]})
seed("wrong_shape", table("subscription_statuses"), history(1))
seed("not_object", table("transaction_history"), b"[1,2,3]")
seed("truncated", table("transaction_history"), body(history(2))[:700])
seed("garbage", table("transaction_history"), bytes(range(256)))
seed("empty_200", table("transaction_history"))
seed("content_for_empty_endpoint", table("finish_transaction"), {"status": "ok"})
seed("deep_unsigned", table("test_notification"), b'{"testNotificationToken":"t","x":' + b"[" * 40 + b"]" * 40 + b"}")

# Error answers: Apple's error codes, Retry-After texts, attempts.
err = lambda code, msg: {"errorCode": code, "errorMessage": msg}
seed("400_invalid_id", table("transaction_info", status=400), err(4000006, "Invalid transaction id."))
seed("401_empty", table("transaction_history", status=401))
seed("404_unknown_production", table("transaction_history", status=404), err(4040010, "Transaction id not found."))
seed("404_unknown_sandbox", table("transaction_history", status=404, sandbox=True), err(4040010, "Transaction id not found."))
seed("404_retryable", table("transaction_info", status=404), err(4040002, "Account not found. Please try again."))
seed("404_original_not_found", table("subscription_statuses", status=404), err(4040005, "Original transaction id not found."))
for name, idx in RA.items():
    seed(f"429_retry_{name}", table("transaction_history", status=429, attempt=1 + idx % 5, retry=name), err(4290000, "Rate limit exceeded."))
seed("429_own_retry_text", table("notification_history", status=429, own_retry="1893456002500"), b"")
seed("429_own_retry_unicode", table("notification_history", status=429, own_retry="\u00e9t\u00e9 \u2603"), b"{}")
seed("429_attempt_8", table("transaction_history", status=429, attempt=8, retry="in_1s"))
seed("500_general", table("transaction_history", status=500), err(5000000, "An unknown error occurred."))
seed("503_retryable", table("subscription_statuses", status=503, attempt=4), err(5000001, "An unknown error occurred. Please try again."))
seed("302_redirect", table("transaction_history", status=302), b"<html>moved</html>")
seed("100_continue", table("transaction_history", status=100))
seed("599", table("transaction_history", status=599), err(1, "x"))
seed("error_body_garbage", table("transaction_info", status=400), b"\x00\xff{\"errorCode\":")
seed("error_code_float", table("transaction_info", status=404), b'{"errorCode":4040010.0,"errorMessage":null}')
seed("error_message_long", table("transaction_info", status=400), err(4000000, "m" * 2000))

# Options given as JSON (the host's own options, with orders and renewal infos).
seed("options_history", with_options({"endpoint": "transaction_history", "environment": "production", "http_status": 200,
                                      "attempt": 1, "delivered_transaction_ids": ["1001", "1002"],
                                      "orders": [{"order_id": "o1", "product_id": "coins.100", "created_ms": SIGNED}]}),
     history(3))
seed("options_statuses_sandbox", with_options({"endpoint": "subscription_statuses", "environment": "sandbox", "http_status": 200}),
     {"data": [{"subscriptionGroupIdentifier": "g1", "lastTransactions": [
         {"status": 1, "originalTransactionId": "1000", "signedTransactionInfo": sign(txn("1001", env="Sandbox")),
          "signedRenewalInfo": sign(renewal(env="Sandbox"))}]}]})
seed("options_429", with_options({"endpoint": "transaction_info", "http_status": 429, "retry_after": "1893456003000", "attempt": 2}))
seed("options_missing_status", with_options({"endpoint": "transaction_info"}), {"signedTransactionInfo": good})
seed("options_general_key", with_options({"endpoint": "transaction_info", "http_status": 200, "device_id": "x"}))

# apicall: call descriptions.
calls = {
    "transaction_info": {"endpoint": "transaction_info", "transaction_id": "2000000123456789"},
    "history_query": {"endpoint": "transaction_history", "environment": "sandbox", "transaction_id": "1000", "revision": "rev-5",
                      "query": {"sort": "DESCENDING", "productType": ["AUTO_RENEWABLE", "CONSUMABLE"], "productId": ["pro.monthly", "a b&c"],
                                "startDate": 1, "endDate": NOW, "revoked": False, "inAppOwnershipType": "PURCHASED",
                                "subscriptionGroupIdentifier": "g1"}},
    "statuses": {"endpoint": "subscription_statuses", "transaction_id": "1000", "query": {"status": [1, 2, 5]}},
    "order_lookup": {"endpoint": "order_lookup", "order_id": "MK5TTTVWJH"},
    "refund_history": {"endpoint": "refund_history", "transaction_id": "1000", "revision": "r"},
    "app_transaction": {"endpoint": "app_transaction_info", "transaction_id": "1000", "token_lifetime_seconds": 60},
    "consumption": {"endpoint": "consumption_info", "transaction_id": "1000",
                    "body": {"customerConsented": True, "sampleContentProvided": False, "deliveryStatus": "DELIVERED",
                             "consumptionPercentage": 50000, "refundPreference": "DECLINE"}},
    "set_token": {"endpoint": "set_app_account_token", "original_transaction_id": "1000",
                  "body": {"appAccountToken": "7e3fb20b-4cdb-47cc-936d-99d65f608138"}},
    "extend": {"endpoint": "extend_renewal_date", "original_transaction_id": "1000",
               "body": {"extendByDays": 7, "extendReasonCode": 1, "requestIdentifier": "req-1"}},
    "mass_extend": {"endpoint": "mass_extend_renewal_date",
                    "body": {"extendByDays": 30, "extendReasonCode": 3, "requestIdentifier": "r", "productId": "pro.monthly",
                             "storefrontCountryCodes": ["USA", "FRA"]}},
    "mass_extend_status": {"endpoint": "mass_extend_status", "product_id": "pro.monthly", "request_identifier": "r-1"},
    "notification_history": {"endpoint": "notification_history", "pagination_token": "tok+/=",
                             "body": {"startDate": 1, "endDate": NOW, "notificationType": "DID_RENEW", "onlyFailures": True}},
    "test_notification": {"endpoint": "test_notification"},
    "test_status": {"endpoint": "test_notification_status", "test_notification_token": "abc_1700000000"},
    "finish": {"endpoint": "finish_transaction", "transaction_id": "1000"},
    "dotdot": {"endpoint": "transaction_info", "transaction_id": ".."},
    "dotdot_inside": {"endpoint": "transaction_info", "transaction_id": "a..b"},
    "dot": {"endpoint": "transaction_info", "transaction_id": "."},
    "slash": {"endpoint": "transaction_info", "transaction_id": "../../v1/x"},
    "percent": {"endpoint": "transaction_info", "transaction_id": "%2e%2e"},
    "unicode_id": {"endpoint": "order_lookup", "order_id": "\u00e9\u2603\U0001F600"},
    "control_id": {"endpoint": "transaction_info", "transaction_id": "1\r\nX-Injected: 1"},
    "sandbox_order": {"endpoint": "order_lookup", "environment": "sandbox", "order_id": "A"},
    "unknown_key": {"endpoint": "transaction_info", "transaction_id": "1", "host": "evil"},
    "wrong_param": {"endpoint": "test_notification", "transaction_id": "1"},
    "query_repeated_paging": {"endpoint": "transaction_history", "transaction_id": "1", "query": {"revision": "x"}},
    "bad_body_type": {"endpoint": "consumption_info", "transaction_id": "1", "body": [1]},
    "ac_migrate": {"endpoint": "advanced_commerce_migrate_subscription", "transaction_id": "1000",
                   "body": {"requestInfo": {"requestReferenceId": "7E3FB20B-4CDB-47CC-936D-99D65F608138", "consistencyToken": "c"},
                            "descriptors": {"description": "All news", "displayName": "News"},
                            "items": [{"SKU": "news", "description": "Basic", "displayName": "Basic"}],
                            "renewalItems": [{"SKU": "news.plus", "description": "Plus", "displayName": "Plus"}],
                            "targetProductId": "pro.monthly", "taxCode": "C003-00-1", "storefront": "USA"}},
    "ac_refund": {"endpoint": "advanced_commerce_request_refund", "transaction_id": "1000",
                  "body": {"requestInfo": {"requestReferenceId": "7e3fb20b-4cdb-47cc-936d-99d65f608138"},
                           "refundRiskingPreference": True, "currency": "EUR",
                           "items": [{"SKU": "news", "refundReason": "OTHER", "refundType": "CUSTOM", "revoke": False,
                                      "refundAmount": 1500}, {"SKU": "x", "refundReason": "LEGAL", "refundType": "FULL", "revoke": True}]}},
}
apicall = {name: json.dumps(c, separators=(",", ":")).encode() for name, c in calls.items()}
apicall["garbage"] = b"{\"endpoint\":\"transaction_info\",\"transaction_id\":\"\\u0000\\ud800\"}"
apicall["not_object"] = b"[\"transaction_info\"]"

for target, seeds in (("api", api), ("apicall", apicall)):
    out = os.path.join(ROOT, "Fuzz", "seeds", target)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    print(f"{len(seeds)} seeds in Fuzz/seeds/{target}")

bench = os.path.join(ROOT, "Benchmarks", "api")
os.makedirs(bench, exist_ok=True)
with open(os.path.join(bench, "transaction_history_20.json"), "wb") as f:
    f.write(body(history(20)))
print("Benchmarks/api/transaction_history_20.json: a page of 20 signed transactions")
