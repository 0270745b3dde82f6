"""iapverify's Python binding side by side with Apple's app-store-server-library (PyPI, 3.1.2).

Four parts, each case classified by parity.py as exact, stricter (with the docs/ line that says
why) or different (which fails):

1. signed data: every kind of payload, made with the fake Apple PKI of Tests/shared/fakeapple
   (Xcode-shaped ones with a self-signed certificate) and the real Apple-signed JWS of
   Tests/IAPVerifyTests/Fixtures, under each environment, and with the wrong root, bundle,
   environment and app Apple ID (and a flipped signature bit);
2. requests: what Apple's AppStoreServerAPIClient would send (its transport intercepted, nothing
   leaves the process) against iapverify's Signer.api_request, for every call and host;
3. signatures: Apple's signature creators and its API token against Signer.sign and
   Signer.api_token, with the clock and nonce pinned; each side's ECDSA signature is checked with
   the other's expectations;
4. answers: the same response bodies (from the fake App Store Server API on 127.0.0.1, served to
   both clients, and written here) decoded by Apple's models and interpreted by iapverify.

Deterministic: fixed keys, pinned clocks and nonces; ECDSA's random k changes no outcome.
"""
from __future__ import annotations

import base64
import contextlib
import json
import uuid
from pathlib import Path
from typing import Any, Callable, Optional
from urllib.parse import parse_qsl, urlsplit

import pytest
import requests
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

import iapverify
import parity
import support as S
from appstoreserverlibrary import api_client as apple_api
from appstoreserverlibrary.jws_signature_creator import (AdvancedCommerceAPIInAppSignatureCreator,
                                                         IntroductoryOfferEligibilitySignatureCreator,
                                                         PromotionalOfferV2SignatureCreator)
from appstoreserverlibrary.models.Environment import Environment as AppleEnvironment
from appstoreserverlibrary.promotional_offer import PromotionalOfferSignatureCreator

import fakeapi

# ================================================================================================
# 1. Signed data
# ================================================================================================

TX_ID, ORIGINAL_ID = "2000000123456789", "2000000100000000"
APP_TX_ID = "704000000000000001"
ACCOUNT_TOKEN = "7e3fb20b-4cdb-47cc-936d-99d65f608138"


def transaction(env: str, **more: Any) -> dict:
    p = {"transactionId": TX_ID, "originalTransactionId": ORIGINAL_ID, "webOrderLineItemId": "2000000000123",
         "bundleId": S.BUNDLE, "productId": "com.example.fake.monthly", "subscriptionGroupIdentifier": "21000001",
         "purchaseDate": S.SIGNED - S.DAY, "originalPurchaseDate": S.SIGNED - 30 * S.DAY,
         "expiresDate": S.SIGNED + 29 * S.DAY, "quantity": 1, "type": "Auto-Renewable Subscription",
         "appAccountToken": ACCOUNT_TOKEN, "inAppOwnershipType": "PURCHASED", "signedDate": S.SIGNED,
         "offerType": 1, "offerIdentifier": "intro.week", "environment": env, "storefront": "USA",
         "storefrontId": "143441", "transactionReason": "PURCHASE", "currency": "USD", "price": 9990,
         "offerDiscountType": "FREE_TRIAL", "offerPeriod": "P1W", "appTransactionId": APP_TX_ID, "isUpgraded": False}
    p.update(more)
    return p


def refunded_transaction(env: str) -> dict:
    return transaction(env, revocationDate=S.SIGNED - 1000, revocationReason=0, revocationType="REFUND_PRORATED",
                       revocationPercentage=83333, billingPlanType="MONTHLY",
                       commitmentInfo={"billingPeriodNumber": 2, "totalBillingPeriods": 12,
                                       "commitmentExpiresDate": S.SIGNED + 300 * S.DAY, "commitmentPrice": 99990})


def renewal_info(env: str) -> dict:
    return {"originalTransactionId": ORIGINAL_ID, "autoRenewProductId": "com.example.fake.yearly",
            "productId": "com.example.fake.monthly", "autoRenewStatus": 1, "isInBillingRetryPeriod": False,
            "expirationIntent": 1, "priceIncreaseStatus": 0, "gracePeriodExpiresDate": S.SIGNED + 16 * S.DAY,
            "signedDate": S.SIGNED, "environment": env, "recentSubscriptionStartDate": S.SIGNED - 30 * S.DAY,
            "renewalDate": S.SIGNED + 29 * S.DAY, "renewalPrice": 99990, "currency": "USD", "offerType": 2,
            "offerIdentifier": "promo.year", "offerDiscountType": "PAY_AS_YOU_GO", "offerPeriod": "P1M",
            "eligibleWinBackOfferIds": ["winback.1", "winback.2"], "appAccountToken": ACCOUNT_TOKEN,
            "appTransactionId": APP_TX_ID}


def app_transaction(env: str) -> dict:
    return {"receiptType": env, "appAppleId": S.APP_ID, "bundleId": S.BUNDLE, "applicationVersion": "1.2",
            "versionExternalIdentifier": 882231, "receiptCreationDate": S.SIGNED - 1000,
            "originalPurchaseDate": S.SIGNED - 365 * S.DAY, "originalApplicationVersion": "1.0",
            "deviceVerification": "cYUsXc53EbYc0pOeXG5d6/31LGHeVGf84sqSN0OrJi5u",
            "deviceVerificationNonce": "48c8b92d-ce0d-4229-bedf-e61b4f9cfc92", "appTransactionId": APP_TX_ID,
            "originalPlatform": "iOS", "signedDate": S.SIGNED}


def notification(env: str, notification_type: str, subtype: Optional[str], **body: Any) -> dict:
    p = {"notificationType": notification_type, "notificationUUID": "0e1b4c3a-5d2f-4c6b-9a1e-3f2d1c0b9a87",
         "version": "2.0", "signedDate": S.SIGNED, **body}
    if subtype:
        p["subtype"] = subtype
    return p


def data(env: str, *, bundle: str = S.BUNDLE, **more: Any) -> dict:
    return {"appAppleId": S.APP_ID, "bundleId": bundle, "bundleVersion": "1.2", "environment": env, **more}


def fake_payloads(env: str) -> dict[str, tuple[str, dict]]:
    """kind name -> (Apple's method, the payload); the nested tokens signed like the outer one."""
    sign = lambda p: S.sign_for(env, p)  # noqa: E731
    external_id = ("SANDBOX_" if env == "Sandbox" else "") + "3c6e9b52-0d3a-4f7e-8a51-7c2b9e4d1f60"
    return {
        "transaction": ("transaction", transaction(env)),
        "transaction_refunded": ("transaction", refunded_transaction(env)),
        "renewal_info": ("renewal_info", renewal_info(env)),
        "app_transaction": ("app_transaction", app_transaction(env)),
        "notification_data": ("notification", notification(env, "DID_RENEW", None, data=data(
            env, status=1, signedTransactionInfo=sign(transaction(env)), signedRenewalInfo=sign(renewal_info(env)))),),
        "notification_consumption": ("notification", notification(env, "CONSUMPTION_REQUEST", None, data=data(
            env, consumptionRequestReason="UNINTENDED_PURCHASE", signedTransactionInfo=sign(transaction(env))))),
        "notification_summary": ("notification", notification(env, "RENEWAL_EXTENSION", "SUMMARY", summary={
            "requestIdentifier": "a8b4f6d2-3c1e-4e5f-9a7b-1c2d3e4f5a6b", "environment": env, "appAppleId": S.APP_ID,
            "bundleId": S.BUNDLE, "productId": "com.example.fake.monthly", "storefrontCountryCodes": ["USA", "FRA"],
            "failedCount": 1, "succeededCount": 41})),
        "notification_app_data": ("notification", notification(env, "RESCIND_CONSENT", None, appData={
            "appAppleId": S.APP_ID, "bundleId": S.BUNDLE, "environment": env,
            "signedAppTransactionInfo": sign(app_transaction(env))})),
        "notification_external_token": ("notification", notification(env, "EXTERNAL_PURCHASE_TOKEN", "UNREPORTED",
                                                                      externalPurchaseToken={
            "externalPurchaseId": external_id, "tokenCreationDate": S.SIGNED - 1000, "appAppleId": S.APP_ID,
            "bundleId": S.BUNDLE})),
        "notification_test": ("notification", notification(env, "TEST", None, data={
            "bundleId": S.BUNDLE, "environment": env, "appAppleId": S.APP_ID})),
        # Retention Messaging: a realtime request names the app by appAppleId alone.
        "realtime_request": ("realtime_request", {
            "originalTransactionId": ORIGINAL_ID, "appAppleId": S.APP_ID, "productId": "com.example.fake.monthly",
            "userLocale": "en-US", "requestIdentifier": "3db5c98d-8acf-4e29-831e-8e1f82f9f6e9",
            "signedDate": S.SIGNED, "environment": env}),
        # Transaction-like, for another app, no transactionId: no known kind.
        "unknown_other_app": ("transaction", {"bundleId": S.OTHER_BUNDLE, "productId": "com.example.other.coins",
                                               "purchaseDate": S.SIGNED - 1000, "signedDate": S.SIGNED,
                                               "environment": env}),
    }


EXPECTED_KIND = {"transaction": "transaction", "renewal_info": "renewal_info", "app_transaction": "app_transaction",
                 "notification": "notification", "realtime_request": "realtime_request"}
# Verified without options.kind, a payload of no modelled shape is kind "unknown" (docs/storekit2.md);
# Apple's verify_and_decode_signed_transaction decodes anything into its transaction model.
KIND_OVERRIDES = {"unknown_other_app": "unknown"}
VARIANTS = ("ok", "wrong_root", "wrong_bundle", "wrong_environment", "wrong_app_apple_id", "tampered")
WRONG_ENVIRONMENT = {"Production": "Sandbox", "Sandbox": "Production", "Xcode": "Sandbox", "LocalTesting": "Sandbox"}

