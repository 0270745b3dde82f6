#!/usr/bin/env python3
"""Validates real results against the JSON Schemas in docs/schema/.

Runs the CLI (build/bin/iapverify) on the committed fixtures with fixed configs and fixed
`--now` values, and validates every result it prints against its schema with the `jsonschema`
package. It also checks the input schemas: every config, option set and entitlement input this
script feeds the CLI (and the example configs in the repository) must validate, and every
hostile config, option set and entitlement input the library refuses must be refused by the
schema too. Every verdict a result schema lists must come out of at least one fixture, so a
schema cannot keep a verdict the code no longer produces (or miss one it does), and every member
name and enumerated value the results carry, and every key of the input schemas, must be named
(in backquotes) somewhere in README.md or docs/*.md. The JSON blocks of the manual marked
<!-- schema: NAME --> are validated, and the library must accept the config, options and
entitlement-input ones.

    python3 Tests/docs/check_schemas.py [--cli build/bin/iapverify] [-v]

Needs Python 3.9+ and `jsonschema` >= 4.18 (Debian's python3-jsonschema is older: use pip).
The App Store Server API cases build a request for every endpoint (and check the calls the
library refuses), and interpret answers of every shape: bodies signed on the fly with the fake
Apple-shaped PKI of Tests/shared/fakeapple/ (so this needs the `cryptography` package), empty
bodies, Apple's error statuses and malformed answers. The transactions of valid answers must give
the same entitlements through `iapverify entitlements`, and so must the pages of a paged history
taken together. The revocation cases pass the prepared OCSP answers of
Tests/shared/fakeapple/ocsp under "off" and "required", and re-sign a fake receipt's payload with a
throwaway chain (`openssl smime` reads the payload) to get a revoked receipt.

Deterministic: a fixed clock, no network; the only randomness is in ECDSA signatures, which no
result shows.
"""
from __future__ import annotations

import argparse
import base64
import collections
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    import jsonschema
except ImportError:  # pragma: no cover
    sys.exit("check_schemas.py needs the jsonschema package (pip install jsonschema, or Debian's python3-jsonschema)")
try:
    from referencing import Registry, Resource      # jsonschema >= 4.18
except ImportError:                                  # older jsonschema (Debian 12 ships 4.10): RefResolver
    Registry = Resource = None

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "docs" / "schema"
FIX = ROOT / "Tests" / "IAPVerifyTests" / "Fixtures"

JAN_2030 = 1893456000000          # 2030-01-01T00:00:00Z
BOTH = ["Production", "Sandbox"]


# ---- schemas ---------------------------------------------------------------------------------

def load_schemas() -> dict[str, jsonschema.protocols.Validator]:
    docs = {p.name: json.loads(p.read_text()) for p in sorted(SCHEMAS.glob("*.schema.json"))}
    validators = {}
    for name, doc in docs.items():
        cls = jsonschema.validators.validator_for(doc)
        cls.check_schema(doc)
        assert doc.get("$schema") == "https://json-schema.org/draft/2020-12/schema", f"{name}: not draft 2020-12"
        assert doc.get("$id") == name, f"{name}: its $id must be its file name"
        if Registry is not None:
            registry = Registry().with_resources((n, Resource.from_contents(d)) for n, d in docs.items())
            validator = cls(doc, registry=registry)
        else:
            resolver = jsonschema.RefResolver(base_uri=name, referrer=doc, store=dict(docs))
            validator = cls(doc, resolver=resolver)
        validators[name[: -len(".schema.json")]] = validator
    return validators


# The CLI command of each entry point that takes options, and its options' definition in
# options.schema.json ($defs): each entry point reads only its own keys.
OPTIONS_ENTRY = {"receipt": "receipt", "response": "response", "entitlements": "entitlements", "jws": "jws",
                 "api-response": "api_response"}


def options_validator(validators: dict, entry: str):
    """The validator of one entry point's options: options.schema.json#/$defs/ENTRY."""
    return validators["options"].evolve(schema={"$ref": f"options.schema.json#/$defs/{entry}"})


def options_probe(validators: dict, doc) -> dict:
    """A CLI run through the first entry point whose options ``doc`` is (Case keyword arguments)."""
    for entry in ("entitlements", "receipt", "jws", "response", "api_response"):
        if options_validator(validators, entry).is_valid(doc):
            break
    else:
        entry = "entitlements"                   # matches none: the run shows what the library says
    command = {v: k for k, v in OPTIONS_ENTRY.items()}[entry]
    inputs = {
        "entitlements": dict(input_bytes=json.dumps({"transactions": []}).encode(), expect="valid"),
        "receipt": dict(input_path=FIX / "receipts" / "production_2025-04-18_com.dashedspace.analytics_sha256.der"),
        "jws": dict(input_path=FIX / "jws" / "notification_CONSUMPTION_REQUEST_sandbox_2025-02.jws"),
        "response": dict(input_bytes=b'{"status": 21005}', expect="temporarily_unavailable"),
        "api_response": dict(input_bytes=b""),
    }[entry]
    return dict(command=command, schema=command + "-result", config={"bundle_id": "*", "environments": BOTH},
                options=doc, **inputs)


def strict_json(text: bytes):
    """json.loads that refuses what the library refuses: duplicate keys, NaN/Infinity."""
    def pairs(items):
        keys = [k for k, _ in items]
        if len(keys) != len(set(keys)):
            raise ValueError("duplicate key")
        return dict(items)

    def constant(name):
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, object_pairs_hook=pairs, parse_constant=constant)


# ---- cases -----------------------------------------------------------------------------------

class Case:
    """One CLI run: a subcommand on an input, with a config, options and a fixed now."""

    def __init__(self, name, command, schema, input_path=None, input_bytes=None, config=None, options=None,
                 now=JAN_2030, extra=(), expect=None, expect_status=None):
        self.name, self.command, self.schema = name, command, schema
        self.input_path, self.input_bytes = input_path, input_bytes
        self.config, self.options, self.now, self.extra = config, options, now, list(extra)
        self.expect, self.expect_status = expect, expect_status


def text(rel: str) -> str:
    return (FIX / rel).read_text()


def real_receipt_cases() -> list[Case]:
    expected = json.loads((FIX / "expected-receipts.json").read_text())["receipts"]
    cases = []
    for path in sorted((FIX / "receipts").glob("*.der")):
        bundle = expected.get(path.name, {}).get("bundle_id", "*")
        cases.append(Case(f"receipt {path.name}", "receipt", "receipt-result", path,
                          config={"bundle_id": bundle, "environments": BOTH}, expect="valid"))
        sandbox = path.name.startswith("sandbox")
        cases.append(Case(f"receipt {path.name} (another app, Production only)", "receipt", "receipt-result", path,
                          config={"bundle_id": "com.example.other"},
                          expect="environment_rejected" if sandbox else "bundle_mismatch"))
        cases.append(Case(f"inspect {path.name}", "inspect", "inspect-result", path, expect="unverified"))
    # A catalog with entitlements, deliveries, orders and pending renewal info.
    rc = FIX / "receipts" / "sandbox_2020-07-22_com.revenuecat.sampleapp.der"
    catalog = {"bundle_id": "com.revenuecat.sampleapp", "environments": BOTH,
               "products": {"com.revenuecat.monthly_4.99.1_week_intro": {"type": "auto_renewable", "group": "pro",
                                                                          "level": 1, "entitlements": ["pro"]},
                            "com.revenuecat.lifetime": {"type": "non_consumable", "entitlements": ["pro"]},
                            "com.revenuecat.coins": {"type": "consumable"}}}
    for now in (1594755500000, 1595440000000, JAN_2030):
        cases.append(Case(f"receipt revenuecat catalog at {now}", "receipt", "receipt-result", rc, config=catalog,
                          now=now, expect="valid",
                          options={"renewal_info": [{"original_transaction_id": "1000000692878476",
                                                     "auto_renew_status": "0", "expiration_intent": "1"}]}))
    lets = FIX / "receipts" / "production_2018-07-17_com.tensquaregames.letsfish2.der"
    lets_cfg = {"bundle_id": "com.tensquaregames.letsfish2",
                "products": {"com.tensquaregames.letsfish2.goldpack_2.T5": {"type": "consumable"}}}
    cases.append(Case("receipt letsfish deliveries and orders", "receipt", "receipt-result", lets, config=lets_cfg,
                      options={"orders": [{"order_id": "A1", "product_id": "com.tensquaregames.letsfish2.goldpack_2.T5",
                                           "created_ms": 1531800000000},
                                          {"order_id": "A2", "product_id": "com.example.other", "created_ms": 1}]},
                      expect="valid"))
    cases.append(Case("receipt letsfish already delivered", "receipt", "receipt-result", lets, config=lets_cfg,
                      options={"delivered_transaction_ids": ["320000424631056"]}, expect="valid"))
    cases.append(Case("receipt version mismatch", "receipt", "receipt-result", lets,
                      config=dict(lets_cfg, bundle_versions=["0.0.1"]), expect="version_mismatch"))
    return cases


