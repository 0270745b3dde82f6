#!/usr/bin/env python3
"""Writes fuzz seeds for the notification, commerce-field and revocation code (files named
signal_* in Fuzz/seeds/jws and Fuzz/seeds/api; other seeds there are left alone).

What they reach:
  * every App Store Server Notification V2 type and subtype NotificationEffect knows, unknown
    types and subtypes, and each payload scope (data, summary, appData, externalPurchaseToken),
    including missing, doubled and wrongly typed scopes;
  * transactions and renewal infos carrying every field CommerceFields / RenewalCommerceFields
    read, then each of those fields with the wrong JSON type (a string for a number, an array
    for a string, commitmentInfo as a number...);
  * `ocsp_responses` in the api target's options mode: the DER fixtures of
    Tests/shared/fakeapple/ocsp, answers made here for the fake leaf's own certificate id
    (signed by keys that are not its issuer's, so they parse and match but never verify), and
    garbage.

Signing: the `jws` target trusts Apple's roots, the receipt test root and Xcode's root, none of
whose keys exist here, so its seeds carry the fake Apple-shaped chain of Tests/shared/fakeapple:
they are read in full (payload decoding happens before the chain check) and then refused. The
`api` target's verifier (Tests/shared/fakeapple/verifier.json) trusts that fake root, so the
same tokens verify there end to end. Tokens are ES256 with raw r||s, x5c = [leaf, WWDR, root].

ECDSA signatures are randomised: rerunning changes bytes, not meaning. The outputs are committed;
tests never run this. scripts/generate-api-fuzz-seeds.py empties Fuzz/seeds/api: run this after it.
"""
import base64
import datetime as dt
import glob
import json
import os
import struct

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.x509 import ocsp
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, ".."))
FAKE = os.path.join(ROOT, "Tests", "shared", "fakeapple")
BUNDLE = "com.example.fake"          # verifier.json's bundle_id
NOW = 1_893_456_000_000              # Harness.now, 2030-01-01T00:00:00Z
DAY = 86_400_000
SIGNED = NOW - 3 * DAY
PREFIX = "signal_"
# Indexes of the api target's table mode (APIHarness: APIEndpoint.allCases order, statuses).
ENDPOINT_INDEX = {"transaction_info": 0, "transaction_history": 1, "subscription_statuses": 2,
                  "notification_history": 11, "test_notification_status": 13}


def load(path):
    with open(path, "rb") as fh:
        return fh.read()


LEAF_KEY = serialization.load_pem_private_key(load(os.path.join(FAKE, "leaf.key.pem")), None)
LEAF, WWDR, ROOTCERT = (x509.load_pem_x509_certificate(load(os.path.join(FAKE, n))) for n in ("leaf.pem", "wwdr.pem", "root.pem"))
X5C = [base64.b64encode(c.public_bytes(serialization.Encoding.DER)).decode() for c in (LEAF, WWDR, ROOTCERT)]


def b64url(raw):
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def compact(obj):
    return json.dumps(obj, separators=(",", ":")).encode()


def token(payload, header=None, key=None):
    """A compact JWS over `payload` (a dict, or raw bytes used as the payload as they are)."""
    head = b64url(compact(header or {"alg": "ES256", "x5c": X5C}))
    body = b64url(payload if isinstance(payload, bytes) else compact(payload))
    der = (key or LEAF_KEY).sign(f"{head}.{body}".encode(), ec.ECDSA(hashes.SHA256()))
    r, s = decode_dss_signature(der)
    return f"{head}.{body}.{b64url(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"


# ---------------------------------------------------------------------------------------------
# Payloads

def transaction(tid="3001", original="3000", env="Production", **changes):
    """A subscription transaction with every field the decoder reads."""
    p = {
        "transactionId": tid, "originalTransactionId": original, "webOrderLineItemId": "wol" + tid,
        "bundleId": BUNDLE, "productId": "pro.monthly", "subscriptionGroupIdentifier": "g1",
        "purchaseDate": SIGNED - DAY, "originalPurchaseDate": SIGNED - 60 * DAY, "expiresDate": SIGNED + 29 * DAY,
        "quantity": 1, "type": "Auto-Renewable Subscription", "inAppOwnershipType": "PURCHASED",
        "signedDate": SIGNED, "environment": env, "transactionReason": "RENEWAL", "storefront": "FRA",
        "storefrontId": "143442", "price": 9990, "currency": "EUR", "appAccountToken": "6f1c2a4e-0b7d-4c39-9e58-2d6a1f0c7b31",
        "appTransactionId": "704289572311", "offerType": 2, "offerIdentifier": "spring-promo",
        "offerDiscountType": "PAY_AS_YOU_GO", "offerPeriod": "P3M", "isUpgraded": False,
        "billingPlanType": "MONTHLY_COMMITMENT",
        "commitmentInfo": {"billingPeriodNumber": 4, "totalBillingPeriods": 12,
                           "commitmentExpiresDate": SIGNED + 240 * DAY, "commitmentPrice": 99900},
    }
    for k, v in changes.items():
        if v is DROP:
            p.pop(k, None)
        else:
            p[k] = v
    return p


