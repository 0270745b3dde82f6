#!/usr/bin/env python3
"""Generates the hostile-input corpus: Tests/IAPVerifyTests/Fixtures/hostile/.

Every case names its entry point and its exact expected answer, decided here by rule, not by
running the library:
  - receipts are checked with Apple's real roots only, so a well-formed fake receipt stops at
    `untrusted_chain`; anything broken before the chain check is `malformed` (or
    `unsupported_algorithm`). Before the chain and signature pass, the library reads only the
    payload's attribute structure, its receipt type (0) and creation date (12), so a fault in any
    other attribute or in an in-app record is never read: those cases stop at `untrusted_chain`;
  - response and entitlement JSON that is not readable as Apple's shape is `malformed`;
  - a bad verifier config is IAPV_E_CONFIG; bad per-call options are IAPV_E_INVALID_ARGUMENT.
The output is committed; rerun only to add cases (needs `cryptography` from PyPI).
"""
import base64
import importlib.util
import json
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "Tests", "IAPVerifyTests", "Fixtures", "hostile")
spec = importlib.util.spec_from_file_location("fakepki", os.path.join(HERE, "generate-fake-pki.py"))
pki = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pki)
tlv, seq, set_, integer, octets, utf8, ia5, attr, payload = pki.tlv, pki.seq, pki.set_, pki.integer, pki.octets, pki.utf8, pki.ia5, pki.attr, pki.payload

rng = random.Random(20261122)
cases = []


def case(name, data, entry, expect, note):
    path = os.path.join(OUT, name)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
    cases.append({"file": name, "entry": entry, "expect": expect, "note": note})


def receipt_with(content):
    """A fake-signed envelope around `content` (the signature does not matter: the chain fails first)."""
    return pki.receipt(content=content)


GOOD = receipt_with(payload())
HEADER_ATTRIBUTES = {0, 12}  # read before the chain check; every other attribute only after it
NOT_READ = "untrusted_chain"


def payload_fault(t):
    """The verdict of a receipt whose only fault is in attribute `t` (a fake chain under Apple's roots)."""
    return "malformed" if t in HEADER_ATTRIBUTES else NOT_READ

# -- receipts: structure --------------------------------------------------------------------------
case("r_good.der", GOOD, "receipt", "untrusted_chain", "well formed, fake chain: stops at the chain check")
for i, n in enumerate(sorted(rng.sample(range(1, len(GOOD)), 40))):
    case(f"r_truncated_{i:02}.der", GOOD[:n], "receipt", "malformed", f"truncated to {n} bytes")
case("r_empty.der", b"", "receipt", "malformed", "empty input")
case("r_one_byte.der", b"\x30", "receipt", "malformed", "a lone SEQUENCE tag")
for i, tag in enumerate([0x31, 0x04, 0x02, 0xA0, 0x10, 0x1F]):
    case(f"r_outer_tag_{i}.der", bytes([tag]) + GOOD[1:], "receipt", "malformed", f"outer tag 0x{tag:02x} instead of SEQUENCE")
hdr = 4  # GOOD starts 30 82 xx xx
body = GOOD[hdr:]
for i, length in enumerate([b"\x84\xff\xff\xff\xff", b"\x84\x7f\xff\xff\xff", b"\x88" + b"\xff" * 8, b"\x89" + b"\x01" * 9,
                            b"\x83\x01\x00\x00", b"\x82" + (len(body) + 1).to_bytes(2, "big"), b"\x82" + (len(body) - 1).to_bytes(2, "big"),
                            b"\x81\x05", b"\x80", b"\xff"]):
    case(f"r_outer_length_{i}.der", b"\x30" + length + body, "receipt", "malformed", f"outer length bytes {length.hex()}")
deep = b"\x05\x00"
for _ in range(150):
    deep = seq(deep)
case("r_nested_150.der", deep, "receipt", "malformed", "150 nested SEQUENCEs")
deep_attr = b"\x05\x00"
for _ in range(120):
    deep_attr = seq(deep_attr)
case("r_payload_nested_120.der", receipt_with(set_(deep_attr, attr(12, ia5(pki.CREATED)))), "receipt", "malformed",
     "a payload attribute nested 120 deep")
