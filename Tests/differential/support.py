"""What the differential cases share: the fake PKIs, the payloads, both libraries' verifiers set up
alike, Apple's clocks and nonces pinned, and the field-by-field comparison of decoded data."""
from __future__ import annotations

import base64
import datetime as _dt
import enum
import json
import re
import types
import uuid
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.x509.oid import NameOID

import iapverify
from appstoreserverlibrary import api_client as apple_api_client
from appstoreserverlibrary import jws_signature_creator as apple_jws_creator
from appstoreserverlibrary import signed_data_verifier as apple_sdv
from appstoreserverlibrary.models.Environment import Environment as AppleEnvironment
from appstoreserverlibrary.models.LibraryUtility import _get_cattrs_converter

import fakeapi

ROOT = Path(__file__).resolve().parents[2]
FAKE = ROOT / "Tests" / "shared" / "fakeapple"
FIXTURES = ROOT / "Tests" / "IAPVerifyTests" / "Fixtures"

BUNDLE = "com.example.fake"
OTHER_BUNDLE = "com.example.other"
APP_ID = 1234567890
OTHER_APP_ID = 987654321
SIGNED = 1767225600000            # 2026-01-01T00:00:00Z: when the fake payloads were signed
NOW = SIGNED + 60_000             # when both libraries check them
ENVIRONMENTS = ("Production", "Sandbox", "Xcode", "LocalTesting")
DAY = 86_400_000


# ---- certificates and keys ----------------------------------------------------------------------

def pem(cert: x509.Certificate) -> str:
    return cert.public_bytes(serialization.Encoding.PEM).decode()


def der(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.DER)


def load_cert(path: Path) -> x509.Certificate:
    data = path.read_bytes()
    return x509.load_pem_x509_certificate(data) if b"BEGIN CERTIFICATE" in data else x509.load_der_x509_certificate(data)


FAKE_ROOT = load_cert(FAKE / "root.pem")
# Another Apple-shaped root (the JWS fixtures' fake PKI): "the wrong root" for every chain here.
OTHER_ROOT = load_cert(FIXTURES / "jwsfake" / "root.pem")
APPLE_ROOT_G3 = load_cert(FIXTURES / "certs" / "AppleRootCA-G3.cer")
XCODE_FIXTURE_CERT = load_cert(FIXTURES / "xcode" / "jws" / "StoreKitTestingInXcode_ES256_2023-10-19.pem")


@lru_cache(maxsize=None)
def xcode_signer(seed: int) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    """A key and self-signed certificate like Xcode's StoreKit testing one, the same every run
    (the key comes from ``seed``; the certificate's signature may vary, which changes nothing)."""
    key = ec.derive_private_key(seed, ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"StoreKit Testing in Xcode {seed % 1000}")])
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(seed % (1 << 64) + 1)
            .not_valid_before(_dt.datetime(2020, 1, 1, tzinfo=_dt.timezone.utc))
            .not_valid_after(_dt.datetime(2045, 1, 1, tzinfo=_dt.timezone.utc))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    return key, cert