_TOKENS: dict[tuple[str, str], tuple[str, str, dict]] = {}


def fake_token(kind: str, env: str) -> tuple[str, str, dict]:
    if (kind, env) not in _TOKENS:
        method, payload = fake_payloads(env)[kind]
        _TOKENS[(kind, env)] = (method, S.sign_for(env, payload), payload)
    return _TOKENS[(kind, env)]


class Setting:
    """How both verifiers are set up for one case."""

    def __init__(self, env: str, *, bundle: str, app_id: Optional[int], roots: tuple, include_apple_roots: bool,
                 xcode_roots: tuple) -> None:
        self.env, self.bundle, self.app_id = env, bundle, app_id
        self.roots, self.include_apple_roots, self.xcode_roots = roots, include_apple_roots, xcode_roots

    def apple(self):
        return S.apple_verifier(self.env, bundle=self.bundle, app_id=self.app_id, roots=self.roots)

    def iapverify(self):
        return S.iapverify_verifier(S.iapverify_config(
            self.env, bundle=self.bundle, app_id=self.app_id, roots=() if self.include_apple_roots else self.roots,
            include_apple_roots=self.include_apple_roots, xcode_roots=self.xcode_roots))


def setting_for(variant: str, env: str, *, bundle: str, app_id: Optional[int], apple_roots: tuple,
                our_roots_are_apple: bool, xcode_cert) -> Setting:
    wrong_root = variant == "wrong_root"
    return Setting(
        WRONG_ENVIRONMENT[env] if variant == "wrong_environment" else env,
        bundle=S.OTHER_BUNDLE if variant == "wrong_bundle" else bundle,
        app_id=S.OTHER_APP_ID if variant == "wrong_app_apple_id" else app_id,
        roots=(S.OTHER_ROOT,) if wrong_root else apple_roots,
        include_apple_roots=our_roots_are_apple and not wrong_root,
        xcode_roots=(S.xcode_signer(S.OTHER_XCODE_SEED)[1],) if wrong_root else (xcode_cert,))


def effective_environment(model: Any) -> Optional[str]:
    """The environment Apple's verifier judged a notification by."""
    for part in (model.data, model.summary, model.appData):
        if part is not None:
            return S.plain(part.environment) if part.environment is not None else part.rawEnvironment
    if model.externalPurchaseToken is not None:
        token_id = model.externalPurchaseToken.externalPurchaseId or ""
        return "Sandbox" if token_id.startswith("SANDBOX") else "Production"
    return None


def compare_decoded(method: str, apple: S.AppleAnswer, r: iapverify.JWSResult, problems: list[str],
                    via_payload: list[str], expected_kind: Optional[str] = None) -> None:
    payload = r.raw.get("payload") or {}
    model = apple_d = S.apple_dict(apple.model)
    expected = expected_kind or EXPECTED_KIND[method]
    if expected == "unknown":
        if r.kind != "unknown":
            problems.append(f"kind: iapverify says {r.kind!r}, not 'unknown'")
        S.compare_record("payload", apple_d, None, payload, {}, problems, via_payload)
        return
    if r.kind != expected:
        problems.append(f"kind: Apple's {S.APPLE_METHODS[method]} decoded it; iapverify says kind {r.kind!r}")
    if method == "transaction":
        S.compare_record("transaction", apple_d, r.transaction, payload, S.TRANSACTION_MEMBERS, problems, via_payload,
                         {"bundleId": r.raw.get("bundle_id")})
    elif method == "renewal_info":
        S.compare_record("renewal_info", apple_d, r.renewal_info, payload, S.RENEWAL_MEMBERS, problems, via_payload)
    elif method == "app_transaction":
        S.compare_record("app_transaction", apple_d, None, payload, {}, problems, via_payload)
        if r.raw.get("bundle_id") != apple.model.bundleId:
            problems.append(f"bundle_id: Apple {apple.model.bundleId!r}, iapverify {r.raw.get('bundle_id')!r}")
    elif method == "realtime_request":
        ours = r.realtime_request if isinstance(getattr(r, "realtime_request", None), dict) else None
        sources = {}
        if ours is not None:
            for name in model:
                key = S._snake(name)
                if key in ours:
                    sources[name] = ours[key]
        S.compare_record("realtime_request", apple_d, None, payload, {}, problems, via_payload, sources)
    elif method == "notification":
        n = r.notification
        top = {k: v for k, v in apple_d.items() if k not in ("data", "summary", "externalPurchaseToken", "appData")}
        S.compare_record("notification", top, n, payload, {}, problems, via_payload)
        for part in ("data", "summary", "externalPurchaseToken", "appData"):
            if part in apple_d:
                S.compare_record(f"notification.{part}", apple_d[part], None, payload.get(part), {}, problems, via_payload)
        env = effective_environment(apple.model)
        if not S.same(env, r.environment):
            problems.append(f"environment: Apple judged it {env!r}, iapverify says {S.plain(r.environment)!r}")
        for name, nested in apple.nested.items():
            nested_d = S.apple_dict(nested)
            if name == "signedTransactionInfo":
                t = n.transaction if n else None
                S.compare_record("data.transaction", nested_d, t, None, S.TRANSACTION_MEMBERS, problems, via_payload,
                                 bundle_source(t, nested_d, via_payload, "data.transaction"))
            elif name == "signedRenewalInfo":
                S.compare_record("data.renewal_info", nested_d, n.renewal_info if n else None, None,
                                 S.RENEWAL_MEMBERS, problems, via_payload)


def bundle_source(record: Any, apple_d: dict, via_payload: list[str], what: str) -> dict:
    """A nested record's bundleId: its own ``bundle_id`` member when iapverify writes one; else
    (verified equal to the config's, as the verdict says) not compared."""
    if record is not None and "bundle_id" in record:
        return {"bundleId": record["bundle_id"]}
    if "bundleId" in apple_d:
        via_payload.append(f"{what}.bundleId (no member; verified against the config)")
    return {"bundleId": apple_d.get("bundleId")}


def run_jws_case(case: str, method: str, token: str, setting: Setting, now_ms: int, *, nested: bool = True,
                 options: Optional[dict] = None, expected_kind: Optional[str] = None) -> parity.Outcome:
    apple = S.apple_verify(setting.apple(), method, token, nested=nested)
    verifier, note = setting.iapverify()
    with verifier:
        r = verifier.verify_jws(token, now_ms=now_ms, options=options)
    ours_ok = r.verdict == "valid"
    problems: list[str] = []
    via_payload: list[str] = []
    refused_more = False
    detail = note
    if apple.ok and not ours_ok:
        problems.append(f"Apple accepts; iapverify {r.verdict}: {r.reason}")
        refused_more = True
    elif ours_ok and not apple.ok:
        problems.append(f"iapverify accepts (kind {r.kind}); Apple refuses: {apple.status}")
    elif ours_ok and apple.ok:
        compare_decoded(method, apple, r, problems, via_payload, expected_kind)
    else:
        same_reason = r.verdict in S.SAME_REFUSAL.get((apple.status or "").split(" in ")[0], set())
        detail = f"both refuse: Apple {apple.status}, iapverify {r.verdict}" + ("" if same_reason else " (other check first)")
        detail += f"; {note}" if note else ""
    if ours_ok and apple.ok and not problems:
        detail = (f"both accept; fields equal ({len(via_payload)} via iapverify's payload)" + (f"; {note}" if note else ""))
    return parity.settle(case, problems, iapverify_refused_more=refused_more, detail=detail)


FAKE_KINDS = list(fake_payloads("Sandbox"))


@pytest.mark.parametrize("env", S.ENVIRONMENTS)
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("kind", FAKE_KINDS)
def test_fake_signed_data(kind: str, variant: str, env: str, monkeypatch) -> None:
    S.pin_apple(monkeypatch, S.NOW)
    method, token, _ = fake_token(kind, env)
    if variant == "tampered":
        token = S.tamper(token)
    setting = setting_for(variant, env, bundle=S.BUNDLE, app_id=S.APP_ID, apple_roots=(S.FAKE_ROOT,),
                          our_roots_are_apple=False, xcode_cert=S.xcode_signer(S.XCODE_SEED)[1])
    parity.require(run_jws_case(f"jws/fake/{kind}/{env}/{variant}", method, token, setting, S.NOW,
                                expected_kind=KIND_OVERRIDES.get(kind)))


@pytest.mark.parametrize("env", ("Production", "Sandbox"))
def test_unknown_shape_asked_for_as_a_transaction(env: str, monkeypatch) -> None:
    """The host names the kind it expects, as Apple's verify_and_decode_signed_transaction does:
    a payload without a transaction's fields, for the configured app, is not a transaction."""
    S.pin_apple(monkeypatch, S.NOW)
    method, token, _ = fake_token("unknown_other_app", env)
    setting = setting_for("ok", env, bundle=S.OTHER_BUNDLE, app_id=S.APP_ID, apple_roots=(S.FAKE_ROOT,),
                          our_roots_are_apple=False, xcode_cert=None)
    parity.require(run_jws_case(f"jws/fake/unknown_shape_as_transaction/{env}/ok", method, token, setting, S.NOW,
                                options={"kind": "transaction"}))


