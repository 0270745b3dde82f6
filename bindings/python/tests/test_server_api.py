"""The App Store Server API through the binding: Signer, api_token, api_request and
Verifier.interpret_api_response, offline and against the fake API of Tests/shared/fakeapple.
Every clock is a fixed now_ms."""
import base64
import json
import sys
import threading
import urllib.error
import urllib.request
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
from fakeapi import FakeAppleAPI, sign_jws  # noqa: E402

DAY = 86_400_000
BASE = 1_700_000_000_000                  # the first purchase
NOW = BASE + 5 * 30 * DAY + 10 * DAY      # ten days into the sixth month
SIGNER = json.loads((FAKE / "signer.json").read_text())
VERIFIER = json.loads((FAKE / "verifier.json").read_text())
PEM_LINES = [line for line in SIGNER["private_key_pem"].splitlines() if "-----" not in line]


def txn(tid, month=0, original="5000", **extra):
    """A monthly subscription transaction, named as Apple names the fields."""
    purchase = BASE + month * 30 * DAY
    p = {"transactionId": tid, "originalTransactionId": original, "bundleId": SIGNER["bundle_id"], "productId": "pro.monthly",
         "purchaseDate": purchase, "originalPurchaseDate": BASE, "expiresDate": purchase + 30 * DAY, "quantity": 1,
         "type": "Auto-Renewable Subscription", "inAppOwnershipType": "PURCHASED", "signedDate": purchase,
         "environment": "Production", "subscriptionGroupIdentifier": "group.pro"}
    p.update(extra)
    return p


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def send(req, fake):
    """Sends an APIRequest with urllib; a sandbox call goes to the fake's sandbox port (the signer's
    test_base_url stands in for both of Apple's hosts). Returns (status, headers, body)."""
    prepared = req.to_urllib()
    if req.environment == "Sandbox":
        prepared = urllib.request.Request(req.url.replace(fake.base_url, fake.sandbox_url, 1), data=req.body,
                                          headers=req.headers, method=req.method)
    try:
        with urllib.request.urlopen(prepared, timeout=30) as answer:
            return answer.status, answer.headers, answer.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


@pytest.fixture
def verifier():
    with iapverify.Verifier(VERIFIER) as v:
        yield v


@pytest.fixture
def fake():
    with FakeAppleAPI(FAKE) as f:
        yield f
        assert f.errors == []


@pytest.fixture
def signer(fake):
    with iapverify.Signer({**SIGNER, "test_base_url": fake.base_url}) as s:
        yield s


# ---- the signer ---------------------------------------------------------------------------

@pytest.mark.parametrize("change, words", [
    ({"private_key_pem": None}, "private_key_pem"),
    ({"private_key_pem": "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"}, "private_key_pem"),
    ({"private_key_pem": (FAKE / "p384.p8").read_text()}, "P-256"),
    ({"unexpected": "x"}, "unexpected"),
    ({"key_id": None}, "key_id"),
])
def test_signer_config_errors(change, words):
    config = {k: v for k, v in {**SIGNER, **change}.items() if v is not None}
    with pytest.raises(iapverify.ConfigError) as info:
        iapverify.Signer(config)
    assert words in str(info.value)
    shown = str(info.value) + repr(info.value)
    assert not any(line in shown for line in PEM_LINES)
    assert not any(line in shown for line in (FAKE / "p384.p8").read_text().splitlines() if "-----" not in line)


def test_signer_repr_and_closing():
    signer = iapverify.Signer(json.dumps(SIGNER).encode())
    shown = repr(signer) + str(signer) + repr(signer.api_token(now_ms=NOW))
    assert "FAKEKEY123" in shown and not any(line in shown for line in PEM_LINES)
    signer.close()
    signer.close()
    assert signer.closed
    with pytest.raises(iapverify.InvalidArgumentError, match="closed"):
        signer.api_request({"endpoint": "test_notification"}, now_ms=NOW)
    with pytest.raises(TypeError):
        import pickle
        pickle.dumps(iapverify.Signer(SIGNER))