case("r_primitive_indefinite.der", receipt_with(bytes([0x31, 0x80, 0x04, 0x80, 0x00, 0x00, 0x00, 0x00])), "receipt", "malformed",
     "an indefinite length on a primitive OCTET STRING inside the payload")
case("r_indefinite_no_eoc.der", b"\x30\x80" + GOOD[4:], "receipt", "malformed", "outer indefinite length without end-of-contents")
case("r_payload_indefinite_no_eoc.der", receipt_with(b"\x31\x80" + attr(12, ia5(pki.CREATED))), "receipt", "malformed",
     "payload SET with an indefinite length and no end-of-contents")
case("r_payload_indefinite_ok.der", receipt_with(b"\x31\x80" + attr(12, ia5(pki.CREATED)) + attr(0, utf8("Production")) + b"\x00\x00"),
     "receipt", "untrusted_chain", "an indefinite-length payload SET is valid BER: decoded, then the chain decides")
case("r_trailing_zero.der", GOOD + b"\x00", "receipt", "malformed", "a trailing zero byte")
case("r_trailing_garbage.der", GOOD + b"junk", "receipt", "malformed", "trailing text")
case("r_payload_not_set.der", receipt_with(seq(attr(12, ia5(pki.CREATED)))), "receipt", "malformed", "payload is a SEQUENCE")
case("r_payload_empty_set.der", receipt_with(set_()), "receipt", "malformed", "empty payload: no creation date")
case("r_payload_trailing.der", receipt_with(payload() + b"\x00"), "receipt", "malformed", "payload followed by a byte")
case("r_eleven_certs.der", pki.signed_data(payload(), [pki.leaf, pki.wwdr, pki.root] * 4, [pki.signer_info(pki.leaf, pki.leaf_key, payload())]),
     "receipt", "malformed", "12 embedded certificates (limit 10)")
for i, oid in enumerate(["md5", "sha512"]):
    case(f"r_digest_{oid}.der", pki.receipt(digest_oid=oid, sign_digest="sha1"), "receipt", "unsupported_algorithm", f"{oid} digest")

# -- receipts: payload attributes -----------------------------------------------------------------
SINGLE = {0: utf8("Production"), 1: integer(5), 2: utf8(pki.BUNDLE), 3: utf8("1.0"), 4: b"\x01\x02", 5: b"\x00" * 20,
          8: ia5(pki.CREATED), 12: ia5(pki.CREATED), 15: integer(7), 16: integer(9), 18: ia5(pki.CREATED),
          19: utf8("1.0"), 21: ia5("2030-01-01T00:00:00Z")}
IN_BASE_PAYLOAD = {0, 1, 2, 3, 4, 5, 12, 19}
for t, value in SINGLE.items():
    twice = [attr(t, value)] if t in IN_BASE_PAYLOAD else [attr(t, value), attr(t, value)]
    case(f"r_duplicate_attr_{t}.der", receipt_with(payload(extra=twice)), "receipt", payload_fault(t), f"attribute {t} twice")
IN_APP = {1701: integer(1), 1702: utf8("p"), 1703: utf8("9"), 1704: ia5(pki.CREATED), 1705: utf8("9"), 1706: ia5(pki.CREATED),
          1707: integer(1), 1708: ia5(""), 1711: integer(3), 1712: ia5(""), 1713: integer(0), 1719: integer(0), 1721: utf8("o")}


def with_in_app(*attrs):
    return receipt_with(payload(extra=[attr(17, set_(*attrs))]))


for t, value in IN_APP.items():
    case(f"r_duplicate_inapp_{t}.der", with_in_app(attr(t, value), attr(t, value)), "receipt", NOT_READ, f"in-app attribute {t} twice")
for t in SINGLE:
    expect = "malformed" if t == 12 else "untrusted_chain"
    case(f"r_missing_attr_{t}.der", receipt_with(payload(drop=[t])), "receipt", expect, f"attribute {t} missing")
