#!/usr/bin/env python3
"""Writes Tests/shared/expectations.json: the cases every binding (Swift, Python, Go, Lua) must
answer identically. Inputs are real fixtures; the expected verdicts and entitlement states were
produced once with build/bin/iapverify, reviewed by hand, and are now the contract that every
binding is tested against. Rerun only when a case is added: `scripts/make-expectations.py`.
"""
import json
import os
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FX = "Tests/IAPVerifyTests/Fixtures"
DAY = 86_400_000
PROD_SANDBOX = ["Production", "Sandbox"]

CASES = [
    # name, kind, input, config, options, now_ms
    ("dashedspace yearly, active", "receipt", "receipts/production_2025-04-18_com.dashedspace.analytics_sha256.der",
     {"bundle_id": "com.dashedspace.analytics"}, {}, 1745000000000),
    ("dashedspace yearly, expired in 2030", "receipt", "receipts/production_2025-04-18_com.dashedspace.analytics_sha256.der",
     {"bundle_id": "com.dashedspace.analytics"}, {}, 1893456000000),
    ("letsfish consumable to deliver", "receipt", "receipts/production_2018-07-17_com.tensquaregames.letsfish2.der",
     {"bundle_id": "com.tensquaregames.letsfish2",
      "products": {"com.tensquaregames.letsfish2.goldpack_2.T5": {"type": "consumable"}}}, {}, 1893456000000),
    ("revenuecat sandbox receipt", "receipt", "receipts/sandbox_2020-07-22_com.revenuecat.sampleapp.der",
     {"bundle_id": "com.revenuecat.sampleapp", "environments": PROD_SANDBOX}, {}, 1595440000000),
    ("sandbox receipt under a production-only config", "receipt", "receipts/sandbox_2020-07-22_com.revenuecat.sampleapp.der",
     {"bundle_id": "com.revenuecat.sampleapp"}, {}, 1595440000000),
    ("foreign bundle", "receipt", "receipts/production_2016-09-27_com.devsisters.gb.der",
     {"bundle_id": "com.example.other"}, {}, 1893456000000),
    ("fake Apple-shaped chain against the real roots", "receipt", "fakepki/valid_rsa_sha256.der",
     {"bundle_id": "com.example.fake"}, {}, 1893456000000),
    ("tampered fake receipt under the real roots", "receipt", "fakepki/tampered_payload.der", {"bundle_id": "*"}, {}, 1893456000000),
    ("xcode receipt rejected by default", "receipt", "xcode/xcode_2023-10-19_backyardbirds_with_transaction.der",
     {"bundle_id": "com.example.naturelab.backyardbirds.example"}, {}, 1893456000000),
    ("family shared production response", "response", "verifyreceipt/alexalok_Valid_Production_Family_Shared.json",
     {"bundle_id": "com.myapp.app"}, {"environment": "Production"}, 1636900000000),
    ("sandbox consumables and a subscription", "response",
     "verifyreceipt/alexalok_Valid_Sandbox_Consumable_And_Active_Subscription_Excluding_Old_Transactions.json",
     {"bundle_id": "com.test.app", "environments": PROD_SANDBOX,
      "products": {"com.test.app.mercury": {"type": "consumable"},
                   "com.test.app.mars": {"type": "auto_renewable", "group": "space", "entitlements": ["premium"]}}},
     {"environment": "Sandbox"}, 1608230700000),
    ("ios6 style 21006", "response", "verifyreceipt/venice_ios6style_status21006_expired.json",
     {"bundle_id": "com.foo.bar"}, {}, 1600000000000),
    ("21007 from production", "response", "verifyreceipt/alexalok_Invalid_Receipt_Is_From_Test_Environment.json",
     {"bundle_id": "*", "environments": PROD_SANDBOX}, {"environment": "Production"}, 1600000000000),
    ("21002 on the third attempt", "response", "verifyreceipt/alexalok_Invalid_Malformed_Receipt_Data.json",
     {"bundle_id": "*"}, {"attempt": 3}, 1600000000000),
    ("revenuecat response", "response", "verifyreceipt/revenuecat_sandbox_status0_2020-07-22_paired.json",
     {"bundle_id": "com.revenuecat.sampleapp", "environments": PROD_SANDBOX}, {"environment": "Sandbox"}, 1595440000000),
]


def run(kind, path, config, options, now):
    with tempfile.TemporaryDirectory() as tmp:
        cfg = os.path.join(tmp, "config.json")
        with open(cfg, "w") as f:
            json.dump(config, f)
        cmd = [os.path.join(ROOT, "build/bin/iapverify"), kind, os.path.join(ROOT, FX, path), "--config", cfg, "--now", str(now)]
        if options:
            opt = os.path.join(tmp, "options.json")
            with open(opt, "w") as f:
                json.dump(options, f)
            cmd += ["--options", opt]
        out = subprocess.run(cmd, capture_output=True, text=True).stdout
        return json.loads(out)


def main():
    cases = []
    for name, kind, path, config, options, now in CASES:
        r = run(kind, path, config, options, now)
        case = {"name": name, "kind": kind, "input": path, "config": config, "options": options, "now_ms": now,
                "verdict": r["verdict"],
                "entitlements": [{"id": e["id"], "active": e["active"], "state": e["state"], "transaction_id": e["transaction_id"]}
                                 for e in r["entitlements"]],
                "to_deliver": [d["transaction_id"] for d in r["delivery"]["to_deliver"]]}
        if kind == "response":
            case["status"] = r["status"]
            case["action"] = r["action"]
            case["retry_after_ms"] = r["retry_after_ms"]
        cases.append(case)
    doc = {"_about": __doc__.strip().splitlines()[0], "fixtures": FX, "cases": cases}
    with open(os.path.join(ROOT, "Tests/shared/expectations.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    for c in cases:
        print(f"{c['name']:<50} {c['verdict']:<22} {c.get('action', ''):<14} {[(e['id'][-20:], e['state']) for e in c['entitlements']]} {c['to_deliver']}")


if __name__ == "__main__":
    main()