def test_signer_misuse_raises():
    with iapverify.Signer(SIGNER) as signer:
        with pytest.raises(TypeError):
            signer.api_request(42, now_ms=NOW)
        with pytest.raises(TypeError):
            signer.api_token(now_ms=1.5)
        with pytest.raises(iapverify.InvalidArgumentError):
            signer.api_token(now_ms=1 << 64)
        with pytest.raises(iapverify.InvalidArgumentError):
            signer.api_token(now_ms=-1)
        with pytest.raises(iapverify.InvalidArgumentError, match="unknown"):
            signer.api_request({"endpoint": "no_such_endpoint"}, now_ms=NOW)
        with pytest.raises(iapverify.InvalidArgumentError):
            signer.api_request(b"{not json", now_ms=NOW)


def test_closing_while_other_threads_sign():
    signer = iapverify.Signer(SIGNER)
    outcomes = []

    def work():
        for _ in range(50):
            try:
                signer.api_token(now_ms=NOW)
                outcomes.append("ok")
            except iapverify.InvalidArgumentError:
                outcomes.append("closed")

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    signer.close()
    for t in threads:
        t.join()
    assert len(outcomes) == 200 and set(outcomes) <= {"ok", "closed"}


def test_token_verifies_independently():
    with iapverify.Signer(SIGNER) as signer:
        token = signer.api_token(now_ms=NOW + 999)
    assert (token.issued_at_ms, token.expires_at_ms) == (NOW, NOW + 300_000)
    header_b64, claims_b64, sig_b64 = token.token.split(".")
    sig = b64url_decode(sig_b64)
    assert len(sig) == 64
    public = serialization.load_pem_public_key((FAKE / "developer.pub.pem").read_bytes())
    der = encode_dss_signature(int.from_bytes(sig[:32], "big"), int.from_bytes(sig[32:], "big"))
    public.verify(der, f"{header_b64}.{claims_b64}".encode(), ec.ECDSA(hashes.SHA256()))
    with pytest.raises(InvalidSignature):
        public.verify(der, f"{header_b64}.{claims_b64}x".encode(), ec.ECDSA(hashes.SHA256()))
    assert json.loads(b64url_decode(header_b64)) == {"alg": "ES256", "kid": "FAKEKEY123", "typ": "JWT"}
    claims = json.loads(b64url_decode(claims_b64))
    assert claims == {"iss": SIGNER["issuer_id"], "iat": NOW // 1000, "exp": NOW // 1000 + 300,
                      "aud": "appstoreconnect-v1", "bid": "com.example.fake"}
    assert 0 < claims["exp"] - claims["iat"] <= 3600


# ---- building requests --------------------------------------------------------------------