for t in [1, 15, 16]:
    case(f"r_int9_attr_{t}.der", receipt_with(payload(drop=[t], extra=[attr(t, tlv(0x02, b"\x7f" + b"\xff" * 8))])), "receipt",
         payload_fault(t), f"attribute {t} is a 9-byte INTEGER")
for t in [1701, 1707, 1711, 1713, 1719]:
    case(f"r_int9_inapp_{t}.der", with_in_app(attr(t, tlv(0x02, b"\x01" * 9))), "receipt", NOT_READ, f"in-app {t} is a 9-byte INTEGER")
case("r_int_2pow63.der", receipt_with(payload(drop=[1], extra=[attr(1, tlv(0x02, b"\x00\x80" + b"\x00" * 7))])), "receipt", payload_fault(1),
     "2^63 does not fit in 64 bits")
case("r_type_9_bytes.der", receipt_with(set_(seq(tlv(0x02, b"\x01" * 9), integer(1), octets(b"")), attr(12, ia5(pki.CREATED)))),
     "receipt", "malformed", "an attribute type INTEGER of 9 bytes")
case("r_version_9_bytes.der", receipt_with(set_(seq(integer(99), tlv(0x02, b"\x01" * 9), octets(b"")), attr(12, ia5(pki.CREATED)))),
     "receipt", "malformed", "an attribute version INTEGER of 9 bytes")
case("r_type_empty_int.der", receipt_with(set_(seq(tlv(0x02, b""), integer(1), octets(b"")), attr(12, ia5(pki.CREATED)))),
     "receipt", "malformed", "an empty INTEGER")
BAD_UTF8 = {"overlong": b"\xc0\xaf", "lone_continuation": b"a\x80b", "surrogate": b"\xed\xa0\x80", "truncated": b"ab\xe2\x82"}
for t in [0, 2, 3, 19]:
    for label, raw in BAD_UTF8.items():
        case(f"r_utf8_{t}_{label}.der", receipt_with(payload(drop=[t], extra=[attr(t, tlv(0x0C, raw))])), "receipt", payload_fault(t),
             f"attribute {t}: invalid UTF-8 ({label})")
for t in [1702, 1703, 1705, 1721]:
    for label, raw in BAD_UTF8.items():
        case(f"r_utf8_{t}_{label}.der", with_in_app(attr(t, tlv(0x0C, raw))), "receipt", NOT_READ, f"in-app {t}: invalid UTF-8 ({label})")
BAD_DATES = ["2015-07-23", "2015/07/23 15:03:04", "2015-07-23T25:03:04Z", "1437663784000", "2015-02-30T00:00:00Z",
             "2015-07-23T15:03:04", "2015-07-23T15:03:04+25:00", " 2015-07-23T15:03:04Z"]
for t in [8, 12, 18, 21]:
    for i, d in enumerate(BAD_DATES):
        case(f"r_date_{t}_{i}.der", receipt_with(payload(drop=[t], extra=[attr(t, ia5(d))] + ([] if t == 12 else []))),
             "receipt", payload_fault(t), f"attribute {t}: date {d!r}")
for t in [1704, 1706, 1708, 1712]:
    for i, d in enumerate(BAD_DATES[:4]):
        case(f"r_date_{t}_{i}.der", with_in_app(attr(t, ia5(d))), "receipt", NOT_READ, f"in-app {t}: date {d!r}")
WRONG_INNER = [(2, ia5(pki.BUNDLE), "bundle id as IA5String"), (2, integer(5), "bundle id as INTEGER"),
               (3, integer(5), "app version as INTEGER"), (1, utf8("5"), "app item id as UTF8String"),
               (12, integer(5), "creation date as INTEGER"), (0, b"\x0c\x05Prod", "receipt type with a bad length"),
               (15, b"", "download id empty"), (16, tlv(0x30, b""), "version id as SEQUENCE")]
for i, (t, value, note) in enumerate(WRONG_INNER):
    case(f"r_inner_{i}.der", receipt_with(payload(drop=[t], extra=[attr(t, value)])), "receipt", payload_fault(t), note)
case("r_inapp_not_set.der", receipt_with(payload(extra=[attr(17, seq(attr(1701, integer(1))))])), "receipt", NOT_READ,
     "an in-app record that is a SEQUENCE")