XCODE_SEED, OTHER_XCODE_SEED = 0x5EED_0001_A11CE, 0x5EED_0002_B0B


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def sign_xcode(payload: dict, seed: int = XCODE_SEED) -> str:
    """A compact JWS shaped like Xcode's local StoreKit testing: ES256, x5c of one certificate."""
    key, cert = xcode_signer(seed)
    header = {"alg": "ES256", "x5c": [base64.b64encode(der(cert)).decode()], "kid": "Apple_Xcode_Key"}
    signing_input = b64url(json.dumps(header).encode()) + "." + b64url(json.dumps(payload).encode())
    r, s = decode_dss_signature(key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
    return signing_input + "." + b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big"))


def sign_for(env: str, payload: dict) -> str:
    """Signed the way data of ``env`` is: Apple's chain (the fake one here), or Xcode's certificate."""
    return sign_xcode(payload) if env in ("Xcode", "LocalTesting") else fakeapi.sign_jws(payload, FAKE)


def tamper(token: str) -> str:
    """The same token with one bit of its signature flipped."""
    head, payload, sig = token.split(".")
    raw = bytearray(unb64url(sig))
    raw[-1] ^= 1
    return f"{head}.{payload}.{b64url(bytes(raw))}"


def decode_part(token: str, index: int) -> dict:
    return json.loads(unb64url(token.split(".")[index]))


# ---- configuring both verifiers alike -----------------------------------------------------------

def iapverify_config(env: str, *, bundle: str = BUNDLE, app_id: Optional[int] = APP_ID,
                     roots: tuple[x509.Certificate, ...] = (FAKE_ROOT,), include_apple_roots: bool = False,
                     xcode_roots: tuple[x509.Certificate, ...] = ()) -> dict:
    config: dict[str, Any] = {"bundle_id": bundle, "environments": [env],
                              "trust": {"include_apple_roots": include_apple_roots, "roots_pem": [pem(c) for c in roots]}}
    if app_id is not None:
        config["app_apple_id"] = app_id
    if env in ("Xcode", "LocalTesting"):
        config["xcode"] = {"accept": True, "roots_pem": [pem(c) for c in xcode_roots]}
    return config


def iapverify_verifier(config: dict) -> tuple[iapverify.Verifier, str]:
    """The verifier, and a note when iapverify needed another spelling of the environment:
    it maps LocalTesting onto Xcode where the config takes no "LocalTesting" (docs/config.md)."""
    try:
        return iapverify.Verifier(config), ""
    except iapverify.ConfigError as e:
        if config["environments"] != ["LocalTesting"]:
            raise
        fallback = dict(config, environments=["Xcode"])
        return iapverify.Verifier(fallback), f"config refused environments [LocalTesting] ({e.message}); used [Xcode]"


def apple_verifier(env: str, *, bundle: str = BUNDLE, app_id: Optional[int] = APP_ID,
                   roots: tuple[x509.Certificate, ...] = (FAKE_ROOT,)) -> apple_sdv.SignedDataVerifier:
    return apple_sdv.SignedDataVerifier([der(c) for c in roots], False, AppleEnvironment(env), bundle, app_id)


# ---- Apple's clocks and random nonces, pinned ---------------------------------------------------

def _frozen_datetime_module(now_ms: int) -> types.SimpleNamespace:
    instant = _dt.datetime.fromtimestamp(now_ms / 1000, tz=_dt.timezone.utc)

    class Frozen(_dt.datetime):
        @classmethod
        def now(cls, tz=None):  # noqa: ANN001
            return instant.astimezone(tz) if tz is not None else instant.replace(tzinfo=None)

    return types.SimpleNamespace(datetime=Frozen, timezone=_dt.timezone, timedelta=_dt.timedelta)


def pin_apple(monkeypatch, now_ms: int, nonce: Optional[uuid.UUID] = None) -> None:
    """Apple's library reads the clock (tokens, signature creators, a payload without signedDate)
    and makes random nonces (V2 signature creators): both pinned for the running test."""
    monkeypatch.setattr(apple_sdv, "time", types.SimpleNamespace(time=lambda: now_ms / 1000))
    monkeypatch.setattr(apple_api_client, "datetime", _frozen_datetime_module(now_ms))
    monkeypatch.setattr(apple_jws_creator, "datetime", _frozen_datetime_module(now_ms))
    if nonce is not None:
        monkeypatch.setattr(apple_jws_creator, "uuid", types.SimpleNamespace(uuid4=lambda: nonce))


# ---- verifying with both ------------------------------------------------------------------------

class AppleAnswer:
    """What Apple's verifier said: ``ok`` with the decoded ``model`` (and the nested items a host
    verifies with the same verifier), or the VerificationException's ``status``."""

    def __init__(self) -> None:
        self.ok = False
        self.status: Optional[str] = None
        self.model: Any = None
        self.nested: dict[str, Any] = {}
        self.nested_status: Optional[str] = None

    def __repr__(self) -> str:
        return "accepted" if self.ok else f"refused ({self.status})"


APPLE_METHODS = {
    "transaction": "verify_and_decode_signed_transaction",
    "renewal_info": "verify_and_decode_renewal_info",
    "app_transaction": "verify_and_decode_app_transaction",
    "notification": "verify_and_decode_notification",
    "realtime_request": "verify_and_decode_realtime_request",
}


def apple_verify(verifier: apple_sdv.SignedDataVerifier, method: str, token: str, *, nested: bool = True) -> AppleAnswer:
    """Apple's verdict as a host that uses its library completely has it: the method's, then for a
    notification the nested transaction, renewal info or app transaction, each verified with the
    same verifier (``nested=False``: the method's alone)."""
    answer = AppleAnswer()
    try:
        answer.model = getattr(verifier, APPLE_METHODS[method])(token)
    except apple_sdv.VerificationException as e:
        answer.status = e.status.name
        return answer
    answer.ok = True
    if method == "notification" and nested:
        m = answer.model
        items = []
        if m.data is not None:
            items += [("transaction", "signedTransactionInfo", m.data.signedTransactionInfo),
                      ("renewal_info", "signedRenewalInfo", m.data.signedRenewalInfo)]
        if m.appData is not None:
            items.append(("app_transaction", "signedAppTransactionInfo", m.appData.signedAppTransactionInfo))
        for kind, name, item in items:
            if item is None:
                continue
            try:
                answer.nested[name] = getattr(verifier, APPLE_METHODS[kind])(item)
            except apple_sdv.VerificationException as e:
                answer.ok = False
                answer.status = f"{e.status.name} in {name}"
                return answer
    return answer


# Apple's statuses and the iapverify verdicts that say the same.
SAME_REFUSAL = {
    "INVALID_APP_IDENTIFIER": {"bundle_mismatch"},
    "INVALID_ENVIRONMENT": {"environment_rejected"},
    "VERIFICATION_FAILURE": {"untrusted_chain", "not_apple_signer", "signature_invalid", "malformed",
                             "unsupported_algorithm"},
    "INVALID_CERTIFICATE": {"untrusted_chain", "not_apple_signer", "malformed"},
    "INVALID_CHAIN_LENGTH": {"not_apple_signer", "untrusted_chain", "environment_rejected"},
    "INVALID_CHAIN": {"untrusted_chain", "not_apple_signer"},
}


def apple_dict(model: Any) -> dict:
    """An attrs model of Apple's library as the JSON it was read from (Apple's field names, raw
    values; absent fields left out)."""
    return _get_cattrs_converter(type(model)).unstructure(model)


# ---- comparing decoded fields -------------------------------------------------------------------

def plain(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, tuple):
        return [plain(v) for v in value]
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def same(apple: Any, ours: Any) -> bool:
    apple, ours = plain(apple), plain(ours)
    if isinstance(ours, bool) and isinstance(apple, int) and not isinstance(apple, bool):
        return int(ours) == apple                      # Apple's 0/1 flags (autoRenewStatus)
    if isinstance(apple, (int, float)) and isinstance(ours, (int, float)) and \
            not isinstance(apple, bool) and not isinstance(ours, bool) and (isinstance(apple, float) or isinstance(ours, float)):
        return int(apple) == int(ours)                 # Xcode's fractional milliseconds: Apple's models truncate
    return apple == ours


def _snake(name: str) -> str:
    s = re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
    return s[:-5] + "_date_ms" if s.endswith("_date") else s


# Apple's field -> the member of iapverify's record that holds it, where the names differ beyond
# the record's own camelCase aliases.
TRANSACTION_MEMBERS = {"revocationReason": "cancellation_reason", "commitmentInfo": "commitment"}
RENEWAL_MEMBERS = {"commitmentInfo": "commitment"}


def _commitment_key(name: str) -> str:
    name = name[len("commitment"):] if name.startswith("commitment") and name != "commitmentPrice" \
        and name != "commitmentExpiresDate" else name
    name = name[0].lower() + name[1:]
    return _snake(name)


def compare_record(what: str, apple: dict, record: Any, payload: Optional[dict], members: dict[str, str],
                   problems: list[str], via_payload: list[str], extra_sources: Optional[dict] = None) -> None:
    """Each field Apple decoded against iapverify's record (its typed member or Apple-named alias);
    a field the record does not model is compared with the verified payload iapverify returns."""
    for name, value in apple.items():
        if extra_sources and name in extra_sources:
            ours, found = extra_sources[name], True
        elif record is not None and name in members and hasattr(record, members[name]):
            ours, found = getattr(record, members[name]), True
        elif record is not None and hasattr(type(record), name) or (record is not None and name in getattr(record, "__dataclass_fields__", {})):
            ours, found = getattr(record, name), True
        else:
            found = False
            ours = None
        if name == "revocationReason" and found:
            if str(value) != ours:
                problems.append(f"{what}.{name}: Apple {value!r}, iapverify {ours!r}")
            continue
        if name == "commitmentInfo" and found and isinstance(value, dict):
            mapped = {_commitment_key(k): v for k, v in value.items()}
            if not all(same(v, (ours or {}).get(k)) for k, v in mapped.items()):
                problems.append(f"{what}.{name}: Apple {value!r}, iapverify {ours!r}")
            continue
        if not found:
            if payload is None or name not in payload:
                problems.append(f"{what}.{name}: Apple decoded {value!r}; iapverify has no such member")
                continue
            via_payload.append(f"{what}.{name}")
            ours = payload[name]
        if not same(value, ours):
            problems.append(f"{what}.{name}: Apple {value!r}, iapverify {plain(ours)!r}")