UUID = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
ENDPOINTS = [
    ("transaction_info", {"transaction_id": "1"}, None, "GET", "/inApps/v1/transactions/1"),
    ("transaction_history", {"transaction_id": "1"}, None, "GET", "/inApps/v2/history/1"),
    ("subscription_statuses", {"transaction_id": "1"}, None, "GET", "/inApps/v1/subscriptions/1"),
    ("order_lookup", {"order_id": "MK5TTTVWJH"}, None, "GET", "/inApps/v1/lookup/MK5TTTVWJH"),
    ("refund_history", {"transaction_id": "1"}, None, "GET", "/inApps/v2/refund/lookup/1"),
    ("app_transaction_info", {"transaction_id": "1"}, None, "GET", "/inApps/v1/transactions/appTransactions/1"),
    ("consumption_info", {"transaction_id": "1"},
     {"customerConsented": True, "sampleContentProvided": False, "deliveryStatus": "DELIVERED"},
     "PUT", "/inApps/v2/transactions/consumption/1"),
    ("set_app_account_token", {"original_transaction_id": "5"}, {"appAccountToken": UUID},
     "PUT", "/inApps/v1/transactions/5/appAccountToken"),
    ("extend_renewal_date", {"original_transaction_id": "5"},
     {"extendByDays": 7, "extendReasonCode": 1, "requestIdentifier": "req-1"}, "PUT", "/inApps/v1/subscriptions/extend/5"),
    ("mass_extend_renewal_date", {},
     {"extendByDays": 7, "extendReasonCode": 1, "requestIdentifier": "req-2", "productId": "pro.monthly"},
     "POST", "/inApps/v1/subscriptions/extend/mass"),
    ("mass_extend_status", {"product_id": "pro.monthly", "request_identifier": "req-2"}, None,
     "GET", "/inApps/v1/subscriptions/extend/mass/pro.monthly/req-2"),
    ("notification_history", {}, {"startDate": BASE, "endDate": NOW}, "POST", "/inApps/v1/notifications/history"),
    ("test_notification", {}, None, "POST", "/inApps/v1/notifications/test"),
    ("test_notification_status", {"test_notification_token": "abc-123"}, None, "GET", "/inApps/v1/notifications/test/abc-123"),
    ("finish_transaction", {"transaction_id": "1"}, None, "POST", "/inApps/v1/transactions/1/finish"),
    ("transaction_history_v1", {"transaction_id": "1"}, None, "GET", "/inApps/v1/history/1"),
    ("consumption_info_v1", {"transaction_id": "1"},
     {"customerConsented": True, "consumptionStatus": 1, "platform": 1, "sampleContentProvided": False,
      "deliveryStatus": 0, "appAccountToken": UUID, "accountTenure": 1, "playTime": 0, "lifetimeDollarsRefunded": 0,
      "lifetimeDollarsPurchased": 2, "userStatus": 1}, "PUT", "/inApps/v1/transactions/consumption/1"),
    ("delete_image", {"image_identifier": UUID}, None, "DELETE", f"/inApps/v1/messaging/image/{UUID}"),
    ("list_images", {}, None, "GET", "/inApps/v1/messaging/image/list"),
    ("upload_message", {"message_identifier": UUID}, {"header": "Before you go", "body": "Half price"},
     "PUT", f"/inApps/v1/messaging/message/{UUID}"),
    ("delete_message", {"message_identifier": UUID}, None, "DELETE", f"/inApps/v1/messaging/message/{UUID}"),
    ("list_messages", {}, None, "GET", "/inApps/v1/messaging/message/list"),
    ("configure_default_message", {"product_id": "pro.monthly", "locale": "en-US"}, {"messageIdentifier": UUID},
     "PUT", "/inApps/v1/messaging/default/pro.monthly/en-US"),
    ("get_default_message", {"product_id": "pro.monthly", "locale": "en-US"}, None,
     "GET", "/inApps/v1/messaging/default/pro.monthly/en-US"),
    ("delete_default_message", {"product_id": "pro.monthly", "locale": "en-US"}, None,
     "DELETE", "/inApps/v1/messaging/default/pro.monthly/en-US"),
    ("configure_realtime_url", {}, {"realtimeURL": "https://example.com/retention"}, "PUT", "/inApps/v1/messaging/realtime/url"),
    ("get_realtime_url", {}, None, "GET", "/inApps/v1/messaging/realtime/url"),
    ("delete_realtime_url", {}, None, "DELETE", "/inApps/v1/messaging/realtime/url"),
    ("initiate_performance_test", {}, {"originalTransactionId": "5"}, "POST", "/inApps/v1/messaging/performanceTest"),
    ("performance_test_result", {"request_id": "req-9"}, None, "GET", "/inApps/v1/messaging/performanceTest/result/req-9"),
] + [(f"advanced_commerce_{name}", {"transaction_id": "1"}, {"requestInfo": {"requestReferenceId": UUID}, **body},
      "POST", f"/advancedCommerce/v1/{path}/1") for name, path, body in [
    ("cancel_subscription", "subscription/cancel", {"storefront": "USA"}),
    ("change_subscription_metadata", "subscription/changeMetadata",
     {"descriptors": {"effective": "NEXT_BILL_CYCLE", "displayName": "News"}}),
    ("change_subscription_price", "subscription/changePrice", {"items": [{"SKU": "news", "price": 4990}], "currency": "USD"}),
    ("migrate_subscription", "subscription/migrate",
     {"descriptors": {"description": "All news", "displayName": "News"}, "targetProductId": "com.example.news", "taxCode": "C003-00-1",
      "items": [{"SKU": "news", "description": "Basic news", "displayName": "Basic"}]}),
    ("revoke_subscription", "subscription/revoke", {"refundRiskingPreference": True, "refundType": "FULL", "refundReason": "LEGAL"}),
    ("request_refund", "transaction/requestRefund",
     {"refundRiskingPreference": False, "items": [{"SKU": "news", "refundReason": "OTHER", "refundType": "CUSTOM", "revoke": False,
                                                   "refundAmount": 1000}]}),
]]
# A 1x1 PNG, the only body that is not JSON (upload_image).
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")


def test_the_table_covers_every_endpoint():
    assert len({e[0] for e in ENDPOINTS} | {"upload_image"}) == 37


