#!/usr/bin/env python3
"""Generates the fake Apple-shaped PKI and the hostile receipts of the test suite.

Every certificate copies Apple's subject names but uses keys made here, so nothing produced
by this script can ever pass against Apple's real roots. The output (certificates, receipts and
cases.json with each case's exact expected verdict) is committed under
Tests/IAPVerifyTests/Fixtures/fakepki; the tests never run this script.

Usage: scripts/generate-fake-pki.py [OUTDIR]   (needs the `cryptography` package from PyPI)
"""
import datetime as dt
import hashlib
import json
import os
import sys

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.x509.oid import NameOID

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "Tests", "IAPVerifyTests", "Fixtures", "fakepki")
os.makedirs(OUT, exist_ok=True)

LEAF_MARKER = x509.ObjectIdentifier("1.2.840.113635.100.6.11.1")
WWDR_MARKER = x509.ObjectIdentifier("1.2.840.113635.100.6.2.1")
UTC = dt.timezone.utc
T = lambda *a: dt.datetime(*a, tzinfo=UTC)
CREATED = "2024-01-15T10:00:00Z"
CREATED_MS = 1705312800000
BUNDLE = "com.example.fake"
DEVICE_ID = bytes.fromhex("c68bce287e27494aa082acecb9328171")

# ---- tiny DER encoder ------------------------------------------------------------------------

def tlv(tag, content):
    n = len(content)
    if n < 0x80:
        length = bytes([n])
    else:
        b = n.to_bytes((n.bit_length() + 7) // 8, "big")
        length = bytes([0x80 | len(b)]) + b
    return bytes([tag]) + length + content

seq = lambda *xs: tlv(0x30, b"".join(xs))
set_ = lambda *xs: tlv(0x31, b"".join(sorted(xs)))
octets = lambda b: tlv(0x04, b)
utf8 = lambda s: tlv(0x0C, s.encode())
ia5 = lambda s: tlv(0x16, s.encode())
null = b"\x05\x00"
explicit = lambda n, x: tlv(0xA0 | n, x)

def integer(v):
    if v == 0:
        return tlv(0x02, b"\x00")
    length = (v.bit_length() + 8) // 8 if v > 0 else ((-v - 1).bit_length() + 8) // 8
    return tlv(0x02, v.to_bytes(length, "big", signed=True))

def oid(dotted):
    parts = [int(p) for p in dotted.split(".")]
    body = bytes([40 * parts[0] + parts[1]])
    for p in parts[2:]:
        chunk = [p & 0x7F]
        p >>= 7
        while p:
            chunk.append(0x80 | (p & 0x7F))
            p >>= 7
        body += bytes(reversed(chunk))
    return tlv(0x06, body)

OIDS = {
    "sha1": "1.3.14.3.2.26", "sha256": "2.16.840.1.101.3.4.2.1", "md5": "1.2.840.113549.2.5",
    "sha512": "2.16.840.1.101.3.4.2.3", "rsa": "1.2.840.113549.1.1.1", "ecdsa-sha256": "1.2.840.10045.4.3.2",
    "ecdsa-sha1": "1.2.840.10045.4.1", "data": "1.2.840.113549.1.7.1", "signedData": "1.2.840.113549.1.7.2",
    "contentType": "1.2.840.113549.1.9.3", "messageDigest": "1.2.840.113549.1.9.4",
}
HASHES = {"sha1": hashes.SHA1(), "sha256": hashes.SHA256()}

# ---- payloads --------------------------------------------------------------------------------

def attr(t, value, version=1):
    return seq(integer(t), integer(version), octets(value))

def in_app(txn, product="com.example.fake.coins", purchase="2024-01-10T09:00:00Z"):
    return set_(attr(1701, integer(1)), attr(1702, utf8(product)), attr(1703, utf8(txn)),
                attr(1704, ia5(purchase)), attr(1705, utf8(txn)), attr(1706, ia5(purchase)),
                attr(1708, ia5("")), attr(1712, ia5("")))

OPAQUE = bytes.fromhex("0011223344556677")

def payload(receipt_type="Production", bundle=BUNDLE, version="1.0", created=CREATED, expiration=None,
            extra=(), drop=(), device=DEVICE_ID):
    bundle_value = utf8(bundle)
    attrs = {
        0: [attr(0, utf8(receipt_type))], 1: [attr(1, integer(0))], 2: [attr(2, bundle_value)],
        3: [attr(3, utf8(version))], 4: [attr(4, OPAQUE)],
        5: [attr(5, hashlib.sha1(device + OPAQUE + bundle_value).digest())],
        12: [attr(12, ia5(created))], 19: [attr(19, utf8("1.0"))],
        17: [attr(17, in_app("1000000000000001")), attr(17, in_app("1000000000000002"))],
    }
    if expiration:
        attrs[21] = [attr(21, ia5(expiration))]
    for t in drop:
        attrs.pop(t, None)
    items = [a for v in attrs.values() for a in v] + list(extra)
    return set_(*items)

cases = []

# ---- certificates ----------------------------------------------------------------------------

def name(cn, ou=None):
    parts = [x509.NameAttribute(NameOID.COMMON_NAME, cn)]
    if ou:
        parts.append(x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, ou))
    parts += [x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Apple Inc."), x509.NameAttribute(NameOID.COUNTRY_NAME, "US")]
    return x509.Name(parts)

def rsa_key():
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)