@pytest.mark.parametrize("env", ("Production", "Sandbox"))
def test_fake_notification_with_nested_item_of_another_app(env: str, monkeypatch) -> None:
    """Apple's verify_and_decode_notification alone does not look into the nested items."""
    S.pin_apple(monkeypatch, S.NOW)
    nested = fakeapi.sign_jws(transaction(env, bundleId=S.OTHER_BUNDLE), S.FAKE)
    token = fakeapi.sign_jws(notification(env, "DID_RENEW", None, data=data(env, signedTransactionInfo=nested)), S.FAKE)
    setting = setting_for("ok", env, bundle=S.BUNDLE, app_id=S.APP_ID, apple_roots=(S.FAKE_ROOT,),
                          our_roots_are_apple=False, xcode_cert=None)
    parity.require(run_jws_case(f"jws/fake/notification_nested_other_bundle/{env}/ok", "notification", token,
                                setting, S.NOW, nested=False))


@pytest.mark.parametrize("pair", [("Xcode", "LocalTesting"), ("LocalTesting", "Xcode")])
def test_xcode_and_local_testing_are_told_apart(pair: tuple[str, str], monkeypatch) -> None:
    """Apple's verifier for one of the two local environments refuses the other's data."""
    S.pin_apple(monkeypatch, S.NOW)
    signed_as, checked_as = pair
    method, token, _ = fake_token("transaction", signed_as)
    setting = Setting(checked_as, bundle=S.BUNDLE, app_id=S.APP_ID, roots=(S.FAKE_ROOT,), include_apple_roots=False,
                      xcode_roots=(S.xcode_signer(S.XCODE_SEED)[1],))
    parity.require(run_jws_case(f"jws/fake/transaction/{signed_as}_checked_as_{checked_as}/ok", method, token,
                                setting, S.NOW))


# ---- the real Apple-signed (and Xcode-signed) JWS of the project's fixtures ---------------------

def fixture_method(stem: str) -> str:
    for prefix, method in (("notification", "notification"), ("renewal", "renewal_info"),
                           ("transaction", "transaction"), ("xcode-signed-transaction", "transaction"),
                           ("xcode-signed-renewal", "renewal_info"), ("xcode-signed-app", "app_transaction")):
        if stem.startswith(prefix):
            return method
    raise AssertionError(stem)


def fixture_facts(token: str) -> tuple[str, Optional[int], str, int]:
    """bundle, appAppleId, environment and a time to check at (a day after it was signed)."""
    p = S.decode_part(token, 1)
    inner = p.get("data") or {}
    bundle = p.get("bundleId") or inner.get("bundleId")
    app_id = p.get("appAppleId", inner.get("appAppleId"))
    env = p.get("environment") or inner.get("environment") or p.get("receiptType")
    signed = p.get("signedDate") or p.get("receiptCreationDate")
    if signed is None and inner.get("signedTransactionInfo"):
        signed = S.decode_part(inner["signedTransactionInfo"], 1)["signedDate"]
    return bundle, app_id, env, int(signed) + S.DAY


REAL = sorted(p for p in (S.FIXTURES / "jws").glob("*.jws"))
XCODE = sorted(p for p in (S.FIXTURES / "xcode" / "jws").glob("*.jws"))
RENEWAL_BUNDLES = {  # a renewal info names no bundle: the app it came with
    "renewalinfo_autorenew_off_sandbox_2022-11": "Com.VoiceRecording.Telephone",
    "renewalinfo_sandbox_2022-03": "com.audaos.audarecorder",
    "renewalinfo_sandbox_2023-05": "com.example.renewal"}


@pytest.mark.parametrize("env", S.ENVIRONMENTS)
@pytest.mark.parametrize("variant", ("ok", "wrong_root", "wrong_bundle", "wrong_app_apple_id"))
@pytest.mark.parametrize("path", REAL + XCODE, ids=lambda p: p.stem)
def test_fixture_signed_data(path: Path, variant: str, env: str, monkeypatch) -> None:
    token = path.read_text().strip()
    bundle, app_id, _, now = fixture_facts(token)
    bundle = bundle or RENEWAL_BUNDLES.get(path.stem, "com.example.renewal")
    S.pin_apple(monkeypatch, now)
    xcode = path in XCODE
    setting = setting_for(variant, env, bundle=bundle, app_id=app_id or S.APP_ID,
                          apple_roots=(S.APPLE_ROOT_G3,), our_roots_are_apple=True, xcode_cert=S.XCODE_FIXTURE_CERT)
    if variant == "wrong_root" and not xcode:
        setting.roots, setting.include_apple_roots = (S.FAKE_ROOT,), False
    source = "xcode" if xcode else "apple"
    parity.require(run_jws_case(f"jws/{source}/{path.stem}/{env}/{variant}", fixture_method(path.stem), token,
                                setting, now))


def test_old_notification_without_signed_date_checked_years_later(monkeypatch) -> None:
    """A notification of 2022 without signedDate, checked in 2030: Apple validates its chain at the
    current time (its leaf has expired); iapverify at the nested transaction's signedDate."""
    path = S.FIXTURES / "jws" / "notification_DID_RENEW_sandbox_2022-03_no_signedDate.jws"
    token = path.read_text().strip()
    bundle, app_id, env, _ = fixture_facts(token)
    now = 1893456000000  # 2030-01-01
    S.pin_apple(monkeypatch, now)
    setting = Setting(env, bundle=bundle, app_id=app_id, roots=(S.APPLE_ROOT_G3,), include_apple_roots=True,
                      xcode_roots=())
    parity.require(run_jws_case(f"jws/apple/{path.stem}/{env}/checked_in_2030", "notification", token, setting, now))


# ================================================================================================
# 2. Requests
# ================================================================================================

SIGNER = json.loads((S.FAKE / "signer.json").read_text())
DEVELOPER_KEY = SIGNER["private_key_pem"].encode()
DEVELOPER_PUBLIC = serialization.load_pem_public_key((S.FAKE / "developer.pub.pem").read_bytes())
LOCAL_BASE = "https://local-testing-base-url"   # Apple's client's LocalTesting host, made ours too


class Captured:
    def __init__(self, method: str, url: str, headers: dict, body: Optional[bytes]) -> None:
        self.method, self.url, self.headers, self.body = method, url, headers, body


class InterceptedClient(apple_api.AppStoreServerAPIClient):
    """Apple's client whose transport only records the prepared request (nothing is sent)."""

    captured: Optional[Captured] = None

    def _execute_request(self, method, url, params, headers, json, data):  # noqa: A002, ANN001
        prepared = requests.Request(method, url, params=params, headers=headers, json=json, data=data).prepare()
        body = prepared.body.encode() if isinstance(prepared.body, str) else prepared.body
        self.captured = Captured(prepared.method, prepared.url, dict(prepared.headers), body)
        response = requests.Response()
        response.status_code = 200
        response._content = b"{}"
        response.headers["content-type"] = "application/json"
        return response


def apple_client(env: str) -> InterceptedClient:
    return InterceptedClient(DEVELOPER_KEY, SIGNER["key_id"], SIGNER["issuer_id"], SIGNER["bundle_id"],
                             AppleEnvironment(env))


def our_signer() -> iapverify.Signer:
    return iapverify.Signer(dict(SIGNER, local_testing_base_url=LOCAL_BASE))


def _model(name: str, module: Optional[str] = None):
    import importlib
    return getattr(importlib.import_module(f"appstoreserverlibrary.models.{module or name}"), name)


M = {name: _model(name) for name in (
    "BulletPoint", "ConsumptionRequest", "ConsumptionRequestV1", "DefaultConfigurationRequest", "DeliveryStatus",
    "ExtendReasonCode", "ExtendRenewalDateRequest", "HeaderPosition", "ImageSize", "InAppOwnershipType",
    "MassExtendRenewalDateRequest", "NotificationHistoryRequest", "NotificationTypeV2", "PerformanceTestRequest",
    "RealtimeUrlRequest", "RefundPreference", "Status", "Subtype", "TransactionHistoryRequest",
    "UpdateAppAccountTokenRequest", "UploadMessageImage", "UploadMessageRequestBody")}
M["Order"] = _model("Order", "TransactionHistoryRequest")
M["ProductType"] = _model("ProductType", "TransactionHistoryRequest")
IMAGE_ID = uuid.UUID("7E3FB20B-4CDB-47CC-936D-99D65F608138")
MESSAGE_ID = uuid.UUID("1C4B1E4F-7D6A-4E2B-9C3D-5A6B7C8D9E0F")
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(24))
V2 = apple_api.GetTransactionHistoryVersion.V2
V1 = apple_api.GetTransactionHistoryVersion.V1
FULL_HISTORY = dict(startDate=1700000000000, endDate=1767225600000, productIds=["com.example.a", "com.example.b"],
                    productTypes=["AUTO_RENEWABLE", "NON_CONSUMABLE"], sort="DESCENDING",
                    subscriptionGroupIdentifiers=["21000001"], inAppOwnershipType="PURCHASED")


def history_request(revoked: Optional[bool] = None, **fields: Any):
    f = dict(fields)
    if "productTypes" in f:
        f["productTypes"] = [M["ProductType"](t) for t in f["productTypes"]]
    if "sort" in f:
        f["sort"] = M["Order"](f["sort"])
    if "inAppOwnershipType" in f:
        f["inAppOwnershipType"] = M["InAppOwnershipType"](f["inAppOwnershipType"])
    return M["TransactionHistoryRequest"](revoked=revoked, **f)


def history_query(revoked: Optional[bool] = None, **fields: Any) -> dict:
    q = {"startDate": fields.get("startDate"), "endDate": fields.get("endDate"), "productId": fields.get("productIds"),
         "productType": fields.get("productTypes"), "sort": fields.get("sort"),
         "subscriptionGroupIdentifier": fields.get("subscriptionGroupIdentifiers"),
         "inAppOwnershipType": fields.get("inAppOwnershipType"), "revoked": revoked}
    return {k: v for k, v in q.items() if v is not None}