case("r_inapp_garbage.der", receipt_with(payload(extra=[attr(17, b"\xff\xff")])), "receipt", NOT_READ, "an in-app record of garbage")
case("r_attr_value_constructed.der", receipt_with(set_(seq(integer(12), integer(1), tlv(0x24, octets(ia5(pki.CREATED)))))),
     "receipt", "malformed", "attribute value as a constructed OCTET STRING")
case("r_attr_four_fields.der", receipt_with(set_(seq(integer(12), integer(1), octets(ia5(pki.CREATED)), integer(0)))),
     "receipt", "malformed", "an attribute SEQUENCE with 4 fields")
case("r_negative_type.der", receipt_with(payload(extra=[attr(-5, b"x")])), "receipt", "untrusted_chain",
     "a negative attribute type is kept as unknown")
b64 = base64.b64encode(GOOD).decode()
for i, (text, note) in enumerate([(b64 + "!", "a stray '!'"), (b64[:-1] + "=" + "A", "data after padding"), ("=" + b64, "leading '='"),
                                  (b64[:1], "one base64 character"), (b64 + "===", "too much padding"), ("M", "a lone 'M'")]):
    case(f"r_base64_{i}.txt", text, "receipt", "malformed", f"base64: {note}")
case("r_base64_good.txt", b64, "receipt", "untrusted_chain", "well formed base64")

# -- /verifyReceipt responses ----------------------------------------------------------------------
TXN = {"quantity": "1", "product_id": "p", "transaction_id": "1", "original_transaction_id": "1", "purchase_date_ms": "1000",
       "original_purchase_date_ms": "1000", "expires_date_ms": "5000", "cancellation_date_ms": None, "cancellation_reason": None,
       "is_upgraded": "false", "is_trial_period": "false", "is_in_intro_offer_period": "false", "in_app_ownership_type": "PURCHASED",
       "web_order_line_item_id": "7", "promotional_offer_id": None, "subscription_group_identifier": "g"}
RENEWAL = {"original_transaction_id": "1", "product_id": "p", "auto_renew_product_id": "p", "auto_renew_status": "1",
           "expiration_intent": "1", "is_in_billing_retry_period": "0", "grace_period_expires_date_ms": "6000"}


def response(txn=TXN, renewal=RENEWAL, **top):
    body = {"status": 0, "environment": "Production", "receipt": {"bundle_id": "com.example.fake", "in_app": [txn]},
            "latest_receipt_info": [txn], "pending_renewal_info": [renewal]}
    body.update(top)
    return json.dumps(body)


case("j_good.json", response(), "response", "valid", "a well formed status-0 body")
BAD_VALUES = {"object": {}, "array": [], "word": "soon", "real": 1.5, "negative_text": "-x"}
for field in [k for k in TXN if k not in ("product_id", "transaction_id")]:
    for label, bad in BAD_VALUES.items():
        if field.endswith("_id") or field.endswith("_identifier") or field in ("cancellation_reason", "in_app_ownership_type"):
            if label in ("word", "negative_text", "real"):
                continue  # strings are legal here, and reals print as text
        if label == "real" and field.endswith("_ms"):
            continue  # Xcode-made bodies carry fractional milliseconds
        if label == "real" and field == "quantity":
            continue
        t = dict(TXN)
        t[field] = bad
        case(f"j_txn_{field}_{label}.json", response(txn=t), "response", "malformed", f"transaction {field} = {bad!r}")
for field in ["product_id", "transaction_id"]:
    t = dict(TXN)
    t[field] = {}
    case(f"j_txn_{field}_object.json", response(txn=t), "response", "malformed", f"transaction {field} is an object")
    t = dict(TXN)
    del t[field]
    case(f"j_txn_{field}_missing.json", response(txn=t), "response", "malformed", f"transaction without {field}")
for field in RENEWAL:
    for label in ["object", "array"]:
        r = dict(RENEWAL)
        r[field] = BAD_VALUES[label]
        case(f"j_renewal_{field}_{label}.json", response(renewal=r), "response", "malformed", f"renewal {field} is an {label}")