def test_an_image_is_sent_as_its_bytes():
    with iapverify.Signer(SIGNER) as signer:
        req = signer.api_request({"endpoint": "upload_image", "image_identifier": UUID.upper(), "body": PNG,
                                  "query": {"imageSize": "FULL_SIZE"}}, now_ms=NOW)
        assert (req.method, req.url) == ("PUT", f"https://api.storekit.apple.com/inApps/v1/messaging/image/{UUID}?imageSize=FULL_SIZE")
        assert req.body == PNG and req.headers["Content-Type"] == "image/png"
        assert req.to_urllib().data == PNG
        with pytest.raises(iapverify.InvalidArgumentError, match="not a PNG"):
            signer.api_request({"endpoint": "upload_image", "image_identifier": UUID, "body": b"GIF89a"}, now_ms=NOW)


def test_a_realtime_response_carries_its_body():
    with iapverify.Signer(SIGNER) as signer:
        s = signer.sign({"kind": "realtime_response", "nonce": UUID, "alternate_product_id": "pro.yearly",
                         "message_identifier": UUID}, now_ms=NOW)
    assert json.loads(s.body) == {"alternateProduct": {"messageIdentifier": UUID, "productId": "pro.yearly"}}


@pytest.mark.parametrize("endpoint, ids, body, method, path", ENDPOINTS, ids=[e[0] for e in ENDPOINTS])
@pytest.mark.parametrize("environment, host", [("Production", "https://api.storekit.apple.com"),
                                               ("Sandbox", "https://api.storekit-sandbox.apple.com")])
def test_each_endpoint_builds_its_request(endpoint, ids, body, method, path, environment, host):
    if endpoint == "order_lookup" and environment == "Sandbox":
        pytest.skip("order lookup exists only in production")
    call = {"endpoint": endpoint, "environment": environment, **ids}
    if body is not None:
        call["body"] = body
    with iapverify.Signer(SIGNER) as signer:
        req = signer.api_request(call, now_ms=NOW)
    assert (req.method, req.url, req.endpoint, req.environment) == (method, host + path, endpoint, environment)
    assert req.headers["Authorization"].startswith("Bearer ey") and req.headers["Accept"] == "application/json"
    assert req.token_expires_at_ms == NOW + 300_000
    assert req.raw["url"] == req.url
    if body is None:
        assert req.body is None and "Content-Type" not in req.headers
    else:
        assert json.loads(req.body) == body and req.headers["Content-Type"] == "application/json"
    prepared = req.to_urllib()
    assert (prepared.get_method(), prepared.full_url, prepared.data) == (method, req.url, req.body)


@pytest.mark.parametrize("bad", ["a/b", "a?b", "a#b", "..", "a..b", "", "a b", "a%2Fb"])
def test_ids_that_would_change_the_path_are_refused(bad):
    with iapverify.Signer(SIGNER) as signer:
        with pytest.raises(iapverify.InvalidArgumentError):
            signer.api_request({"endpoint": "transaction_info", "transaction_id": bad}, now_ms=NOW)


def test_query_lists_repeat_and_values_are_escaped():
    with iapverify.Signer(SIGNER) as signer:
        req = signer.api_request({"endpoint": "transaction_history", "transaction_id": "1", "revision": "r+1/=",
                                  "query": {"productId": ["a", "b c"], "productType": ["AUTO_RENEWABLE"], "revoked": False}},
                                 now_ms=NOW)
        assert req.url.endswith("/inApps/v2/history/1?revision=r%2B1%2F%3D&productId=a&productId=b%20c"
                                "&productType=AUTO_RENEWABLE&revoked=false")
        status = signer.api_request({"endpoint": "subscription_statuses", "transaction_id": "1", "query": {"status": [1, 4]}},
                                    now_ms=NOW)
        assert status.url.endswith("?status=1&status=4")
        with pytest.raises(iapverify.InvalidArgumentError):
            signer.api_request({"endpoint": "transaction_history", "transaction_id": "1", "query": {"sort": "UP"}}, now_ms=NOW)
        with pytest.raises(iapverify.InvalidArgumentError):
            signer.api_request({"endpoint": "transaction_info", "transaction_id": "1", "query": {"sort": "ASCENDING"}},
                               now_ms=NOW)


# ---- round trips against the fake API -----------------------------------------------------