CONSUMPTION = dict(customerConsented=True, sampleContentProvided=False, deliveryStatus="DELIVERED",
                   consumptionPercentage=25000, refundPreference="GRANT_PRORATED")
CONSUMPTION_V1 = dict(customerConsented=True, consumptionStatus=1, platform=1, sampleContentProvided=False,
                      deliveryStatus=0, appAccountToken=ACCOUNT_TOKEN, accountTenure=3, playTime=2,
                      lifetimeDollarsRefunded=0, lifetimeDollarsPurchased=4, userStatus=1, refundPreference=1)
MESSAGE_BODY = {"header": "Stay a little longer", "body": "Your plan keeps every feature you use today.",
                "image": {"imageIdentifier": str(IMAGE_ID).lower(), "altText": "A calm lake"},
                "headerPosition": "ABOVE_IMAGE",
                "bulletPoints": [{"text": "Offline maps", "imageIdentifier": str(IMAGE_ID).lower(), "altText": "Map"}]}


def _consumption_v1_model(fields: dict):
    raw = {"rawConsumptionStatus": "consumptionStatus", "rawPlatform": "platform", "rawDeliveryStatus": "deliveryStatus",
           "rawAccountTenure": "accountTenure", "rawPlayTime": "playTime",
           "rawLifetimeDollarsRefunded": "lifetimeDollarsRefunded",
           "rawLifetimeDollarsPurchased": "lifetimeDollarsPurchased", "rawUserStatus": "userStatus",
           "rawRefundPreference": "refundPreference"}
    kwargs = {k: v for k, v in fields.items() if k not in raw.values()}
    kwargs.update({r: fields[name] for r, name in raw.items() if name in fields})
    return M["ConsumptionRequestV1"](**kwargs)


# name -> (Apple's call on a client, iapverify's call document)
CALLS: dict[str, tuple[Callable[[Any], Any], dict]] = {
    "transaction_info": (lambda c: c.get_transaction_info(TX_ID), {"endpoint": "transaction_info", "transaction_id": TX_ID}),
    "transaction_history/plain": (lambda c: c.get_transaction_history(TX_ID, None, history_request(), V2),
                                  {"endpoint": "transaction_history", "transaction_id": TX_ID}),
    "transaction_history/filters": (lambda c: c.get_transaction_history(TX_ID, "rev-1", history_request(**FULL_HISTORY), V2),
                                    {"endpoint": "transaction_history", "transaction_id": TX_ID, "revision": "rev-1",
                                     "query": history_query(**FULL_HISTORY)}),
    "transaction_history/revoked_true": (lambda c: c.get_transaction_history(TX_ID, None, history_request(True), V2),
                                         {"endpoint": "transaction_history", "transaction_id": TX_ID,
                                          "query": history_query(True)}),
    "transaction_history/revoked_false": (lambda c: c.get_transaction_history(TX_ID, None, history_request(False), V2),
                                          {"endpoint": "transaction_history", "transaction_id": TX_ID,
                                           "query": history_query(False)}),
    "transaction_history_v1": (lambda c: c.get_transaction_history(TX_ID, "rev-9", history_request(sort="ASCENDING"), V1),
                               {"endpoint": "transaction_history_v1", "transaction_id": TX_ID, "revision": "rev-9",
                                "query": {"sort": "ASCENDING"}}),
    "subscription_statuses/all": (lambda c: c.get_all_subscription_statuses(TX_ID),
                                  {"endpoint": "subscription_statuses", "transaction_id": TX_ID}),
    "subscription_statuses/filtered": (lambda c: c.get_all_subscription_statuses(TX_ID, [M["Status"].ACTIVE, M["Status"].BILLING_GRACE_PERIOD]),
                                       {"endpoint": "subscription_statuses", "transaction_id": TX_ID, "query": {"status": [1, 4]}}),
    "order_lookup": (lambda c: c.look_up_order_id("MK5TTTVWJH"), {"endpoint": "order_lookup", "order_id": "MK5TTTVWJH"}),
    "refund_history/first": (lambda c: c.get_refund_history(TX_ID, None), {"endpoint": "refund_history", "transaction_id": TX_ID}),
    "refund_history/next": (lambda c: c.get_refund_history(TX_ID, "rev-2"),
                            {"endpoint": "refund_history", "transaction_id": TX_ID, "revision": "rev-2"}),
    "app_transaction_info": (lambda c: c.get_app_transaction_info(TX_ID),
                             {"endpoint": "app_transaction_info", "transaction_id": TX_ID}),
    "consumption_info": (lambda c: c.send_consumption_information(TX_ID, M["ConsumptionRequest"](
        customerConsented=True, sampleContentProvided=False, deliveryStatus=M["DeliveryStatus"].DELIVERED,
        consumptionPercentage=25000, refundPreference=M["RefundPreference"].GRANT_PRORATED)),
                         {"endpoint": "consumption_info", "transaction_id": TX_ID, "body": CONSUMPTION}),
    "consumption_info_v1/full_body": (lambda c: c.send_consumption_data(TX_ID, _consumption_v1_model(CONSUMPTION_V1)),
                                      {"endpoint": "consumption_info_v1", "transaction_id": TX_ID, "body": CONSUMPTION_V1}),
    "consumption_info_v1/partial_body": (lambda c: c.send_consumption_data(TX_ID, _consumption_v1_model(
        {"customerConsented": True, "deliveryStatus": 0})),
        {"endpoint": "consumption_info_v1", "transaction_id": TX_ID,
         "body": {"customerConsented": True, "deliveryStatus": 0}}),
    "set_app_account_token": (lambda c: c.set_app_account_token(ORIGINAL_ID, M["UpdateAppAccountTokenRequest"](ACCOUNT_TOKEN)),
                              {"endpoint": "set_app_account_token", "original_transaction_id": ORIGINAL_ID,
                               "body": {"appAccountToken": ACCOUNT_TOKEN}}),
    "extend_renewal_date": (lambda c: c.extend_subscription_renewal_date(ORIGINAL_ID, M["ExtendRenewalDateRequest"](
        extendByDays=14, extendReasonCode=M["ExtendReasonCode"].SERVICE_ISSUE_OR_OUTAGE, requestIdentifier="ext-0001")),
                            {"endpoint": "extend_renewal_date", "original_transaction_id": ORIGINAL_ID,
                             "body": {"extendByDays": 14, "extendReasonCode": 3, "requestIdentifier": "ext-0001"}}),
    "mass_extend_renewal_date": (lambda c: c.extend_renewal_date_for_all_active_subscribers(M["MassExtendRenewalDateRequest"](
        extendByDays=7, extendReasonCode=M["ExtendReasonCode"].CUSTOMER_SATISFACTION, requestIdentifier="mass-0001",
        storefrontCountryCodes=["USA", "FRA"], productId="com.example.fake.monthly")),
                                 {"endpoint": "mass_extend_renewal_date", "body": {
                                     "extendByDays": 7, "extendReasonCode": 1, "requestIdentifier": "mass-0001",
                                     "productId": "com.example.fake.monthly", "storefrontCountryCodes": ["USA", "FRA"]}}),
    "mass_extend_status": (lambda c: c.get_status_of_subscription_renewal_date_extensions("mass-0001", "com.example.fake.monthly"),
                           {"endpoint": "mass_extend_status", "request_identifier": "mass-0001",
                            "product_id": "com.example.fake.monthly"}),
    "notification_history/first": (lambda c: c.get_notification_history(None, M["NotificationHistoryRequest"](
        startDate=1764547200000, endDate=1767225600000, notificationType=M["NotificationTypeV2"].DID_RENEW,
        notificationSubtype=M["Subtype"].BILLING_RECOVERY, onlyFailures=True)),
                                   {"endpoint": "notification_history", "body": {
                                       "startDate": 1764547200000, "endDate": 1767225600000, "notificationType": "DID_RENEW",
                                       "notificationSubtype": "BILLING_RECOVERY", "onlyFailures": True}}),
    "notification_history/next": (lambda c: c.get_notification_history("page+2/=", M["NotificationHistoryRequest"](
        startDate=1764547200000, endDate=1767225600000, transactionId=TX_ID)),
                                  {"endpoint": "notification_history", "pagination_token": "page+2/=", "body": {
                                      "startDate": 1764547200000, "endDate": 1767225600000, "transactionId": TX_ID}}),
    "test_notification": (lambda c: c.request_test_notification(), {"endpoint": "test_notification"}),
    "test_notification_status": (lambda c: c.get_test_notification_status("ce3af791-365e-4c60-841b-1674b43c1609_1739905566"),
                                 {"endpoint": "test_notification_status",
                                  "test_notification_token": "ce3af791-365e-4c60-841b-1674b43c1609_1739905566"}),
    "finish_transaction": (lambda c: c.finish_transaction(TX_ID), {"endpoint": "finish_transaction", "transaction_id": TX_ID}),
    "upload_image": (lambda c: c.upload_image(IMAGE_ID, PNG, M["ImageSize"].FULL_SIZE),
                     {"endpoint": "upload_image", "image_identifier": str(IMAGE_ID).upper(), "body": PNG,
                      "query": {"imageSize": "FULL_SIZE"}}),
    "delete_image": (lambda c: c.delete_image(IMAGE_ID), {"endpoint": "delete_image", "image_identifier": str(IMAGE_ID).upper()}),
    "list_images": (lambda c: c.get_image_list(), {"endpoint": "list_images"}),
    "upload_message": (lambda c: c.upload_message(MESSAGE_ID, M["UploadMessageRequestBody"](
        header=MESSAGE_BODY["header"], body=MESSAGE_BODY["body"],
        image=M["UploadMessageImage"](imageIdentifier=IMAGE_ID, altText="A calm lake"),
        headerPosition=M["HeaderPosition"].ABOVE_IMAGE,
        bulletPoints=[M["BulletPoint"](text="Offline maps", imageIdentifier=IMAGE_ID, altText="Map")])),
                       {"endpoint": "upload_message", "message_identifier": str(MESSAGE_ID).upper(), "body": MESSAGE_BODY}),
    "delete_message": (lambda c: c.delete_message(MESSAGE_ID),
                       {"endpoint": "delete_message", "message_identifier": str(MESSAGE_ID).upper()}),
    "list_messages": (lambda c: c.get_message_list(), {"endpoint": "list_messages"}),
    "configure_default_message": (lambda c: c.configure_default_message("com.example.fake.monthly", "en-US",
                                                                        M["DefaultConfigurationRequest"](MESSAGE_ID)),
                                  {"endpoint": "configure_default_message", "product_id": "com.example.fake.monthly",
                                   "locale": "en-US", "body": {"messageIdentifier": str(MESSAGE_ID).lower()}}),
    "get_default_message": (lambda c: c.get_default_message("com.example.fake.monthly", "en-US"),
                            {"endpoint": "get_default_message", "product_id": "com.example.fake.monthly", "locale": "en-US"}),
    "delete_default_message": (lambda c: c.delete_default_message("com.example.fake.monthly", "en-US"),
                               {"endpoint": "delete_default_message", "product_id": "com.example.fake.monthly", "locale": "en-US"}),
    "configure_realtime_url": (lambda c: c.configure_realtime_url(M["RealtimeUrlRequest"]("https://example.com/apple/retention")),
                               {"endpoint": "configure_realtime_url", "body": {"realtimeURL": "https://example.com/apple/retention"}}),
    "get_realtime_url": (lambda c: c.get_realtime_url(), {"endpoint": "get_realtime_url"}),
    "delete_realtime_url": (lambda c: c.delete_realtime_url(), {"endpoint": "delete_realtime_url"}),
    "initiate_performance_test": (lambda c: c.initiate_performance_test(M["PerformanceTestRequest"](ORIGINAL_ID)),
                                  {"endpoint": "initiate_performance_test", "body": {"originalTransactionId": ORIGINAL_ID}}),
    "performance_test_result": (lambda c: c.get_performance_test_results("c3b0e1d2-9f8e-4d7c-b6a5-948372615041"),
                                {"endpoint": "performance_test_result", "request_id": "c3b0e1d2-9f8e-4d7c-b6a5-948372615041"}),
}