for label, bad in [("string", "0"), ("object", {}), ("array", []), ("bool", True), ("null", None)]:
    expect = "valid" if label == "string" else "malformed"
    case(f"j_status_{label}.json", response(status=bad), "response", expect, f"status as {label}")
case("j_receipt_string.json", json.dumps({"status": 0, "receipt": "x"}), "response", "malformed", "receipt is a string")
case("j_in_app_string.json", json.dumps({"status": 0, "receipt": {"bundle_id": "com.example.fake", "in_app": "x"}}), "response", "malformed",
     "in_app is a string")
case("j_lri_number.json", response(latest_receipt_info=5), "response", "malformed", "latest_receipt_info is a number")
case("j_pri_object.json", response(pending_renewal_info={}), "response", "malformed", "pending_renewal_info is an object")
case("j_bundle_number.json", json.dumps({"status": 0, "receipt": {"bundle_id": 5}}), "response", "bundle_mismatch",
     "bundle_id is a number: read tolerantly as \"5\", which is not the app")
case("j_bundle_object.json", json.dumps({"status": 0, "receipt": {"bundle_id": {}}}), "response", "malformed", "bundle_id is an object")
case("j_duplicate_status.json", '{"status":0,"status":21007,"receipt":{"bundle_id":"com.example.fake"}}', "response", "malformed",
     "status twice")
case("j_duplicate_nested.json", '{"status":0,"receipt":{"bundle_id":"a","bundle_id":"com.example.fake"}}', "response", "malformed",
     "bundle_id twice")
case("j_deep_3000.json", "[" * 3000 + "]" * 3000, "response", "malformed", "3000 nested arrays")
case("j_deep_objects.json", '{"a":' * 2500 + "1" + "}" * 2500, "response", "malformed", "2500 nested objects")
case("j_huge_number.json", '{"status":1' + "0" * 400 + "}", "response", "malformed", "a 401-digit status")
case("j_huge_real.json", '{"status":1e400}', "response", "malformed", "status 1e400")
case("j_nan.json", '{"status":NaN}', "response", "malformed", "NaN")
case("j_infinity.json", '{"status":Infinity}', "response", "malformed", "Infinity")
case("j_nul_escape.json", '{"status":0,"receipt":{"bundle_id":"com.example.fake\\u0000x"}}', "response", "malformed", "an escaped NUL")
case("j_nul_raw.json", b'{"status":0,\x00"receipt":{}}', "response", "malformed", "a raw NUL byte")
case("j_bad_utf8.json", b'{"status":0,"receipt":{"bundle_id":"\xff\xfe"}}', "response", "malformed", "invalid UTF-8")
case("j_truncated.json", response()[:-3], "response", "malformed", "truncated")
case("j_trailing.json", response() + "}", "response", "malformed", "a trailing brace")
case("j_empty.json", "", "response", "malformed", "empty")
case("j_scalar.json", "0", "response", "malformed", "a bare number")
case("j_array.json", "[]", "response", "malformed", "an array")
case("j_status_only.json", '{"status":0}', "response", "malformed", "status 0 with no receipt")
case("j_big_ms.json", response(txn=dict(TXN, expires_date_ms="99999999999999999999")), "response", "malformed",
     "an expiry beyond 64 bits")
case("j_bad_formatted_date.json", response(txn={k: v for k, v in TXN.items() if k != "purchase_date_ms"} | {"purchase_date": "yesterday"}),
     "response", "malformed", "an unreadable formatted date")

# -- entitlement input -----------------------------------------------------------------------------
def ent_input(txn=TXN, renewal=RENEWAL, **top):
    body = {"transactions": [txn], "renewal_info": [renewal]}
    body.update(top)
    return json.dumps(body)


case("e_good.json", ent_input(), "entitlements", "valid", "well formed")
for field in ["quantity", "purchase_date_ms", "expires_date_ms", "cancellation_date_ms", "is_upgraded", "is_trial_period",
              "is_in_intro_offer_period", "transaction_id", "product_id", "original_transaction_id", "web_order_line_item_id"]:
    for label in ["object", "array"]:
        t = dict(TXN)
        t[field] = BAD_VALUES[label]
        case(f"e_txn_{field}_{label}.json", ent_input(txn=t), "entitlements", "malformed", f"{field} is an {label}")