def renewal(original="3000", env="Production", **changes):
    """A renewal info with every field the decoder reads."""
    p = {
        "originalTransactionId": original, "autoRenewProductId": "pro.yearly", "productId": "pro.monthly",
        "autoRenewStatus": 1, "expirationIntent": 2, "isInBillingRetryPeriod": False,
        "gracePeriodExpiresDate": SIGNED + 16 * DAY, "priceIncreaseStatus": 1, "signedDate": SIGNED,
        "environment": env, "renewalPrice": 8990, "currency": "EUR", "offerType": 3, "offerIdentifier": "winback-1",
        "offerDiscountType": "FREE_TRIAL", "offerPeriod": "P1W", "renewalDate": SIGNED + 29 * DAY,
        "recentSubscriptionStartDate": SIGNED - 60 * DAY, "eligibleWinBackOfferIds": ["winback-1", "winback-2"],
        "appAccountToken": "6f1c2a4e-0b7d-4c39-9e58-2d6a1f0c7b31", "appTransactionId": "704289572311",
        "renewalBillingPlanType": "UPFRONT",
        "commitmentInfo": {"commitmentAutoRenewProductId": "pro.yearly", "commitmentAutoRenewStatus": True,
                           "commitmentRenewalBillingPlanType": "MONTHLY_COMMITMENT",
                           "commitmentRenewalDate": SIGNED + 365 * DAY, "commitmentRenewalPrice": 89900},
    }
    for k, v in changes.items():
        if v is DROP:
            p.pop(k, None)
        else:
            p[k] = v
    return p


DROP = object()


def notification(ntype, subtype=None, scope="data", content=None, uuid_n=1, env="Production", extra=None):
    p = {"notificationType": ntype, "notificationUUID": f"5e1f0000-0000-4000-8000-{uuid_n:012d}",
         "version": "2.0", "signedDate": SIGNED}
    if subtype is not None:
        p["subtype"] = subtype
    if scope is not None:
        p[scope] = content if content is not None else {"bundleId": BUNDLE, "environment": env, "appAppleId": 1234}
    if extra:
        p.update(extra)
    return p


def data_scope(env="Production", txn=None, ren=None, **more):
    d = {"appAppleId": 1234, "bundleId": BUNDLE, "bundleVersion": "7", "environment": env, "status": 1}
    if txn is not None:
        d["signedTransactionInfo"] = token(txn)
    if ren is not None:
        d["signedRenewalInfo"] = token(ren)
    d.update(more)
    return d


def consumable(tid="3101", **changes):
    base = dict(productId="coins.100", type="Consumable", original=tid, expiresDate=DROP,
                subscriptionGroupIdentifier=DROP, billingPlanType=DROP, commitmentInfo=DROP, webOrderLineItemId=DROP,
                transactionReason="PURCHASE")
    base.update(changes)
    original = base.pop("original")
    return transaction(tid, original, **base)


# Every (type, subtype) NotificationEffect names, and what to carry for it.
KNOWN = [
    ("SUBSCRIBED", "INITIAL_BUY"), ("SUBSCRIBED", "RESUBSCRIBE"), ("DID_RENEW", None), ("DID_RENEW", "BILLING_RECOVERY"),
    ("DID_CHANGE_RENEWAL_PREF", "UPGRADE"), ("DID_CHANGE_RENEWAL_PREF", "DOWNGRADE"), ("DID_CHANGE_RENEWAL_PREF", None),
    ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED"), ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED"),
    ("DID_CHANGE_RENEWAL_STATUS", None), ("OFFER_REDEEMED", None), ("OFFER_REDEEMED", "INITIAL_BUY"),
    ("OFFER_REDEEMED", "RESUBSCRIBE"), ("OFFER_REDEEMED", "UPGRADE"), ("OFFER_REDEEMED", "DOWNGRADE"),
    ("DID_FAIL_TO_RENEW", "GRACE_PERIOD"), ("DID_FAIL_TO_RENEW", None), ("GRACE_PERIOD_EXPIRED", None), ("EXPIRED", None),
    ("EXPIRED", "VOLUNTARY"), ("EXPIRED", "BILLING_RETRY"), ("EXPIRED", "PRICE_INCREASE"), ("EXPIRED", "PRODUCT_NOT_FOR_SALE"),
    ("PRICE_INCREASE", "PENDING"), ("PRICE_INCREASE", "ACCEPTED"), ("REFUND", None), ("REFUND_DECLINED", None),
    ("REFUND_REVERSED", None), ("REVOKE", None), ("RENEWAL_EXTENDED", None), ("RENEWAL_EXTENSION", "SUMMARY"),
    ("RENEWAL_EXTENSION", "FAILURE"), ("CONSUMPTION_REQUEST", None), ("ONE_TIME_CHARGE", None),
    ("EXTERNAL_PURCHASE_TOKEN", "UNREPORTED"), ("EXTERNAL_PURCHASE_TOKEN", "ACTIVE_TOKEN_REMINDER"),
    ("EXTERNAL_PURCHASE_TOKEN", "CREATED"), ("METADATA_UPDATE", None), ("METADATA_UPDATE", "ANY_SUBTYPE"),
    ("MIGRATION", None), ("MIGRATION", "FROM_OLD_PLAN"), ("PRICE_CHANGE", None), ("PRICE_CHANGE", "INCREASE"),
    ("RESCIND_CONSENT", None), ("TEST", None),
]
UNKNOWN = [("SUBSCRIBED", None), ("SUBSCRIBED", "SOMETHING_NEW"), ("DID_RENEW", "GRACE_PERIOD"), ("REFUND", "PARTIAL"),
           ("TEST", "EXTRA"), ("FUTURE_NOTIFICATION", None), ("FUTURE_NOTIFICATION", "NEW_SUBTYPE"), ("", None),
           ("subscribed", "initial_buy"), ("EXPIRED ", None), ("RENEWAL_EXTENSION", None), ("EXTERNAL_PURCHASE_TOKEN", None)]