COMPARED_HEADERS = ("accept", "content-type")


def compare_requests(apple: Captured, ours: iapverify.APIRequest, problems: list[str]) -> None:
    if apple.method != ours.method:
        problems.append(f"method: Apple {apple.method}, iapverify {ours.method}")
    a, o = urlsplit(apple.url), urlsplit(ours.url)
    if (a.scheme, a.netloc, a.path) != (o.scheme, o.netloc, o.path):
        problems.append(f"url: Apple {a.scheme}://{a.netloc}{a.path}, iapverify {o.scheme}://{o.netloc}{o.path}")
    aq, oq = parse_qsl(a.query, keep_blank_values=True), parse_qsl(o.query, keep_blank_values=True)
    if aq != oq:
        problems.append(f"query: Apple {a.query!r} {aq}, iapverify {o.query!r} {oq}")
    ah = {k.lower(): v for k, v in apple.headers.items() if k.lower() in COMPARED_HEADERS}
    oh = {k.lower(): v for k, v in ours.headers.items() if k.lower() in COMPARED_HEADERS}
    if ah != oh:
        problems.append(f"headers: Apple {ah}, iapverify {oh}")
    auth = ours.headers.get("Authorization", "")
    if not auth.startswith("Bearer ") or not apple.headers.get("Authorization", "").startswith("Bearer "):
        problems.append("a side sent no bearer token")
    body = ours.body
    body_bytes = body if isinstance(body, (bytes, bytearray)) or body is None else body.encode()
    if (apple.body or None) is None or body_bytes is None:
        if (apple.body or None) != (body_bytes or None):
            problems.append(f"body: Apple {apple.body!r}, iapverify {body_bytes!r}")
    elif ah.get("content-type") == "application/json":
        if json.loads(apple.body) != json.loads(body_bytes):
            problems.append(f"body: Apple {apple.body.decode()}, iapverify {body_bytes.decode()}")
    elif apple.body != body_bytes:
        problems.append(f"body: Apple {apple.body[:40]!r}..., iapverify {body_bytes[:40]!r}...")


@pytest.mark.parametrize("env", ("Production", "Sandbox", "LocalTesting"))
@pytest.mark.parametrize("name", list(CALLS))
def test_request(name: str, env: str, monkeypatch) -> None:
    S.pin_apple(monkeypatch, S.NOW)
    apple_call, call = CALLS[name]
    client = apple_client(env)
    with pytest.warns(DeprecationWarning) if "consumption_info_v1" in name else contextlib.nullcontext():
        try:
            apple_call(client)
        except Exception:                # decoding the stand-in answer "{}": the request is what counts
            if client.captured is None:
                raise
    problems: list[str] = []
    refused_more = False
    detail = ""
    with our_signer() as signer:
        try:
            ours = signer.api_request(dict(call, environment=env), now_ms=S.NOW)
        except iapverify.InvalidArgumentError as e:
            problems.append(f"Apple builds it; iapverify refuses: {e.message}")
            refused_more = True
        else:
            compare_requests(client.captured, ours, problems)
            detail = f"{ours.method} {ours.url}"
    case = f"request/{name}/{env}" if "/" not in name else f"request/{name.split('/')[0]}/{env}/{name.split('/')[1]}"
    # A boolean filter is sent as Apple's API reference spells it (true/false); Apple's Python
    # client writes str(bool). Only that spelling may differ, and an EXPLAINED entry cites the doc.
    spelled = name.startswith("transaction_history/revoked_") and all("revoked" in p for p in problems)
    parity.require(parity.settle(case, problems, iapverify_refused_more=refused_more or spelled, detail=detail))


# ================================================================================================
# 3. Signatures and tokens
# ================================================================================================

NONCE = uuid.UUID("0F6E6A3C-1C2B-4D7A-9E8F-123456789ABC")
SIGN_AT = 1767225600123


def raw_signature_verifies(jws: str) -> bool:
    head, payload, sig = jws.split(".")
    raw = S.unb64url(sig)
    if len(raw) != 64:
        return False
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    try:
        DEVELOPER_PUBLIC.verify(der, f"{head}.{payload}".encode(), ec.ECDSA(hashes.SHA256()))
        return True
    except InvalidSignature:
        return False


def der_signature_verifies(signature_b64: str, message: str) -> bool:
    try:
        DEVELOPER_PUBLIC.verify(base64.b64decode(signature_b64), message.encode(), ec.ECDSA(hashes.SHA256()))
        return True
    except (InvalidSignature, ValueError):
        return False


V1_USERNAMES = {
    "no_username": "",
    "uuid_lower": ACCOUNT_TOKEN,
    "uuid_upper": ACCOUNT_TOKEN.upper(),
    "any_username": "Player#42 \u00dcML\u00c4UT",
    "username_with_separator": "left\u2063right",
}


@pytest.mark.parametrize("name", list(V1_USERNAMES))
def test_promotional_offer_v1(name: str) -> None:
    username = V1_USERNAMES[name]
    apple_sig = PromotionalOfferSignatureCreator(DEVELOPER_KEY, SIGNER["key_id"], SIGNER["bundle_id"]).create_signature(
        "com.example.fake.monthly", "WINBACK1", username, NONCE, SIGN_AT)
    # What Apple's creator signs, written out (its documented format).
    message = "\u2063".join([SIGNER["bundle_id"], SIGNER["key_id"], "com.example.fake.monthly", "WINBACK1",
                             username.lower(), str(NONCE).lower(), str(SIGN_AT)])
    problems: list[str] = []
    refused_more = False
    request = {"kind": "promotional_offer_v1", "nonce": str(NONCE).upper(), "product_id": "com.example.fake.monthly",
               "offer_identifier": "WINBACK1"}
    if username:
        request["app_account_token"] = username
    with iapverify.Signer(SIGNER) as signer:
        try:
            ours = signer.sign(request, now_ms=SIGN_AT)
        except iapverify.InvalidArgumentError as e:
            problems.append(f"Apple signs it; iapverify refuses: {e.message}")
            refused_more = True
        else:
            if not der_signature_verifies(apple_sig, message):
                problems.append("Apple's signature does not verify over the documented string")
            if not der_signature_verifies(ours.signature, message):
                problems.append("iapverify's signature does not verify over the string Apple's creator signs")
            if (ours.key_id, ours.nonce, ours.timestamp_ms) != (SIGNER["key_id"], str(NONCE).lower(), SIGN_AT):
                problems.append(f"key_id/nonce/timestamp: {ours.key_id}, {ours.nonce}, {ours.timestamp_ms}")
    parity.require(parity.settle(f"sign/promotional_offer_v1/{name}", problems, iapverify_refused_more=refused_more,
                                 detail="both signatures verify over the same string"))


