#!/usr/bin/env python3
"""Generates fake Apple-shaped StoreKit 2 JWS (Apple's names, our keys) for the negative JWS
tests and the notification scenario: Tests/IAPVerifyTests/Fixtures/jwsfake/. Each case carries
its exact expected verdict in cases.json. The output is committed; the tests never run this.
"""
import base64
import datetime as dt
import json
import os

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.x509.oid import NameOID

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "IAPVerifyTests", "Fixtures", "jwsfake")
os.makedirs(OUT, exist_ok=True)
UTC = dt.timezone.utc
LEAF_MARKER = x509.ObjectIdentifier("1.2.840.113635.100.6.11.1")
WWDR_MARKER = x509.ObjectIdentifier("1.2.840.113635.100.6.2.1")
SIGNED = 1_700_000_000_000
BUNDLE = "com.example.fake"


def name(cn):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn), x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Apple Inc."),
                      x509.NameAttribute(NameOID.COUNTRY_NAME, "US")])


def cert(subject, key, issuer, issuer_key, ca, markers=(), nb=dt.datetime(2020, 1, 1, tzinfo=UTC), na=dt.datetime(2035, 1, 1, tzinfo=UTC)):
    b = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(key.public_key())
         .serial_number(x509.random_serial_number()).not_valid_before(nb).not_valid_after(na)
         .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
         .add_extension(x509.KeyUsage(True, False, False, False, False, ca, ca, False, False), critical=True))
    for m in markers:
        b = b.add_extension(x509.UnrecognizedExtension(m, b"\x05\x00"), critical=False)
    return b.sign(issuer_key, hashes.SHA384() if isinstance(issuer_key, ec.EllipticCurvePrivateKey) and issuer_key.curve.name == "secp384r1" else hashes.SHA256())


ROOT_N, WWDR_N, LEAF_N = name("Apple Root CA - G3"), name("Apple Worldwide Developer Relations Certification Authority"), \
    name("Prod ECC Mac App Store and iTunes Store Receipt Signing")
root_key, foreign_key = ec.generate_private_key(ec.SECP384R1()), ec.generate_private_key(ec.SECP384R1())
root = cert(ROOT_N, root_key, ROOT_N, root_key, True)
foreign_root = cert(ROOT_N, foreign_key, ROOT_N, foreign_key, True)
wwdr_key = ec.generate_private_key(ec.SECP384R1())
wwdr = cert(WWDR_N, wwdr_key, ROOT_N, root_key, True, [WWDR_MARKER])
leaf_key = ec.generate_private_key(ec.SECP256R1())
leaf = cert(LEAF_N, leaf_key, WWDR_N, wwdr_key, False, [LEAF_MARKER])

der = lambda c: c.public_bytes(serialization.Encoding.DER)
b64u = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def jws(payload, chain=None, key=None, header=None, raw_sig=None):
    chain = chain if chain is not None else [leaf, wwdr, root]
    h = header or {"alg": "ES256", "x5c": [base64.b64encode(der(c)).decode() for c in chain]}
    signing_input = b64u(json.dumps(h).encode()) + "." + b64u(json.dumps(payload).encode())
    sig = (key or leaf_key).sign(signing_input.encode(), ec.ECDSA(hashes.SHA256()))
    r, s = decode_dss_signature(sig)
    raw = r.to_bytes(32, "big") + s.to_bytes(32, "big")
    return signing_input + "." + b64u(raw_sig(sig, raw) if raw_sig else raw)


def transaction(tid, product="pro.monthly", purchase=SIGNED - 86_400_000, expires=SIGNED + 29 * 86_400_000, signed=SIGNED, **extra):
    p = {"transactionId": tid, "originalTransactionId": "1000", "bundleId": BUNDLE, "productId": product, "purchaseDate": purchase,
         "originalPurchaseDate": SIGNED - 86_400_000, "expiresDate": expires, "quantity": 1, "type": "Auto-Renewable Subscription",
         "inAppOwnershipType": "PURCHASED", "signedDate": signed, "environment": "Sandbox"}
    p.update(extra)
    if expires is None:
        del p["expiresDate"]
    return p


cases = []