def make_cert(subject, key, issuer_name, issuer_key, ca, path_len=None, markers=(), nb=T(2020, 1, 1), na=T(2034, 1, 1),
              key_usage="leaf"):
    b = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer_name).public_key(key.public_key())
         .serial_number(x509.random_serial_number()).not_valid_before(nb).not_valid_after(na)
         .add_extension(x509.BasicConstraints(ca=ca, path_length=path_len), critical=True))
    if key_usage == "ca":
        b = b.add_extension(x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True)
    elif key_usage == "leaf":
        b = b.add_extension(x509.KeyUsage(True, False, False, False, False, False, False, False, False), critical=True)
    for m in markers:
        b = b.add_extension(x509.UnrecognizedExtension(m, null), critical=False)
    return b.sign(issuer_key, hashes.SHA256())

ROOT_NAME = x509.Name([x509.NameAttribute(NameOID.COUNTRY_NAME, "US"), x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Apple Inc."),
                       x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, "Apple Certification Authority"),
                       x509.NameAttribute(NameOID.COMMON_NAME, "Apple Root CA")])
WWDR_NAME = name("Apple Worldwide Developer Relations Certification Authority", "G5")
LEAF_NAME = name("Mac App Store and iTunes Store Receipt Signing", "Apple Worldwide Developer Relations")

root_key, foreign_key = rsa_key(), rsa_key()
root = make_cert(ROOT_NAME, root_key, ROOT_NAME, root_key, ca=True, key_usage="ca", nb=T(2006, 1, 1), na=T(2040, 1, 1))
foreign_root = make_cert(ROOT_NAME, foreign_key, ROOT_NAME, foreign_key, ca=True, key_usage="ca", nb=T(2006, 1, 1), na=T(2040, 1, 1))
wwdr_key = rsa_key()
wwdr = make_cert(WWDR_NAME, wwdr_key, ROOT_NAME, root_key, ca=True, key_usage="ca", markers=[WWDR_MARKER])
leaf_key = rsa_key()
leaf = make_cert(LEAF_NAME, leaf_key, WWDR_NAME, wwdr_key, ca=False, markers=[LEAF_MARKER])
ec_leaf_key = ec.generate_private_key(ec.SECP256R1())
ec_leaf = make_cert(name("Prod ECC Mac App Store and iTunes Store Receipt Signing", "Apple Worldwide Developer Relations"),
                    ec_leaf_key, WWDR_NAME, wwdr_key, ca=False, markers=[LEAF_MARKER])

der = lambda c: c.public_bytes(serialization.Encoding.DER)
pem = lambda c: c.public_bytes(serialization.Encoding.PEM).decode()

# ---- SignedData ------------------------------------------------------------------------------

def issuer_and_serial(cert):
    return seq(cert.issuer.public_bytes(), integer(cert.serial_number))