def _one_time_charge_request():
    from appstoreserverlibrary.models.AdvancedCommerceOneTimeChargeCreateRequest import AdvancedCommerceOneTimeChargeCreateRequest
    from appstoreserverlibrary.models.AdvancedCommerceOneTimeChargeItem import AdvancedCommerceOneTimeChargeItem
    from appstoreserverlibrary.models.AdvancedCommerceRequestInfo import AdvancedCommerceRequestInfo
    import attr
    item_fields = {a.name for a in attr.fields(AdvancedCommerceOneTimeChargeItem)}
    item_kwargs = {"SKU": "coins.500", "description": "500 coins", "displayName": "Coins", "price": 4990}
    item = AdvancedCommerceOneTimeChargeItem(**{k: v for k, v in item_kwargs.items() if k in item_fields})
    request_fields = {a.name for a in attr.fields(AdvancedCommerceOneTimeChargeCreateRequest)}
    kwargs = {"currency": "USD", "item": item, "taxCode": "C003-00-2", "storefront": "USA",
              "requestInfo": AdvancedCommerceRequestInfo(requestReferenceId=uuid.UUID("9f1c2b3a-4d5e-4f60-8a7b-6c5d4e3f2a1b"))}
    return AdvancedCommerceOneTimeChargeCreateRequest(**{k: v for k, v in kwargs.items() if k in request_fields})


V2_CASES = {
    "promotional_offer_v2/with_transaction": (
        lambda: PromotionalOfferV2SignatureCreator(DEVELOPER_KEY, SIGNER["key_id"], SIGNER["issuer_id"], SIGNER["bundle_id"])
        .create_signature("com.example.fake.yearly", "SAVE20", TX_ID),
        {"kind": "promotional_offer_v2", "product_id": "com.example.fake.yearly", "offer_identifier": "SAVE20",
         "transaction_id": TX_ID}),
    "promotional_offer_v2/without_transaction": (
        lambda: PromotionalOfferV2SignatureCreator(DEVELOPER_KEY, SIGNER["key_id"], SIGNER["issuer_id"], SIGNER["bundle_id"])
        .create_signature("com.example.fake.yearly", "SAVE20", None),
        {"kind": "promotional_offer_v2", "product_id": "com.example.fake.yearly", "offer_identifier": "SAVE20"}),
    "introductory_offer_eligibility/allowed": (
        lambda: IntroductoryOfferEligibilitySignatureCreator(DEVELOPER_KEY, SIGNER["key_id"], SIGNER["issuer_id"],
                                                             SIGNER["bundle_id"]).create_signature("com.example.fake.monthly", True, TX_ID),
        {"kind": "introductory_offer_eligibility", "product_id": "com.example.fake.monthly",
         "allow_introductory_offer": True, "transaction_id": TX_ID}),
    "introductory_offer_eligibility/refused": (
        lambda: IntroductoryOfferEligibilitySignatureCreator(DEVELOPER_KEY, SIGNER["key_id"], SIGNER["issuer_id"],
                                                             SIGNER["bundle_id"]).create_signature("com.example.fake.monthly", False, TX_ID),
        {"kind": "introductory_offer_eligibility", "product_id": "com.example.fake.monthly",
         "allow_introductory_offer": False, "transaction_id": TX_ID}),
}


def advanced_commerce_case():
    model = _one_time_charge_request()
    from appstoreserverlibrary.models.LibraryUtility import _get_cattrs_converter
    text = json.dumps(_get_cattrs_converter(type(model)).unstructure(model))   # what Apple's creator encodes
    return (lambda: AdvancedCommerceAPIInAppSignatureCreator(DEVELOPER_KEY, SIGNER["key_id"], SIGNER["issuer_id"],
                                                             SIGNER["bundle_id"]).create_signature(model),
            {"kind": "advanced_commerce_request", "request": text})


@pytest.mark.parametrize("name", list(V2_CASES) + ["advanced_commerce_request/one_time_charge"])
def test_v2_signatures(name: str, monkeypatch) -> None:
    S.pin_apple(monkeypatch, SIGN_AT, NONCE)
    make_apple, request = advanced_commerce_case() if name.startswith("advanced") else V2_CASES[name]
    apple_jws = make_apple()
    with iapverify.Signer(SIGNER) as signer:
        ours = signer.sign(dict(request, nonce=str(NONCE).upper()), now_ms=SIGN_AT).jws
    problems: list[str] = []
    for side, jws in (("Apple", apple_jws), ("iapverify", ours)):
        if not raw_signature_verifies(jws):
            problems.append(f"{side}'s JWS does not verify with developer.pub.pem")
    ah, oh = S.decode_part(apple_jws, 0), S.decode_part(ours, 0)
    ac, oc = S.decode_part(apple_jws, 1), S.decode_part(ours, 1)
    if ah != oh:
        problems.append(f"header: Apple {ah}, iapverify {oh}")
    if ac != oc:
        problems.append(f"claims: Apple {ac}, iapverify {oc}")
    parity.require(parity.settle(f"sign/{name}", problems, detail=f"header and claims equal: {sorted(oc)}"))


# The Advanced Commerce API's server calls: Apple's released library has their request models but
# not the calls (those are open pull requests), so the side-by-side is the body: Apple's model as its
# own converter writes it, beside the body Signer.api_request builds from the same fields.
AC_REFERENCE = uuid.UUID("5c0f3f5b-1d2e-4a8b-9c6d-7e8f9a0b1c2d")
AC_BODIES = {
    "advanced_commerce_cancel_subscription": ("AdvancedCommerceSubscriptionCancelRequest", {"storefront": "USA"}),
    "advanced_commerce_change_subscription_metadata": ("AdvancedCommerceSubscriptionChangeMetadataRequest", {
        "descriptors": ("AdvancedCommerceSubscriptionChangeMetadataDescriptors",
                        {"effective": "NEXT_BILL_CYCLE", "description": "All the news", "displayName": "News"}),
        "items": [("AdvancedCommerceSubscriptionChangeMetadataItem",
                   {"currentSKU": "news.basic", "effective": "IMMEDIATELY", "SKU": "news.plus", "displayName": "News+"})],
        "taxCode": "C003-00-1", "storefront": "USA"}),
    "advanced_commerce_change_subscription_price": ("AdvancedCommerceSubscriptionPriceChangeRequest", {
        "items": [("AdvancedCommerceSubscriptionPriceChangeItem", {"SKU": "news.basic", "price": 4990, "dependentSKUs": ["news.extra"]})],
        "currency": "USD", "storefront": "USA"}),
    "advanced_commerce_migrate_subscription": ("AdvancedCommerceSubscriptionMigrateRequest", {
        "descriptors": ("AdvancedCommerceSubscriptionMigrateDescriptors", {"description": "All the news", "displayName": "News"}),
        "items": [("AdvancedCommerceSubscriptionMigrateItem", {"SKU": "news.basic", "description": "Basic", "displayName": "Basic"})],
        "renewalItems": [("AdvancedCommerceSubscriptionMigrateRenewalItem",
                          {"SKU": "news.plus", "description": "Plus", "displayName": "Plus"})],
        "targetProductId": "com.example.fake.news", "taxCode": "C003-00-1", "storefront": "FRA"}),
    "advanced_commerce_revoke_subscription": ("AdvancedCommerceSubscriptionRevokeRequest", {
        "refundRiskingPreference": True, "refundType": "PRORATED", "refundReason": "UNSATISFIED_WITH_PURCHASE", "storefront": "USA"}),
    "advanced_commerce_request_refund": ("AdvancedCommerceRequestRefundRequest", {
        "items": [("AdvancedCommerceRequestRefundItem", {"SKU": "news.basic", "refundReason": "LEGAL", "refundType": "CUSTOM",
                                                         "revoke": False, "refundAmount": 1500})],
        "refundRiskingPreference": False, "currency": "EUR", "storefront": "FRA"}),
}


AC_ENUMS = {"effective": "AdvancedCommerceEffective", "refundType": "AdvancedCommerceRefundType",
            "refundReason": "AdvancedCommerceRefundReason"}


def _apple_ac_value(value: Any, key: str = "") -> Any:
    """Apple's model objects (and enums) for the (model name, fields) pairs of AC_BODIES."""
    if isinstance(value, list):
        return [_apple_ac_value(v) for v in value]
    if isinstance(value, tuple):
        name, fields = value
        return _model(name)(**{k: _apple_ac_value(v, k) for k, v in fields.items()})
    if key in AC_ENUMS:
        return _model(AC_ENUMS[key])(value)
    return value


def _plain_ac_value(value: Any) -> Any:
    """The same fields as iapverify's call takes them: plain JSON."""
    if isinstance(value, list):
        return [_plain_ac_value(v) for v in value]
    if isinstance(value, tuple):
        return {k: _plain_ac_value(v) for k, v in value[1].items()}
    return value


@pytest.mark.parametrize("endpoint", list(AC_BODIES))
def test_advanced_commerce_bodies(endpoint: str) -> None:
    from appstoreserverlibrary.models.AdvancedCommerceRequestInfo import AdvancedCommerceRequestInfo
    from appstoreserverlibrary.models.LibraryUtility import _get_cattrs_converter
    name, fields = AC_BODIES[endpoint]
    model = _model(name)(requestInfo=AdvancedCommerceRequestInfo(requestReferenceId=AC_REFERENCE),
                         **{k: _apple_ac_value(v, k) for k, v in fields.items()})
    apple = json.loads(json.dumps(_get_cattrs_converter(type(model)).unstructure(model)))
    body = {"requestInfo": {"requestReferenceId": str(AC_REFERENCE).upper()}, **{k: _plain_ac_value(v) for k, v in fields.items()}}
    with iapverify.Signer(SIGNER) as signer:
        req = signer.api_request({"endpoint": endpoint, "transaction_id": TX_ID, "body": body}, now_ms=SIGN_AT)
    ours = json.loads(req.body)
    problems = [] if ours == apple else [f"body: Apple's model {apple}, iapverify {ours}"]
    parity.require(parity.settle(f"advanced_commerce/{endpoint}", problems,
                                 detail=f"{req.method} {req.url.split('/v1/', 1)[1]}: the same body as Apple's model"))