def case(file, token, verdict, note):
    with open(os.path.join(OUT, file), "w") as f:
        f.write(token)
    cases.append({"file": file, "verdict": verdict, "note": note})


good = jws(transaction("1001"))
case("valid_transaction.jws", good, "valid", "Apple-shaped chain under the configured fake G3")
dev_leaf = cert(name("iPhone Developer: Mallory"), leaf_key, WWDR_N, wwdr_key, False)
case("developer_leaf.jws", jws(transaction("1"), chain=[dev_leaf, wwdr, root]), "not_apple_signer", "a developer certificate signs")
wwdr_plain = cert(WWDR_N, wwdr_key, ROOT_N, root_key, True)
case("intermediate_no_marker.jws", jws(transaction("1"), chain=[leaf, wwdr_plain, root]), "not_apple_signer", "intermediate without its OID")
case("one_certificate.jws", jws(transaction("1"), chain=[leaf]), "not_apple_signer", "x5c with 1 certificate")
case("two_certificates.jws", jws(transaction("1"), chain=[leaf, wwdr]), "not_apple_signer", "x5c with 2 certificates")
case("four_certificates.jws", jws(transaction("1"), chain=[leaf, wwdr, root, root]), "not_apple_signer", "x5c with 4 certificates")
foreign_wwdr = cert(WWDR_N, wwdr_key, ROOT_N, foreign_key, True, [WWDR_MARKER])
case("foreign_root.jws", jws(transaction("1"), chain=[leaf, foreign_wwdr, foreign_root]), "untrusted_chain", "a root that is not configured")
old_leaf = cert(LEAF_N, leaf_key, WWDR_N, wwdr_key, False, [LEAF_MARKER], na=dt.datetime(2023, 1, 1, tzinfo=UTC))
case("leaf_expired_at_signed_date.jws", jws(transaction("1"), chain=[old_leaf, wwdr, root]), "untrusted_chain", "leaf expired before signedDate")
h, p, s = good.split(".")
tampered_payload = b64u(json.dumps(transaction("1001", expires=SIGNED + 999 * 86_400_000)).encode())
case("tampered_payload.jws", f"{h}.{tampered_payload}.{s}", "signature_invalid", "payload changed after signing")
hdr = json.loads(base64.urlsafe_b64decode(h + "=" * (-len(h) % 4)))
hdr["kid"] = "x"
case("tampered_header.jws", f"{b64u(json.dumps(hdr).encode())}.{p}.{s}", "signature_invalid", "header changed after signing")
case("der_signature.jws", jws(transaction("1"), raw_sig=lambda d, r: d), "signature_invalid", "a DER signature instead of r||s")
case("signature_65_bytes.jws", jws(transaction("1"), raw_sig=lambda d, r: r + b"\x00"), "signature_invalid", "a 65-byte signature")
case("alg_none.jws", jws(transaction("1"), header={"alg": "none", "x5c": [base64.b64encode(der(leaf)).decode()]}), "unsupported_algorithm", "alg none")
case("alg_hs256.jws", jws(transaction("1"), header={"alg": "HS256", "x5c": [base64.b64encode(der(c)).decode() for c in [leaf, wwdr, root]]}),
     "unsupported_algorithm", "alg HS256")
case("extra_segment.jws", good + ".AAAA", "malformed", "four segments")
case("padded.jws", good.replace(".", "=.", 1), "malformed", "base64url with padding")
case("bad_base64url.jws", good.replace(good[5], "+", 1), "malformed", "a '+' in base64url")
case("no_x5c.jws", jws(transaction("1"), header={"alg": "ES256"}), "malformed", "no x5c")
case("wrong_bundle.jws", jws(transaction("1", bundleId="com.example.other")), "bundle_mismatch", "another app")
case("production_rejected.jws", jws(transaction("1", environment="Production")), "environment_rejected", "Production not accepted")

# Fail closed on a missing bundle id (every kind but renewal info names its app).
def without(payload, key):
    payload = dict(payload)
    del payload[key]
    return payload
app_transaction = {"receiptType": "Sandbox", "bundleId": BUNDLE, "applicationVersion": "1", "originalApplicationVersion": "1",
                   "receiptCreationDate": SIGNED, "originalPurchaseDate": SIGNED, "signedDate": SIGNED}