def payload_for(ntype, subtype, n):
    """A realistic payload for a type/subtype (with the scope Apple uses for it)."""
    if ntype == "RENEWAL_EXTENSION" and subtype == "SUMMARY":
        return notification(ntype, subtype, "summary", {
            "requestIdentifier": "b6f0c1c4-6f2a-4d7e-9a51-3c2d8e7f1a09", "environment": "Production", "appAppleId": 1234,
            "bundleId": BUNDLE, "productId": "pro.monthly", "storefrontCountryCodes": ["USA", "FRA"],
            "failedCount": 2, "succeededCount": 30}, n)
    if ntype == "EXTERNAL_PURCHASE_TOKEN":
        return notification(ntype, subtype, "externalPurchaseToken", {
            "externalPurchaseId": "a9c3e3c2-5d1b-4c2f-8b0e-7e4a6f2d1c00", "tokenCreationDate": SIGNED - DAY,
            "appAppleId": 1234, "bundleId": BUNDLE}, n)
    if ntype == "RESCIND_CONSENT":
        app = {"receiptType": "Production", "environment": "Production", "bundleId": BUNDLE, "appAppleId": 1234,
               "applicationVersion": "7", "originalApplicationVersion": "1", "receiptCreationDate": SIGNED,
               "originalPurchaseDate": SIGNED - 400 * DAY, "signedDate": SIGNED, "appTransactionId": "704289572311"}
        return notification(ntype, subtype, "appData", {"appAppleId": 1234, "bundleId": BUNDLE, "environment": "Production",
                                                         "signedAppTransactionInfo": token(app)}, n)
    if ntype == "TEST":
        return notification(ntype, subtype, "data", {"bundleId": BUNDLE, "environment": "Production"}, n)
    if ntype in ("ONE_TIME_CHARGE", "CONSUMPTION_REQUEST") or ntype.startswith("REFUND"):
        changes = {}
        if ntype == "REFUND":
            changes = dict(revocationDate=SIGNED, revocationReason=1, revocationType="REFUND_PRORATED", revocationPercentage=42500)
        return notification(ntype, subtype, "data", data_scope(txn=consumable(str(3100 + n), **changes),
                                                               consumptionRequestReason="UNINTENDED_PURCHASE"), n)
    ren_changes, txn_changes = {}, {}
    if ntype == "DID_FAIL_TO_RENEW":
        ren_changes = dict(isInBillingRetryPeriod=True, autoRenewStatus=1)
        txn_changes = dict(expiresDate=NOW - DAY)
    elif ntype in ("EXPIRED", "GRACE_PERIOD_EXPIRED"):
        ren_changes = dict(autoRenewStatus=0, expirationIntent=1)
        txn_changes = dict(expiresDate=NOW - 2 * DAY)
    elif ntype == "REVOKE":
        txn_changes = dict(revocationDate=SIGNED, revocationReason=0, inAppOwnershipType="FAMILY_SHARED", revocationType="FAMILY_REVOKE")
    elif ntype == "DID_CHANGE_RENEWAL_STATUS":
        ren_changes = dict(autoRenewStatus=0 if subtype != "AUTO_RENEW_ENABLED" else 1)
    elif ntype == "RENEWAL_EXTENDED" or (ntype == "RENEWAL_EXTENSION"):
        txn_changes = dict(expiresDate=NOW + 40 * DAY)
    return notification(ntype, subtype, "data", data_scope(txn=transaction(str(3000 + n), **txn_changes),
                                                           ren=renewal(**ren_changes)), n)