def test_api_token(monkeypatch) -> None:
    S.pin_apple(monkeypatch, SIGN_AT)
    apple_token = apple_client("Production")._generate_token()
    with iapverify.Signer(SIGNER) as signer:
        ours = signer.api_token(now_ms=SIGN_AT).token
    problems: list[str] = []
    refused_more = True
    for side, jws in (("Apple", apple_token), ("iapverify", ours)):
        if not raw_signature_verifies(jws):
            problems.append(f"{side}'s token does not verify with developer.pub.pem")
            refused_more = False
    ah, oh = S.decode_part(apple_token, 0), S.decode_part(ours, 0)
    ac, oc = S.decode_part(apple_token, 1), S.decode_part(ours, 1)
    if ah != oh:
        problems.append(f"header: Apple {ah}, iapverify {oh}")
        refused_more = False
    extra = sorted(set(oc) - set(ac))
    if extra:
        problems.append(f"iapverify's token adds {extra}")
    if set(ac) - set(oc) or any(ac[k] != oc[k] for k in ac if k in oc):
        problems.append(f"claims: Apple {ac}, iapverify {oc}")
        refused_more = False
    if extra and extra != ["iat"]:
        refused_more = False
    parity.require(parity.settle("token/api/claims", problems, iapverify_refused_more=refused_more,
                                 detail=f"header {oh}, claims {sorted(oc)}"))


def test_fake_api_accepts_both_tokens(monkeypatch) -> None:
    """The project's fake App Store Server API takes Apple's token (no iat) and iapverify's."""
    S.pin_apple(monkeypatch, SIGN_AT)
    fake = fakeapi.FakeAppleAPI(S.FAKE)
    with iapverify.Signer(SIGNER) as signer:
        ours = signer.api_token(now_ms=SIGN_AT).token
    problems = [f"{side}: {why}" for side, token in (("Apple", apple_client("Production")._generate_token()),
                                                     ("iapverify", ours))
                if (why := fake.check_token(f"Bearer {token}")) is not None]
    parity.require(parity.settle("fakeapi/token", problems, detail="the fake accepts both tokens"))


# ================================================================================================
# 4. Answers
# ================================================================================================

def apple_parse(cls, status: int, body: bytes, content_type: str = "application/json"):
    """What Apple's client makes of an answer: its model, or the APIException it raises."""
    client = apple_client("Production")
    try:
        return client._parse_response(status, {"content-type": content_type}, lambda: json.loads(body), cls), None
    except apple_api.APIException as e:
        return None, e


def our_answer(endpoint: str, status: int, body: bytes, env: str = "Sandbox", now_ms: int = S.NOW):
    config = S.iapverify_config("Sandbox" if env == "Sandbox" else "Production")
    config["environments"] = ["Production", "Sandbox"]
    with iapverify.Verifier(config) as verifier:
        return verifier.interpret_api_response(body, endpoint=endpoint, http_status=status, environment=env, now_ms=now_ms)


def compare_answer(case: str, endpoint: str, model: Any, r: iapverify.APIResult, env: str, problems: list[str],
                   via_payload: list[str]) -> None:
    """Apple's decoded answer against iapverify's: unsigned fields with ``unsigned``, signed items
    decoded by Apple's SignedDataVerifier against iapverify's verified records."""
    if r.verdict != "valid":
        problems.append(f"iapverify {r.verdict}: {r.reason}")
        return
    d = S.apple_dict(model)
    apple_verifier = S.apple_verifier(env)
    unsigned = r.unsigned or {}
    signed_lists = {"signedTransactions"}
    for name, value in d.items():
        if name in signed_lists:
            models = [apple_verifier.verify_and_decode_signed_transaction(t) for t in value]
            if len(models) != len(r.transactions):
                problems.append(f"{name}: Apple {len(models)} items, iapverify {len(r.transactions)}")
            for i, (m, t) in enumerate(zip(models, r.transactions)):
                S.compare_record(f"{name}[{i}]", S.apple_dict(m), t, None, S.TRANSACTION_MEMBERS, problems, via_payload,
                                 bundle_source(t, S.apple_dict(m), via_payload, f"{name}[{i}]"))
        elif name == "signedTransactionInfo":
            m = apple_verifier.verify_and_decode_signed_transaction(value)
            t = r.transactions[0] if r.transactions else None
            S.compare_record(name, S.apple_dict(m), t, None, S.TRANSACTION_MEMBERS, problems, via_payload,
                             bundle_source(t, S.apple_dict(m), via_payload, name))
        elif name == "signedAppTransactionInfo":
            m = apple_verifier.verify_and_decode_app_transaction(value)
            S.compare_record(name, S.apple_dict(m), r.app_transaction, None, {}, problems, via_payload)
        elif name == "data" and endpoint == "subscription_statuses":
            ours = {(s.original_transaction_id): s for s in r.subscription_statuses}
            for group in value:
                for item in group.get("lastTransactions", []):
                    s = ours.get(item["originalTransactionId"])
                    if s is None or s.apple_status != item["status"] or \
                            s.subscription_group_identifier != group["subscriptionGroupIdentifier"]:
                        problems.append(f"status of {item['originalTransactionId']}: Apple {item['status']} in "
                                        f"{group['subscriptionGroupIdentifier']}, iapverify {s and s.to_dict()}")
                    tm = apple_verifier.verify_and_decode_signed_transaction(item["signedTransactionInfo"])
                    t = next((t for t in r.transactions if t.transaction_id == tm.transactionId), None)
                    S.compare_record("lastTransactions.signedTransactionInfo", S.apple_dict(tm), t, None,
                                     S.TRANSACTION_MEMBERS, problems, via_payload,
                                     bundle_source(t, S.apple_dict(tm), via_payload, "lastTransactions"))
                    if "signedRenewalInfo" in item:
                        rm = apple_verifier.verify_and_decode_renewal_info(item["signedRenewalInfo"])
                        ri = next((x for x in r.renewal_info if x.original_transaction_id == rm.originalTransactionId), None)
                        S.compare_record("lastTransactions.signedRenewalInfo", S.apple_dict(rm), ri, None,
                                         S.RENEWAL_MEMBERS, problems, via_payload)
        elif name in ("notificationHistory", "signedPayload"):
            items = value if name == "notificationHistory" else [{"signedPayload": value}]
            for i, item in enumerate(items):
                nm = apple_verifier.verify_and_decode_notification(item["signedPayload"])
                n = r.notifications[i] if i < len(r.notifications) else None
                top = {k: v for k, v in S.apple_dict(nm).items() if k in ("notificationType", "subtype",
                                                                          "notificationUUID", "signedDate")}
                S.compare_record(f"{name}[{i}]", top, n, None, {}, problems, via_payload)
                rest = {k: v for k, v in item.items() if k != "signedPayload"}
                if name == "notificationHistory" and rest:
                    via_payload.append(f"{name}[{i}] unsigned members not compared")
            if name == "signedPayload":
                for k in ("sendAttempts",):
                    if k in d and not S.same(d[k], unsigned.get(k)):
                        problems.append(f"{k}: Apple {d[k]}, iapverify unsigned {unsigned.get(k)}")
        elif name == "status" and endpoint == "order_lookup":
            if value != r.raw.get("order_status"):
                problems.append(f"status: Apple {value}, iapverify order_status {r.raw.get('order_status')}")
        elif name == "sendAttempts" and endpoint == "test_notification_status":
            continue
        else:
            if name not in unsigned:
                problems.append(f"{name}: Apple decoded {value!r}; iapverify's unsigned has no such member")
            elif not S.same(value, unsigned[name]):
                problems.append(f"{name}: Apple {value!r}, iapverify {unsigned[name]!r}")


def served_fake() -> fakeapi.FakeAppleAPI:
    fake = fakeapi.FakeAppleAPI(S.FAKE, page_size=2)
    for i in range(3):
        fake.add_transaction("Sandbox", transaction("Sandbox", transactionId=f"20000000000000{i}",
                                                    originalTransactionId=ORIGINAL_ID,
                                                    purchaseDate=S.SIGNED - (3 - i) * S.DAY, signedDate=S.SIGNED))
    fake.set_renewal("Sandbox", renewal_info("Sandbox"), status=1)
    for i in range(3):
        signed = fakeapi.sign_jws(notification("Sandbox", "DID_RENEW", None, notificationUUID=f"0e1b4c3a-5d2f-4c6b-9a1e-3f2d1c0b9a8{i}",
                                               signedDate=S.SIGNED + i, data=data(
                                                   "Sandbox", signedTransactionInfo=fakeapi.sign_jws(transaction("Sandbox"), S.FAKE))),
                                  S.FAKE)
        fake.add_notification("Sandbox", signed, S.SIGNED + i)
    return fake


FAKE_CALLS = {
    # name: (Apple's call on a client, Apple's answer model, iapverify's call)
    "transaction_info": (lambda c: c.get_transaction_info("200000000000001"), "TransactionInfoResponse",
                         {"endpoint": "transaction_info", "transaction_id": "200000000000001"}),
    "transaction_history": (lambda c: c.get_transaction_history("200000000000001", None, history_request(sort="ASCENDING"), V2),
                            "HistoryResponse", {"endpoint": "transaction_history", "transaction_id": "200000000000001",
                                                "query": {"sort": "ASCENDING"}}),
    "subscription_statuses": (lambda c: c.get_all_subscription_statuses("200000000000001"), "StatusResponse",
                              {"endpoint": "subscription_statuses", "transaction_id": "200000000000001"}),
    "notification_history": (lambda c: c.get_notification_history(None, M["NotificationHistoryRequest"](
        startDate=S.SIGNED - S.DAY, endDate=S.SIGNED + S.DAY)), "NotificationHistoryResponse",
        {"endpoint": "notification_history", "body": {"startDate": S.SIGNED - S.DAY, "endDate": S.SIGNED + S.DAY}}),
    "consumption_info": (lambda c: c.send_consumption_information("200000000000001", M["ConsumptionRequest"](
        customerConsented=True, sampleContentProvided=True, deliveryStatus=M["DeliveryStatus"].DELIVERED)), None,
        {"endpoint": "consumption_info", "transaction_id": "200000000000001",
         "body": {"customerConsented": True, "sampleContentProvided": True, "deliveryStatus": "DELIVERED"}}),
}