def xcode_cases() -> list[Case]:
    pem = text("xcode/StoreKitTestCertificate.pem")
    accept = {"bundle_id": "*", "environments": ["Xcode"], "xcode": {"accept": True, "roots_pem": [pem]}}
    cases = []
    for path in sorted((FIX / "xcode").glob("*.der")):
        cases.append(Case(f"xcode {path.name}", "receipt", "receipt-result", path, config=accept, expect="valid"))
        cases.append(Case(f"xcode {path.name} (not accepted)", "receipt", "receipt-result", path,
                          config={"bundle_id": "*"}, expect="environment_rejected"))
    dev = FIX / "xcode" / "xcode_2021-04-16_com.temporary.ipatestapp_known_device_id.der"
    cases.append(Case("xcode device match", "receipt", "receipt-result", dev, config=accept,
                      options={"device_id": "c68bce28-7e27-494a-a082-acecb9328171"}, expect="valid"))
    cases.append(Case("xcode device mismatch", "receipt", "receipt-result", dev, config=accept,
                      options={"device_id": "c68bce28-7e27-494a-a082-acecb9328172"}, expect="device_mismatch"))
    return cases


def fakepki_cases() -> list[Case]:
    doc = json.loads((FIX / "fakepki" / "cases.json").read_text())
    root = text("fakepki/root.pem")
    cases = []
    for c in doc["cases"]:
        config = {"bundle_id": doc["bundle_id"], "trust": {"roots_pem": [root], "include_apple_roots": False}}
        for k, v in c["config"].items():
            if k == "trust":
                trust = dict(v)
                trust["roots_pem"] = [text("fakepki/" + r[1:]) if r.startswith("@") else r
                                      for r in trust.get("roots_pem", [])]
                config[k] = trust
            else:
                config[k] = v
        cases.append(Case(f"fakepki {c['file']}", "receipt", "receipt-result", FIX / "fakepki" / c["file"],
                          config=config, options=c["options"] or None, now=c["now_ms"],
                          expect=c["verdict"], expect_status=c["status"]))
    return cases


def hostile_cases() -> list[Case]:
    doc = json.loads((FIX / "hostile" / "cases.json").read_text())
    cases = []
    for c in doc["cases"]:
        path = FIX / "hostile" / c["file"]
        if c["entry"] == "receipt":
            cases.append(Case(f"hostile {c['file']}", "receipt", "receipt-result", path,
                              config={"bundle_id": "*", "environments": BOTH}, expect=c["expect"]))
        elif c["entry"] == "response":
            cases.append(Case(f"hostile {c['file']}", "response", "response-result", path,
                              config={"bundle_id": "com.example.fake"}, now=3000, expect=c["expect"]))
        elif c["entry"] == "entitlements":
            cases.append(Case(f"hostile {c['file']}", "entitlements", "entitlements-result", path,
                              config={"bundle_id": "com.example.fake"}, now=3000, expect=c["expect"]))
    # A few through inspect too (malformed and unsupported shapes).
    for name in ("r_good.der", "r_empty.der", "r_digest_md5.der", "r_payload_not_set.der", "r_trailing_garbage.der"):
        cases.append(Case(f"inspect hostile {name}", "inspect", "inspect-result", FIX / "hostile" / name))
    # iOS 6 transaction receipts: read, never verified; a broken one is malformed.
    ios6 = ROOT / "Tests" / "shared" / "transaction_receipt_ios6.b64"
    cases.append(Case("inspect an iOS 6 transaction receipt", "inspect", "transaction-receipt-result", ios6,
                      expect="unverified"))
    broken = base64.b64encode(b'{ "purchase-info" = "e30="; }')
    cases.append(Case("inspect a transaction receipt without a transaction id", "inspect", "transaction-receipt-result",
                      input_bytes=broken, expect="malformed"))
    return cases


def response_cases() -> list[Case]:
    cases = []
    for path in sorted((FIX / "verifyreceipt").glob("*.json")):
        for environment in BOTH:
            cases.append(Case(f"response {path.name} from {environment}", "response", "response-result", path,
                              config={"bundle_id": "*", "environments": BOTH}, now=1600000000000,
                              extra=["--environment", environment]))
        cases.append(Case(f"response {path.name} (Production only)", "response", "response-result", path,
                          config={"bundle_id": "*"}, now=1600000000000))
        cases.append(Case(f"response {path.name} (another app)", "response", "response-result", path,
                          config={"bundle_id": "com.example.other", "environments": BOTH}, now=1600000000000))
    family = FIX / "verifyreceipt" / "alexalok_Valid_Production_Family_Shared.json"
    cases.append(Case("response family shared", "response", "response-result", family,
                      config={"bundle_id": "com.myapp.app"}, now=1636900000000, expect="valid"))
    consumable = FIX / "verifyreceipt" / "alexalok_Valid_Sandbox_Consumable_And_Active_Subscription_Excluding_Old_Transactions.json"
    cfg = json.loads((ROOT / "examples" / "python" / "config.json").read_text())
    cfg["environments"] = cfg["environments"] + ["Sandbox"]   # the service's --allow-sandbox: a sandbox answer
    cases.append(Case("response consumable and subscription", "response", "response-result", consumable, config=cfg,
                      now=1608230700000, extra=["--environment", "Sandbox"], expect="valid",
                      options={"orders": [{"order_id": "o1", "product_id": "com.test.app.mercury", "created_ms": 1608230000000}]}))
    # Statuses no fixture carries.
    inline = [
        ({"status": 21005}, 1, "temporarily_unavailable"), ({"status": 21005}, 5, "temporarily_unavailable"),
        ({"status": 21100, "is-retryable": True}, 2, "temporarily_unavailable"),
        ({"status": 21199, "is-retryable": False}, 1, "rejected_by_apple"),
        ({"status": 21007}, 1, "wrong_environment"), ({"status": 21008}, 1, "wrong_environment"),
        ({"status": 21004}, 1, "configuration_error"), ({"status": 21010}, 1, "rejected_by_apple"),
        ({"status": 0}, 1, "malformed"), ({"receipt": {}}, 1, "malformed"),
    ]
    for body, attempt, verdict in inline:
        for environment in BOTH:
            cases.append(Case(f"response {json.dumps(body)} attempt {attempt} from {environment}", "response",
                              "response-result", input_bytes=json.dumps(body).encode(),
                              config={"bundle_id": "*", "environments": BOTH}, now=1600000000000,
                              extra=["--environment", environment, "--attempt", str(attempt)], expect=verdict))
    # The deprecated spellings still work until the next release, each with a note in deprecations.
    for name, options in (("options.endpoint", {"endpoint": "sandbox"}), ("lower-case options.environment",
                                                                           {"environment": "sandbox"})):
        cases.append(Case(f"response with the deprecated {name}", "response", "response-result",
                          input_bytes=b'{"status": 21005}', config={"bundle_id": "*", "environments": BOTH},
                          now=1600000000000, options=options, expect="temporarily_unavailable"))
    return cases


def entitlement_inputs() -> list[tuple[str, dict, dict, dict, int]]:
    """(name, config, input, options, now): one input per entitlement state and product type."""
    day = 86400000
    t0 = 1700000000000
    catalog = {"bundle_id": "com.example.app", "products": {
        "pro.monthly": {"type": "auto_renewable", "group": "pro", "level": 2, "entitlements": ["pro"]},
        "pro.yearly": {"type": "auto_renewable", "group": "pro", "level": 1, "entitlements": ["pro"]},
        "lifetime": {"type": "non_consumable", "entitlements": ["pro"]},
        "season": {"type": "non_renewing", "duration_ms": 90 * day, "entitlements": ["season"]},
        "coins": {"type": "consumable"}}}

    def sub(tid, product="pro.monthly", start=t0, days=30, **kw):
        t = {"transaction_id": tid, "original_transaction_id": "100", "product_id": product,
             "purchase_date_ms": start, "expires_date_ms": start + days * day}
        t.update(kw)
        return t

    inputs = [
        ("active", catalog, {"transactions": [sub("101")]}, {}, t0 + day),
        ("trial, auto-renew off", catalog, {"transactions": [sub("101", is_trial_period="true")],
                                            "renewal_info": [{"original_transaction_id": "100", "auto_renew_status": "0"}]},
         {}, t0 + day),
        ("grace period", catalog, {"transactions": [sub("101")], "renewal_info": [
            {"original_transaction_id": "100", "is_in_billing_retry_period": "1",
             "grace_period_expires_date_ms": str(t0 + 35 * day), "auto_renew_product_id": "pro.yearly"}]}, {}, t0 + 31 * day),
        ("billing retry", catalog, {"transactions": [sub("101")], "renewal_info": [
            {"original_transaction_id": "100", "is_in_billing_retry_period": True}]}, {}, t0 + 31 * day),
        ("expired", catalog, {"transactions": [sub("101")], "renewal_info": [
            {"original_transaction_id": "100", "expiration_intent": 1, "auto_renew_status": False}]}, {}, t0 + 40 * day),
        ("refunded", catalog, {"transactions": [sub("101", cancellation_date_ms=t0 + 2 * day, cancellation_reason="1")]},
         {"delivered_transaction_ids": ["101"]}, t0 + 3 * day),
        ("upgraded", catalog, {"transactions": [sub("101", cancellation_date_ms=t0 + 2 * day, is_upgraded=True),
                                                sub("102", product="pro.yearly", start=t0 + 2 * day, days=365)]},
         {}, t0 + 3 * day),
        ("upgraded only", catalog, {"transactions": [sub("101", cancellation_date_ms=t0 + 2 * day, is_upgraded=True)]},
         {}, t0 + 3 * day),
        ("owned, family shared", catalog, {"transactions": [{"transaction_id": "201", "product_id": "lifetime",
                                                              "purchase_date": "2023-11-14 22:13:20 Etc/GMT",
                                                              "in_app_ownership_type": "FAMILY_SHARED"}]}, {}, t0 + day),
        ("non-consumable refunded", catalog, {"transactions": [{"transaction_id": "201", "product_id": "lifetime",
                                                                 "purchase_date_ms": t0, "cancellation_date_ms": t0 + day}]},
         {"delivered_transaction_ids": ["201"]}, t0 + 2 * day),
        ("non-renewing active", catalog, {"transactions": [{"transaction_id": "301", "product_id": "season",
                                                             "purchase_date_ms": t0}]}, {}, t0 + day),
        ("non-renewing expired", catalog, {"transactions": [{"transaction_id": "301", "product_id": "season",
                                                              "purchase_date_ms": t0}]}, {}, t0 + 100 * day),
        ("consumables, orders", catalog, {"transactions": [
            {"transaction_id": "401", "product_id": "coins", "quantity": "2", "purchase_date_ms": t0},
            {"transaction_id": "402", "product_id": "coins", "purchase_date_ms": t0 + 1000},
            {"transaction_id": "403", "product_id": "unknown.product", "purchase_date_ms": t0}]},
         {"orders": [{"order_id": "A", "product_id": "coins", "created_ms": t0 + 60000},
                     {"order_id": "B", "product_id": "coins", "created_ms": t0 + 3600000},
                     {"order_id": "C", "product_id": "lifetime", "created_ms": t0}],
          "delivered_transaction_ids": ["402"]}, t0 + day),
        ("nothing bought", catalog, {"transactions": []}, {}, t0),
        ("no catalog", {"bundle_id": "*"}, {"transactions": [sub("101"), {"transaction_id": 7, "product_id": "x"}],
                                           "renewal_info": None}, {}, t0 + day),
    ]
    return inputs