# ---------------------------------------------------------------------------------------------
# Tokens, each a (name, kind, payload-or-token) the two targets wrap in their own way.

tokens = {}   # name -> (kind, compact JWS text); kind: "transaction", "renewal", "notification", "other"


def add(name, kind, payload, **kw):
    tokens[name] = (kind, token(payload, **kw))


n = 0
for ntype, subtype in KNOWN + UNKNOWN:
    n += 1
    label = (ntype or "empty").strip().replace(" ", "_") + ("_" + subtype if subtype else "")
    add(f"note_{label}", "notification", payload_for(ntype, subtype, n))

# Scope shapes.
add("note_unknown_no_scope", "notification", notification("FUTURE_NOTIFICATION", None, None, uuid_n=200))
add("note_unknown_subtype_no_scope", "notification", notification("DID_RENEW", "NEW_ONE", None, uuid_n=201))
add("note_known_no_scope", "notification", notification("DID_RENEW", None, None, uuid_n=202))
add("note_test_no_scope", "notification", notification("TEST", None, None, uuid_n=203))
add("note_data_and_summary", "notification", notification("RENEWAL_EXTENSION", "SUMMARY", "data", data_scope(),
                                                          204, extra={"summary": {"bundleId": "com.example.other", "environment": "Sandbox"}}))
add("note_summary_sandbox", "notification", notification("RENEWAL_EXTENSION", "SUMMARY", "summary",
                                                         {"bundleId": BUNDLE, "environment": "Sandbox", "succeededCount": 1}, 205))
add("note_summary_no_env", "notification", notification("RENEWAL_EXTENSION", "SUMMARY", "summary", {"bundleId": BUNDLE}, 206))
add("note_token_sandbox", "notification", notification("EXTERNAL_PURCHASE_TOKEN", "CREATED", "externalPurchaseToken",
                                                       {"bundleId": BUNDLE, "environment": "Sandbox", "externalPurchaseId": "x"}, 207))
add("note_token_env_number", "notification", notification("EXTERNAL_PURCHASE_TOKEN", "CREATED", "externalPurchaseToken",
                                                          {"bundleId": BUNDLE, "environment": 1}, 208))
add("note_token_env_unknown", "notification", notification("EXTERNAL_PURCHASE_TOKEN", "UNREPORTED", "externalPurchaseToken",
                                                           {"bundleId": BUNDLE, "environment": "Staging"}, 209))
add("note_token_other_bundle", "notification", notification("EXTERNAL_PURCHASE_TOKEN", "CREATED", "externalPurchaseToken",
                                                            {"bundleId": "com.example.other"}, 210))
add("note_token_no_bundle", "notification", notification("EXTERNAL_PURCHASE_TOKEN", "CREATED", "externalPurchaseToken", {}, 211))
add("note_appdata_no_env", "notification", notification("RESCIND_CONSENT", None, "appData", {"bundleId": BUNDLE}, 212))
add("note_appdata_xcode", "notification", notification("RESCIND_CONSENT", None, "appData", {"bundleId": BUNDLE, "environment": "Xcode"}, 213))
add("note_data_array", "notification", notification("DID_RENEW", None, "data", [data_scope()], 214))
add("note_summary_string", "notification", notification("RENEWAL_EXTENSION", "SUMMARY", "summary", "summary", 215))
add("note_appdata_number", "notification", notification("RESCIND_CONSENT", None, "appData", 7, 216))
add("note_token_null", "notification", notification("EXTERNAL_PURCHASE_TOKEN", "CREATED", "externalPurchaseToken", None, 217,
                                                    extra={"externalPurchaseToken": None}))
add("note_type_number", "notification", {"notificationType": 5, "signedDate": SIGNED, "data": data_scope()})
add("note_subtype_number", "notification", notification("SUBSCRIBED", None, "data", data_scope(), 218, extra={"subtype": 1}))
add("note_subtype_null", "notification", notification("DID_RENEW", None, "data", data_scope(txn=transaction("3900")), 219,
                                                      extra={"subtype": None}))
add("note_uuid_array", "notification", notification("TEST", None, extra={"notificationUUID": ["a"]}))
add("note_signed_date_string", "notification", notification("TEST", None, extra={"signedDate": str(SIGNED)}))
add("note_no_signed_date", "notification", {k: v for k, v in notification("DID_RENEW", None, "data",
                                            data_scope(txn=transaction("3901")), 220).items() if k != "signedDate"})
add("note_env_sandbox_txn_production", "notification",
    notification("DID_RENEW", None, "data", data_scope(env="Sandbox", txn=transaction("3902")), 221))
add("note_nested_wrong_kind", "notification",
    notification("DID_RENEW", None, "data", {**data_scope(), "signedTransactionInfo": token(renewal())}, 222))
add("note_nested_renewal_is_txn", "notification",
    notification("DID_RENEW", None, "data", {**data_scope(txn=transaction("3903")), "signedRenewalInfo": token(transaction("3904"))}, 223))