test_notification = {"notificationType": "TEST", "notificationUUID": "00000000-0000-4000-a000-000000000001", "version": "2.0",
                     "signedDate": SIGNED, "data": {"bundleId": BUNDLE, "environment": "Sandbox"}}
case("transaction_without_bundle.jws", jws(without(transaction("1"), "bundleId")), "bundle_mismatch", "a transaction naming no app")
case("app_transaction.jws", jws(app_transaction), "valid", "an app transaction for the configured app")
case("app_transaction_without_bundle.jws", jws(without(app_transaction, "bundleId")), "bundle_mismatch", "an app transaction naming no app")
case("test_notification.jws", jws(test_notification), "valid", "a TEST notification for the configured app")
case("notification_without_bundle.jws", jws({**test_notification, "data": {"environment": "Sandbox"}}), "bundle_mismatch",
     "a notification whose data names no app")
case("renewal_info.jws", jws({"originalTransactionId": "1000", "productId": "pro.monthly", "autoRenewProductId": "pro.monthly",
                              "autoRenewStatus": 1, "signedDate": SIGNED, "environment": "Sandbox"}), "valid",
     "a renewal info: Apple's carry no bundle id")

# The notification scenario: one subscription's life, in order.
DAY = 86_400_000
renewal = lambda **kw: {"originalTransactionId": "1000", "productId": "pro.monthly", "autoRenewProductId": "pro.monthly",
                        "autoRenewStatus": 1, "signedDate": kw.pop("signed"), "environment": "Sandbox", **kw}
steps = [
    ("SUBSCRIBED", "INITIAL_BUY", transaction("2001", purchase=SIGNED, expires=SIGNED + 30 * DAY, signed=SIGNED), renewal(signed=SIGNED),
     SIGNED + DAY, "active"),
    ("DID_RENEW", None, transaction("2002", purchase=SIGNED + 30 * DAY, expires=SIGNED + 60 * DAY, signed=SIGNED + 30 * DAY),
     renewal(signed=SIGNED + 30 * DAY), SIGNED + 31 * DAY, "active"),
    ("DID_FAIL_TO_RENEW", "GRACE_PERIOD", transaction("2002", purchase=SIGNED + 30 * DAY, expires=SIGNED + 60 * DAY, signed=SIGNED + 60 * DAY),
     renewal(signed=SIGNED + 60 * DAY, isInBillingRetryPeriod=True, gracePeriodExpiresDate=SIGNED + 66 * DAY), SIGNED + 61 * DAY, "grace_period"),
    ("DID_RENEW", "BILLING_RECOVERY", transaction("2003", purchase=SIGNED + 62 * DAY, expires=SIGNED + 92 * DAY, signed=SIGNED + 62 * DAY),
     renewal(signed=SIGNED + 62 * DAY), SIGNED + 63 * DAY, "active"),
    ("DID_CHANGE_RENEWAL_PREF", "DOWNGRADE", transaction("2003", purchase=SIGNED + 62 * DAY, expires=SIGNED + 92 * DAY, signed=SIGNED + 70 * DAY),
     renewal(signed=SIGNED + 70 * DAY, autoRenewProductId="pro.basic"), SIGNED + 71 * DAY, "active"),
    ("EXPIRED", "VOLUNTARY", transaction("2003", purchase=SIGNED + 62 * DAY, expires=SIGNED + 92 * DAY, signed=SIGNED + 92 * DAY),
     renewal(signed=SIGNED + 92 * DAY, autoRenewStatus=0, expirationIntent=1), SIGNED + 93 * DAY, "expired"),
    ("REFUND", None, transaction("2003", purchase=SIGNED + 62 * DAY, expires=SIGNED + 92 * DAY, signed=SIGNED + 94 * DAY,
                                 revocationDate=SIGNED + 80 * DAY, revocationReason=0),
     renewal(signed=SIGNED + 94 * DAY, autoRenewStatus=0, expirationIntent=1), SIGNED + 95 * DAY, "refunded"),
]
scenario = []
scenario_singles = []
for i, (ntype, subtype, txn, ren, now, state) in enumerate(steps):
    payload = {"notificationType": ntype, "notificationUUID": f"00000000-0000-4000-8000-00000000000{i}", "version": "2.0",
               "signedDate": txn["signedDate"], "data": {"bundleId": BUNDLE, "environment": "Sandbox",
                                                         "signedTransactionInfo": jws(txn), "signedRenewalInfo": jws(ren)}}
    if subtype:
        payload["subtype"] = subtype
    file = f"scenario_{i}_{ntype}.jws"
    with open(os.path.join(OUT, file), "w") as f:
        f.write(jws(payload))
    scenario.append({"file": file, "now_ms": now, "state": state, "signed_date_ms": txn["signedDate"],
                     "renews_to": "pro.basic" if ntype == "DID_CHANGE_RENEWAL_PREF" else None})

