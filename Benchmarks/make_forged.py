#!/usr/bin/env python3
"""Writes the forged receipt of `make bench`: the real 187-purchase receipt with its Apple chain and
signer kept, and its payload swapped for its own app-level attributes plus N minimal purchases
(an empty SET each). The signature no longer holds, so the library must refuse it cheaply.

    Benchmarks/make_forged.py GENUINE.der OUT.der [N=100000]
"""
import sys


def header(b, i):
    """(tag, content start, content end) of the definite-length TLV at i."""
    tag, first = b[i], b[i + 1]
    i += 2
    if first < 0x80:
        return tag, i, i + first
    n = first & 0x7F
    length = int.from_bytes(b[i:i + n], "big")
    return tag, i + n, i + n + length


def children(b, start, end):
    out, i = [], start
    while i < end:
        t, s, e = header(b, i)
        out.append((i, t, s, e))
        i = e
    return out


def tlv(tag, content):
    n = len(content)
    if n < 0x80:
        return bytes([tag, n]) + content
    length = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([tag, 0x80 | len(length)]) + length + content


def main():
    genuine, out = sys.argv[1], sys.argv[2]
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 100_000
    b = open(genuine, "rb").read()
    _, ci_s, ci_e = header(b, 0)
    content_type, explicit = children(b, ci_s, ci_e)
    _, sd_s, sd_e = header(b, explicit[2])
    fields = children(b, sd_s, sd_e)          # version, digests, encapsulated, [0] certs, signerInfos
    enc = fields[2]
    enc_type, enc_explicit = children(b, enc[2], enc[3])
    octets = children(b, enc_explicit[2], enc_explicit[3])[0]
    payload = b[octets[2]:octets[3]]
    _, set_s, set_e = header(payload, 0)
    kept = b""
    for (i, _, s, e) in children(payload, set_s, set_e):
        attr_type = children(payload, s, e)[0]
        if payload[attr_type[2]:attr_type[3]] != b"\x11":
            kept += payload[i:e]
    record = bytes.fromhex("300a020111020101040231 00".replace(" ", ""))
    new_payload = tlv(0x31, kept + record * count)
    new_enc = tlv(0x30, b[enc_type[0]:enc_type[3]] + tlv(0xA0, tlv(0x04, new_payload)))
    sd = b"".join(b[f[0]:f[3]] for f in fields[:2]) + new_enc + b"".join(b[f[0]:f[3]] for f in fields[3:])
    doc = tlv(0x30, b[content_type[0]:content_type[3]] + tlv(0xA0, tlv(0x30, sd)))
    open(out, "wb").write(doc)
    print(f"{out}: {len(doc)} bytes, {count} forged purchases")


main()