add("note_nested_not_string", "notification",
    notification("DID_RENEW", None, "data", {**data_scope(), "signedTransactionInfo": {"transactionId": "1"}}, 224))
add("note_nested_garbage", "notification",
    notification("DID_RENEW", None, "data", {**data_scope(), "signedTransactionInfo": "a.b.c"}, 225))
add("note_nested_notification", "notification",
    notification("DID_RENEW", None, "data", {**data_scope(), "signedTransactionInfo": token(notification("TEST"))}, 226))
add("note_unknown_with_signed_data", "notification",
    notification("FUTURE_NOTIFICATION", "X", "data", data_scope(txn=transaction("3905"), ren=renewal()), 227))

# Transactions: everything, then each new field on its own wrongly typed.
add("txn_all_fields", "transaction", transaction())
add("txn_sandbox", "transaction", transaction("3010", env="Sandbox"))
add("txn_minimal", "transaction", {"transactionId": "3011", "productId": "pro.monthly", "bundleId": BUNDLE,
                                   "environment": "Production", "signedDate": SIGNED})
add("txn_revoked_prorated", "transaction", transaction("3012", revocationDate=SIGNED, revocationReason=1,
                                                       revocationType="REFUND_PRORATED", revocationPercentage=33333))
add("txn_revoked_full", "transaction", transaction("3013", revocationDate=SIGNED, revocationReason=0, revocationType="REFUND_FULL",
                                                   revocationPercentage=100000))
add("txn_free_trial", "transaction", transaction("3014", offerType=1, offerDiscountType="FREE_TRIAL", offerPeriod="P1W", price=0))
add("txn_intro", "transaction", transaction("3015", offerType=1, offerDiscountType="PAY_UP_FRONT"))
add("txn_commitment_empty", "transaction", transaction("3016", commitmentInfo={}))
add("txn_commitment_partial", "transaction", transaction("3017", commitmentInfo={"billingPeriodNumber": 1}))
add("txn_commitment_extra", "transaction", transaction("3018", commitmentInfo={"billingPeriodNumber": 1, "future": [1, {"a": None}]}))
add("txn_huge_numbers", "transaction", transaction("3019", price=2**63 - 1, revocationPercentage=-1, offerType=2**53,
                                                   commitmentInfo={"commitmentPrice": 99999999999999999999, "totalBillingPeriods": -7}))
add("txn_fractional_numbers", "transaction", transaction("3020", price=4.99, purchaseDate=SIGNED - DAY + 0.5,
                                                         commitmentInfo={"commitmentExpiresDate": 1.0e12}))
add("txn_unicode_strings", "transaction", transaction("3021", currency="\u20ac", storefront="\u00c9\u00c9\u00c9",
                                                      offerPeriod="P\u2603", billingPlanType="\U0001F600"))
add("txn_empty_strings", "transaction", transaction("3022", currency="", storefront="", storefrontId="", appTransactionId="",
                                                    revocationType="", billingPlanType=""))
add("txn_nulls", "transaction", transaction("3023", **{k: None for k in (
    "revocationType", "revocationPercentage", "offerType", "offerDiscountType", "offerPeriod", "price", "currency",
    "storefront", "storefrontId", "appAccountToken", "appTransactionId", "transactionReason", "billingPlanType", "commitmentInfo")}))
add("txn_xcode_env", "transaction", transaction("3024", env="Xcode"))
add("txn_consumable", "transaction", consumable("3025"))

TXN_NUMBERS = ["revocationPercentage", "offerType", "price", "quantity", "purchaseDate", "expiresDate", "signedDate",
               "revocationDate", "originalPurchaseDate"]
TXN_STRINGS = ["revocationType", "offerDiscountType", "offerPeriod", "currency", "storefront", "storefrontId", "appAccountToken",
               "appTransactionId", "transactionReason", "type", "environment", "billingPlanType", "offerIdentifier",
               "webOrderLineItemId", "subscriptionGroupIdentifier", "inAppOwnershipType", "revocationReason"]
for i, field in enumerate(TXN_NUMBERS):
    add(f"txn_wrong_{field}_string", "transaction", transaction(str(3200 + i), **{field: "12"}))
for i, field in enumerate(TXN_STRINGS):
    add(f"txn_wrong_{field}_array", "transaction", transaction(str(3300 + i), **{field: ["x"]}))
for i, field in enumerate(["offerType", "price", "revocationPercentage"]):
    add(f"txn_wrong_{field}_bool", "transaction", transaction(str(3400 + i), **{field: True}))
add("txn_wrong_isUpgraded_string", "transaction", transaction("3410", isUpgraded="true"))
add("txn_wrong_currency_number", "transaction", transaction("3411", currency=978))
add("txn_wrong_billingPlanType_object", "transaction", transaction("3412", billingPlanType={"plan": "M"}))
for i, value in enumerate([7, "commitment", [1, 2], True]):
    add(f"txn_wrong_commitmentInfo_{type(value).__name__}", "transaction", transaction(str(3420 + i), commitmentInfo=value))
