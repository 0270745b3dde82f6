#!/usr/bin/env python3
"""Generates the revocation fixtures: Tests/shared/fakeapple/ocsp/. An Apple-shaped PKI whose leaf
names an OCSP responder on 127.0.0.1 (root, intermediate and leaf with Apple's marker OIDs), the
intermediate's key (it signs OCSP answers, and serves as `openssl ocsp -rsigner` in the live test),
a delegated responder certificate, a JWS signed by the leaf, and DER OCSP responses: good,
revoked, unknown, stale, for another certificate, forged (another key), delegated. Test keys only.
The output is committed; tests never run this.
"""
import base64
import datetime as dt
import json
import os

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.x509 import ocsp
from cryptography.x509.oid import AuthorityInformationAccessOID, ExtendedKeyUsageOID, NameOID

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "shared", "fakeapple", "ocsp")
os.makedirs(OUT, exist_ok=True)
UTC = dt.timezone.utc
LEAF_MARKER = x509.ObjectIdentifier("1.2.840.113635.100.6.11.1")
WWDR_MARKER = x509.ObjectIdentifier("1.2.840.113635.100.6.2.1")
RESPONDER = "http://127.0.0.1:39217/ocsp"
# The tests read the responses at NOW (2026-01-01T01:00:00Z); they were made at NOW - 1 h.
THIS_UPDATE = dt.datetime(2026, 1, 1, 0, 0, tzinfo=UTC)


def name(cn):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn), x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Apple Inc."),
                      x509.NameAttribute(NameOID.COUNTRY_NAME, "US")])


def cert(subject, key, issuer, issuer_key, ca, markers=(), extra=()):
    b = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(key.public_key())
         .serial_number(x509.random_serial_number())
         .not_valid_before(dt.datetime(2020, 1, 1, tzinfo=UTC)).not_valid_after(dt.datetime(2045, 1, 1, tzinfo=UTC))
         .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
         .add_extension(x509.KeyUsage(True, False, False, False, False, ca, ca, False, False), critical=True))
    for m in markers:
        b = b.add_extension(x509.UnrecognizedExtension(m, b"\x05\x00"), critical=False)
    for ext, critical in extra:
        b = b.add_extension(ext, critical=critical)
    return b.sign(issuer_key, hashes.SHA384() if issuer_key.curve.name == "secp384r1" else hashes.SHA256())


root_key, wwdr_key, foreign_key = (ec.generate_private_key(ec.SECP384R1()) for _ in range(3))
leaf_key, other_key, responder_key = (ec.generate_private_key(ec.SECP256R1()) for _ in range(3))
root_n, wwdr_n = name("Apple Root CA - G3"), name("Apple Worldwide Developer Relations Certification Authority")
root = cert(root_n, root_key, root_n, root_key, True)
wwdr = cert(wwdr_n, wwdr_key, root_n, root_key, True, [WWDR_MARKER])
aia = x509.AuthorityInformationAccess([x509.AccessDescription(AuthorityInformationAccessOID.OCSP,
                                                              x509.UniformResourceIdentifier(RESPONDER))])
leaf = cert(name("Prod ECC Mac App Store and iTunes Store Receipt Signing"), leaf_key, wwdr_n, wwdr_key, False, [LEAF_MARKER],
            [(aia, False)])
other = cert(name("Another leaf"), other_key, wwdr_n, wwdr_key, False, [LEAF_MARKER], [(aia, False)])
responder = cert(name("Apple WWDR OCSP Responder"), responder_key, wwdr_n, wwdr_key, False, (),
                 [(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.OCSP_SIGNING]), False)])
foreign_n = name("Apple Worldwide Developer Relations Certification Authority")
foreign = cert(foreign_n, foreign_key, foreign_n, foreign_key, True)

pem = lambda c: c.public_bytes(serialization.Encoding.PEM).decode()
der = lambda c: c.public_bytes(serialization.Encoding.DER)
key_pem = lambda k: k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption()).decode()


def response(status, *, subject=leaf, signer=wwdr, signer_key=wwdr_key, this_update=THIS_UPDATE,
             next_update=THIS_UPDATE + dt.timedelta(days=7), include=()):
    b = ocsp.OCSPResponseBuilder().add_response(
        cert=subject, issuer=wwdr, algorithm=hashes.SHA1(), cert_status=status, this_update=this_update,
        next_update=next_update,
        revocation_time=THIS_UPDATE - dt.timedelta(days=1) if status == ocsp.OCSPCertStatus.REVOKED else None,
        revocation_reason=x509.ReasonFlags.key_compromise if status == ocsp.OCSPCertStatus.REVOKED else None)
    b = b.responder_id(ocsp.OCSPResponderEncoding.HASH, signer)
    if include:
        b = b.certificates(list(include))
    return b.sign(signer_key, hashes.SHA256()).public_bytes(serialization.Encoding.DER)


G, R, U = ocsp.OCSPCertStatus.GOOD, ocsp.OCSPCertStatus.REVOKED, ocsp.OCSPCertStatus.UNKNOWN
responses = {
    "good.der": response(G),
    "revoked.der": response(R),
    "unknown.der": response(U),
    "stale.der": response(G, this_update=THIS_UPDATE - dt.timedelta(days=10), next_update=THIS_UPDATE - dt.timedelta(days=3)),
    "other_certificate.der": response(G, subject=other),
    "forged.der": response(R, signer=foreign, signer_key=foreign_key, include=[foreign]),
    "delegated_good.der": response(G, signer=responder, signer_key=responder_key, include=[responder]),
    "unauthorized_status.der": ocsp.OCSPResponseBuilder.build_unsuccessful(ocsp.OCSPResponseStatus.UNAUTHORIZED)
        .public_bytes(serialization.Encoding.DER),
}
for file, data in responses.items():
    with open(os.path.join(OUT, file), "wb") as f:
        f.write(data)


def b64u(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


header = {"alg": "ES256", "x5c": [base64.b64encode(der(c)).decode() for c in (leaf, wwdr, root)]}
payload = {"transactionId": "7001", "originalTransactionId": "7001", "bundleId": "com.example.fake", "productId": "lifetime",
           "purchaseDate": 1767225000000, "originalPurchaseDate": 1767225000000, "quantity": 1, "type": "Non-Consumable",
           "inAppOwnershipType": "PURCHASED", "signedDate": 1767225000000, "environment": "Production"}
signing_input = b64u(json.dumps(header).encode()) + "." + b64u(json.dumps(payload).encode())
r, s = decode_dss_signature(leaf_key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
files = {
    "root.pem": pem(root), "wwdr.pem": pem(wwdr), "leaf.pem": pem(leaf), "wwdr.key.pem": key_pem(wwdr_key),
    "transaction.jws": signing_input + "." + b64u(r.to_bytes(32, "big") + s.to_bytes(32, "big")) + "\n",
    # openssl ocsp's CA database: the leaf, valid (V); the live test rewrites it to revoked (R).
    "index.txt": "V\t450101000000Z\t\t%X\tunknown\t/CN=leaf\n" % leaf.serial_number,
}
for file, text in files.items():
    with open(os.path.join(OUT, file), "w") as f:
        f.write(text)
