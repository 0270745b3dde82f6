#!/usr/bin/env python3
"""What the Python binding adds to a call: a real Apple-signed transaction (JWS) through
`Verifier.verify_jws`, against the same call without building the Python result (the C call through
ctypes and the result text), in interleaved rounds of one run. Also a one-transaction
/verifyReceipt body through `interpret_response` against CPython's `json.loads` plus the walk a
host would write (status, bundle, environment, the purchase's fields).

    python Benchmarks/binding_overhead.py [OUT]     (the installed iapverify package; make bench runs it)

Goals (issue 37): the binding costs at most 1.3x the call from C, and the /verifyReceipt body at
most 0.5x json.loads plus the walk. Figures are CPU microseconds per call, the ratio the median of
per-round ratios. A measurement, not a test.
"""
import base64
import json
import os
import statistics
import sys
import time
from pathlib import Path

import iapverify
from iapverify import results

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "Tests" / "IAPVerifyTests" / "Fixtures"
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "0.4"))


def per_call_us(call) -> float:
    """CPU time per call over about SECONDS."""
    n, start, end = 0, time.process_time(), time.process_time() + SECONDS
    while time.process_time() < end:
        for _ in range(50):
            call()
        n += 50
    return (time.process_time() - start) / n * 1e6


def jws_case():
    jws = (FIXTURES / "jws" / "transaction_autorenew_sandbox_2022-11.jws").read_bytes().strip()
    payload = json.loads(base64.urlsafe_b64decode(jws.split(b".")[1] + b"=="))
    verifier = iapverify.Verifier({"bundle_id": payload["bundleId"], "environments": ["Production", "Sandbox"]})
    now = payload["signedDate"] + 1000
    first = verifier.verify_jws(jws, now_ms=now)
    assert first.valid, first.reason
    text = first.json

    def binding():
        verifier.verify_jws(jws, now_ms=now)

    def parse_only():
        results.parse(text, True, False, True)
    return binding, parse_only


def body_case():
    body = (FIXTURES / "verifyreceipt" /
            "alexalok_Valid_Sandbox_Consumable_And_Active_Subscription_Excluding_Old_Transactions.json").read_bytes()
    doc = json.loads(body)
    doc["receipt"]["in_app"] = doc["receipt"]["in_app"][:1]
    doc.pop("latest_receipt_info", None)
    doc.pop("pending_renewal_info", None)
    body = json.dumps(doc).encode()
    verifier = iapverify.Verifier({"bundle_id": doc["receipt"]["bundle_id"], "environments": ["Production", "Sandbox"]})
    now = int(doc["receipt"]["request_date_ms"])
    first = verifier.interpret_response(body, environment="Sandbox", now_ms=now)
    assert first.action == "accept", first.reason

    def binding():
        verifier.interpret_response(body, environment="Sandbox", now_ms=now)

    def json_walk():
        d = json.loads(body)
        if d.get("status") != 0 or d.get("environment") != "Sandbox":
            raise ValueError("not accepted")
        receipt = d["receipt"]
        if receipt.get("bundle_id") != "com.test.app":
            raise ValueError("bundle")
        return [(t["product_id"], t["transaction_id"], int(t["purchase_date_ms"]), int(t.get("quantity", "1")))
                for t in receipt.get("in_app", [])]
    return binding, json_walk


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else None
    jws_binding, jws_parse = jws_case()
    body_binding, body_walk = body_case()
    jws_ratios, body_ratios, rows = [], [], []
    for _ in range(ROUNDS):
        full, parse = per_call_us(jws_binding), per_call_us(jws_parse)
        jws_ratios.append(full / max(full - parse, 1e-9))
        b, w = per_call_us(body_binding), per_call_us(body_walk)
        body_ratios.append(b / w)
        rows.append((full, parse, b, w))
    med = lambda i: statistics.median(r[i] for r in rows)   # noqa: E731
    jws_ratio, body_ratio = statistics.median(jws_ratios), statistics.median(body_ratios)
    lines = [
        "binding overhead (Python, the installed package)",
        f"  verify_jws, a real transaction: {med(0):.0f} us through Python, of which {med(1):.0f} us build the result"
        f" -> {jws_ratio:.2f}x the call from C (goal <= 1.3x: {'met' if jws_ratio <= 1.3 else 'missed'})",
        f"  /verifyReceipt, one transaction: interpret_response {med(2):.0f} us, json.loads + walk {med(3):.0f} us"
        f" -> {body_ratio:.2f}x (goal <= 0.5x: {'met' if body_ratio <= 0.5 else 'missed'})",
    ]
    text = "\n".join(lines)
    print(text)
    if out:
        out.mkdir(parents=True, exist_ok=True)
        (out / "binding.out").write_text(text + "\n")


if __name__ == "__main__":
    main()