def entitlement_cases() -> list[Case]:
    cases = []
    for name, config, doc, options, now in entitlement_inputs():
        cases.append(Case(f"entitlements {name}", "entitlements", "entitlements-result",
                          input_bytes=json.dumps(doc).encode(), config=config, options=options or None, now=now,
                          expect="valid"))
    return cases


def jws_cases() -> list[Case]:
    cases = []
    real = sorted((FIX / "jws").glob("*.jws"))
    for path in real:
        # A token without signedDate is checked at now: the day after the early notification.
        now = 1_646_387_008_254 + 86_400_000 if "no_signedDate" in path.name else JAN_2030
        cases.append(Case(f"jws {path.name}", "jws", "jws-result", path, config={"bundle_id": "*", "environments": BOTH},
                          expect="valid", now=now))
        if now != JAN_2030:
            cases.append(Case(f"jws {path.name} (checked years later: its certificate has expired)", "jws", "jws-result",
                              path, config={"bundle_id": "*", "environments": BOTH}, expect="untrusted_chain"))
        cases.append(Case(f"jws {path.name} (Production only)", "jws", "jws-result", path, config={"bundle_id": "*"}))
    mock = FIX / "jws" / "apple_library_mock"
    for path in sorted(mock.glob("*.jws")):
        cases.append(Case(f"jws mock {path.name}", "jws", "jws-result", path,
                          config={"bundle_id": "com.example", "environments": ["Production", "Sandbox", "Xcode"],
                                  "trust": {"roots_pem": [text("jws/apple_library_mock/testCA.pem")]}}))
    xpem = text("xcode/jws/StoreKitTestingInXcode_ES256_2023-10-19.pem")
    for path in sorted((FIX / "xcode" / "jws").glob("*.jws")):
        cases.append(Case(f"jws xcode {path.name}", "jws", "jws-result", path,
                          config={"bundle_id": "*", "environments": ["Xcode"], "xcode": {"accept": True, "roots_pem": [xpem]}},
                          expect="valid"))
    doc = json.loads((FIX / "jwsfake" / "cases.json").read_text())
    root = text("jwsfake/root.pem")
    fake = {"bundle_id": doc["bundle_id"], "environments": ["Sandbox"],
            "trust": {"roots_pem": [root], "include_apple_roots": False},
            "products": {"pro.monthly": {"type": "auto_renewable", "group": "pro", "entitlements": ["pro"]},
                         "pro.basic": {"type": "auto_renewable", "group": "pro", "entitlements": ["pro"]}}}
    for c in doc["cases"]:
        cases.append(Case(f"jwsfake {c['file']}", "jws", "jws-result", FIX / "jwsfake" / c["file"], config=fake,
                          expect=c["verdict"]))
    for step in doc["scenario"]:
        cases.append(Case(f"jwsfake scenario {step['file']}", "jws", "jws-result", FIX / "jwsfake" / step["file"],
                          config=fake, now=step["now_ms"], expect="valid"))
        cases.append(Case(f"jwsfake scenario {step['file']} (stale)", "jws", "jws-result", FIX / "jwsfake" / step["file"],
                          config=fake, now=step["now_ms"], options={"last_signed_date_ms": 1 << 60}, expect="valid"))
    singles = dict(fake, products={"pro.monthly": {"type": "auto_renewable", "group": "pro", "entitlements": ["pro"]},
                                   "lifetime": {"type": "non_consumable"}})
    for step in doc["singles"]:
        cases.append(Case(f"jwsfake single {step['file']}", "jws", "jws-result", FIX / "jwsfake" / step["file"],
                          config=singles, now=step["now_ms"], expect="valid"))
    # Redelivery: the same notification with its own UUID already seen.
    first = FIX / "jwsfake" / doc["scenario"][0]["file"]
    cases.append(Case("jwsfake duplicate", "jws", "jws-result", first, config=fake, now=doc["scenario"][0]["now_ms"],
                      options={"seen_notification_uuids": ["*uuid*"]}, expect="valid"))
    return cases


def shared_expectation_cases() -> list[Case]:
    doc = json.loads((ROOT / "Tests" / "shared" / "expectations.json").read_text())
    out = []
    for c in doc["cases"]:
        kind = {"receipt": ("receipt", "receipt-result"), "response": ("response", "response-result")}[c["kind"]]
        out.append(Case(f"shared {c['name']}", kind[0], kind[1], FIX / c["input"], config=c["config"],
                        options=c["options"] or None, now=c["now_ms"]))
    return out


# ---- App Store Server API ------------------------------------------------------------------

FAKEAPPLE = ROOT / "Tests" / "shared" / "fakeapple"
API_NOW = 1767225600000           # 2026-01-01T00:00:00Z
DAY = 86400000
API_CATALOG = {"pro.monthly": {"type": "auto_renewable", "group": "pro", "level": 1, "entitlements": ["pro"]},
               "lifetime": {"type": "non_consumable", "entitlements": ["pro"]},
               "coins": {"type": "consumable"}}


class FakeApple:
    """Signs App Store Server API answers with the fake Apple-shaped PKI of Tests/shared/fakeapple/
    (test keys only). ECDSA signatures differ from run to run; the results do not depend on them."""

    def __init__(self):
        try:
            from cryptography import x509
            from cryptography.hazmat.primitives import hashes, serialization
            from cryptography.hazmat.primitives.asymmetric import ec
            from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
        except ImportError:  # pragma: no cover
            sys.exit("check_schemas.py needs the cryptography package for the API answers (make python-test installs it)")
        self._hashes, self._ec, self._decode = hashes, ec, decode_dss_signature
        self.key = serialization.load_pem_private_key((FAKEAPPLE / "leaf.key.pem").read_bytes(), None)

        def der(name):
            cert = x509.load_pem_x509_certificate((FAKEAPPLE / name).read_bytes())
            return base64.b64encode(cert.public_bytes(serialization.Encoding.DER)).decode()
        self.x5c = [der("leaf.pem"), der("wwdr.pem"), der("root.pem")]

    @staticmethod
    def b64u(raw: bytes) -> str:
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

    def jws(self, payload: dict, alg="ES256", x5c=None, tamper=False) -> str:
        head = self.b64u(json.dumps({"alg": alg, "x5c": self.x5c if x5c is None else x5c}).encode())
        body = self.b64u(json.dumps(payload).encode())
        der = self.key.sign(f"{head}.{body}".encode(), self._ec.ECDSA(self._hashes.SHA256()))
        r, s = self._decode(der)
        sig = bytearray(r.to_bytes(32, "big") + s.to_bytes(32, "big"))
        if tamper:
            sig[5] ^= 1
        return f"{head}.{body}.{self.b64u(bytes(sig))}"


def api_transaction(tid, original="2000000000000001", product="pro.monthly", env="Production", start=API_NOW - DAY,
                    days=30, **extra):
    t = {"transactionId": tid, "originalTransactionId": original, "bundleId": "com.example.fake", "productId": product,
         "purchaseDate": start, "originalPurchaseDate": API_NOW - DAY, "type": "Auto-Renewable Subscription",
         "inAppOwnershipType": "PURCHASED", "signedDate": API_NOW - 1000, "environment": env, "quantity": 1,
         "subscriptionGroupIdentifier": "21000000", "webOrderLineItemId": tid + "9"}
    if days is not None:
        t["expiresDate"] = start + days * DAY
    else:
        t["type"] = "Non-Consumable"
        del t["subscriptionGroupIdentifier"]
    t.update(extra)
    return t


def api_renewal(original="2000000000000001", env="Production", **extra):
    r = {"originalTransactionId": original, "productId": "pro.monthly", "autoRenewProductId": "pro.monthly",
         "autoRenewStatus": 1, "signedDate": API_NOW - 1000, "environment": env}
    r.update(extra)
    return r


