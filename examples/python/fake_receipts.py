"""Receipts signed by the repository's fake Apple-shaped PKI (Tests/shared/fakeapple), for the
tests and for trying the service by hand against the fake Apple.

The service verifies every receipt locally before it asks Apple, so a made-up string is refused
with 400. A receipt made here passes those checks under a config that trusts the fake root
(`fake_config`), and carries a short name in its opaque value: the fake /verifyReceipt answers by
that name (`name_of`), so a test scripts Apple's answers for "R1" whatever bytes the receipt has.
Nothing made here can pass under Apple's real roots: the keys are the repository's own.
(`try_locally.py receipt NAME` prints one for trying the service by hand.)
"""
from __future__ import annotations

import base64
import binascii
import copy
import hashlib
from functools import lru_cache
from pathlib import Path
from typing import Optional

PKI = Path(__file__).resolve().parents[2] / "Tests" / "shared" / "fakeapple"
BUNDLE_ID = "com.test.app"
CREATED = "2020-12-17T18:00:00Z"   # inside the fake certificates' validity (2020-2045)
NAME_PREFIX = b"fake:"


def fake_root_pem() -> str:
    return (PKI / "root.pem").read_text()


def fake_config(config: dict) -> dict:
    """`config` with the fake root added to its trust anchors (Apple's stay)."""
    doc = copy.deepcopy(config)
    trust = doc.setdefault("trust", {})
    trust["roots_pem"] = list(trust.get("roots_pem", [])) + [fake_root_pem()]
    return doc


# -- DER, just what a receipt payload needs ---------------------------------------------------------

def _tlv(tag: int, content: bytes) -> bytes:
    n = len(content)
    if n < 0x80:
        return bytes([tag, n]) + content
    size = (n.bit_length() + 7) // 8
    return bytes([tag, 0x80 | size]) + n.to_bytes(size, "big") + content


def _integer(v: int) -> bytes:
    return _tlv(0x02, v.to_bytes(max(1, (v.bit_length() + 8) // 8), "big"))


def _attribute(kind: int, value: bytes) -> bytes:
    return _tlv(0x30, _integer(kind) + _integer(1) + _tlv(0x04, value))


def _payload(name: str, bundle_id: str, receipt_type: str) -> bytes:
    utf8 = lambda s: _tlv(0x0C, s.encode())   # noqa: E731
    opaque = NAME_PREFIX + name.encode()
    bundle = utf8(bundle_id)
    items = [_attribute(0, utf8(receipt_type)), _attribute(2, bundle), _attribute(3, utf8("1.0")),
             _attribute(4, opaque), _attribute(5, hashlib.sha1(opaque + bundle).digest()),
             _attribute(12, _tlv(0x16, CREATED.encode())), _attribute(19, utf8("1.0"))]
    return _tlv(0x31, b"".join(sorted(items)))   # DER orders a SET's members


@lru_cache(maxsize=4096)
def make_receipt(name: str, bundle_id: str = BUNDLE_ID, receipt_type: str = "Production") -> str:
    """A base64 receipt named `name` (1-64 letters, digits, '-' or '_'), signed like Apple's by the
    fake leaf, with the fake intermediate embedded."""
    if not name or len(name) > 64 or not all(c.isalnum() or c in "-_" for c in name):
        raise ValueError("a receipt name is 1-64 letters, digits, '-' or '_'")
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.serialization import pkcs7
    leaf = x509.load_pem_x509_certificate((PKI / "leaf.pem").read_bytes())
    wwdr = x509.load_pem_x509_certificate((PKI / "wwdr.pem").read_bytes())
    key = serialization.load_pem_private_key((PKI / "leaf.key.pem").read_bytes(), None)
    der = (pkcs7.PKCS7SignatureBuilder().set_data(_payload(name, bundle_id, receipt_type))
           .add_signer(leaf, key, hashes.SHA256()).add_certificate(wwdr)   # type: ignore[arg-type]
           .sign(serialization.Encoding.DER, [pkcs7.PKCS7Options.Binary, pkcs7.PKCS7Options.NoAttributes]))
    return base64.b64encode(der).decode()


def name_of(receipt: str) -> str:
    """The name a receipt made here carries; any other text is its own name."""
    try:
        der = base64.b64decode(receipt, validate=False)
    except (binascii.Error, ValueError):
        return receipt
    found = _find_name(der, depth=0)
    return found if found is not None else receipt


def _read(der: bytes, at: int) -> Optional[tuple[int, int, int]]:
    """(tag, start of content, end of content) of the element at `at`, or None."""
    if at + 2 > len(der):
        return None
    tag, n, at = der[at], der[at + 1], at + 2
    if n & 0x80:
        size = n & 0x7F
        if size == 0 or size > 4 or at + size > len(der):
            return None
        n, at = int.from_bytes(der[at:at + size], "big"), at + size
    return (tag, at, at + n) if at + n <= len(der) else None


def _find_name(der: bytes, depth: int) -> Optional[str]:
    """Walks constructed elements and octet strings (the payload sits in one) for the opaque value."""
    at = 0
    while at < len(der) and depth < 12:
        element = _read(der, at)
        if element is None:
            return None
        tag, start, end = element
        content = der[start:end]
        if tag == 0x04 and content.startswith(NAME_PREFIX):
            return content[len(NAME_PREFIX):].decode("ascii", "replace")
        if tag & 0x20 or tag == 0x04:
            found = _find_name(content, depth + 1)
            if found is not None:
                return found
        at = end
    return None