for i, field in enumerate(["billingPeriodNumber", "totalBillingPeriods", "commitmentExpiresDate", "commitmentPrice"]):
    add(f"txn_wrong_commitment_{field}_string", "transaction",
        transaction(str(3430 + i), commitmentInfo={**transaction()["commitmentInfo"], field: "4"}))
    add(f"txn_wrong_commitment_{field}_array", "transaction",
        transaction(str(3440 + i), commitmentInfo={**transaction()["commitmentInfo"], field: [4]}))

# Renewal infos: everything, then wrong types.
add("ren_all_fields", "renewal", renewal())
add("ren_sandbox", "renewal", renewal(env="Sandbox"))
add("ren_minimal_status", "renewal", {"originalTransactionId": "3000", "autoRenewStatus": 0, "signedDate": SIGNED,
                                      "environment": "Production"})
add("ren_minimal_product", "renewal", {"originalTransactionId": "3000", "autoRenewProductId": "pro.monthly"})
add("ren_winback_empty", "renewal", renewal(eligibleWinBackOfferIds=[]))
add("ren_winback_many", "renewal", renewal(eligibleWinBackOfferIds=[f"wb-{i}" for i in range(40)] + ["", "\u2603"]))
add("ren_commitment_empty", "renewal", renewal(commitmentInfo={}))
add("ren_commitment_off", "renewal", renewal(commitmentInfo={"commitmentAutoRenewStatus": False}))
add("ren_huge_numbers", "renewal", renewal(renewalPrice=2**63, offerType=-1, renewalDate=2**62,
                                           commitmentInfo={"commitmentRenewalPrice": 1e300}))
add("ren_nulls", "renewal", renewal(**{k: None for k in (
    "renewalPrice", "currency", "offerType", "offerIdentifier", "offerDiscountType", "offerPeriod", "renewalDate",
    "recentSubscriptionStartDate", "eligibleWinBackOfferIds", "appAccountToken", "appTransactionId", "renewalBillingPlanType",
    "commitmentInfo", "priceIncreaseStatus", "gracePeriodExpiresDate")}))

REN_NUMBERS = ["renewalPrice", "offerType", "renewalDate", "recentSubscriptionStartDate", "expirationIntent",
               "gracePeriodExpiresDate", "priceIncreaseStatus", "signedDate"]
REN_STRINGS = ["currency", "offerIdentifier", "offerDiscountType", "offerPeriod", "appAccountToken", "appTransactionId",
               "environment", "renewalBillingPlanType", "productId", "autoRenewProductId"]
for field in REN_NUMBERS:
    add(f"ren_wrong_{field}_string", "renewal", renewal(**{field: "12"}))
for field in REN_STRINGS:
    add(f"ren_wrong_{field}_array", "renewal", renewal(**{field: ["x"]}))
for name, value in [("string", "winback-1"), ("numbers", [1, 2]), ("nested", [["a"]]), ("object", {"a": "b"}), ("mixed", ["a", None])]:
    add(f"ren_wrong_eligibleWinBackOfferIds_{name}", "renewal", renewal(eligibleWinBackOfferIds=value))
add("ren_wrong_autoRenewStatus_string", "renewal", renewal(autoRenewStatus="1"))
add("ren_wrong_isInBillingRetryPeriod_number", "renewal", renewal(isInBillingRetryPeriod=1))
for value in (7, "c", [True]):
    add(f"ren_wrong_commitmentInfo_{type(value).__name__}", "renewal", renewal(commitmentInfo=value))
for field, bad in [("commitmentAutoRenewProductId", 5), ("commitmentAutoRenewStatus", "yes"), ("commitmentRenewalBillingPlanType", ["M"]),
                   ("commitmentRenewalDate", "soon"), ("commitmentRenewalPrice", [1])]:
    add(f"ren_wrong_commitment_{field}", "renewal", renewal(commitmentInfo={**renewal()["commitmentInfo"], field: bad}))

# Notifications carrying the wrongly typed nested data.
add("note_nested_txn_wrong_commitment", "notification",
    notification("DID_RENEW", None, "data", data_scope(txn=transaction("3500", commitmentInfo=3), ren=renewal()), 300))
add("note_nested_ren_wrong_winback", "notification",
    notification("DID_RENEW", None, "data", data_scope(txn=transaction("3501"), ren=renewal(eligibleWinBackOfferIds="x")), 301))
add("note_nested_txn_price_string", "notification",
    notification("SUBSCRIBED", "INITIAL_BUY", "data", data_scope(txn=transaction("3502", price="9.99")), 302))

# ---------------------------------------------------------------------------------------------
# OCSP answers for the fake leaf (certificate id right; signed by keys that are not its issuer's).