def fetch_history(signer, verifier, fake, transaction_id="1000"):
    call = {"endpoint": "transaction_history", "environment": "Production", "transaction_id": transaction_id,
            "query": {"sort": "ASCENDING"}}
    pages = []
    while True:
        status, headers, body = send(signer.api_request(call, now_ms=NOW), fake)
        result = verifier.interpret_api_response(body, endpoint="transaction_history", http_status=status,
                                                 retry_after=headers.get("Retry-After"), now_ms=NOW)
        pages.append(result)
        if result.action != "next_page":
            return pages
        call = {**call, **result.next_page}


def add_subscription(fake, months=6):
    for m in range(months):
        fake.add_transaction("Production", txn(str(1000 + m), month=m))


def test_history_across_pages_grants_what_one_page_grants(signer, verifier, fake):
    add_subscription(fake)
    fake.page_size = 2
    pages = fetch_history(signer, verifier, fake)
    assert [p.action for p in pages] == ["next_page", "next_page", "accept"]
    assert all(p.valid for p in pages)
    assert pages[0].next_page == {"revision": "rev-2"}
    collected = [t for p in pages for t in p.transactions]
    assert [t["transaction_id"] for t in collected] == [str(1000 + m) for m in range(6)]
    together = verifier.compute_entitlements({"transactions": collected, "renewal_info": []}, now_ms=NOW)
    assert together.valid and together.entitlement("pro.monthly").active

    fake.page_size = 100
    [single] = fetch_history(signer, verifier, fake)
    assert single.action == "accept" and single.next_page is None
    assert single.entitlements == together.entitlements
    assert [e.transaction_id for e in single.entitlements] == ["1005"]
    assert [r[1] for r in fake.requests][:3] == ["GET"] * 3


def test_subscription_statuses_agree(signer, verifier, fake):
    add_subscription(fake)
    fake.set_renewal("Production", {"originalTransactionId": "5000", "productId": "pro.monthly",
                                    "autoRenewProductId": "pro.monthly", "autoRenewStatus": 1, "signedDate": NOW - DAY}, status=1)
    status, _, body = send(signer.api_request({"endpoint": "subscription_statuses", "transaction_id": "1000",
                                               "query": {"status": [1]}}, now_ms=NOW), fake)
    result = verifier.interpret_api_response(body, endpoint="subscription_statuses", http_status=status, now_ms=NOW)
    assert (result.verdict, result.action) == ("valid", "accept")
    assert [s["apple_state"] for s in result.subscription_statuses] == ["active"]
    assert result.status_disagreements == []
    assert len(result.renewal_info) == 1


def test_advanced_commerce_calls_against_the_fake(signer, verifier, fake):
    add_subscription(fake, 2)
    for name, body in [("cancel_subscription", {"storefront": "USA"}),
                       ("change_subscription_price", {"items": [{"SKU": "news", "price": 4990}]}),
                       ("revoke_subscription", {"refundRiskingPreference": True, "refundType": "PRORATED", "refundReason": "OTHER"})]:
        call = {"endpoint": f"advanced_commerce_{name}", "transaction_id": "1001",
                "body": {"requestInfo": {"requestReferenceId": UUID.upper()}, **body}}
        status, _, answer = send(signer.api_request(call, now_ms=NOW), fake)
        result = verifier.interpret_api_response(answer, endpoint=call["endpoint"], http_status=status, now_ms=NOW)
        assert (status, result.verdict, result.action, result.raw["signed_items"]) == (200, "valid", "accept", 2), result.reason
        assert [t["transaction_id"] for t in result.transactions] == ["1001"]
        assert [r["original_transaction_id"] for r in result.renewal_info] == ["5000"]
        assert result.renewal_info[0]["auto_renew_status"] is False   # the cancel turned it off, and it stays off
    assert result.transactions[0]["cancellation_date_ms"] is not None    # the revoke: Apple's revocationDate
    assert [(a[1], a[3]["requestInfo"]) for a in fake.advanced_commerce][:1] == [("subscription/cancel", {"requestReferenceId": UUID})]
    # A refund answers with the transaction alone; an unknown id is Apple's 4040010.
    call = {"endpoint": "advanced_commerce_request_refund", "transaction_id": "1000",
            "body": {"requestInfo": {"requestReferenceId": UUID}, "refundRiskingPreference": False,
                     "items": [{"SKU": "news", "refundReason": "LEGAL", "refundType": "FULL", "revoke": True}]}}
    status, _, answer = send(signer.api_request(call, now_ms=NOW), fake)
    result = verifier.interpret_api_response(answer, endpoint=call["endpoint"], http_status=status, now_ms=NOW)
    assert (result.verdict, result.raw["signed_items"], result.renewal_info) == ("valid", 1, [])
    status, _, answer = send(signer.api_request({**call, "transaction_id": "9"}, now_ms=NOW), fake)
    result = verifier.interpret_api_response(answer, endpoint=call["endpoint"], http_status=status, now_ms=NOW)
    assert (status, result.action) == (404, "retry_sandbox")
    with pytest.raises(iapverify.InvalidArgumentError, match="storefront"):
        signer.api_request({**call, "body": {**call["body"], "storefront": "us"}}, now_ms=NOW)


