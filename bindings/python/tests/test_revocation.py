"""Revocation through the binding: the OCSP request and responder URL a JWS result carries, the
fake PKI's prepared OCSP answers passed back in ``ocsp_responses`` (bytes or base64), and the
policies "off" and "required". The request is also read independently with ``cryptography``.
Every answer in Tests/shared/fakeapple/ocsp was made for NOW."""
import base64
import json
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.x509 import ocsp

import iapverify

ROOT = Path(__file__).resolve().parents[3]
OCSP = ROOT / "Tests" / "shared" / "fakeapple" / "ocsp"
NOW = 1_767_229_200_000                   # 2026-01-01T01:00:00Z
TOKEN = (OCSP / "transaction.jws").read_text().strip()
URL = "http://127.0.0.1:39217/ocsp"


def config(revocation=None):
    c = {"bundle_id": "com.example.fake",
         "trust": {"include_apple_roots": False, "roots_pem": [(OCSP / "root.pem").read_text()]}}
    if revocation is not None:
        c["revocation"] = revocation
    return c


def answer(name):
    return (OCSP / f"{name}.der").read_bytes()


@pytest.fixture(scope="module")
def off():
    with iapverify.Verifier(config()) as v:
        yield v


@pytest.fixture(scope="module")
def required():
    with iapverify.Verifier(config("required")) as v:
        yield v


def test_without_an_answer_the_result_carries_the_request_and_the_url(off):
    r = off.verify_jws(TOKEN, now_ms=NOW)
    assert r.valid and r.verdict == "valid"
    rev = r.revocation
    assert isinstance(rev, iapverify.Revocation)
    assert (rev.status, rev.responder_url) == ("unchecked", URL)
    assert rev.request_der == base64.b64decode(rev.request) and rev.request == r.raw["revocation"]["request"]
    assert rev.this_update_ms is None and rev.next_update_ms is None and rev.revoked_at_ms is None
    post = rev.post_request()
    assert (post.full_url, post.get_method(), post.data) == (URL, "POST", rev.request_der)
    assert post.get_header("Content-type") == "application/ocsp-request"


def test_the_request_names_the_leaf_by_its_issuer(off):
    """Independent of the library: the DER parses as an OCSP request for leaf.pem, issued by wwdr.pem."""
    rev = off.verify_jws(TOKEN, now_ms=NOW).revocation
    req = ocsp.load_der_ocsp_request(rev.request_der)
    leaf = x509.load_pem_x509_certificate((OCSP / "leaf.pem").read_bytes())
    issuer = x509.load_pem_x509_certificate((OCSP / "wwdr.pem").read_bytes())
    assert req.serial_number == leaf.serial_number
    assert isinstance(req.hash_algorithm, hashes.SHA1)
    name_hash = hashes.Hash(hashes.SHA1())
    name_hash.update(issuer.subject.public_bytes())
    assert req.issuer_name_hash == name_hash.finalize()
    # The issuer key hash is SHA-1 over the key's bit string, as in a subject key identifier.
    assert req.issuer_key_hash == x509.SubjectKeyIdentifier.from_public_key(issuer.public_key()).digest
    # The leaf names the same responder the result does.
    aia = leaf.extensions.get_extension_for_class(x509.AuthorityInformationAccess).value
    assert [d.access_location.value for d in aia if d.access_method == x509.AuthorityInformationAccessOID.OCSP] == [URL]
    # And a request built by cryptography for the same pair names the same certificate.
    ours = ocsp.OCSPRequestBuilder().add_certificate(leaf, issuer, hashes.SHA1()).build()
    assert (ours.serial_number, ours.issuer_name_hash, ours.issuer_key_hash) == (
        req.serial_number, req.issuer_name_hash, req.issuer_key_hash)


@pytest.mark.parametrize("as_text", [False, True])
def test_a_good_answer_is_valid(off, required, as_text):
    item = base64.b64encode(answer("good")).decode() if as_text else answer("good")
    for v in (off, required):
        r = v.verify_jws(TOKEN, now_ms=NOW, options={"ocsp_responses": [item]})
        assert r.valid and r.verdict == "valid", r.reason
        assert r.revocation.status == "good"
        assert (r.revocation.this_update_ms, r.revocation.next_update_ms) == (1_767_225_600_000, 1_767_830_400_000)