UTC = dt.timezone.utc
NOW_DT = dt.datetime.fromtimestamp(NOW / 1000, UTC)
stranger = ec.generate_private_key(ec.SECP256R1())


def responder_cert(key, issuer_key, issuer_name, delegated=True):
    b = (x509.CertificateBuilder()
         .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Fuzz OCSP Responder")]))
         .issuer_name(issuer_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
         .not_valid_before(dt.datetime(2020, 1, 1, tzinfo=UTC)).not_valid_after(dt.datetime(2045, 1, 1, tzinfo=UTC)))
    if delegated:
        b = b.add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.OCSP_SIGNING]), critical=False)
    return b.sign(issuer_key, hashes.SHA256())


def ocsp_answer(status="good", key=None, cert=None, this=NOW_DT - dt.timedelta(hours=1), nxt=NOW_DT + dt.timedelta(days=1),
                certs=(), subject=None, algorithm=hashes.SHA1()):
    key = key or LEAF_KEY
    b = ocsp.OCSPResponseBuilder()
    cs = {"good": ocsp.OCSPCertStatus.GOOD, "revoked": ocsp.OCSPCertStatus.REVOKED, "unknown": ocsp.OCSPCertStatus.UNKNOWN}[status]
    b = b.add_response(cert=subject or LEAF, issuer=WWDR, algorithm=algorithm, cert_status=cs, this_update=this, next_update=nxt,
                       revocation_time=NOW_DT - dt.timedelta(days=2) if status == "revoked" else None,
                       revocation_reason=x509.ReasonFlags.key_compromise if status == "revoked" else None)
    b = b.responder_id(ocsp.OCSPResponderEncoding.HASH, cert or LEAF)
    if certs:
        b = b.certificates(list(certs))
    return b.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.DER)