def api_calls() -> list[tuple[str, dict, str | None]]:
    """(name, call, expected error status or None): a request for every endpoint, and refusals."""
    RM_ID = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
    ONE_PIXEL_PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
    tid = "2000000000000001"
    ok = [
        ("transaction_info", {"endpoint": "transaction_info", "transaction_id": tid}),
        ("transaction_history", {"endpoint": "transaction_history", "transaction_id": tid, "revision": "rev-1",
                                 "query": {"startDate": API_NOW - 30 * DAY, "endDate": API_NOW,
                                           "productId": ["pro.monthly", "lifetime"], "productType": "AUTO_RENEWABLE",
                                           "sort": "DESCENDING", "subscriptionGroupIdentifier": ["21000000"],
                                           "inAppOwnershipType": "PURCHASED", "revoked": False}}),
        ("subscription_statuses", {"endpoint": "subscription_statuses", "transaction_id": tid, "environment": "Sandbox",
                                   "query": {"status": [1, 4]}}),
        ("order_lookup", {"endpoint": "order_lookup", "order_id": "MWN7S2L4ZT"}),
        ("refund_history", {"endpoint": "refund_history", "transaction_id": tid, "revision": "r2"}),
        ("app_transaction_info", {"endpoint": "app_transaction_info", "transaction_id": tid}),
        ("consumption_info", {"endpoint": "consumption_info", "transaction_id": tid,
                              "body": {"customerConsented": True, "sampleContentProvided": False,
                                       "deliveryStatus": "DELIVERED", "consumptionPercentage": 25000,
                                       "refundPreference": "DECLINE"}}),
        ("set_app_account_token", {"endpoint": "set_app_account_token", "original_transaction_id": tid,
                                   "body": {"appAccountToken": "7e3fb20b-4cdb-47cc-936d-99d65f608138"}}),
        ("extend_renewal_date", {"endpoint": "extend_renewal_date", "original_transaction_id": tid,
                                 "body": {"extendByDays": 7, "extendReasonCode": 3, "requestIdentifier": "ext-1"}}),
        ("mass_extend_renewal_date", {"endpoint": "mass_extend_renewal_date", "token_lifetime_seconds": 60,
                                      "body": {"extendByDays": 3, "extendReasonCode": 1, "requestIdentifier": "mass-1",
                                               "productId": "pro.monthly", "storefrontCountryCodes": ["USA", "FRA"]}}),
        ("mass_extend_status", {"endpoint": "mass_extend_status", "product_id": "pro.monthly",
                                "request_identifier": "mass-1"}),
        ("notification_history", {"endpoint": "notification_history", "pagination_token": "tok-2",
                                  "body": {"startDate": API_NOW - 30 * DAY, "endDate": API_NOW,
                                           "notificationType": "DID_RENEW", "onlyFailures": True}}),
        ("test_notification", {"endpoint": "test_notification", "environment": "Sandbox"}),
        # The lower-case spelling of release 0.1 still works until the next release (a note in deprecations).
        ("a deprecated lower-case environment", {"endpoint": "test_notification", "environment": "sandbox"}),
        ("test_notification_status", {"endpoint": "test_notification_status", "test_notification_token": "tok-abc"}),
        ("finish_transaction", {"endpoint": "finish_transaction", "transaction_id": tid}),
        ("transaction_history_v1 (deprecated)", {"endpoint": "transaction_history_v1", "transaction_id": tid}),
        ("consumption_info_v1 (deprecated)", {"endpoint": "consumption_info_v1", "transaction_id": tid,
                                              "body": {"customerConsented": True, "consumptionStatus": 1, "platform": 1,
                                                       "sampleContentProvided": False, "deliveryStatus": 0,
                                                       "appAccountToken": "", "accountTenure": 1, "playTime": 0,
                                                       "lifetimeDollarsRefunded": 0, "lifetimeDollarsPurchased": 2,
                                                       "userStatus": 1}}),
        ("upload_image", {"endpoint": "upload_image", "image_identifier": RM_ID, "body_base64": ONE_PIXEL_PNG}),
        ("delete_image", {"endpoint": "delete_image", "image_identifier": RM_ID}),
        ("list_images", {"endpoint": "list_images"}),
        ("upload_message", {"endpoint": "upload_message", "message_identifier": RM_ID,
                            "body": {"header": "Before you go", "body": "Three months at half price",
                                     "image": {"imageIdentifier": RM_ID, "altText": "A gift"}}}),
        ("delete_message", {"endpoint": "delete_message", "message_identifier": RM_ID}),
        ("list_messages", {"endpoint": "list_messages"}),
        ("configure_default_message", {"endpoint": "configure_default_message", "product_id": "pro.monthly", "locale": "en-US",
                                       "body": {"messageIdentifier": RM_ID}}),
        ("get_default_message", {"endpoint": "get_default_message", "product_id": "pro.monthly", "locale": "en-US"}),
        ("delete_default_message", {"endpoint": "delete_default_message", "product_id": "pro.monthly", "locale": "en-US"}),
        ("configure_realtime_url", {"endpoint": "configure_realtime_url", "body": {"realtimeURL": "https://example.com/retention"}}),
        ("get_realtime_url", {"endpoint": "get_realtime_url"}),
        ("delete_realtime_url", {"endpoint": "delete_realtime_url"}),
        ("initiate_performance_test", {"endpoint": "initiate_performance_test", "environment": "Sandbox",
                                       "body": {"originalTransactionId": tid}}),
        ("performance_test_result", {"endpoint": "performance_test_result", "environment": "Sandbox", "request_id": "req-1"}),
        ("advanced_commerce_cancel_subscription", {"endpoint": "advanced_commerce_cancel_subscription", "transaction_id": tid,
                                                   "body": {"requestInfo": {"requestReferenceId": RM_ID}, "storefront": "USA"}}),
        ("advanced_commerce_change_subscription_metadata", {
            "endpoint": "advanced_commerce_change_subscription_metadata", "transaction_id": tid,
            "body": {"requestInfo": {"requestReferenceId": RM_ID, "consistencyToken": "ct"},
                     "descriptors": {"effective": "NEXT_BILL_CYCLE", "displayName": "News"}}}),
        ("advanced_commerce_change_subscription_price", {
            "endpoint": "advanced_commerce_change_subscription_price", "transaction_id": tid,
            "body": {"requestInfo": {"requestReferenceId": RM_ID}, "items": [{"SKU": "news", "price": 4990}], "currency": "USD"}}),
        ("advanced_commerce_migrate_subscription", {
            "endpoint": "advanced_commerce_migrate_subscription", "transaction_id": tid,
            "body": {"requestInfo": {"requestReferenceId": RM_ID}, "descriptors": {"description": "All news", "displayName": "News"},
                     "items": [{"SKU": "news", "description": "Basic", "displayName": "Basic"}],
                     "targetProductId": "pro.monthly", "taxCode": "C003-00-1"}}),
        ("advanced_commerce_revoke_subscription", {
            "endpoint": "advanced_commerce_revoke_subscription", "transaction_id": tid, "environment": "Sandbox",
            "body": {"requestInfo": {"requestReferenceId": RM_ID}, "refundRiskingPreference": True, "refundType": "FULL",
                     "refundReason": "LEGAL"}}),
        ("advanced_commerce_request_refund", {
            "endpoint": "advanced_commerce_request_refund", "transaction_id": tid,
            "body": {"requestInfo": {"requestReferenceId": RM_ID}, "refundRiskingPreference": False,
                     "items": [{"SKU": "news", "refundReason": "OTHER", "refundType": "CUSTOM", "revoke": False, "refundAmount": 990}]}}),
    ]
    bad = [
        ("an id with a slash", {"endpoint": "transaction_info", "transaction_id": "1/../2"}),
        ("an id with a query", {"endpoint": "transaction_info", "transaction_id": "1?x=2"}),
        ("an id with a fragment", {"endpoint": "transaction_info", "transaction_id": "1#2"}),
        ("an id of dots", {"endpoint": "transaction_info", "transaction_id": ".."}),
        ("an unknown endpoint", {"endpoint": "verify_receipt"}),
        ("a missing id", {"endpoint": "transaction_history"}),
        ("a parameter of another endpoint", {"endpoint": "transaction_info", "transaction_id": "1", "order_id": "2"}),
        ("an unknown filter", {"endpoint": "transaction_history", "transaction_id": "1", "query": {"limit": 5}}),
        ("revision as a filter", {"endpoint": "transaction_history", "transaction_id": "1", "query": {"revision": "x"}}),
        ("a wrong filter value", {"endpoint": "transaction_history", "transaction_id": "1", "query": {"sort": "UP"}}),
        ("a body on a GET", {"endpoint": "transaction_info", "transaction_id": "1", "body": {}}),
        ("a missing body field", {"endpoint": "extend_renewal_date", "original_transaction_id": "1",
                                  "body": {"extendByDays": 7}}),
        ("an Advanced Commerce storefront in lower case", {"endpoint": "advanced_commerce_cancel_subscription", "transaction_id": "1",
                                                           "body": {"requestInfo": {"requestReferenceId": RM_ID}, "storefront": "usa"}}),
        ("consent not true", {"endpoint": "consumption_info", "transaction_id": "1",
                              "body": {"customerConsented": False, "sampleContentProvided": False,
                                       "deliveryStatus": "DELIVERED"}}),
        ("order lookup in sandbox", {"endpoint": "order_lookup", "order_id": "X", "environment": "Sandbox"}),
        ("an unknown environment", {"endpoint": "test_notification", "environment": "Staging"}),
        ("a token lifetime over an hour", {"endpoint": "test_notification", "token_lifetime_seconds": 3601}),
    ]
    return ([(f"api-request {n}", c, None) for n, c in ok]
            + [(f"api-request {n}", c, "IAPV_E_INVALID_ARGUMENT") for n, c in bad])