@pytest.mark.parametrize("name", list(FAKE_CALLS))
def test_answers_from_the_fake_api(name: str, monkeypatch) -> None:
    """Both clients call the same fake App Store Server API on 127.0.0.1; Apple's client decodes
    its answer into models, iapverify interprets the answer its own request got."""
    S.pin_apple(monkeypatch, S.NOW)
    apple_call, model_name, call = FAKE_CALLS[name]
    fake = served_fake()
    fake.start()
    problems: list[str] = []
    via: list[str] = []
    try:
        client = apple_api.AppStoreServerAPIClient(DEVELOPER_KEY, SIGNER["key_id"], SIGNER["issuer_id"],
                                                   SIGNER["bundle_id"], AppleEnvironment.SANDBOX)
        client._base_url = fake.sandbox_url                      # Apple's client has no host setting
        apple_model = apple_call(client)
        cfg = dict(SIGNER, test_base_url={"production": fake.base_url, "sandbox": fake.sandbox_url})
        with iapverify.Signer(cfg) as signer:
            req = signer.api_request(dict(call, environment="Sandbox"), now_ms=S.NOW)
        resp = requests.request(req.method, req.url, headers=req.headers, data=req.body, timeout=10)
        r = our_answer(call["endpoint"], resp.status_code, resp.content, env="Sandbox")
        if model_name is None:
            if apple_model is not None or r.verdict != "valid":
                problems.append(f"no-body answer: Apple {apple_model!r}, iapverify {r.verdict} {r.reason}")
        else:
            compare_answer(name, call["endpoint"], apple_model, r, "Sandbox", problems, via)
    finally:
        fake.stop()
    if fake.errors:
        problems.append(f"the fake refused: {fake.errors}")
    parity.require(parity.settle(f"answer/fake/{name}", problems,
                                 detail=f"{len(fake.requests)} requests served; fields equal"))


def signed_tx(env: str = "Sandbox", **more: Any) -> str:
    return fakeapi.sign_jws(transaction(env, **more), S.FAKE)


def _written_bodies() -> dict[str, tuple[str, str, int, dict]]:
    test_note = fakeapi.sign_jws(notification("Sandbox", "TEST", None, data={
        "bundleId": S.BUNDLE, "environment": "Sandbox", "appAppleId": S.APP_ID}), S.FAKE)
    return {
        # name: (iapverify endpoint, Apple's model, HTTP status, body)
        "order_lookup": ("order_lookup", "OrderLookupResponse", 200,
                         {"status": 0, "signedTransactions": [signed_tx(), signed_tx(transactionId="2000000123456790")]}),
        "order_lookup_unknown": ("order_lookup", "OrderLookupResponse", 200, {"status": 1, "signedTransactions": []}),
        "refund_history": ("refund_history", "RefundHistoryResponse", 200,
                           {"signedTransactions": [signed_tx(revocationDate=S.SIGNED - 1000, revocationReason=1,
                                                             revocationType="REFUND_FULL")],
                            "revision": "rev-refund-1", "hasMore": False}),
        "app_transaction_info": ("app_transaction_info", "AppTransactionInfoResponse", 200,
                                 {"signedAppTransactionInfo": fakeapi.sign_jws(app_transaction("Sandbox"), S.FAKE)}),
        "test_notification": ("test_notification", "SendTestNotificationResponse", 200,
                              {"testNotificationToken": "ce3af791-365e-4c60-841b-1674b43c1609_1739905566"}),
        "test_notification_status": ("test_notification_status", "CheckTestNotificationResponse", 200,
                                     {"signedPayload": test_note,
                                      "sendAttempts": [{"attemptDate": S.SIGNED, "sendAttemptResult": "SUCCESS"}]}),
        "extend_renewal_date": ("extend_renewal_date", "ExtendRenewalDateResponse", 200,
                                {"originalTransactionId": ORIGINAL_ID, "webOrderLineItemId": "2000000000123",
                                 "success": True, "effectiveDate": S.SIGNED + 14 * S.DAY}),
        "mass_extend_renewal_date": ("mass_extend_renewal_date", "MassExtendRenewalDateResponse", 200,
                                     {"requestIdentifier": "mass-0001"}),
        "mass_extend_status": ("mass_extend_status", "MassExtendRenewalDateStatusResponse", 200,
                               {"requestIdentifier": "mass-0001", "complete": True, "completeDate": S.SIGNED,
                                "succeededCount": 30, "failedCount": 2}),
        "list_images": ("list_images", "GetImageListResponse", 200,
                        {"imageIdentifiers": [{"imageIdentifier": str(IMAGE_ID).lower(), "imageState": "APPROVED",
                                               "imageSize": "FULL_SIZE"}]}),
        "list_messages": ("list_messages", "GetMessageListResponse", 200,
                          {"messageIdentifiers": [{"messageIdentifier": str(MESSAGE_ID).lower(), "messageState": "PENDING"}]}),
        "get_default_message": ("get_default_message", "DefaultConfigurationResponse", 200,
                                {"messageIdentifier": str(MESSAGE_ID).lower()}),
        "get_realtime_url": ("get_realtime_url", "RealtimeUrlResponse", 200,
                             {"realtimeURL": "https://example.com/apple/retention"}),
        "initiate_performance_test": ("initiate_performance_test", "PerformanceTestResponse", 200,
                                      {"config": {"maxConcurrentRequests": 5, "totalRequests": 100, "totalDuration": 60000,
                                                  "responseTimeThreshold": 700, "successRateThreshold": 90},
                                       "requestId": "c3b0e1d2-9f8e-4d7c-b6a5-948372615041"}),
        "error_not_found": ("transaction_info", "TransactionInfoResponse", 404,
                            {"errorCode": 4040010, "errorMessage": "Transaction id not found."}),
        "error_rate_limit": ("transaction_history", "HistoryResponse", 429,
                             {"errorCode": 4290000, "errorMessage": "Rate limit exceeded."}),
        "error_bad_request": ("extend_renewal_date", "ExtendRenewalDateResponse", 400,
                              {"errorCode": 4000009, "errorMessage": "Invalid extend by days value."}),
    }


def _apple_model_class(name: str):
    return _model(name)


@pytest.mark.parametrize("name", list(_written_bodies()))
def test_written_answers(name: str, monkeypatch) -> None:
    S.pin_apple(monkeypatch, S.NOW)
    endpoint, model_name, status, body_obj = _written_bodies()[name]
    body = json.dumps(body_obj).encode()
    model, error = apple_parse(_apple_model_class(model_name), status, body)
    r = our_answer(endpoint, status, body)
    problems: list[str] = []
    via: list[str] = []
    if error is not None:
        if (error.raw_api_error, error.error_message) != (r.raw.get("error_code"), r.raw.get("error_message")):
            problems.append(f"error: Apple {error.http_status_code} {error.raw_api_error} {error.error_message!r}, "
                            f"iapverify {r.raw.get('error_code')} {r.raw.get('error_message')!r}")
        if r.verdict == "valid":
            problems.append("Apple raises an APIException; iapverify says valid")
        detail = f"Apple APIException {error.raw_api_error}; iapverify {r.verdict}/{r.raw.get('action')}"
    else:
        if name == "order_lookup_unknown":
            if r.raw.get("order_status") != 1:
                problems.append(f"status: Apple {S.apple_dict(model).get('status')}, iapverify order_status {r.raw.get('order_status')}")
            detail = f"Apple status 1; iapverify {r.verdict} (order_status 1)"
        else:
            compare_answer(name, endpoint, model, r, "Sandbox", problems, via)
            detail = f"fields equal ({len(via)} notes)"
    parity.require(parity.settle(f"answer/written/{name}", problems, detail=detail))


# ================================================================================================
# The doc table itself
# ================================================================================================

def test_every_explanation_is_in_its_doc() -> None:
    """Each EXPLAINED entry names a docs/ file that says the phrase (the report cites its line)."""
    missing = []
    for pattern, explanation in parity.EXPLAINED.items():
        try:
            parity.doc_line(explanation)
        except AssertionError as e:
            missing.append(f"{pattern}: {e}")
    assert not missing, "\n".join(missing)


def test_the_comparison_sees_a_changed_field(monkeypatch) -> None:
    """The field comparison is not vacuous: Apple's decoding of one transaction against iapverify's
    record of the same transaction at another price and product is reported field by field."""
    S.pin_apple(monkeypatch, S.NOW)
    apple = S.apple_verifier("Sandbox").verify_and_decode_signed_transaction(
        fakeapi.sign_jws(transaction("Sandbox"), S.FAKE))
    with iapverify.Verifier(S.iapverify_config("Sandbox")) as verifier:
        r = verifier.verify_jws(fakeapi.sign_jws(transaction("Sandbox", price=4990, productId="other"), S.FAKE),
                                now_ms=S.NOW)
    assert r.valid, r.reason
    problems: list[str] = []
    S.compare_record("transaction", S.apple_dict(apple), r.transaction, r.raw["payload"], S.TRANSACTION_MEMBERS,
                     problems, [])
    assert sorted(p.split(":")[0] for p in problems) == ["transaction.price", "transaction.productId"], problems