def test_rate_limit_then_success(signer, verifier, fake):
    add_subscription(fake, 1)
    fake.rate_limit_next(1, NOW + 7_000)
    req = signer.api_request({"endpoint": "transaction_info", "transaction_id": "1000"}, now_ms=NOW)
    status, headers, body = send(req, fake)
    assert status == 429
    result = verifier.interpret_api_response(body, endpoint="transaction_info", http_status=status,
                                             retry_after=headers["Retry-After"], now_ms=NOW)
    assert (result.action, result.retry_after_ms, result.valid) == ("retry_later", 7_000, False)
    assert result.error_code == 4290000 and result.entitlements == []
    status, _, body = send(req, fake)
    result = verifier.interpret_api_response(body, endpoint="transaction_info", http_status=status, attempt=2, now_ms=NOW)
    assert (result.action, len(result.transactions)) == ("accept", 1)


def test_server_error_backs_off(signer, verifier, fake):
    add_subscription(fake, 1)
    fake.server_error_next(1)
    status, _, body = send(signer.api_request({"endpoint": "transaction_info", "transaction_id": "1000"}, now_ms=NOW), fake)
    result = verifier.interpret_api_response(body, endpoint="transaction_info", http_status=status, attempt=2, now_ms=NOW)
    assert (status, result.action, result.retry_after_ms) == (500, "retry_later", 2_000)


@pytest.mark.parametrize("attempt", [1, 2, 3, 4])
def test_unreadable_retry_after_uses_the_backoff(verifier, attempt):
    result = verifier.interpret_api_response(b"", endpoint="transaction_info", http_status=429, retry_after="soon",
                                             attempt=attempt, now_ms=NOW)
    assert (result.action, result.retry_after_ms) == ("retry_later", 1000 * 2 ** (attempt - 1))
    assert "soon" in result.reason


def test_the_fifth_attempt_gives_up(verifier):
    result = verifier.interpret_api_response(b"", endpoint="transaction_info", http_status=429, retry_after=str(NOW + 1),
                                             attempt=5, now_ms=NOW)
    assert result.action == "give_up" and not result.valid


def test_a_sandbox_transaction_is_looked_up_in_sandbox(signer, verifier, fake):
    fake.add_transaction("Sandbox", txn("777", environment="Sandbox"))
    status, _, body = send(signer.api_request({"endpoint": "transaction_info", "transaction_id": "777"}, now_ms=NOW), fake)
    result = verifier.interpret_api_response(body, endpoint="transaction_info", http_status=status, now_ms=NOW)
    assert (status, result.error_code, result.action) == (404, 4040010, "retry_sandbox")

    req = signer.api_request({"endpoint": "transaction_info", "environment": "Sandbox", "transaction_id": "777"}, now_ms=NOW)
    status, _, body = send(req, fake)
    result = verifier.interpret_api_response(body, endpoint="transaction_info", environment="Sandbox", http_status=status,
                                             now_ms=NOW)
    assert (result.action, [t["transaction_id"] for t in result.transactions]) == ("accept", ["777"])

    req = signer.api_request({"endpoint": "transaction_info", "environment": "Sandbox", "transaction_id": "778"}, now_ms=NOW)
    status, _, body = send(req, fake)
    result = verifier.interpret_api_response(body, endpoint="transaction_info", environment="Sandbox", http_status=status,
                                             now_ms=NOW)
    assert (status, result.error_code, result.action) == (404, 4040010, "reject")