def api_answers(fake: FakeApple) -> list[tuple[str, dict, dict | bytes | None, dict, str]]:
    """(name, options, body, config, expected verdict) for api-response."""
    verifier = json.loads((FAKEAPPLE / "verifier.json").read_text())
    cfg = dict(verifier, products=API_CATALOG)
    prod_only = dict(cfg, environments=["Production"])
    other_root = dict(cfg, trust={"include_apple_roots": False, "roots_pem": [text("jwsfake/root.pem")]})
    t1, t2, t3 = (api_transaction(f"200000000000000{i}", start=API_NOW - (4 - i) * 10 * DAY) for i in (1, 2, 3))
    life = api_transaction("2000000000000009", original="2000000000000009", product="lifetime", days=None)
    h = {"bundleId": "com.example.fake", "appAppleId": 1234567890, "environment": "Production"}
    notification = {"notificationType": "DID_RENEW", "notificationUUID": "5b4c6b2e-0a7f-4d7e-9c59-3d5f1b2e8a11",
                    "signedDate": API_NOW - 500, "version": "2.0",
                    "data": {"bundleId": "com.example.fake", "environment": "Production",
                             "signedTransactionInfo": fake.jws(t3), "signedRenewalInfo": fake.jws(api_renewal())}}
    test_notification = {"notificationType": "TEST", "notificationUUID": "9ad6e0c4-2f0f-4d4f-a0b1-8f3f6c1f2e01",
                         "signedDate": API_NOW - 500, "version": "2.0",
                         "data": {"bundleId": "com.example.fake", "environment": "Production"}}
    app_txn = {"receiptType": "Production", "bundleId": "com.example.fake", "appAppleId": 1234567890,
               "applicationVersion": "1.2", "originalApplicationVersion": "1.0", "receiptCreationDate": API_NOW - DAY,
               "originalPurchaseDate": API_NOW - 90 * DAY, "signedDate": API_NOW - 1000}

    def status_item(txn, status, renewal=None):
        item = {"originalTransactionId": txn["originalTransactionId"], "status": status, "signedTransactionInfo": fake.jws(txn)}
        item["signedRenewalInfo"] = fake.jws(renewal or api_renewal(txn["originalTransactionId"]))
        return item

    history = dict(h, revision="rev-1", hasMore=False, signedTransactions=[fake.jws(t) for t in (t1, t2, t3, life)])
    page1 = dict(h, revision="rev-1", hasMore=True, signedTransactions=[fake.jws(t) for t in (t1, t2)])
    page2 = dict(h, revision="rev-2", hasMore=False, signedTransactions=[fake.jws(t) for t in (t3, life)])
    expired = api_transaction("2000000000000005", original="2000000000000005", start=API_NOW - 60 * DAY)
    out = [
        # 200 answers with signed items
        ("history, one page", {}, history, cfg, "valid"),
        ("history, first page", {}, page1, cfg, "valid"),
        ("history, last page", {}, page2, cfg, "valid"),
        ("history, empty", {}, dict(h, revision="r0", hasMore=False, signedTransactions=[]), cfg, "valid"),
        ("history with orders and deliveries", {"delivered_transaction_ids": ["2000000000000001"],
                                                "orders": [{"order_id": "o1", "product_id": "lifetime",
                                                            "created_ms": API_NOW - 2 * DAY}],
                                                "renewal_info": [{"original_transaction_id": "2000000000000001",
                                                                  "auto_renew_status": False}]},
         history, cfg, "valid"),
        ("history in sandbox", {"environment": "Sandbox"},
         {"bundleId": "com.example.fake", "environment": "Sandbox", "revision": "s", "hasMore": False,
          "signedTransactions": [fake.jws(api_transaction("2000000000000011", env="Sandbox"))]}, cfg, "valid"),
        ("refund history", {"endpoint": "refund_history"},
         {"revision": "rf", "hasMore": False,
          "signedTransactions": [fake.jws(dict(t1, revocationDate=API_NOW - 100, revocationReason=0))]}, cfg, "valid"),
        ("transaction info", {"endpoint": "transaction_info"}, {"signedTransactionInfo": fake.jws(t3)}, cfg, "valid"),
        ("order lookup", {"endpoint": "order_lookup"}, {"status": 0, "signedTransactions": [fake.jws(life)]}, cfg, "valid"),
        ("order lookup, invalid order", {"endpoint": "order_lookup"}, {"status": 1}, cfg, "rejected_by_apple"),
        ("subscription statuses", {"endpoint": "subscription_statuses"},
         dict(h, data=[{"subscriptionGroupIdentifier": "21000000",
                        "lastTransactions": [status_item(t3, 1), status_item(expired, 1, api_renewal("2000000000000005", autoRenewStatus=0))]}]),
         cfg, "valid"),
        ("app transaction info", {"endpoint": "app_transaction_info"}, {"signedAppTransactionInfo": fake.jws(app_txn)},
         cfg, "valid"),
        ("notification history", {"endpoint": "notification_history"},
         {"paginationToken": "next-tok", "hasMore": True,
          "notificationHistory": [{"signedPayload": fake.jws(notification), "sendAttempts": [
              {"attemptDate": API_NOW - 400, "sendAttemptResult": "SUCCESS"}]}]}, cfg, "valid"),
        ("test notification status", {"endpoint": "test_notification_status"},
         {"signedPayload": fake.jws(test_notification), "sendAttempts": []}, cfg, "valid"),
        # 200 answers without signed items
        ("test notification", {"endpoint": "test_notification"}, {"testNotificationToken": "tok-abc"}, cfg, "valid"),
        ("extend renewal date", {"endpoint": "extend_renewal_date"},
         {"originalTransactionId": "2000000000000001", "webOrderLineItemId": "20000000000000019", "success": True,
          "effectiveDate": API_NOW + 30 * DAY}, cfg, "valid"),
        ("mass extend", {"endpoint": "mass_extend_renewal_date"}, {"requestIdentifier": "mass-1"}, cfg, "valid"),
        # Advanced Commerce: the changed transaction, and a subscription's renewal info
        ("advanced commerce cancel", {"endpoint": "advanced_commerce_cancel_subscription"},
         {"signedTransactionInfo": fake.jws(t3), "signedRenewalInfo": fake.jws(api_renewal(t3["originalTransactionId"],
                                                                                           autoRenewStatus=0))}, cfg, "valid"),
        ("advanced commerce refund", {"endpoint": "advanced_commerce_request_refund"},
         {"signedTransactionInfo": fake.jws(dict(t1, revocationDate=API_NOW - 100, revocationReason=0))}, cfg, "valid"),
        ("advanced commerce without its transaction", {"endpoint": "advanced_commerce_revoke_subscription"},
         {"signedRenewalInfo": fake.jws(api_renewal())}, cfg, "malformed"),
        ("mass extend status", {"endpoint": "mass_extend_status"},
         {"requestIdentifier": "mass-1", "complete": True, "completeDate": API_NOW, "succeededCount": 3, "failedCount": 0},
         cfg, "valid"),
    ]
    for endpoint in ("consumption_info", "set_app_account_token", "finish_transaction"):
        out.append((f"{endpoint}, empty body", {"endpoint": endpoint, "http_status": 202 if endpoint == "consumption_info" else 200},
                    b"", cfg, "valid"))
        out.append((f"{endpoint}, {{}}", {"endpoint": endpoint}, {}, cfg, "valid"))
        out.append((f"{endpoint}, a body of another shape", {"endpoint": endpoint}, {"status": 0}, cfg, "malformed"))
    # Errors
    out += [
        ("401", {"http_status": 401}, b"", cfg, "configuration_error"),
        ("401 with a body", {"http_status": 401}, b"Unauthenticated\n", cfg, "configuration_error"),
        ("404 4040010 from production", {"endpoint": "transaction_info", "http_status": 404},
         {"errorCode": 4040010, "errorMessage": "Transaction id not found."}, cfg, "wrong_environment"),
        ("404 4040010 from sandbox", {"endpoint": "transaction_info", "environment": "Sandbox", "http_status": 404},
         {"errorCode": 4040010, "errorMessage": "Transaction id not found."}, cfg, "rejected_by_apple"),
        ("404 4040010, Production only", {"endpoint": "transaction_info", "http_status": 404},
         {"errorCode": 4040010, "errorMessage": "Transaction id not found."}, prod_only, "rejected_by_apple"),
        ("404 other", {"http_status": 404}, {"errorCode": 4040005, "errorMessage": "Original transaction id not found."},
         cfg, "rejected_by_apple"),
        ("429 with Retry-After", {"http_status": 429, "retry_after": str(API_NOW + 5000)},
         {"errorCode": 4290000, "errorMessage": "Rate limit exceeded."}, cfg, "temporarily_unavailable"),
        ("429 Retry-After in the past", {"http_status": 429, "retry_after": str(API_NOW - 5000)}, b"", cfg,
         "temporarily_unavailable"),
        ("429 unreadable Retry-After", {"http_status": 429, "retry_after": "Thu, 01 Jan 2026 00:00:05 GMT", "attempt": 3},
         b"", cfg, "temporarily_unavailable"),
        ("429 attempt 5", {"http_status": 429, "attempt": 5}, b"", cfg, "temporarily_unavailable"),
        ("429 Retry-After in seconds", {"http_status": 429, "retry_after": "120", "attempt": 2}, b"", cfg,
         "temporarily_unavailable"),
        ("429 Retry-After next year", {"http_status": 429, "retry_after": str(API_NOW + 365 * DAY)}, b"", cfg,
         "temporarily_unavailable"),
        ("500", {"http_status": 500}, {"errorCode": 5000000, "errorMessage": "An unknown error occurred."}, cfg,
         "temporarily_unavailable"),
        ("503 attempt 9", {"http_status": 503, "attempt": 9}, b"<html></html>", cfg, "temporarily_unavailable"),
        ("404 retryable 4040002", {"http_status": 404}, {"errorCode": 4040002}, cfg, "temporarily_unavailable"),
        ("400", {"http_status": 400}, {"errorCode": 4000006, "errorMessage": "Invalid transaction id."}, cfg,
         "rejected_by_apple"),
        ("400 without a body", {"http_status": 400}, b"", cfg, "rejected_by_apple"),
        ("302", {"http_status": 302}, b"", cfg, "malformed"),
        # Malformed or refused 200 answers
        ("not JSON", {}, b"{\"signedTransactions\": [", cfg, "malformed"),
        ("an array", {}, [], cfg, "malformed"),
        ("another endpoint's shape", {}, {"signedTransactionInfo": fake.jws(t1)}, cfg, "malformed"),
        ("hasMore without revision", {}, {"hasMore": True, "signedTransactions": []}, cfg, "malformed"),
        ("an item that is not a string", {}, {"hasMore": False, "signedTransactions": [7]}, cfg, "malformed"),
        ("a renewal info where a transaction belongs", {}, {"hasMore": False, "signedTransactions": [fake.jws(api_renewal())]},
         cfg, "malformed"),
        ("one tampered item", {}, dict(history, signedTransactions=[fake.jws(t1), fake.jws(t2, tamper=True)]), cfg,
         "signature_invalid"),
        ("HS256 item", {}, dict(history, signedTransactions=[fake.jws(t1, alg="HS256")]), cfg, "unsupported_algorithm"),
        ("two certificates", {}, dict(history, signedTransactions=[fake.jws(t1, x5c=fake.x5c[:2])]), cfg, "not_apple_signer"),
        ("another root", {}, history, other_root, "untrusted_chain"),
        ("a sandbox item from production", {},
         {"hasMore": False, "signedTransactions": [fake.jws(api_transaction("2000000000000011", env="Sandbox"))]}, cfg,
         "environment_rejected"),
        ("the body names sandbox", {}, dict(history, environment="Sandbox"), cfg, "environment_rejected"),
        ("another app's body", {}, dict(history, bundleId="com.example.other"), cfg, "bundle_mismatch"),
        ("another app's item", {}, {"hasMore": False,
                                    "signedTransactions": [fake.jws(dict(t1, bundleId="com.example.other"))]}, cfg,
         "bundle_mismatch"),
        ("statuses of another subscription", {"endpoint": "subscription_statuses"},
         {"data": [{"lastTransactions": [dict(status_item(t3, 1), originalTransactionId="9")]}]}, cfg, "malformed"),
        ("order status 2", {"endpoint": "order_lookup"}, {"status": 2, "signedTransactions": []}, cfg, "malformed"),
    ]
    return out


