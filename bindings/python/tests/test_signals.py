"""Offer signatures (Signer.sign) checked independently with `cryptography`, and the StoreKit 2
signals the binding exposes: notification effect and action, price_increase, revocation_type and
the later signed statement. Every clock and nonce is fixed."""
import base64
import json
import sys
from pathlib import Path

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

import iapverify

ROOT = Path(__file__).resolve().parents[3]
FAKE = ROOT / "Tests" / "shared" / "fakeapple"
sys.path.insert(0, str(FAKE))
from fakeapi import sign_jws  # noqa: E402

SIGNER = json.loads((FAKE / "signer.json").read_text())
VERIFIER = json.loads((FAKE / "verifier.json").read_text())
PUBLIC = serialization.load_pem_public_key((FAKE / "developer.pub.pem").read_bytes())
NOW = 1_700_000_000_123                   # a fixed signing time, with milliseconds
NONCE = "0F6E6A3C-1C2B-4D7A-9E8F-123456789ABC"
DAY = 86_400_000
SEP = "\u2063"


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@pytest.fixture(scope="module")
def signer():
    with iapverify.Signer(SIGNER) as s:
        yield s


def verify_jws(jws):
    """Checks an ES256 compact JWS with the developer's public key; returns (header, claims)."""
    head, body, sig = jws.split(".")
    raw = b64url_decode(sig)
    assert len(raw) == 64, "ES256 signatures are r||s, 64 bytes"
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    PUBLIC.verify(der, f"{head}.{body}".encode(), ec.ECDSA(hashes.SHA256()))
    return json.loads(b64url_decode(head)), json.loads(b64url_decode(body))


def common_claims(header, claims, aud):
    assert header == {"alg": "ES256", "kid": SIGNER["key_id"], "typ": "JWT"}
    assert claims["iss"] == SIGNER["issuer_id"]
    assert claims["iat"] == NOW // 1000
    assert claims["aud"] == aud
    assert claims["bid"] == SIGNER["bundle_id"]
    assert claims["nonce"] == NONCE.lower()
    assert "exp" not in claims


# ---- V1 ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("account", [None, "", "6A4F0D2B-3C1E-4F5A-8B7C-9D0E1F2A3B4C"])
def test_promotional_offer_v1_verifies_over_the_joined_string(signer, account):
    request = {"kind": "promotional_offer_v1", "nonce": NONCE, "product_id": "pro.monthly", "offer_identifier": "WINBACK1"}
    if account is not None:
        request["app_account_token"] = account
    sig = signer.sign(request, now_ms=NOW)
    assert (sig.kind, sig.key_id, sig.nonce, sig.timestamp_ms, sig.jws) == (
        "promotional_offer_v1", SIGNER["key_id"], NONCE.lower(), NOW, None)
    assert sig.raw["signature"] == sig.signature
    message = SEP.join([SIGNER["bundle_id"], SIGNER["key_id"], "pro.monthly", "WINBACK1", (account or "").lower(),
                        NONCE.lower(), str(NOW)])
    der = base64.b64decode(sig.signature, validate=True)
    PUBLIC.verify(der, message.encode(), ec.ECDSA(hashes.SHA256()))
    # The signature covers every part: another timestamp or an upper-case nonce does not verify.
    for wrong in (message.replace(str(NOW), str(NOW + 1)), message.replace(NONCE.lower(), NONCE)):
        with pytest.raises(InvalidSignature):
            PUBLIC.verify(der, wrong.encode(), ec.ECDSA(hashes.SHA256()))


def test_sign_accepts_json_text_and_bytes(signer):
    text = json.dumps({"kind": "promotional_offer_v1", "nonce": NONCE, "product_id": "p", "offer_identifier": "o"})
    for request in (text, text.encode()):
        sig = signer.sign(request, now_ms=NOW)
        message = SEP.join([SIGNER["bundle_id"], SIGNER["key_id"], "p", "o", "", NONCE.lower(), str(NOW)])
        PUBLIC.verify(base64.b64decode(sig.signature), message.encode(), ec.ECDSA(hashes.SHA256()))