for field in ["auto_renew_status", "expiration_intent", "is_in_billing_retry_period", "grace_period_expires_date_ms", "original_transaction_id"]:
    r = dict(RENEWAL)
    r[field] = {}
    case(f"e_renewal_{field}.json", ent_input(renewal=r), "entitlements", "malformed", f"renewal {field} is an object")
for i, (text, note) in enumerate([("{}", "no transactions"), ('{"transactions":{}}', "transactions is an object"),
                                  ('{"transactions":[],"extra":1}', "an unknown key"), ('{"transactions":[1]}', "a number as a transaction"),
                                  ('{"transactions":[],"renewal_info":{}}', "renewal_info is an object"),
                                  ('{"transactions":[],"transactions":[]}', "transactions twice"),
                                  ('{"transactions":[' * 3000, "deep and truncated"), ('{"transactions":[NaN]}', "NaN"),
                                  ('{"transactions":[{"transaction_id":"1","product_id":"p","is_trial_period":"maybe"}]}', "a boolean 'maybe'"),
                                  ('{"transactions":[{"transaction_id":"1","product_id":"p","is_trial_period":2}]}', "a boolean 2")]):
    case(f"e_shape_{i}.json", text, "entitlements", "malformed", note)

# -- verifier config -------------------------------------------------------------------------------
CONFIGS = [
    ({}, "no bundle_id"), ({"bundle_id": ""}, "empty bundle_id"), ({"bundle_id": 1}, "bundle_id a number"),
    ({"bundle_id": None}, "bundle_id null"), ({"bundle_id": "a", "colour": 1}, "unknown key"),
    ({"bundle_id": "a", "bundle_versions": "1"}, "bundle_versions a string"), ({"bundle_id": "a", "bundle_versions": [1]}, "a number in bundle_versions"),
    ({"bundle_id": "a", "environments": "Production"}, "environments a string"), ({"bundle_id": "a", "environments": ["production"]}, "lower-case environment"),
    ({"bundle_id": "a", "environments": [None]}, "null environment"), ({"bundle_id": "a", "trust": []}, "trust an array"),
    ({"bundle_id": "a", "trust": {"roots": []}}, "unknown trust key"), ({"bundle_id": "a", "trust": {"roots_pem": "x"}}, "roots_pem a string"),
    ({"bundle_id": "a", "trust": {"roots_pem": ["not pem"]}}, "roots_pem not PEM"), ({"bundle_id": "a", "trust": {"include_apple_roots": 1}}, "include_apple_roots 1"),
    ({"bundle_id": "a", "trust": {"include_apple_roots": False}}, "no root at all"), ({"bundle_id": "a", "xcode": True}, "xcode a boolean"),
    ({"bundle_id": "a", "xcode": {"accept": "yes"}}, "xcode.accept a string"), ({"bundle_id": "a", "xcode": {"accept": True}}, "xcode accepted without a root"),
    ({"bundle_id": "a", "xcode": {"roots": []}}, "unknown xcode key"), ({"bundle_id": "a", "device_check": True}, "device_check a boolean"),
    ({"bundle_id": "a", "device_check": "always"}, "unknown device_check"), ({"bundle_id": "a", "max_input_bytes": 0}, "max_input_bytes 0"),
    ({"bundle_id": "a", "max_input_bytes": -1}, "negative max_input_bytes"), ({"bundle_id": "a", "max_input_bytes": 1e9}, "max_input_bytes a real"),
    ({"bundle_id": "a", "max_input_bytes": 2 ** 40}, "max_input_bytes over the hard cap"), ({"bundle_id": "a", "max_receipt_age_ms": "1d"}, "age a string"),
    ({"bundle_id": "a", "max_receipt_age_ms": -5}, "negative age"), ({"bundle_id": "a", "grace_period": "maybe"}, "unknown grace_period"),
    ({"bundle_id": "a", "products": []}, "products an array"), ({"bundle_id": "a", "products": {"p": "consumable"}}, "a product as a string"),
    ({"bundle_id": "a", "products": {"p": {}}}, "a product without type"), ({"bundle_id": "a", "products": {"p": {"type": "sub"}}}, "unknown type"),
    ({"bundle_id": "a", "products": {"p": {"type": "consumable", "entitlements": ["x"]}}}, "a consumable with entitlements"),
    ({"bundle_id": "a", "products": {"p": {"type": "non_renewing"}}}, "non_renewing without duration"),
    ({"bundle_id": "a", "products": {"p": {"type": "non_consumable", "duration_ms": 5}}}, "duration on a non-consumable"),
    ({"bundle_id": "a", "products": {"p": {"type": "non_consumable", "group": "g"}}}, "group on a non-consumable"),
    ({"bundle_id": "a", "products": {"p": {"type": "auto_renewable", "level": 0}}}, "level 0"),
    ({"bundle_id": "a", "products": {"p": {"type": "auto_renewable", "level": "1"}}}, "level a string"),
    ({"bundle_id": "a", "products": {"p": {"type": "auto_renewable", "entitlements": "pro"}}}, "entitlements a string"),
    ({"bundle_id": "a", "products": {"": {"type": "consumable"}}}, "an empty product id"),
    ({"bundle_id": "a", "products": {"p": {"type": "auto_renewable", "tier": 1}}}, "unknown product key"),
]
for i, (config, note) in enumerate(CONFIGS):
    case(f"c_{i:02}.json", json.dumps(config), "config", "IAPV_E_CONFIG", note)