# The decisions docs/server-api.md promises, for a few answers: (action, retry_after_ms).
API_ACTIONS = {
    "history, one page": ("accept", None), "history, first page": ("next_page", None),
    "401": ("fix_configuration", None), "404 4040010 from production": ("retry_sandbox", None),
    "404 4040010 from sandbox": ("reject", None), "404 4040010, Production only": ("reject", None),
    "429 with Retry-After": ("retry_later", 5000), "429 Retry-After in the past": ("retry_later", 0),
    "429 unreadable Retry-After": ("retry_later", 4000), "429 Retry-After in seconds": ("retry_later", 2000),
    "429 Retry-After next year": ("retry_later", 3600000),
    "429 attempt 5": ("give_up", None), "500": ("retry_later", 1000), "503 attempt 9": ("give_up", None),
    "404 retryable 4040002": ("retry_later", 1000), "400": ("reject", None), "302": ("reject", None),
    "one tampered item": ("reject", None),
}


def api_cases() -> list[Case]:
    fake = FakeApple()
    signer = FAKEAPPLE / "signer.json"
    cases = []
    for name, call, status in api_calls():
        cases.append(Case(name, "api-request", "api-request-result", input_bytes=json.dumps(call).encode(),
                          now=API_NOW, extra=["--signer", str(signer)], expect_status=status))
    for name, options, body, config, verdict in api_answers(fake):
        opts = {"endpoint": "transaction_history", "environment": "Production", "http_status": 200}
        opts.update(options)
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        cases.append(Case(f"api-response {name}", "api-response", "api-response-result", input_bytes=raw, config=config,
                          options=opts, now=API_NOW, expect=verdict))
    return cases


# ---- revocation --------------------------------------------------------------------------------

OCSP = ROOT / "Tests" / "shared" / "fakeapple" / "ocsp"
OCSP_NOW = 1767229200000          # 2026-01-01T01:00:00Z: the prepared answers are made for it
OCSP_ANSWERS = ("good", "delegated_good", "revoked")
OCSP_UNUSABLE = ("unknown", "stale", "other_certificate", "forged", "unauthorized_status")


def ocsp_b64(name: str) -> str:
    return base64.b64encode((OCSP / f"{name}.der").read_bytes()).decode()


def revoked_receipt() -> tuple[bytes, dict, dict, int]:
    """A receipt of the fake PKI's payload re-signed on the fly by a throwaway Apple-shaped chain
    whose intermediate key is at hand, and that intermediate's OCSP answer saying the leaf is
    revoked: (receipt DER, config, options, now). No fixture PKI for receipts keeps its keys."""
    import datetime
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import pkcs7
    from cryptography.x509 import ocsp
    from cryptography.x509.oid import AuthorityInformationAccessOID, NameOID, ObjectIdentifier

    source = FIX / "fakepki" / "valid_rsa_sha256.der"
    payload = subprocess.run(["openssl", "smime", "-verify", "-noverify", "-binary", "-inform", "DER", "-in", str(source)],
                             capture_output=True, check=True).stdout
    start, end = datetime.datetime(2020, 1, 1), datetime.datetime(2040, 1, 1)

    def cert(subject, issuer, key, signer, ca, extensions=()):
        b = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
             .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)])).public_key(key.public_key())
             .serial_number(x509.random_serial_number()).not_valid_before(start).not_valid_after(end)
             .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
        if ca:
            b = b.add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
        for e in extensions:
            b = b.add_extension(e, critical=False)
        return b.sign(signer, hashes.SHA256())

    def marker(oid):
        return x509.UnrecognizedExtension(ObjectIdentifier(oid), b"\x05\x00")

    root_key, wwdr_key, leaf_key = (ec.generate_private_key(ec.SECP256R1()) for _ in range(3))
    root = cert("Throwaway Root", "Throwaway Root", root_key, root_key, True)
    wwdr = cert("Throwaway WWDR", "Throwaway Root", wwdr_key, root_key, True, [marker("1.2.840.113635.100.6.2.1")])
    aia = x509.AuthorityInformationAccess([x509.AccessDescription(
        AuthorityInformationAccessOID.OCSP, x509.UniformResourceIdentifier("http://127.0.0.1:39217/ocsp"))])
    leaf = cert("Throwaway Receipt Signing", "Throwaway WWDR", leaf_key, wwdr_key, False,
                [marker("1.2.840.113635.100.6.11.1"), aia])
    der = (pkcs7.PKCS7SignatureBuilder().set_data(payload).add_signer(leaf, leaf_key, hashes.SHA256())
           .add_certificate(wwdr).sign(serialization.Encoding.DER, [pkcs7.PKCS7Options.Binary,
                                                                     pkcs7.PKCS7Options.NoCapabilities]))
    now = datetime.datetime(2024, 1, 16, 10, 0)
    answer = (ocsp.OCSPResponseBuilder()
              .add_response(cert=leaf, issuer=wwdr, algorithm=hashes.SHA1(), cert_status=ocsp.OCSPCertStatus.REVOKED,
                            this_update=now - datetime.timedelta(hours=1), next_update=now + datetime.timedelta(days=7),
                            revocation_time=now - datetime.timedelta(days=1), revocation_reason=None)
              .responder_id(ocsp.OCSPResponderEncoding.HASH, wwdr).sign(wwdr_key, hashes.SHA256()))
    config = {"bundle_id": "com.example.fake",
              "trust": {"include_apple_roots": False, "roots_pem": [root.public_bytes(serialization.Encoding.PEM).decode()]}}
    options = {"ocsp_responses": [base64.b64encode(answer.public_bytes(serialization.Encoding.DER)).decode()]}
    return der, config, options, 1705399200000