def sign_bytes(key, data, digest):
    if isinstance(key, rsa.RSAPrivateKey):
        return key.sign(data, padding.PKCS1v15(), HASHES[digest])
    return key.sign(data, ec.ECDSA(HASHES[digest]))

def signer_info(cert, key, content, digest="sha1", sig_oid=None, signed_attrs=None, digest_oid=None, sign_digest=None):
    sign_digest = sign_digest or digest
    sig_oid = sig_oid or ("rsa" if isinstance(key, rsa.RSAPrivateKey) else "ecdsa-sha256")
    if signed_attrs is not None:
        attrs_set = set_(*signed_attrs)
        signature = sign_bytes(key, attrs_set, sign_digest)
        attrs_field = tlv(0xA0, attrs_set[2 if attrs_set[1] < 0x80 else 2 + (attrs_set[1] & 0x7F):])
    else:
        signature = sign_bytes(key, content, sign_digest)
        attrs_field = b""
    return seq(integer(1), issuer_and_serial(cert), seq(oid(OIDS[digest_oid or digest]), null), attrs_field,
               seq(oid(OIDS[sig_oid]), null) if sig_oid == "rsa" else seq(oid(OIDS[sig_oid])), octets(signature))

def signed_data(content, certs, signers, digest="sha1", detached=False, content_type="data"):
    encap = seq(oid(OIDS[content_type])) if detached else seq(oid(OIDS[content_type]), explicit(0, octets(content)))
    body = seq(integer(1), set_(seq(oid(OIDS[digest]), null)), encap,
               tlv(0xA0, b"".join(der(c) for c in certs)), set_(*signers))
    return seq(oid(OIDS["signedData"]), explicit(0, body))

def receipt(content=None, certs=None, signer=None, key=None, digest="sha1", **kw):
    content = content if content is not None else payload()
    signer = signer or leaf
    key = key or leaf_key
    certs = certs if certs is not None else [signer, wwdr, root]
    return signed_data(content, certs, [signer_info(signer, key, content, digest, **kw)], digest=digest)

# ---- the cases -----------------------------------------------------------------------------------

