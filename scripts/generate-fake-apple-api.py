#!/usr/bin/env python3
"""Generates the fake Apple-shaped PKI and developer key the App Store Server API tests use:
Tests/shared/fakeapple/. A root named like Apple Root CA - G3, an intermediate and a leaf with
Apple's marker OIDs, the leaf's private key (so a fake App Store Server API on 127.0.0.1 can
sign its answers), and a developer P-256 key like the .p8 App Store Connect gives. Test keys
only: they sign nothing outside these tests. The output is committed; tests never run this.
Tests/shared/fakeapple/reissue.py re-issues the chain with the same keys (root.key.pem and
wwdr.key.pem are kept for it) and moves committed tokens onto it.
"""
import datetime as dt
import json
import os

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "shared", "fakeapple")
os.makedirs(OUT, exist_ok=True)
UTC = dt.timezone.utc
LEAF_MARKER = x509.ObjectIdentifier("1.2.840.113635.100.6.11.1")
WWDR_MARKER = x509.ObjectIdentifier("1.2.840.113635.100.6.2.1")


def name(cn):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn), x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Apple Inc."),
                      x509.NameAttribute(NameOID.COUNTRY_NAME, "US")])


def cert(subject, key, issuer, issuer_key, ca, markers=()):
    b = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(key.public_key())
         .serial_number(x509.random_serial_number())
         .not_valid_before(dt.datetime(2020, 1, 1, tzinfo=UTC)).not_valid_after(dt.datetime(2045, 1, 1, tzinfo=UTC))
         .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
         .add_extension(x509.KeyUsage(True, False, False, False, False, ca, ca, False, False), critical=True))
    for m in markers:
        b = b.add_extension(x509.UnrecognizedExtension(m, b"\x05\x00"), critical=False)
    # Subject and Authority Key Identifiers: OpenSSL's X509_STRICT (Apple's own verifier) needs them.
    b = b.add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
    b = b.add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()), critical=False)
    return b.sign(issuer_key, hashes.SHA384())


def pem_key(k):
    return k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()


def pem_cert(c):
    return c.public_bytes(serialization.Encoding.PEM).decode()


root_key = ec.generate_private_key(ec.SECP384R1())
wwdr_key = ec.generate_private_key(ec.SECP384R1())
leaf_key = ec.generate_private_key(ec.SECP256R1())
root_n = name("Apple Root CA - G3")
wwdr_n = name("Apple Worldwide Developer Relations Certification Authority")
root = cert(root_n, root_key, root_n, root_key, True)
wwdr = cert(wwdr_n, wwdr_key, root_n, root_key, True, [WWDR_MARKER])
leaf = cert(name("Prod ECC Mac App Store and iTunes Store Receipt Signing"), leaf_key, wwdr_n, wwdr_key, False, [LEAF_MARKER])
developer_key = ec.generate_private_key(ec.SECP256R1())
other_key = ec.generate_private_key(ec.SECP384R1())

files = {
    "root.key.pem": pem_key(root_key),
    "wwdr.key.pem": pem_key(wwdr_key),
    "root.pem": pem_cert(root),
    "wwdr.pem": pem_cert(wwdr),
    "leaf.pem": pem_cert(leaf),
    "leaf.key.pem": pem_key(leaf_key),
    "developer.p8": pem_key(developer_key),
    "developer.pub.pem": developer_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode(),
    "p384.p8": pem_key(other_key),
}
for file, text in files.items():
    with open(os.path.join(OUT, file), "w") as f:
        f.write(text)
with open(os.path.join(OUT, "signer.json"), "w") as f:
    json.dump({"private_key_pem": files["developer.p8"], "key_id": "FAKEKEY123",
               "issuer_id": "57246542-96fe-1a63-e053-0824d011072a", "bundle_id": "com.example.fake"}, f, indent=2)
    f.write("\n")
with open(os.path.join(OUT, "verifier.json"), "w") as f:
    json.dump({"bundle_id": "com.example.fake", "environments": ["Production", "Sandbox"],
               "trust": {"include_apple_roots": False, "roots_pem": [files["root.pem"]]}}, f, indent=2)
    f.write("\n")