def revocation_cases() -> list[Case]:
    """The OCSP fixtures through `jws`, `receipt` and `api-response`, under "off" and "required"."""
    token = OCSP / "transaction.jws"
    off = {"bundle_id": "com.example.fake", "trust": {"include_apple_roots": False, "roots_pem": [(OCSP / "root.pem").read_text()]}}
    required = dict(off, revocation="required")
    cases = [Case("jws ocsp off, no answer", "jws", "jws-result", token, config=off, now=OCSP_NOW, expect="valid"),
             Case("jws ocsp required, no answer", "jws", "jws-result", token, config=required, now=OCSP_NOW,
                  expect="revocation_unknown")]
    for name in list(OCSP_ANSWERS) + list(OCSP_UNUSABLE):
        for policy, config in (("off", off), ("required", required)):
            if name in OCSP_ANSWERS:
                expect = "revoked" if name == "revoked" else "valid"
            else:
                expect = "valid" if policy == "off" else "revocation_unknown"
            cases.append(Case(f"jws ocsp {policy}, {name}", "jws", "jws-result", token, config=config, now=OCSP_NOW,
                              options={"ocsp_responses": [ocsp_b64(name)]}, expect=expect))
    cases.append(Case("jws ocsp required, forged then good", "jws", "jws-result", token, config=required, now=OCSP_NOW,
                      options={"ocsp_responses": [ocsp_b64("forged"), ocsp_b64("good")]}, expect="valid"))
    # API answers: the signed item's leaf is checked with the same answers.
    body = json.dumps({"signedTransactionInfo": token.read_text().strip()}).encode()
    api = {"endpoint": "transaction_info", "environment": "Production", "http_status": 200}
    for name, config, answers, expect in (("off, good", off, ["good"], "valid"),
                                          ("off, revoked", off, ["revoked"], "revoked"),
                                          ("required, none", required, [], "revocation_unknown"),
                                          ("required, forged", required, ["forged"], "revocation_unknown")):
        options = dict(api, ocsp_responses=[ocsp_b64(a) for a in answers]) if answers else dict(api)
        cases.append(Case(f"api-response ocsp {name}", "api-response", "api-response-result", input_bytes=body,
                          config=config, options=options, now=OCSP_NOW, expect=expect))
    # Receipts: an Apple receipt under "required" with no answer, and a revoked throwaway chain.
    apple = FIX / "receipts" / "production_2025-04-18_com.dashedspace.analytics_sha256.der"
    cases.append(Case("receipt ocsp off, an answer for another certificate", "receipt", "receipt-result", apple,
                      config={"bundle_id": "com.dashedspace.analytics"}, now=1745000000000,
                      options={"ocsp_responses": [ocsp_b64("good")]}, expect="valid"))
    cases.append(Case("receipt ocsp required, no answer", "receipt", "receipt-result", apple,
                      config={"bundle_id": "com.dashedspace.analytics", "revocation": "required"}, now=1745000000000,
                      expect="revocation_unknown"))
    der, config, options, now = revoked_receipt()
    cases.append(Case("receipt ocsp off, throwaway chain", "receipt", "receipt-result", input_bytes=der,
                      config=config, now=now, expect="valid"))
    cases.append(Case("receipt ocsp off, revoked", "receipt", "receipt-result", input_bytes=der, config=config,
                      options=options, now=now, expect="revoked"))
    return cases


# Members whose values are names the manual must explain (not free text, ids or dates).
ENUMERATED = {"verdict", "state", "action", "kind", "period", "ownership", "expiration_reason", "rule", "style",
              "digest", "signature", "type", "environment", "status"}


def collect_names(value, out: set, key: str | None = None) -> None:
    """Member names of a result, and the values of its enumerated members. Apple's raw `payload`
    and the group names of `intro_eligible` are data, not names; so are an API answer's `unsigned`
    fields and its `app_transaction`, and a transaction receipt's `purchase_info` (Apple's names,
    as Apple wrote them)."""
    if isinstance(value, dict):
        if key in ("payload", "intro_eligible", "unsigned", "app_transaction", "purchase_info"):
            return
        if key == "checks":
            out.update(value.values())
        for k, v in value.items():
            out.add(k)
            collect_names(v, out, k)
    elif isinstance(value, list):
        for v in value:
            collect_names(v, out, key)
    elif isinstance(value, str) and key in ENUMERATED and key != "status":
        out.add(value)


# ---- running ---------------------------------------------------------------------------------