for i, (text, note) in enumerate([("", "empty"), ("[]", "an array"), ('{"bundle_id":"a"', "truncated"),
                                  ('{"bundle_id":"a","bundle_id":"b"}', "duplicate key"), ("{" * 3000, "deep"),
                                  ('{"bundle_id":"a\\u0000"}', "a NUL in bundle_id")]):
    case(f"c_text_{i}.json", text, "config", "IAPV_E_CONFIG", note)

# -- per-call options ------------------------------------------------------------------------------
OPTIONS = [({"colour": 1}, "unknown key"), ({"device_id": 5}, "device_id a number"), ({"device_id": "xyz"}, "device_id not hex"),
           ({"device_id": "0011"}, "device_id too short"), ({"endpoint": "staging"}, "unknown endpoint"), ({"endpoint": 1}, "endpoint a number"),
           ({"attempt": 0}, "attempt 0"), ({"attempt": "2"}, "attempt a string"), ({"attempt": 1.5}, "attempt a real"),
           ({"delivered_transaction_ids": "1"}, "delivered ids a string"), ({"delivered_transaction_ids": [1]}, "a delivered id number"),
           ({"orders": {}}, "orders an object"), ({"orders": [{}]}, "an empty order"), ({"orders": [{"order_id": 1, "product_id": "p", "created_ms": 1}]}, "order_id a number"),
           ({"orders": [{"order_id": "o", "product_id": "p", "created_ms": "1"}]}, "created_ms a string"),
           ({"orders": [{"order_id": "o", "product_id": "p", "created_ms": 1, "x": 1}]}, "unknown order key"),
           ({"renewal_info": {}}, "renewal_info an object"), ({"renewal_info": [{}]}, "a renewal info without original id"),
           ({"renewal_info": [{"original_transaction_id": "1", "auto_renew_status": {}}]}, "auto_renew_status an object")]
for i, (options, note) in enumerate(OPTIONS):
    case(f"o_{i:02}.json", json.dumps(options), "options", "IAPV_E_INVALID_ARGUMENT", note)
for i, (text, note) in enumerate([("[]", "an array"), ("{", "truncated"), ('{"attempt":1,"attempt":2}', "duplicate key"), ("null", "null")]):
    case(f"o_text_{i}.json", text, "options", "IAPV_E_INVALID_ARGUMENT", note)

with open(os.path.join(OUT, "cases.json"), "w") as f:
    json.dump({"about": __doc__.strip().splitlines()[0], "cases": cases}, f, indent=1)
    f.write("\n")
print(f"{len(cases)} hostile cases in {OUT}")