# ---- V2 ------------------------------------------------------------------------------------------

def test_promotional_offer_jws(signer):
    sig = signer.sign({"kind": "promotional_offer_v2", "nonce": NONCE, "product_id": "pro.yearly",
                       "offer_identifier": "SAVE20", "transaction_id": "2000000123"}, now_ms=NOW)
    assert sig.signature is None and sig.kind == "promotional_offer_v2"
    assert sig.timestamp_ms == (NOW // 1000) * 1000
    header, claims = verify_jws(sig.jws)
    common_claims(header, claims, "promotional-offer")
    assert (claims["productId"], claims["offerIdentifier"], claims["transactionId"]) == ("pro.yearly", "SAVE20", "2000000123")
    assert set(claims) == {"iss", "iat", "aud", "bid", "nonce", "productId", "offerIdentifier", "transactionId"}


def test_promotional_offer_without_transaction_id(signer):
    sig = signer.sign({"kind": "promotional_offer_v2", "nonce": NONCE, "product_id": "pro.yearly",
                       "offer_identifier": "SAVE20"}, now_ms=NOW)
    header, claims = verify_jws(sig.jws)
    common_claims(header, claims, "promotional-offer")
    assert "transactionId" not in claims


@pytest.mark.parametrize("allow", [True, False])
def test_introductory_offer_eligibility_jws(signer, allow):
    sig = signer.sign({"kind": "introductory_offer_eligibility", "nonce": NONCE, "product_id": "pro.monthly",
                       "allow_introductory_offer": allow, "transaction_id": "2000000456"}, now_ms=NOW)
    header, claims = verify_jws(sig.jws)
    common_claims(header, claims, "introductory-offer-eligibility")
    assert claims["productId"] == "pro.monthly"
    assert claims["allowIntroductoryOffer"] is allow
    assert claims["transactionId"] == "2000000456"
    assert set(claims) == {"iss", "iat", "aud", "bid", "nonce", "productId", "allowIntroductoryOffer", "transactionId"}


def test_advanced_commerce_request_signs_the_exact_text(signer):
    # Spacing and key order kept on purpose: the claim is the text byte for byte, not a re-encoding.
    text = '{ "operation":"CREATE_SUBSCRIPTION" ,"requestInfo": {"requestReferenceId": "r-1"}, "currency":"EUR"}'
    sig = signer.sign({"kind": "advanced_commerce_request", "nonce": NONCE, "request": text}, now_ms=NOW)
    header, claims = verify_jws(sig.jws)
    common_claims(header, claims, "advanced-commerce-api")
    assert base64.b64decode(claims["request"], validate=True) == text.encode()
    assert set(claims) == {"iss", "iat", "aud", "bid", "nonce", "request"}


def test_a_tampered_jws_does_not_verify(signer):
    sig = signer.sign({"kind": "promotional_offer_v2", "nonce": NONCE, "product_id": "a", "offer_identifier": "b"}, now_ms=NOW)
    head, body, s = sig.jws.split(".")
    claims = json.loads(b64url_decode(body))
    claims["offerIdentifier"] = "FREE"
    forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
    with pytest.raises(InvalidSignature):
        verify_jws(f"{head}.{forged}.{s}")


# ---- bad requests -----------------------------------------------------------------------------------

V1 = {"kind": "promotional_offer_v1", "nonce": NONCE, "product_id": "p", "offer_identifier": "o"}


@pytest.mark.parametrize("request_, words", [
    ({k: v for k, v in V1.items() if k != "nonce"}, "nonce"),
    (dict(V1, nonce="not-a-uuid"), "UUID"),
    (dict(V1, kind="subscription_offer"), "unknown"),
    ({"nonce": NONCE, "product_id": "p"}, "kind"),
    (dict(V1, transaction_id="1"), "transaction_id"),
    (dict(V1, request="{}"), "does not apply"),
    ({k: v for k, v in V1.items() if k != "offer_identifier"}, "offer_identifier"),
    ({"kind": "introductory_offer_eligibility", "nonce": NONCE, "product_id": "p", "transaction_id": "1",
      "allow_introductory_offer": "yes"}, "true or false"),
    ({"kind": "introductory_offer_eligibility", "nonce": NONCE, "product_id": "p", "transaction_id": "1"},
     "allow_introductory_offer"),
    ({"kind": "advanced_commerce_request", "nonce": NONCE, "request": "not json"}, "JSON"),
    ({"kind": "advanced_commerce_request", "nonce": NONCE, "request": "[1, 2]"}, "JSON object"),
    ({"kind": "advanced_commerce_request", "nonce": NONCE, "request": {"operation": "X"}}, "request"),
    ("[]", "JSON object"),
    ("{", "JSON"),
])
def test_bad_requests_say_why(signer, request_, words):
    with pytest.raises(iapverify.InvalidArgumentError) as info:
        signer.sign(request_, now_ms=NOW)
    assert words in info.value.message
    assert info.value.name == "IAPV_E_INVALID_ARGUMENT"
    assert SIGNER["private_key_pem"].splitlines()[1] not in str(info.value)


def test_sign_argument_types(signer):
    with pytest.raises(TypeError):
        signer.sign(12, now_ms=NOW)
    with pytest.raises(TypeError):
        signer.sign(V1, now_ms="now")
    with pytest.raises(iapverify.InvalidArgumentError):
        signer.sign(V1, now_ms=-1)


def test_sign_on_a_closed_signer():
    s = iapverify.Signer(SIGNER)
    s.close()
    with pytest.raises(iapverify.InvalidArgumentError, match="closed"):
        s.sign(V1, now_ms=NOW)


def test_sign_default_clock(signer):
    before = iapverify.now_ms()
    sig = signer.sign(V1)
    assert before - 1000 <= sig.timestamp_ms <= iapverify.now_ms() + 1000


# ---- StoreKit 2 signals ------------------------------------------------------------------------------

BASE = 1_700_000_000_000
T_NOW = BASE + 10 * DAY


def txn(**extra):
    p = {"transactionId": "7001", "originalTransactionId": "7000", "bundleId": SIGNER["bundle_id"], "productId": "pro.monthly",
         "purchaseDate": BASE, "originalPurchaseDate": BASE, "expiresDate": BASE + 30 * DAY, "quantity": 1,
         "type": "Auto-Renewable Subscription", "inAppOwnershipType": "PURCHASED", "signedDate": BASE,
         "environment": "Production", "subscriptionGroupIdentifier": "group.pro", "price": 9990, "currency": "EUR",
         "storefront": "FRA", "storefrontId": "143442", "transactionReason": "PURCHASE"}
    p.update(extra)
    return p


def renewal(**extra):
    p = {"originalTransactionId": "7000", "productId": "pro.monthly", "autoRenewProductId": "pro.monthly",
         "autoRenewStatus": 1, "signedDate": BASE, "environment": "Production", "renewalPrice": 12990, "currency": "EUR"}
    p.update(extra)
    return p


def notification(ntype, subtype=None, signed=BASE + DAY, transaction=None, renewal_info=None, uuid="00000000-0000-4000-8000-000000000001"):
    data = {"bundleId": SIGNER["bundle_id"], "environment": "Production",
            "signedTransactionInfo": sign_jws(transaction or txn())}
    if renewal_info is not False:
        data["signedRenewalInfo"] = sign_jws(renewal_info or renewal())
    p = {"notificationType": ntype, "notificationUUID": uuid, "data": data, "version": "2.0", "signedDate": signed}
    if subtype:
        p["subtype"] = subtype
    return sign_jws(p)


@pytest.fixture(scope="module")
def verifier():
    with iapverify.Verifier(VERIFIER) as v:
        yield v


@pytest.mark.parametrize("ntype, subtype, effect, action", [
    ("SUBSCRIBED", "INITIAL_BUY", "subscription_started", "apply"),
    ("DID_RENEW", None, "renewed", "apply"),
    ("PRICE_INCREASE", "PENDING", "price_increase_pending", "apply"),
    ("REFUND_DECLINED", None, "refund_declined", "apply"),
    ("CONSUMPTION_REQUEST", None, "consumption_info_requested", "send_consumption_info"),
    ("SOMETHING_NEW", None, "unknown", "record_only"),
    ("SUBSCRIBED", "SOMETHING_NEW", "unknown", "record_only"),
])
def test_notification_effect_and_action(verifier, ntype, subtype, effect, action):
    r = verifier.verify_jws(notification(ntype, subtype), now_ms=T_NOW)
    assert r.valid, r.reason
    assert r.effect == effect and r.notification["effect"] == effect
    assert r.action == action
    if action == "record_only":
        assert r.entitlements == [] or all(not e.active for e in r.entitlements)


def test_a_transaction_is_not_a_notification(verifier):
    r = verifier.verify_jws(sign_jws(txn()), now_ms=T_NOW)
    assert r.valid and r.effect is None and r.action is None


def test_new_transaction_fields_in_the_result(verifier):
    r = verifier.verify_jws(sign_jws(txn(offerType=2, offerDiscountType="PAY_AS_YOU_GO", offerPeriod="P1M",
                                          appAccountToken="6a4f0d2b-3c1e-4f5a-8b7c-9d0e1f2a3b4c")), now_ms=T_NOW)
    t = r.transaction
    assert (t["price"], t["currency"], t["storefront"], t["storefront_id"]) == (9990, "EUR", "FRA", "143442")
    assert (t["offer_type"], t["offer_discount_type"], t["offer_period"]) == (2, "PAY_AS_YOU_GO", "P1M")
    assert t["signed_date_ms"] == BASE and t["transaction_reason"] == "PURCHASE"
    assert "revocation_type" not in t


def test_price_increase_pending_then_accepted(verifier):
    for status, want in ((0, "pending"), (1, "accepted")):
        r = verifier.verify_jws(notification("PRICE_INCREASE", "PENDING" if status == 0 else "ACCEPTED",
                                             renewal_info=renewal(priceIncreaseStatus=status)), now_ms=T_NOW)
        assert r.valid, r.reason
        e = r.entitlements[0]
        assert e.active and e.price_increase == want
        assert e.revocation_type is None


def test_prorated_refund_ends_access_with_its_type(verifier):
    refunded = txn(revocationDate=BASE + 5 * DAY, revocationReason=0, revocationType="REFUND_PRORATED",
                   revocationPercentage=83333, signedDate=BASE + 5 * DAY)
    r = verifier.verify_jws(notification("REFUND", transaction=refunded), now_ms=T_NOW)
    assert r.valid and r.effect == "refunded"
    e = r.entitlements[0]
    assert not e.active and e.revocation_type == "REFUND_PRORATED"
    assert r.notification["transaction"]["revocation_percentage"] == 83333   # milliunits: 83.333 %


def test_later_signed_statement_wins(verifier):
    """A refund, then its reversal (signed later): the stored records give access back."""
    refunded = {"transaction_id": "7001", "original_transaction_id": "7000", "product_id": "pro.monthly",
                "purchase_date_ms": BASE, "expires_date_ms": BASE + 30 * DAY, "cancellation_date_ms": BASE + 5 * DAY,
                "revocation_type": "REFUND_FULL", "signed_date_ms": BASE + 5 * DAY}
    reversed_ = {k: v for k, v in refunded.items() if k not in ("cancellation_date_ms", "revocation_type")}
    reversed_["signed_date_ms"] = BASE + 6 * DAY
    for order in ([refunded, reversed_], [reversed_, refunded]):
        r = verifier.compute_entitlements({"transactions": order, "renewal_info": []}, now_ms=T_NOW)
        e = r.entitlements[0]
        assert e.active and e.revocation_type is None, (order, e)
    r = verifier.compute_entitlements({"transactions": [refunded], "renewal_info": []}, now_ms=T_NOW)
    assert not r.entitlements[0].active and r.entitlements[0].revocation_type == "REFUND_FULL"