def run(case: Case, cli: str, tmp: Path, index: int):
    if case.input_path is not None and case.input_path.stat().st_size == 0 and case.command in ("receipt", "inspect"):
        return case, None     # the CLI refuses an empty receipt file itself (the Swift tests cover the library)
    argv = [cli, case.command]
    if case.input_path is not None:
        argv.append(str(case.input_path))
        stdin = None
    else:
        argv.append("-")
        stdin = case.input_bytes
    if case.command != "inspect":
        if case.config is not None:
            cfg = tmp / f"config-{index}.json"
            cfg.write_text(json.dumps(case.config))
            argv += ["--config", str(cfg)]
        if case.options is not None:
            opt = tmp / f"options-{index}.json"
            opt.write_text(json.dumps(case.options))
            argv += ["--options", str(opt)]
        argv += ["--now", str(case.now)]
    argv += case.extra
    p = subprocess.run(argv, input=stdin, capture_output=True, timeout=120)
    return case, p


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cli", default=str(ROOT / "build" / "bin" / "iapverify"))
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    validators = load_schemas()
    failures: list[str] = []

    def fail(msg: str) -> None:
        failures.append(msg)

    cases = (real_receipt_cases() + xcode_cases() + fakepki_cases() + hostile_cases() + response_cases()
             + entitlement_cases() + jws_cases() + shared_expectation_cases() + api_cases() + revocation_cases())
    manual_probes: list[Case] = []

    # The duplicate-notification case needs the UUID of the notification it replays.
    for c in cases:
        if c.name == "jwsfake duplicate":
            payload = c.input_path.read_text().split(".")[1]
            import base64
            body = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
            c.options = {"seen_notification_uuids": [body["notificationUUID"]]}

    # Inputs this script feeds the library must satisfy the input schemas.
    inputs_checked = 0
    for c in cases:
        if c.command == "inspect":
            continue
        if c.config is not None:
            for e in validators["config"].iter_errors(c.config):
                fail(f"{c.name}: its config does not match config.schema.json: {e.message}")
            inputs_checked += 1
        if c.options is not None:
            entry = OPTIONS_ENTRY.get(c.command)
            validator = options_validator(validators, entry) if entry else validators["options"]
            for e in validator.iter_errors(c.options):
                fail(f"{c.name}: its options do not match options.schema.json{'#/$defs/' + entry if entry else ''}: "
                     f"{e.message}")
            inputs_checked += 1
        if c.command == "entitlements" and c.expect == "valid":
            for e in validators["entitlement-input"].iter_errors(json.loads(c.input_bytes or c.input_path.read_bytes())):
                fail(f"{c.name}: its input does not match entitlement-input.schema.json: {e.message}")
            inputs_checked += 1

    # The repository's own example configs and options.
    examples = [(ROOT / "examples" / "demo-config.json", None), (ROOT / "examples" / "python" / "config.json", None),
                (ROOT / "examples" / "nginx" / "gateway.json", "verifier")]
    examples += [(p, None) for p in sorted((ROOT / "docs" / "examples").glob("*config*.json"))]
    examples += [(p, None) for p in sorted((ROOT / "docs" / "examples").glob("sandbox-any-app.json"))]
    for path, key in examples:
        doc = json.loads(path.read_text())
        doc = doc[key] if key else doc
        for e in validators["config"].iter_errors(doc):
            fail(f"{path.relative_to(ROOT)}: does not match config.schema.json: {e.message}")
        inputs_checked += 1
    if True:
        for path in sorted((ROOT / "docs" / "examples").glob("*options*.json")):
            for e in validators["options"].iter_errors(json.loads(path.read_text())):
                fail(f"{path.relative_to(ROOT)}: does not match options.schema.json: {e.message}")
            inputs_checked += 1
        for path in sorted((ROOT / "docs" / "examples").glob("*entitlement-input*.json")):
            for e in validators["entitlement-input"].iter_errors(json.loads(path.read_text())):
                fail(f"{path.relative_to(ROOT)}: does not match entitlement-input.schema.json: {e.message}")
            inputs_checked += 1

    # JSON blocks of the manual marked <!-- schema: NAME -->, and configs and options given to the CLI there.
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import run_examples
    doc_blocks = 0
    for md in [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md")):
        for b in run_examples.blocks(md):
            if b.action != "schema":
                continue
            if b.arg not in validators:
                fail(f"{b.where}: no schema named {b.arg!r}")
                continue
            try:
                doc = strict_json(b.code.encode())
            except ValueError as e:
                fail(f"{b.where}: not JSON: {e}")
                continue
            for e in validators[b.arg].iter_errors(doc):
                fail(f"{b.where}: does not match {b.arg}.schema.json: {e.message}")
            doc_blocks += 1
            inputs_checked += 1
            # The library must accept it too: run it through `iapverify entitlements` (options: through
            # the entry point that reads them).
            empty = json.dumps({"transactions": []}).encode()
            probe = {"config": dict(command="entitlements", schema="entitlements-result", config=doc, input_bytes=empty,
                                    expect="valid"),
                     "options": options_probe(validators, doc),
                     "entitlement-input": dict(command="entitlements", schema="entitlements-result",
                                               config={"bundle_id": "*"}, input_bytes=b.code.encode(), expect="valid"),
                     }.get(b.arg)
            if probe is not None:
                manual_probes.append(Case(f"{b.where} ({b.arg})", **probe))

    # What the library refuses, the schemas refuse (hostile configs, options and entitlement inputs).
    refused = 0
    hostile = json.loads((FIX / "hostile" / "cases.json").read_text())["cases"]
    schema_for = {"config": "config", "options": "options", "entitlements": "entitlement-input"}
    for h in hostile:
        if h["entry"] not in schema_for or h["expect"] == "valid":
            if h["entry"] == "entitlements" and h["expect"] == "valid":
                doc = strict_json((FIX / "hostile" / h["file"]).read_bytes())
                for e in validators["entitlement-input"].iter_errors(doc):
                    fail(f"hostile {h['file']}: accepted by the library, refused by the schema: {e.message}")
                inputs_checked += 1
            continue
        raw = (FIX / "hostile" / h["file"]).read_bytes()
        try:
            doc = strict_json(raw)
        except (ValueError, UnicodeDecodeError, RecursionError):
            refused += 1          # not JSON at all: refused before any schema applies
            continue
        if validators[schema_for[h["entry"]]].is_valid(doc):
            fail(f"hostile {h['file']} ({h['note']}): the library refuses it, {schema_for[h['entry']]}.schema.json accepts it")
        else:
            refused += 1

    cases += manual_probes      # run after the input checks above: the library must accept them

    # Run every case through the CLI and validate what it prints.
    seen: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    states = collections.Counter()
    round_trip: list[Case] = []
    samples: dict[str, dict] = {}
    names: set[str] = set()
    api_results: dict[str, dict] = {}
    same_entitlements: dict[str, list] = {}
    compared = 0
    validated = 0
    with tempfile.TemporaryDirectory(prefix="iapv-schemas-") as tmpdir:
        tmp = Path(tmpdir)
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            results = list(pool.map(lambda ic: run(ic[1], args.cli, tmp, ic[0]), enumerate(cases)))
        for case, p in results:
            if p is None:
                continue
            if case.expect_status is not None:
                err = p.stderr.decode(errors="replace")
                if p.returncode != 2 or case.expect_status not in err:
                    fail(f"{case.name}: expected {case.expect_status}, got exit {p.returncode}: {err.strip()}")
                continue
            if p.returncode not in (0, 1):
                fail(f"{case.name}: exit {p.returncode}: {p.stderr.decode(errors='replace').strip()}")
                continue
            try:
                result = strict_json(p.stdout)
            except ValueError as e:
                fail(f"{case.name}: the output is not JSON: {e}")
                continue
            errors = sorted(validators[case.schema].iter_errors(result), key=lambda e: list(e.absolute_path))
            for e in errors[:3]:
                fail(f"{case.name}: {case.schema}.schema.json: at /{'/'.join(map(str, e.absolute_path))}: {e.message[:300]}")
            validated += 1
            verdict = result.get("verdict", "request" if case.command == "api-request" else None)
            if not errors:
                samples.setdefault(case.schema, result)
            collect_names(result, names)
            seen[case.schema][verdict] += 1
            for ent in result.get("entitlements", []):
                states[ent["state"]] += 1
            if (p.returncode == 0) != (verdict in ("valid", "unverified", "request")):
                fail(f"{case.name}: exit {p.returncode} with verdict {verdict}")
            if case.expect is not None and verdict != case.expect:
                fail(f"{case.name}: expected verdict {case.expect}, got {verdict} ({result.get('reason')})")
            if args.verbose:
                print(f"ok  {case.schema:22} {verdict:24} {case.name}")
            # Normalised transactions and renewal infos of valid results are valid entitlement input.
            if case.schema == "api-response-result":
                api_results[case.name] = result
            if verdict == "valid" and case.schema in ("response-result", "jws-result", "api-response-result"):
                txns, renewals = [], []
                if case.schema == "api-response-result":
                    txns, renewals = result["transactions"], result["renewal_info"]
                elif case.schema == "response-result":
                    txns = result["receipt"]["in_app"]
                    renewals = result["receipt"]["pending_renewal_info"]
                else:
                    n = result["notification"] or {}
                    txns = [t for t in (result["transaction"], n.get("transaction")) if t]
                    renewals = [r for r in (result["renewal_info"], n.get("renewal_info")) if r]
                doc = {"transactions": txns, "renewal_info": renewals}
                for e in validators["entitlement-input"].iter_errors(doc):
                    fail(f"{case.name}: its normalised transactions are not valid entitlement input: {e.message}")
                round_trip.append(Case(f"round trip of {case.name}", "entitlements", "entitlements-result",
                                       input_bytes=json.dumps(doc).encode(), config=case.config, now=case.now,
                                       expect="valid"))
                if case.schema == "api-response-result" and not case.options.get("renewal_info"):
                    same_entitlements[round_trip[-1].name] = result["entitlements"]
        for name, (action, wait) in API_ACTIONS.items():
            r = api_results.get("api-response " + name)
            if r is None or (r["action"], r["retry_after_ms"]) != (action, wait):
                fail(f"api-response {name}: expected {action} / {wait}, got "
                     f"{r and (r['action'], r['retry_after_ms'])}")
        # Paging: the pages' transactions together grant what the one-page answer grants.
        first, last = api_results.get("api-response history, first page"), api_results.get("api-response history, last page")
        if first and last:
            if first["action"] != "next_page" or first["next_page"] != {"revision": "rev-1"} or last["action"] != "accept":
                fail("api-response paging: the first page must say next_page with its revision, the last accept")
            whole = next(c for c in cases if c.name == "api-response history, one page")
            doc = {"transactions": first["transactions"] + last["transactions"],
                   "renewal_info": first["renewal_info"] + last["renewal_info"]}
            round_trip.append(Case("api-response pages accumulated", "entitlements", "entitlements-result",
                                   input_bytes=json.dumps(doc).encode(), config=whole.config, now=whole.now,
                                   expect="valid"))
            same_entitlements[round_trip[-1].name] = api_results["api-response history, one page"]["entitlements"]
        else:
            fail("api-response paging cases did not run")
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            again = list(pool.map(lambda ic: run(ic[1], args.cli, tmp, 100000 + ic[0]), enumerate(round_trip)))
        for case, p in again:
            if p.returncode != 0:
                fail(f"{case.name}: exit {p.returncode}: {p.stderr.decode(errors='replace').strip() or p.stdout[:200]}")
                continue
            result = strict_json(p.stdout)
            for e in list(validators["entitlements-result"].iter_errors(result))[:3]:
                fail(f"{case.name}: entitlements-result.schema.json: {e.message[:300]}")
            if case.name in same_entitlements:
                compared += 1
                if result["entitlements"] != same_entitlements[case.name]:
                    fail(f"{case.name}: compute_entitlements grants other entitlements than the API answer")
            validated += 1
            seen["entitlements-result"][result["verdict"]] += 1

    # The schemas are strict: generic damage to a real result must be refused.
    for schema, sample in samples.items():
        broken = {
            "an unknown top-level key": dict(sample, unexpected_key=1),
            "a verdict no entry point has": dict(sample, verdict="bogus"),
            "no reason": {k: v for k, v in sample.items() if k != "reason"} if "reason" in sample else dict(sample, reason=7),
            "entitlements as an object": dict(sample, entitlements={}),
        }
        for what, doc in broken.items():
            if validators[schema].is_valid(doc):
                fail(f"{schema}.schema.json accepts a result with {what}: it is not strict enough")

    # Every verdict a result schema names must have been produced, and nothing else.
    for schema in ("receipt-result", "response-result", "entitlements-result", "jws-result", "inspect-result",
                   "api-response-result"):
        listed = set(validators[schema].schema["properties"]["verdict"]["enum"])
        missing = listed - set(seen[schema])
        if missing:
            fail(f"{schema}.schema.json lists verdicts no fixture produced: {sorted(missing)}")
    entitlement_states = set(validators["common"].schema["$defs"]["entitlement"]["properties"]["state"]["enum"])
    if entitlement_states - set(states):
        fail(f"entitlement states no fixture produced: {sorted(entitlement_states - set(states))}")

    # Every member name and every enumerated value the results carry is documented in the manual.
    manual = "\n".join(p.read_text() for p in [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md")))
    def schema_keys(node, out):
        if isinstance(node, dict):
            out.update(node.get("properties", {}).keys())
            for v in node.values():
                schema_keys(v, out)
        elif isinstance(node, list):
            for v in node:
                schema_keys(v, out)
    for schema in validators.values():
        schema_keys(schema.schema, names)
    undocumented = sorted(n for n in names if f"`{n}`" not in manual)
    if undocumented:
        fail(f"names in results that the manual never mentions: {undocumented}")

    summary = ", ".join(f"{s} {sum(c.values())}" for s, c in sorted(seen.items()))
    print(f"check_schemas: {validated} results validated ({summary}); {inputs_checked} inputs validated; "
          f"(of them {doc_blocks} JSON blocks of the manual); {refused} inputs the library refuses, refused by the schemas too; "
          f"{compared} API answers granted the same through compute_entitlements")
    if compared < 10:
        fail(f"only {compared} API answers were compared with compute_entitlements")
    if failures:
        for f in failures:
            print("FAIL " + f, file=sys.stderr)
        print(f"check_schemas: {len(failures)} failures", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