def main():

    global cases
    cases.clear()

    def case(file, data, verdict, note, config=None, now=None, options=None, status=None):
        with open(os.path.join(OUT, file), "wb") as f:
            f.write(data)
        cases.append({"file": file, "verdict": verdict, "status": status, "note": note, "config": config or {},
                      "now_ms": now or CREATED_MS + 86_400_000, "options": options or {}})

    case("valid_rsa_sha1.der", receipt(), "valid", "Apple-shaped chain under the configured fake root, SHA-1")
    case("valid_rsa_sha256.der", receipt(digest="sha256"), "valid", "the same with SHA-256")
    case("valid_ecdsa_sha256.der", receipt(signer=ec_leaf, key=ec_leaf_key, digest="sha256"), "valid", "ECDSA P-256 leaf")
    case("valid_at_2030.der", receipt(), "valid", "checked long after the leaf expired: validity is at the creation date",
         now=1893456000000)
    case("valid_certs_reordered.der", receipt(certs=[root, leaf, wwdr]), "valid", "embedded certificates in another order")
    case("valid_no_embedded_root.der", receipt(certs=[leaf, wwdr]), "valid", "the root is not embedded; the configured one is used")
    content_sa = payload()
    good_attrs = [seq(oid(OIDS["contentType"]), set_(oid(OIDS["data"]))),
                  seq(oid(OIDS["messageDigest"]), set_(octets(hashlib.sha256(content_sa).digest())))]
    case("valid_signed_attributes.der", receipt(content=content_sa, digest="sha256", signed_attrs=good_attrs), "valid",
         "signed attributes with the right messageDigest")
    bad_attrs = [seq(oid(OIDS["contentType"]), set_(oid(OIDS["data"]))),
                 seq(oid(OIDS["messageDigest"]), set_(octets(hashlib.sha256(b"other content").digest())))]
    case("signed_attributes_wrong_digest.der", receipt(content=content_sa, digest="sha256", signed_attrs=bad_attrs),
         "signature_invalid", "signed attributes whose messageDigest is not the content's digest")

    # chain
    dev_leaf = make_cert(name("iPhone Developer: Mallory Example (ABCDE12345)", "ABCDE12345"), leaf_key, WWDR_NAME, wwdr_key, ca=False)
    case("developer_leaf.der", receipt(signer=dev_leaf), "not_apple_signer", "a developer certificate under WWDR signs the receipt")
    leaf_no_oid = make_cert(LEAF_NAME, leaf_key, WWDR_NAME, wwdr_key, ca=False)
    case("leaf_missing_marker.der", receipt(signer=leaf_no_oid), "not_apple_signer", "leaf without 1.2.840.113635.100.6.11.1")
    wwdr_no_oid = make_cert(WWDR_NAME, wwdr_key, ROOT_NAME, root_key, ca=True, key_usage="ca")
    case("intermediate_missing_marker.der", receipt(certs=[leaf, wwdr_no_oid, root]), "not_apple_signer",
         "intermediate without 1.2.840.113635.100.6.2.1")
    leaf_under_root = make_cert(LEAF_NAME, leaf_key, ROOT_NAME, root_key, ca=False, markers=[LEAF_MARKER])
    case("two_certificate_path.der", receipt(signer=leaf_under_root, certs=[leaf_under_root, root]), "not_apple_signer",
         "leaf issued directly by the root: a 2-certificate path")
    sub_key = rsa_key()
    sub_name = name("Apple Worldwide Developer Relations Sub CA", "G5")
    sub = make_cert(sub_name, sub_key, WWDR_NAME, wwdr_key, ca=True, key_usage="ca", markers=[WWDR_MARKER])
    leaf_under_sub = make_cert(LEAF_NAME, leaf_key, sub_name, sub_key, ca=False, markers=[LEAF_MARKER])
    case("four_certificate_path.der", receipt(signer=leaf_under_sub, certs=[leaf_under_sub, sub, wwdr, root]), "not_apple_signer",
         "an extra intermediate: a 4-certificate path")
    ca_leaf = make_cert(LEAF_NAME, leaf_key, WWDR_NAME, wwdr_key, ca=True, key_usage="ca", markers=[LEAF_MARKER])
    case("ca_leaf.der", receipt(signer=ca_leaf), "not_apple_signer", "the signing certificate is a CA")
    expired_leaf = make_cert(LEAF_NAME, leaf_key, WWDR_NAME, wwdr_key, ca=False, markers=[LEAF_MARKER], nb=T(2020, 1, 1), na=T(2023, 1, 1))
    case("leaf_expired_at_creation.der", receipt(signer=expired_leaf), "untrusted_chain", "leaf expired before the creation date")
    future_leaf = make_cert(LEAF_NAME, leaf_key, WWDR_NAME, wwdr_key, ca=False, markers=[LEAF_MARKER], nb=T(2025, 1, 1), na=T(2030, 1, 1))
    case("leaf_not_yet_valid_at_creation.der", receipt(signer=future_leaf), "untrusted_chain", "leaf valid only after the creation date")
    foreign_wwdr = make_cert(WWDR_NAME, wwdr_key, ROOT_NAME, foreign_key, ca=True, key_usage="ca", markers=[WWDR_MARKER])
    case("foreign_root.der", receipt(certs=[leaf, foreign_wwdr, foreign_root]), "untrusted_chain",
         "Apple's names, but the chain ends in a root that is not configured (the embedded root is ignored)")
    wwdr_not_ca = make_cert(WWDR_NAME, wwdr_key, ROOT_NAME, root_key, ca=False, markers=[WWDR_MARKER], key_usage="ca")
    case("intermediate_not_ca.der", receipt(certs=[leaf, wwdr_not_ca, root]), "untrusted_chain", "the intermediate says CA:FALSE")
    root0_key = rsa_key()
    root0 = make_cert(ROOT_NAME, root0_key, ROOT_NAME, root0_key, ca=True, path_len=0, key_usage="ca", nb=T(2006, 1, 1), na=T(2040, 1, 1))
    wwdr0 = make_cert(WWDR_NAME, wwdr_key, ROOT_NAME, root0_key, ca=True, key_usage="ca", markers=[WWDR_MARKER])
    with open(os.path.join(OUT, "root_pathlen0.pem"), "w") as f:
        f.write(pem(root0))
    case("path_length_exceeded.der", receipt(certs=[leaf, wwdr0, root0]), "untrusted_chain",
         "the root allows no intermediate (pathLenConstraint 0)", config={"trust": {"roots_pem": ["@root_pathlen0.pem"], "include_apple_roots": False}})
    case("signer_not_embedded.der", receipt(certs=[wwdr, root]), "untrusted_chain", "the SignerInfo names a certificate that is not in the receipt")
    case("against_apple_roots.der", receipt(), "untrusted_chain", "a perfect fake is rejected when only Apple's real roots are trusted",
         config={"trust": {"include_apple_roots": True}})

    # signature
    good = receipt()
    tampered = bytearray(good)
    i = tampered.find(BUNDLE.encode())
    tampered[i] ^= 0x01  # "com.example.fake" -> "bom.example.fake"
    case("tampered_payload.der", bytes(tampered), "signature_invalid", "one payload byte changed after signing",
         config={"bundle_id": "*"})
    other = payload(bundle="com.example.other")
    case("signature_from_other_content.der",
         signed_data(payload(), [leaf, wwdr, root], [signer_info(leaf, leaf_key, other)]), "signature_invalid",
         "a valid signature over different content")
    case("signature_wrong_key.der",
         signed_data(payload(), [leaf, wwdr, root], [signer_info(leaf, wwdr_key, payload())]), "signature_invalid",
         "signed by a key that is not the leaf's")
    case("ecdsa_oid_on_rsa_key.der", receipt(sig_oid="ecdsa-sha256", digest="sha256"), "signature_invalid",
         "the SignerInfo claims ECDSA but the leaf key is RSA")

    # structure and algorithms
    case("trailing_byte.der", good + b"\x00", "malformed", "one byte after the ContentInfo")
    case("trailing_pkcs7.der", good + good, "malformed", "a second receipt appended")
    case("digest_md5.der", receipt(digest_oid="md5", sign_digest="sha1"), "unsupported_algorithm", "MD5 content digest")
    case("digest_sha512.der", receipt(digest_oid="sha512", sign_digest="sha1"), "unsupported_algorithm", "SHA-512 content digest")
    c = payload()
    case("two_signers.der", signed_data(c, [leaf, wwdr, root], [signer_info(leaf, leaf_key, c), signer_info(ec_leaf, ec_leaf_key, c, "sha256")]),
         "malformed", "two SignerInfos")
    case("no_signers.der", signed_data(c, [leaf, wwdr, root], []), "malformed", "no SignerInfo: not signed at all")
    case("detached_content.der", signed_data(c, [leaf, wwdr, root], [signer_info(leaf, leaf_key, c)], detached=True), "malformed",
         "the signature is detached: no payload")
    case("bare_payload.der", payload(), "malformed", "a payload SET with no PKCS#7 around it")
    case("not_data_content.der", signed_data(c, [leaf, wwdr, root], [signer_info(leaf, leaf_key, c)], content_type="signedData"),
         "malformed", "the signed content type is not data")

    # payload
    case("duplicate_bundle_id.der", receipt(content=payload(extra=[attr(2, utf8("com.example.other"))])), "malformed",
         "attribute 2 twice")
    case("no_creation_date.der", receipt(content=payload(drop=[12])), "malformed", "no attribute 12")
    case("bundle_id_ia5.der", receipt(content=set_(*[a for a in [attr(0, utf8("Production")), attr(2, ia5(BUNDLE)), attr(12, ia5(CREATED))]])),
         "malformed", "bundle id as IA5String instead of UTF8String")
    case("bad_date.der", receipt(content=payload(drop=[12], extra=[attr(12, ia5("15/01/2024 10:00"))])), "malformed", "a creation date not in RFC 3339")
    case("integer_9_bytes.der", receipt(content=payload(drop=[1], extra=[attr(1, tlv(0x02, b"\x01" * 9))])), "malformed",
         "an INTEGER wider than 64 bits")
    case("attribute_two_fields.der", receipt(content=set_(seq(integer(2), integer(1)), attr(12, ia5(CREATED)))), "malformed",
         "an attribute SEQUENCE with 2 fields")

    # policy (checks 8-13)
    case("sandbox_rejected.der", receipt(content=payload(receipt_type="ProductionSandbox")), "environment_rejected",
         "a sandbox receipt when only Production is accepted")
    case("sandbox_accepted.der", receipt(content=payload(receipt_type="ProductionSandbox")), "valid",
         "a sandbox receipt when Sandbox is accepted", config={"environments": ["Production", "Sandbox"]})
    case("vpp_production.der", receipt(content=payload(receipt_type="ProductionVPP")), "valid", "ProductionVPP counts as Production")
    case("unknown_receipt_type.der", receipt(content=payload(receipt_type="Staging")), "environment_rejected", "an unknown receipt type")
    case("no_receipt_type.der", receipt(content=payload(drop=[0])), "environment_rejected", "no receipt type at all")
    case("bundle_mismatch.der", receipt(content=payload(bundle="com.example.other")), "bundle_mismatch", "another app's receipt")
    case("bundle_trailing_nul.der", receipt(content=payload(bundle=BUNDLE + "\x00")), "bundle_mismatch", "the bundle id plus a NUL byte")
    case("version_mismatch.der", receipt(content=payload(version="2.0")), "version_mismatch", "app version not in bundle_versions",
         config={"bundle_versions": ["1.0", "1.1"]})
    case("version_match.der", receipt(content=payload(version="1.1")), "valid", "app version in bundle_versions",
         config={"bundle_versions": ["1.0", "1.1"]})
    case("device_match.der", receipt(), "valid", "the device hash matches the given device id",
         options={"device_id": "C68BCE28-7E27-494A-A082-ACECB9328171"})
    case("device_mismatch.der", receipt(), "device_mismatch", "the device hash was made for another device",
         options={"device_id": "00000000-0000-0000-0000-000000000001"})
    case("device_check_off.der", receipt(), "valid", "device_check off ignores the device id",
         options={"device_id": "00000000-0000-0000-0000-000000000001"}, config={"device_check": "off"})
    case("device_required_missing.der", receipt(), None, "device_check required but no device_id: a call error",
         config={"device_check": "required"}, status="IAPV_E_INVALID_ARGUMENT")
    case("receipt_expired.der", receipt(content=payload(expiration="2024-02-01T00:00:00Z")), "receipt_expired",
         "attribute 21 is before now", now=1706745600000)
    case("receipt_expiry_boundary.der", receipt(content=payload(expiration="2024-02-01T00:00:00Z")), "valid",
         "1 ms before attribute 21", now=1706745599999)
    case("stale.der", receipt(), "stale", "created more than max_receipt_age_ms ago", config={"max_receipt_age_ms": 3600000})
    case("fresh.der", receipt(), "valid", "created within max_receipt_age_ms", config={"max_receipt_age_ms": 86400000 * 2})
    case("too_large.der", receipt(), None, "over max_input_bytes", config={"max_input_bytes": 1000}, status="IAPV_E_TOO_LARGE")

    # the cache must still check every certificate's validity against each receipt's creation date
    short_leaf = make_cert(LEAF_NAME, leaf_key, WWDR_NAME, wwdr_key, ca=False, markers=[LEAF_MARKER], nb=T(2023, 1, 1), na=T(2024, 6, 1))
    case("cache_same_chain_in_validity.der", receipt(signer=short_leaf), "valid", "cached chain, created inside the leaf's validity")
    case("cache_same_chain_after_expiry.der", receipt(signer=short_leaf, content=payload(created="2024-07-01T00:00:00Z")),
         "untrusted_chain", "same certificates, created after the leaf expired", now=1719878400000)

    with open(os.path.join(OUT, "root.pem"), "w") as f:
        f.write(pem(root))
    with open(os.path.join(OUT, "cases.json"), "w") as f:
        json.dump({"bundle_id": BUNDLE, "created_ms": CREATED_MS, "cases": cases}, f, indent=1)
    print(f"{len(cases)} cases written to {OUT}")


if __name__ == "__main__":
    main()