def test_a_refused_token_means_fix_the_configuration(verifier, fake):
    with iapverify.Signer({**SIGNER, "key_id": "OTHERKEY99", "test_base_url": fake.base_url}) as wrong:
        status, _, body = send(wrong.api_request({"endpoint": "transaction_info", "transaction_id": "1"}, now_ms=NOW), fake)
    assert status == 401 and len(fake.errors) == 1 and "OTHERKEY99" in fake.errors[0]
    fake.errors.clear()
    result = verifier.interpret_api_response(body, endpoint="transaction_info", http_status=status, now_ms=NOW)
    assert (result.action, result.valid) == ("fix_configuration", False)


@pytest.mark.parametrize("bad_item, kwargs, verdict", [
    ("tampered", {"tampered": True}, "signature_invalid"),
    ("other app", {"payload": {"bundleId": "com.example.other"}}, "bundle_mismatch"),
    ("from sandbox", {"payload": {"environment": "Sandbox"}}, "environment_rejected"),
])
def test_one_bad_item_spoils_the_whole_page(signer, verifier, fake, bad_item, kwargs, verdict):
    add_subscription(fake, 3)
    fake.add_transaction("Production", txn("1003", month=3, **kwargs.get("payload", {})), tampered=kwargs.get("tampered", False))
    fake.page_size = 10
    [result] = fetch_history(signer, verifier, fake)
    assert (result.verdict, result.action, result.valid) == (verdict, "reject", False)
    assert result.entitlements == [] and result.transactions == [] and result.next_page is None


def test_an_answer_of_another_shape_is_malformed(verifier):
    body = json.dumps({"signedTransactionInfo": sign_jws(txn("1000"))})
    assert verifier.interpret_api_response(body, endpoint="transaction_info", http_status=200, now_ms=NOW).action == "accept"
    result = verifier.interpret_api_response(body, endpoint="transaction_history", http_status=200, now_ms=NOW)
    assert (result.verdict, result.action, result.entitlements) == ("malformed", "reject", [])


def test_empty_answers_and_argument_checks(verifier):
    for empty in (b"", None, "{}"):
        result = verifier.interpret_api_response(empty, endpoint="finish_transaction", http_status=200, now_ms=NOW)
        assert (result.verdict, result.action) == ("valid", "accept")
    with pytest.raises(iapverify.InvalidArgumentError):
        verifier.interpret_api_response(b"", endpoint="no_such_endpoint", http_status=200, now_ms=NOW)
    with pytest.raises(TypeError):
        verifier.interpret_api_response(b"", endpoint="transaction_info", http_status="200", now_ms=NOW)
    with pytest.raises(TypeError):
        verifier.interpret_api_response(b"", endpoint="transaction_info", http_status=429, retry_after=5, now_ms=NOW)


# ---- iOS 6 transaction receipts ------------------------------------------------------------

def test_a_transaction_receipt_is_read_not_verified():
    text = (ROOT / "Tests" / "shared" / "transaction_receipt_ios6.b64").read_text()
    r = iapverify.read_transaction_receipt(text)
    assert (r.verdict, r.transaction_id, r.environment, r.trusted) == ("unverified", "1000000046178818", "Sandbox", False)
    assert r.purchase_info["product-id"] == "com.example.coins" and "not verified" in r.reason
    assert iapverify.read_transaction_receipt(text.encode()).transaction_id == "1000000046178818"
    bad = iapverify.read_transaction_receipt(b"hello")
    assert (bad.verdict, bad.transaction_id) == ("malformed", None)
    with pytest.raises(TypeError):
        iapverify.read_transaction_receipt(12345)  # type: ignore[arg-type]


def test_what_callers_naturally_pass():
    import uuid as _uuid
    pem_bytes = SIGNER["private_key_pem"].encode()
    with iapverify.Signer(dict(SIGNER, private_key_pem=pem_bytes)) as signer:        # bytes PEM
        s = signer.sign({"kind": "promotional_offer_v2", "nonce": _uuid.UUID(UUID), "product_id": "p",
                         "offer_identifier": "o"}, now_ms=NOW)                          # a uuid.UUID nonce
        assert s.nonce == UUID
        with pytest.raises(iapverify.InvalidArgumentError, match='did you mean "transaction_id"'):
            signer.api_request({"endpoint": "transaction_info", "transactionId": "1"}, now_ms=NOW)
        req = signer.api_request({"endpoint": "transaction_history", "transaction_id": "1", "revision": None}, now_ms=NOW)
        assert "revision" not in req.url
