#!/usr/bin/env python3
"""Re-issues the fake Apple-shaped chain of this folder (root.pem, wwdr.pem, leaf.pem) and moves
tokens signed under the old chain onto the new one. Test keys only; the tests never run this.

    python3 Tests/shared/fakeapple/reissue.py certs
        Writes root.pem, wwdr.pem and leaf.pem anew with the same subject names, serial numbers,
        validity, basic constraints, key usages and Apple marker OIDs (1.2.840.113635.100.6.2.1
        on the intermediate, 1.2.840.113635.100.6.11.1 on the leaf), the same leaf key
        (leaf.key.pem), plus Subject Key Identifier and Authority Key Identifier extensions, which
        OpenSSL's X509_STRICT mode (and so Apple's own verifier) requires. The issuing keys are
        root.key.pem and wwdr.key.pem; when they are missing (the first chain's were never kept)
        new ones are made and written beside the certificates, so the next re-issue keeps them.
        verifier.json gets the new root.

    python3 Tests/shared/fakeapple/reissue.py rechain OLD_DIR FILE...
        In each FILE, every compact JWS whose header names a certificate of OLD_DIR's chain gets
        that certificate replaced by this folder's, and, when its signature verified with the
        leaf key before, a new signature by the same key. The payload and any deliberate fault
        (a wrong signature, a missing or extra certificate) stay as they were.
"""
from __future__ import annotations

import base64
import json
import re
import sys
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature

HERE = Path(__file__).resolve().parent
NAMES = ("root", "wwdr", "leaf")


def load_cert(path: Path) -> x509.Certificate:
    return x509.load_pem_x509_certificate(path.read_bytes())


def load_or_make_key(path: Path, curve: ec.EllipticCurve) -> ec.EllipticCurvePrivateKey:
    if path.exists():
        return serialization.load_pem_private_key(path.read_bytes(), password=None)
    key = ec.generate_private_key(curve)
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    return key


def reissue(old: x509.Certificate, key: ec.EllipticCurvePrivateKey, issuer_public: ec.EllipticCurvePublicKey,
            issuer_key: ec.EllipticCurvePrivateKey) -> x509.Certificate:
    """``old`` again, for ``key``, signed by ``issuer_key``, with SKI and AKI added."""
    b = (x509.CertificateBuilder().subject_name(old.subject).issuer_name(old.issuer).public_key(key.public_key())
         .serial_number(old.serial_number)
         .not_valid_before(old.not_valid_before_utc).not_valid_after(old.not_valid_after_utc))
    for ext in old.extensions:
        if ext.oid in (x509.ExtensionOID.SUBJECT_KEY_IDENTIFIER, x509.ExtensionOID.AUTHORITY_KEY_IDENTIFIER):
            continue
        b = b.add_extension(ext.value, critical=ext.critical)
    b = b.add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
    b = b.add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_public), critical=False)
    return b.sign(issuer_key, hashes.SHA384())


def certs() -> None:
    old = {n: load_cert(HERE / f"{n}.pem") for n in NAMES}
    leaf_key = serialization.load_pem_private_key((HERE / "leaf.key.pem").read_bytes(), password=None)
    root_key = load_or_make_key(HERE / "root.key.pem", ec.SECP384R1())
    wwdr_key = load_or_make_key(HERE / "wwdr.key.pem", ec.SECP384R1())
    root = reissue(old["root"], root_key, root_key.public_key(), root_key)
    wwdr = reissue(old["wwdr"], wwdr_key, root_key.public_key(), root_key)
    leaf = reissue(old["leaf"], leaf_key, wwdr_key.public_key(), wwdr_key)
    for name, cert in (("root", root), ("wwdr", wwdr), ("leaf", leaf)):
        (HERE / f"{name}.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    verifier = json.loads((HERE / "verifier.json").read_text())
    verifier["trust"]["roots_pem"] = [root.public_bytes(serialization.Encoding.PEM).decode()]
    (HERE / "verifier.json").write_text(json.dumps(verifier, indent=2) + "\n")


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


TOKEN = re.compile(rb"(eyJ[A-Za-z0-9_-]+)\.([A-Za-z0-9_-]*)\.([A-Za-z0-9_-]*)")


def rechain(old_dir: Path, files: list[str]) -> None:
    def der_b64(path: Path) -> str:
        return base64.b64encode(load_cert(path).public_bytes(serialization.Encoding.DER)).decode()

    swap = {der_b64(old_dir / f"{n}.pem"): der_b64(HERE / f"{n}.pem") for n in NAMES}
    leaf_key = serialization.load_pem_private_key((HERE / "leaf.key.pem").read_bytes(), password=None)
    public = leaf_key.public_key()
    changed_files = tokens = resigned = 0

    def replace(m: re.Match) -> bytes:
        nonlocal tokens, resigned
        head, payload, sig = (g.decode() for g in m.groups())
        try:
            header = unb64url(head).decode()
        except (ValueError, UnicodeDecodeError):
            return m.group(0)
        new_header = header
        for old, new in swap.items():
            new_header = new_header.replace(old, new)
        new_payload = payload
        try:
            inner = unb64url(payload)
            rewritten = TOKEN.sub(replace, inner)     # nested tokens (a notification's items)
            if rewritten != inner:
                new_payload = b64url(rewritten)
        except ValueError:
            pass
        if new_header == header and new_payload == payload:
            return m.group(0)
        tokens += 1
        new_head = b64url(new_header.encode()) if new_header != header else head
        try:
            raw = unb64url(sig)
            valid = len(raw) == 64
            if valid:
                der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
                public.verify(der, f"{head}.{payload}".encode(), ec.ECDSA(hashes.SHA256()))
        except (ValueError, InvalidSignature):
            valid = False
        if valid:
            signing_input = f"{new_head}.{new_payload}".encode()
            r, s = decode_dss_signature(leaf_key.sign(signing_input, ec.ECDSA(hashes.SHA256())))
            sig = b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big"))
            resigned += 1
        return f"{new_head}.{new_payload}.{sig}".encode()

    for name in files:
        path = Path(name)
        data = path.read_bytes()
        new = TOKEN.sub(replace, data)
        if new != data:
            path.write_bytes(new)
            changed_files += 1
    print(f"rechain: {changed_files} files, {tokens} tokens, {resigned} signed anew")


def main() -> int:
    if len(sys.argv) >= 2 and sys.argv[1] == "certs":
        certs()
        return 0
    if len(sys.argv) >= 3 and sys.argv[1] == "rechain":
        rechain(Path(sys.argv[2]), sys.argv[3:])
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
