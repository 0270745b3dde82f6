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
Deterministic: no clock, no randomness, no network.
"""
from __future__ import annotations

import argparse
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
    return cases


def response_cases() -> list[Case]:
    cases = []
    for path in sorted((FIX / "verifyreceipt").glob("*.json")):
        for endpoint in ("production", "sandbox"):
            cases.append(Case(f"response {path.name} from {endpoint}", "response", "response-result", path,
                              config={"bundle_id": "*", "environments": BOTH}, now=1600000000000,
                              extra=["--endpoint", endpoint]))
        cases.append(Case(f"response {path.name} (Production only)", "response", "response-result", path,
                          config={"bundle_id": "*"}, now=1600000000000))
        cases.append(Case(f"response {path.name} (another app)", "response", "response-result", path,
                          config={"bundle_id": "com.example.other", "environments": BOTH}, now=1600000000000))
    family = FIX / "verifyreceipt" / "alexalok_Valid_Production_Family_Shared.json"
    cases.append(Case("response family shared", "response", "response-result", family,
                      config={"bundle_id": "com.myapp.app"}, now=1636900000000, expect="valid"))
    consumable = FIX / "verifyreceipt" / "alexalok_Valid_Sandbox_Consumable_And_Active_Subscription_Excluding_Old_Transactions.json"
    cfg = json.loads((ROOT / "examples" / "python" / "config.json").read_text())
    cases.append(Case("response consumable and subscription", "response", "response-result", consumable, config=cfg,
                      now=1608230700000, extra=["--endpoint", "sandbox"], expect="valid",
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
        for endpoint in ("production", "sandbox"):
            cases.append(Case(f"response {json.dumps(body)} attempt {attempt} from {endpoint}", "response",
                              "response-result", input_bytes=json.dumps(body).encode(),
                              config={"bundle_id": "*", "environments": BOTH}, now=1600000000000,
                              extra=["--endpoint", endpoint, "--attempt", str(attempt)], expect=verdict))
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
        cases.append(Case(f"jws {path.name}", "jws", "jws-result", path, config={"bundle_id": "*", "environments": BOTH},
                          expect="valid"))
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


# Members whose values are names the manual must explain (not free text, ids or dates).
ENUMERATED = {"verdict", "state", "action", "kind", "period", "ownership", "expiration_reason", "rule", "style",
              "digest", "signature", "type", "environment", "status"}


def collect_names(value, out: set, key: str | None = None) -> None:
    """Member names of a result, and the values of its enumerated members. Apple's raw `payload`
    and the group names of `intro_eligible` are data, not names."""
    if isinstance(value, dict):
        if key in ("payload", "intro_eligible"):
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
             + entitlement_cases() + jws_cases() + shared_expectation_cases())
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
            for e in validators["options"].iter_errors(c.options):
                fail(f"{c.name}: its options do not match options.schema.json: {e.message}")
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
            # The library must accept it too: run it through `iapverify entitlements`.
            empty = json.dumps({"transactions": []}).encode()
            probe = {"config": dict(config=doc, input_bytes=empty),
                     "options": dict(config={"bundle_id": "*"}, options=doc, input_bytes=empty),
                     "entitlement-input": dict(config={"bundle_id": "*"}, input_bytes=b.code.encode())}.get(b.arg)
            if probe is not None:
                manual_probes.append(Case(f"{b.where} ({b.arg})", "entitlements", "entitlements-result",
                                          expect="valid", **probe))

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
            verdict = result.get("verdict")
            if not errors:
                samples.setdefault(case.schema, result)
            collect_names(result, names)
            seen[case.schema][verdict] += 1
            for ent in result.get("entitlements", []):
                states[ent["state"]] += 1
            if (p.returncode == 0) != (verdict in ("valid", "unverified")):
                fail(f"{case.name}: exit {p.returncode} with verdict {verdict}")
            if case.expect is not None and verdict != case.expect:
                fail(f"{case.name}: expected verdict {case.expect}, got {verdict} ({result.get('reason')})")
            if args.verbose:
                print(f"ok  {case.schema:22} {verdict:24} {case.name}")
            # Normalised transactions and renewal infos of valid results are valid entitlement input.
            if verdict == "valid" and case.schema in ("response-result", "jws-result"):
                txns, renewals = [], []
                if case.schema == "response-result":
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
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            again = list(pool.map(lambda ic: run(ic[1], args.cli, tmp, 100000 + ic[0]), enumerate(round_trip)))
        for case, p in again:
            if p.returncode != 0:
                fail(f"{case.name}: exit {p.returncode}: {p.stderr.decode(errors='replace').strip() or p.stdout[:200]}")
                continue
            result = strict_json(p.stdout)
            for e in list(validators["entitlements-result"].iter_errors(result))[:3]:
                fail(f"{case.name}: entitlements-result.schema.json: {e.message[:300]}")
            validated += 1
            seen["entitlements-result"][result["verdict"]] += 1

    # The schemas are strict: generic damage to a real result must be refused.
    for schema, sample in samples.items():
        broken = {
            "an unknown top-level key": dict(sample, unexpected_key=1),
            "a verdict no entry point has": dict(sample, verdict="bogus"),
            "no reason": {k: v for k, v in sample.items() if k != "reason"},
            "entitlements as an object": dict(sample, entitlements={}),
        }
        for what, doc in broken.items():
            if validators[schema].is_valid(doc):
                fail(f"{schema}.schema.json accepts a result with {what}: it is not strict enough")

    # Every verdict a result schema names must have been produced, and nothing else.
    for schema in ("receipt-result", "response-result", "entitlements-result", "jws-result", "inspect-result"):
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
          f"(of them {doc_blocks} JSON blocks of the manual); {refused} inputs the library refuses, refused by the schemas too")
    if failures:
        for f in failures:
            print("FAIL " + f, file=sys.stderr)
        print(f"check_schemas: {len(failures)} failures", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