# Each remaining notification type on its own: (type, subtype, transaction, renewal, now, state, will_renew).
singles = [
    ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", transaction("3001", purchase=SIGNED, expires=SIGNED + 30 * DAY, signed=SIGNED + DAY),
     renewal(signed=SIGNED + DAY, autoRenewStatus=0), SIGNED + 2 * DAY, "active", False),
    ("DID_FAIL_TO_RENEW", None, transaction("3002", purchase=SIGNED, expires=SIGNED + 30 * DAY, signed=SIGNED + 30 * DAY),
     renewal(signed=SIGNED + 30 * DAY, isInBillingRetryPeriod=True), SIGNED + 31 * DAY, "billing_retry", True),
    ("GRACE_PERIOD_EXPIRED", None, transaction("3003", purchase=SIGNED, expires=SIGNED + 30 * DAY, signed=SIGNED + 36 * DAY),
     renewal(signed=SIGNED + 36 * DAY, isInBillingRetryPeriod=True, gracePeriodExpiresDate=SIGNED + 36 * DAY), SIGNED + 37 * DAY,
     "billing_retry", True),
    ("EXPIRED", "BILLING_RETRY", transaction("3004", purchase=SIGNED, expires=SIGNED + 30 * DAY, signed=SIGNED + 90 * DAY),
     renewal(signed=SIGNED + 90 * DAY, autoRenewStatus=0, expirationIntent=2), SIGNED + 91 * DAY, "expired", False),
    ("REVOKE", None, transaction("3005", purchase=SIGNED, expires=SIGNED + 30 * DAY, signed=SIGNED + 10 * DAY,
                                 inAppOwnershipType="FAMILY_SHARED", revocationDate=SIGNED + 10 * DAY),
     renewal(signed=SIGNED + 10 * DAY), SIGNED + 11 * DAY, "refunded", True),
    ("ONE_TIME_CHARGE", None, transaction("3006", product="lifetime", purchase=SIGNED, expires=None, signed=SIGNED,
                                          type="Non-Consumable"), None, SIGNED + DAY, "owned", None),
    ("TEST", None, None, None, SIGNED + DAY, None, None),
]
for i, (ntype, subtype, txn, ren, now, state, will) in enumerate(singles):
    data = {"bundleId": BUNDLE, "environment": "Sandbox"}
    if txn:
        data["signedTransactionInfo"] = jws(txn)
    if ren:
        data["signedRenewalInfo"] = jws(ren)
    payload = {"notificationType": ntype, "notificationUUID": f"00000000-0000-4000-9000-00000000000{i}", "version": "2.0",
               "signedDate": (txn or {}).get("signedDate", SIGNED), "data": data}
    if subtype:
        payload["subtype"] = subtype
    file = f"single_{i}_{ntype}.jws"
    with open(os.path.join(OUT, file), "w") as f:
        f.write(jws(payload))
    scenario_singles.append({"file": file, "type": ntype, "now_ms": now, "state": state, "will_renew": will})

with open(os.path.join(OUT, "root.pem"), "w") as f:
    f.write(root.public_bytes(serialization.Encoding.PEM).decode())
with open(os.path.join(OUT, "cases.json"), "w") as f:
    json.dump({"signed_date_ms": SIGNED, "bundle_id": BUNDLE, "cases": cases, "scenario": scenario, "singles": scenario_singles},
              f, indent=1)
print(f"{len(cases)} cases and {len(scenario)} scenario steps in {OUT}")
