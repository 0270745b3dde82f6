#!/usr/bin/env python3
"""What the Python binding adds to a call, in interleaved rounds of one run, as CPU time:

- a real Apple-signed transaction (JWS): `Verifier.verify_jws` plus reading what a host reads
  (`valid`, the transaction's id and product), against the same call from C (`bench jws-call`:
  one verifier, the result freed unread);
- the one-transaction /verifyReceipt body of Benchmarks/json_bench.py: `interpret_response` plus
  reading `action` and the active entitlements, against CPython's `json.loads` plus the walk a host
  would write (json_bench.peer), and against the same call from C (`bench json`).

    python Benchmarks/binding_overhead.py OUT [BENCH]   (the installed iapverify package; BENCH is
                                                        build/bench/bench, which Benchmarks/run.sh builds)

Goals (issue 37): the binding costs at most 1.3x the call from C, and the /verifyReceipt body at
most 0.5x json.loads plus the walk. Figures are CPU microseconds per call, each ratio the median
of per-round ratios. A measurement, not a test.
"""
import base64
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import iapverify

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "Benchmarks"))
import json_bench  # noqa: E402  (the body and the peer it is measured against)

FIXTURES = ROOT / "Tests" / "IAPVerifyTests" / "Fixtures"
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "0.4"))
BODY_NOW = 1_700_000_000_000          # the clock bench json uses


def per_call_us(call) -> float:
    """CPU time per call over about SECONDS."""
    n, start, end = 0, time.process_time(), time.process_time() + SECONDS
    while time.process_time() < end:
        for _ in range(50):
            call()
        n += 50
    return (time.process_time() - start) / n * 1e6


def from_c(bench: str, *args: str) -> float:
    out = subprocess.run([bench, *args], check=True, capture_output=True, text=True).stdout
    return float(out.split()[-1])


def jws_case(out: Path):
    path = FIXTURES / "jws" / "transaction_autorenew_sandbox_2022-11.jws"
    jws = path.read_bytes().strip()
    payload = json.loads(base64.urlsafe_b64decode(jws.split(b".")[1] + b"=="))
    config = {"bundle_id": payload["bundleId"], "environments": ["Production", "Sandbox"]}
    (out / "binding-jws-config.json").write_text(json.dumps(config))
    verifier = iapverify.Verifier(config)
    now = payload["signedDate"] + 1000
    first = verifier.verify_jws(jws, now_ms=now)
    assert first.valid and first.transaction is not None, first.reason

    def call():
        return verifier.verify_jws(jws, now_ms=now)

    def call_and_read():
        r = verifier.verify_jws(jws, now_ms=now)
        if not r.valid or r.transaction is None:
            raise ValueError(r.reason)
        return r.transaction.transaction_id, r.transaction.product_id
    c_args = ("jws-call", str(SECONDS), str(path), str(out / "binding-jws-config.json"), str(now))
    return call, call_and_read, c_args


def body_case(out: Path):
    body = json_bench.body(1)
    path = out / "binding-body.json"
    path.write_bytes(body)
    verifier = iapverify.Verifier({"bundle_id": "com.example.bench", "environments": ["Production", "Sandbox"]})
    first = verifier.interpret_response(body, now_ms=BODY_NOW)
    assert first.action == "accept", first.reason

    def call():
        return verifier.interpret_response(body, now_ms=BODY_NOW)

    def call_and_read():
        r = verifier.interpret_response(body, now_ms=BODY_NOW)
        if r.action != "accept":
            raise ValueError(r.reason)
        return r.active_entitlements

    def peer():
        return json_bench.peer(body)
    return call, call_and_read, peer, ("json", str(SECONDS), str(path))


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "bench"
    bench = sys.argv[2] if len(sys.argv) > 2 else str(ROOT / "build" / "bench" / "bench")
    if not os.access(bench, os.X_OK):
        sys.exit(f"binding_overhead: {bench} is not built; run Benchmarks/run.sh (make bench) first")
    out.mkdir(parents=True, exist_ok=True)
    jws_call, jws_read, jws_c = jws_case(out)
    body_call, body_read, body_peer, body_c = body_case(out)
    rows = []
    for _ in range(ROUNDS):
        rows.append((from_c(bench, *jws_c), per_call_us(jws_call), per_call_us(jws_read),
                     from_c(bench, *body_c), per_call_us(body_call), per_call_us(body_read), per_call_us(body_peer)))
    med = lambda i: statistics.median(r[i] for r in rows)                 # noqa: E731
    ratio = lambda a, b: statistics.median(r[a] / r[b] for r in rows)     # noqa: E731
    goal = lambda value, limit: "met" if value <= limit else "missed"     # noqa: E731
    jws_ratio, body_ratio = ratio(1, 0), ratio(4, 6)
    lines = [
        f"binding overhead (Python, the installed package; {ROUNDS} interleaved rounds, CPU us per call; results are read lazily)",
        f"  verify_jws, a real transaction: from C {med(0):.0f} us; through Python {med(1):.0f} us"
        f" -> {jws_ratio:.2f}x the call from C (goal <= 1.3x: {goal(jws_ratio, 1.3)});"
        f" reading valid and the transaction's id and product too {med(2):.0f} us -> {ratio(2, 0):.2f}x",
        f"  /verifyReceipt, one transaction (json_bench's body): json.loads + walk {med(6):.0f} us;"
        f" from C {med(3):.0f} us -> {ratio(3, 6):.2f}x; through Python {med(4):.0f} us -> {body_ratio:.2f}x"
        f" (goal <= 0.5x: {goal(body_ratio, 0.5)}); reading action and the active entitlements too {med(5):.0f} us"
        f" -> {ratio(5, 6):.2f}x",
    ]
    text = "\n".join(lines)
    print(text)
    (out / "binding.out").write_text(text + "\n")


if __name__ == "__main__":
    main()