def test_bytearray_and_memoryview_answers_and_json_text_options(required):
    for item in (bytearray(answer("delegated_good")), memoryview(answer("good"))):
        assert required.verify_jws(TOKEN, now_ms=NOW, options={"ocsp_responses": [item]}).verdict == "valid"
    text = json.dumps({"ocsp_responses": [base64.b64encode(answer("good")).decode()]})
    assert required.verify_jws(TOKEN, now_ms=NOW, options=text).verdict == "valid"


def test_a_revoked_answer_is_refused_under_either_policy(off, required):
    for v in (off, required):
        r = v.verify_jws(TOKEN, now_ms=NOW, options={"ocsp_responses": [answer("revoked")]})
        assert not r.valid and r.verdict == "revoked"
        assert r.entitlements == [] and r.delivery.to_deliver == []
        assert r.revocation.status == "revoked" and r.revocation.revoked_at_ms == 1_767_139_200_000


def test_required_without_an_answer_is_revocation_unknown(required):
    r = required.verify_jws(TOKEN, now_ms=NOW)
    assert not r.valid and r.verdict == "revocation_unknown"
    assert r.revocation.status == "unchecked" and r.revocation.responder_url == URL
    assert ocsp.load_der_ocsp_request(r.revocation.request_der).serial_number == \
        x509.load_pem_x509_certificate((OCSP / "leaf.pem").read_bytes()).serial_number


@pytest.mark.parametrize("name", ["forged", "unknown", "stale", "other_certificate", "unauthorized_status"])
def test_an_unusable_answer_is_unknown(off, required, name):
    r = off.verify_jws(TOKEN, now_ms=NOW, options={"ocsp_responses": [answer(name)]})
    assert r.valid and r.revocation.status == "unknown" and "ocsp_responses[0]" in r.revocation.reason
    r = required.verify_jws(TOKEN, now_ms=NOW, options={"ocsp_responses": [answer(name)]})
    assert not r.valid and r.verdict == "revocation_unknown" and r.revocation.status == "unknown"


def test_a_usable_answer_after_an_unusable_one_decides(required):
    r = required.verify_jws(TOKEN, now_ms=NOW, options={"ocsp_responses": [answer("forged"), answer("good")]})
    assert r.verdict == "valid" and r.revocation.status == "good"


def test_a_good_answer_is_stale_a_week_later(required):
    later = NOW + 8 * 86_400_000
    r = required.verify_jws(TOKEN, now_ms=later, options={"ocsp_responses": [answer("good")]})
    assert r.verdict == "revocation_unknown" and "stale" in r.revocation.reason


def test_an_unchecked_chain_has_no_revocation(off):
    r = off.verify_jws("not.a.token", now_ms=NOW)
    assert r.verdict == "malformed" and r.revocation is None


def test_bad_ocsp_responses_are_type_errors(off):
    with pytest.raises(TypeError, match="ocsp_responses must be a list"):
        off.verify_jws(TOKEN, now_ms=NOW, options={"ocsp_responses": answer("good")})
    with pytest.raises(TypeError, match=r"ocsp_responses\[1\]"):
        off.verify_jws(TOKEN, now_ms=NOW, options={"ocsp_responses": [answer("good"), 7]})


def test_receipt_results_carry_it_under_signing():
    """A real Apple receipt: its leaf gets a request too; the fake PKI's answer does not fit it."""
    der = (ROOT / "Tests" / "IAPVerifyTests" / "Fixtures" / "receipts" /
           "production_2025-04-18_com.dashedspace.analytics_sha256.der").read_bytes()
    with iapverify.Verifier({"bundle_id": "com.dashedspace.analytics"}) as v:
        r = v.verify_receipt(der, now_ms=1_745_000_000_000)
        assert r.valid and r.revocation is not None and r.revocation.status == "unchecked"
        assert r.revocation.raw == r.receipt["signing"]["revocation"]
        assert ocsp.load_der_ocsp_request(r.revocation.request_der).serial_number > 0
        r = v.verify_receipt(der, now_ms=1_745_000_000_000, options={"ocsp_responses": [answer("good")]})
        assert r.valid and r.revocation.status == "unknown"
    with iapverify.Verifier({"bundle_id": "com.dashedspace.analytics", "revocation": "required"}) as v:
        r = v.verify_receipt(der, now_ms=1_745_000_000_000)
        # (A refused receipt shows no signing member: the request comes from an "off" verifier or
        # `iapverify ocsp-request`.)
        assert r.verdict == "revocation_unknown" and not r.valid and r.entitlements == []
    with iapverify.Verifier({"bundle_id": "com.dashedspace.analytics"}) as v:
        assert v.verify_receipt(b"garbage", now_ms=1_745_000_000_000).revocation is None