delegate_key = ec.generate_private_key(ec.SECP256R1())
delegate = responder_cert(delegate_key, stranger, WWDR.subject)       # names the WWDR as issuer, signed by another key
stranger_cert = responder_cert(stranger, stranger, x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Stranger")]), False)
made = {
    "leaf_signed_good": ocsp_answer("good"),
    "leaf_signed_revoked": ocsp_answer("revoked"),
    "leaf_signed_unknown": ocsp_answer("unknown"),
    "leaf_signed_no_next": ocsp_answer("good", nxt=None),
    "leaf_signed_future": ocsp_answer("good", this=NOW_DT + dt.timedelta(days=3), nxt=NOW_DT + dt.timedelta(days=4)),
    "leaf_signed_stale": ocsp_answer("good", this=NOW_DT - dt.timedelta(days=30), nxt=NOW_DT - dt.timedelta(days=20)),
    "stranger_signed": ocsp_answer("good", key=stranger, cert=stranger_cert, certs=[stranger_cert]),
    "forged_delegate": ocsp_answer("revoked", key=delegate_key, cert=delegate, certs=[delegate]),
    "sha256_certid": ocsp_answer("good", algorithm=hashes.SHA256()),
    "other_subject": ocsp_answer("revoked", subject=WWDR),
    "try_later": ocsp.OCSPResponseBuilder.build_unsuccessful(ocsp.OCSPResponseStatus.TRY_LATER).public_bytes(serialization.Encoding.DER),
    "unauthorized": ocsp.OCSPResponseBuilder.build_unsuccessful(ocsp.OCSPResponseStatus.UNAUTHORIZED).public_bytes(serialization.Encoding.DER),
}
fixtures = {os.path.splitext(os.path.basename(p))[0]: load(p) for p in sorted(glob.glob(os.path.join(FAKE, "ocsp", "*.der")))}


def b64(raw):
    return base64.b64encode(raw).decode()


# ---------------------------------------------------------------------------------------------
# Writing: jws seeds are the tokens; api seeds wrap them in an answer body.

def table_head(endpoint, status_index=0, sandbox=False):
    return bytes([ENDPOINT_INDEX[endpoint], status_index, 1 if sandbox else 0])


def options_head(options):
    text = compact(options)
    assert len(text) < 65536
    return b"\xff" + struct.pack(">H", len(text)) + text


def api_body(kind, tok):
    if kind == "notification":
        return "notification_history", {"hasMore": False, "notificationHistory": [
            {"signedPayload": tok, "sendAttempts": [{"attemptDate": SIGNED, "sendAttemptResult": "SUCCESS"}]}]}
    if kind == "renewal":
        txn = token(transaction("3999"))
        return "subscription_statuses", {"environment": "Production", "bundleId": BUNDLE, "appAppleId": 1234, "data": [
            {"subscriptionGroupIdentifier": "g1", "lastTransactions": [
                {"status": 1, "originalTransactionId": "3000", "signedTransactionInfo": txn, "signedRenewalInfo": tok}]}]}
    return "transaction_info", {"signedTransactionInfo": tok}


jws_seeds, api_seeds = {}, {}
for name, (kind, tok) in tokens.items():
    jws_seeds[name] = tok.encode()
    endpoint, body = api_body(kind, tok)
    api_seeds[name] = table_head(endpoint, sandbox=name.endswith("_sandbox") and kind != "renewal") + compact(body)

# A few notifications also as test_notification_status answers, and a page of many.
for name in ("note_TEST", "note_FUTURE_NOTIFICATION_NEW_SUBTYPE", "note_RENEWAL_EXTENSION_SUMMARY"):
    api_seeds[name + "_status"] = table_head("test_notification_status") + compact(
        {"signedPayload": tokens[name][1], "sendAttempts": []})
page = [{"signedPayload": tok} for name, (kind, tok) in tokens.items()
        if kind == "notification" and name.startswith("note_") and "wrong" not in name][:5]
api_seeds["note_history_page"] = table_head("notification_history") + compact(
    {"hasMore": True, "paginationToken": "p2", "notificationHistory": page})
# Transaction history pages mixing every field shape.
api_seeds["history_commerce_mix"] = table_head("transaction_history") + compact(
    {"revision": "r2", "bundleId": BUNDLE, "environment": "Production", "hasMore": False, "appAppleId": 1234,
     "signedTransactions": [tokens[n][1] for n in ("txn_all_fields", "txn_revoked_prorated", "txn_free_trial",
                                                   "txn_commitment_partial", "txn_consumable")]})

# Options mode with ocsp_responses.
good_txn = tokens["txn_all_fields"][1]
txn_body = compact({"signedTransactionInfo": good_txn})
base_opts = {"endpoint": "transaction_info", "environment": "production", "http_status": 200, "attempt": 1}
for name, der in list(fixtures.items()) + list(made.items()):
    api_seeds[f"ocsp_{name}"] = options_head({**base_opts, "ocsp_responses": [b64(der)]}) + txn_body
api_seeds["ocsp_all_fixtures"] = options_head({**base_opts, "ocsp_responses": [b64(d) for d in fixtures.values()]}) + txn_body
api_seeds["ocsp_all_made"] = options_head({**base_opts, "ocsp_responses": [b64(d) for d in made.values()]}) + txn_body
api_seeds["ocsp_notification"] = options_head({"endpoint": "notification_history", "http_status": 200,
                                               "ocsp_responses": [b64(made["leaf_signed_revoked"]), b64(fixtures.get("good", b"\x30\x00"))]}) \
    + api_seeds["note_DID_RENEW"][3:]
api_seeds["ocsp_statuses"] = options_head({"endpoint": "subscription_statuses", "http_status": 200,
                                           "ocsp_responses": [b64(made["leaf_signed_good"])]}) + api_seeds["ren_all_fields"][3:]
api_seeds["ocsp_with_renewals"] = options_head({**base_opts, "ocsp_responses": [b64(made["leaf_signed_unknown"])],
                                                "delivered_transaction_ids": ["3001"], "renewal_info": []}) + txn_body
garbage = {
    "garbage_base64": ["AAAA"], "garbage_der_prefix": [b64(b"\x30\x82\xff\xff" + b"\x00" * 16)],
    "garbage_not_base64": ["%%%not base64%%%"], "garbage_empty_string": [""], "garbage_number": [12],
    "garbage_null_item": [None], "garbage_nested": [["MAA="]], "garbage_urlsafe": [base64.urlsafe_b64encode(made["leaf_signed_good"]).decode()],
    "garbage_truncated": [b64(made["leaf_signed_good"][:-9])], "garbage_padding_off": [b64(made["leaf_signed_good"]).rstrip("=")],
    "garbage_whitespace": [" " + b64(made["leaf_signed_good"]) + "\n"], "garbage_empty_array": [],
    "garbage_many": [b64(made["leaf_signed_unknown"])] * 12,
}
for name, value in garbage.items():
    api_seeds[f"ocsp_{name}"] = options_head({**base_opts, "ocsp_responses": value}) + txn_body
for name, value in {"ocsp_not_array_string": b64(made["leaf_signed_good"]), "ocsp_not_array_object": {"a": 1},
                    "ocsp_null": None}.items():
    api_seeds[name] = options_head({**base_opts, "ocsp_responses": value}) + txn_body
# The raw DER as the whole jws input too: the jws target reads it as a malformed token.
for name in ("good", "revoked"):
    if name in fixtures:
        jws_seeds[f"ocsp_der_{name}"] = fixtures[name]

for target, seeds in (("jws", jws_seeds), ("api", api_seeds)):
    out = os.path.join(ROOT, "Fuzz", "seeds", target)
    os.makedirs(out, exist_ok=True)
    for old in glob.glob(os.path.join(out, PREFIX + "*")):
        os.remove(old)
    for name, data in seeds.items():
        with open(os.path.join(out, PREFIX + name), "wb") as fh:
            fh.write(data)
    print(f"{len(seeds)} seeds ({PREFIX}*) in Fuzz/seeds/{target}")
