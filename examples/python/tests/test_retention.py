"""POST /apple/retention, Apple's Retention Messaging realtime URL, on SQLite and PostgreSQL: a
realtime request signed by the fake Apple gets the configured answer (an offer signed by the
developer key), Apple's repeat of it the same answer, a replay or a request for another app
nothing; the answer is the body the library's realtime_response kind built."""
from __future__ import annotations

import base64
import json
import sys
import uuid

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from service import PurchaseService, serve
from support import post
from test_subscriber_year import FAKE_DIR, MONTHLY, SUB, T0, config

sys.path.insert(0, str(FAKE_DIR))
from fakeapi import sign_jws  # noqa: E402

NOW = T0 + 60_000
MESSAGE = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
RETENTION = {MONTHLY: {"message_identifier": MESSAGE,
                       "promotional_offer": {"version": "v2", "product_id": MONTHLY, "offer_identifier": "stay50"}}}


def realtime_request(request_id: str, app_apple_id: int = 1234567890, signed: int = NOW - 1000,
                     product: str = MONTHLY) -> str:
    return sign_jws({"originalTransactionId": SUB, "appAppleId": app_apple_id, "productId": product,
                     "userLocale": "en-US", "requestIdentifier": request_id, "signedDate": signed,
                     "environment": "Production"}, FAKE_DIR)


@pytest.fixture
def retention(ledger):
    clock = {"now": NOW}
    service = PurchaseService(config(), ledger, clock=lambda: clock["now"],
                              signer_config=json.loads((FAKE_DIR / "signer.json").read_text()), retention=RETENTION)
    server = serve(service, "127.0.0.1", 0, retry_every_s=None)
    yield service, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def developer_verifies(jws: str) -> bool:
    key = serialization.load_pem_public_key((FAKE_DIR / "developer.pub.pem").read_bytes())
    head, body, sig = jws.split(".")
    raw = base64.urlsafe_b64decode(sig + "=" * (-len(sig) % 4))
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    try:
        key.verify(der, f"{head}.{body}".encode(), ec.ECDSA(hashes.SHA256()))
        return True
    except Exception:
        return False


def test_a_realtime_request_gets_the_configured_offer_once(retention):
    service, url = retention
    request_id = str(uuid.uuid4())
    status, body = post(url + "/apple/retention", {"signedPayload": realtime_request(request_id)})
    assert status == 200, body
    offer = body["promotionalOffer"]
    assert offer["messageIdentifier"] == MESSAGE
    assert developer_verifies(offer["promotionalOfferSignatureV2"])
    # Apple asks again (a retry): the same answer, not a second offer.
    again_status, again = post(url + "/apple/retention", {"signedPayload": realtime_request(request_id)})
    assert (again_status, again) == (200, body)


def test_nothing_is_offered_for_another_product_a_replay_or_another_app(retention):
    service, url = retention
    status, body = post(url + "/apple/retention", {"signedPayload": realtime_request(str(uuid.uuid4()), product="coins")})
    assert (status, body) == (200, {})
    stale = realtime_request(str(uuid.uuid4()), signed=NOW - 10 * 60_000)
    assert post(url + "/apple/retention", {"signedPayload": stale}) == (200, {})
    status, body = post(url + "/apple/retention", {"signedPayload": realtime_request(str(uuid.uuid4()), app_apple_id=99)})
    assert status == 400 and body["verdict"] == "bundle_mismatch", body
    # A notification is not a realtime request.
    status, body = post(url + "/apple/retention", {"signedPayload": sign_jws(
        {"notificationType": "TEST", "notificationUUID": str(uuid.uuid4()), "signedDate": NOW,
         "data": {"bundleId": "com.example.fake", "environment": "Production", "appAppleId": 1234567890}}, FAKE_DIR)})
    assert status == 400 and body["verdict"] == "malformed", body
