#!/usr/bin/env python3
"""/verifyReceipt interpretation: iapverify (through the C ABI) against CPython's json.loads
plus a dict walk doing the same job, in interleaved rounds of one run.

Both sides parse the body, check status, bundle id and environment, walk the union of
receipt.in_app and latest_receipt_info, and work out per-product latest expiry (the peer's
"entitlements"). iapverify also builds its full result JSON. Figures are CPU microseconds per
call; the ratio is the median of per-round ratios.
"""
import base64
import json
import os
import statistics
import subprocess
import sys
import time

OUT = sys.argv[1] if len(sys.argv) > 1 else "build/bench"
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "0.4"))
T0 = 1_600_000_000_000


def body(n):
    txns = []
    for i in range(n):
        p = T0 + i * 2_592_000_000
        txns.append({
            "quantity": "1", "product_id": f"com.example.sub{i % 3}", "transaction_id": str(1000000000000000 + i),
            "original_transaction_id": str(1000000000000000 + i % 3), "purchase_date": "2020-09-13 12:26:40 Etc/GMT",
            "purchase_date_ms": str(p), "purchase_date_pst": "2020-09-13 05:26:40 America/Los_Angeles",
            "original_purchase_date_ms": str(T0), "expires_date_ms": str(p + 2_592_000_000),
            "web_order_line_item_id": str(2000000000000000 + i), "is_trial_period": "false",
            "is_in_intro_offer_period": "false", "in_app_ownership_type": "PURCHASED",
        })
    receipt = {"receipt_type": "Production", "bundle_id": "com.example.bench", "application_version": "42",
               "receipt_creation_date_ms": str(T0), "request_date_ms": str(T0), "in_app": txns}
    pending = [{"auto_renew_product_id": f"com.example.sub{k}", "original_transaction_id": str(1000000000000000 + k),
                "product_id": f"com.example.sub{k}", "auto_renew_status": "1"} for k in range(min(n, 3))]
    latest_receipt = base64.b64encode(os.urandom(3000 + 282 * n)).decode()
    return json.dumps({"status": 0, "environment": "Production", "receipt": receipt, "latest_receipt_info": txns,
                       "latest_receipt": latest_receipt, "pending_renewal_info": pending}).encode()


def peer(raw):
    """The cheapest honest peer: json.loads and a dict walk."""
    d = json.loads(raw)
    if d.get("status") not in (0, 21006):
        return None
    receipt = d["receipt"]
    if receipt.get("bundle_id") != "com.example.bench" or d.get("environment") not in ("Production", "Sandbox"):
        return None
    by_id = {t["transaction_id"]: t for t in receipt.get("in_app", [])}
    by_id.update({t["transaction_id"]: t for t in d.get("latest_receipt_info", [])})
    latest = {}
    for t in by_id.values():
        exp = int(t.get("expires_date_ms") or 0)
        if t.get("cancellation_date_ms"):
            continue
        if exp > latest.get(t["product_id"], 0):
            latest[t["product_id"]] = exp
    now = 1_700_000_000_000
    return {p: e > now for p, e in latest.items()}


def time_peer(raw):
    start = time.process_time()
    n = 0
    while time.process_time() - start < SECONDS:
        peer(raw)
        n += 1
    return (time.process_time() - start) / n * 1e6


def main():
    os.makedirs(OUT, exist_ok=True)
    sizes = [1, 100, 1000]
    files = []
    for n in sizes:
        path = os.path.join(OUT, f"response_n{n}.json")
        with open(path, "wb") as f:
            f.write(body(n))
        files.append(path)
    ours = {f: [] for f in files}
    theirs = {f: [] for f in files}
    for _ in range(ROUNDS):
        out = subprocess.run([os.path.join(OUT, "bench"), "json", str(SECONDS)] + files, check=True,
                             capture_output=True, text=True).stdout
        for line in out.splitlines():
            f, us = line.rsplit(" ", 1)
            ours[f].append(float(us))
        for f in files:
            with open(f, "rb") as fh:
                theirs[f].append(time_peer(fh.read()))
    print(f"\n/verifyReceipt interpretation, {ROUNDS} interleaved rounds (CPU µs per call)")
    print(f"{'transactions':>12} {'body KB':>8} {'iapverify µs':>13} {'json.loads+walk µs':>19} {'iapverify / peer':>17}")
    for n, f in zip(sizes, files):
        ratios = [a / b for a, b in zip(ours[f], theirs[f])]
        print(f"{n:>12} {os.path.getsize(f) / 1024:>8.0f} {statistics.median(ours[f]):>13.1f} "
              f"{statistics.median(theirs[f]):>19.1f} {statistics.median(ratios):>16.2f}x")
    print("(a ratio above 1 means iapverify is slower than the Python peer)")


if __name__ == "__main__":
    main()
