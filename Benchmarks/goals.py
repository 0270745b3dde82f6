#!/usr/bin/env python3
"""The cost-per-purchase goals, read back from the outputs Benchmarks/run.sh saved in one run.

usage: goals.py DIR   (DIR holds receipts.out, forged.out, json.out and floor.out)

Each figure is a ratio measured within one interleaved benchmark, so machine noise cancels:
  - 187 purchases vs PKCS7_verify: floor.out, PKCS7 time / library time at 187 purchases (speed).
  - marginal cost of a purchase: floor.out's slope from 22 to 187 purchases, library / floor.
  - bounds (no goal): the same with floor.out's second table, the floor that also writes the
    receipt's in_app array byte for byte as the library does: what the result contract costs any
    implementation, engineered in C.
  - 9 purchases vs a C loop: floor.out's PKCS7 column (base64, d2i_PKCS7, PKCS7_verify) / library
    time. The loop there does not decode the payload or walk entitlements, so the ratio it gives
    is an under-estimate of the goal's loop (which does).
  - /verifyReceipt bodies: json.out, iapverify / (json.loads + dict walk), median of rounds.
  - heap per call: receipts.out's allocated bytes for the 187-purchase receipt over its input
    (DER) plus its result JSON (forged.out's "genuine" line).
What the library costs to carry (absolute figures, from libsize.out and loadtime.out when present):
  - size: the stripped libiapverify.so.1, <= 5 MiB.
  - resident memory a fresh process gains by dlopen + iapv_verifier_new (VmRSS), <= 4 MiB; the row
    also shows libcrypto's part and the library's own share (the gain less its shared libraries).
  - load time: dlopen + iapv_verifier_new, median of fresh processes; no goal is set for it.
"""
import os
import re
import sys

d = sys.argv[1] if len(sys.argv) > 1 else "build/bench"


def read(name):
    with open(os.path.join(d, name)) as f:
        return f.read()


rows = []
floor, receipts, forged, js = read("floor.out"), read("receipts.out"), read("forged.out"), read("json.out")

table = {}
for line in floor.splitlines():
    parts = line.split()
    if len(parts) == 9 and parts[0].isdigit():
        table[int(parts[0])] = {"lib_us": float(parts[6]), "floor_us": float(parts[7]), "pkcs7_us": float(parts[8])}
r187 = table[187]["pkcs7_us"] / table[187]["lib_us"]
rows.append(("real 187-purchase receipt vs the PKCS7_verify reference (speed)", f"{r187:.2f}x", ">= 3x", r187 >= 3))
# What the result contract allows at best: the C floor that also writes the in_app array, byte for
# byte as the library does (floor.out's second table). No goal: it bounds the rows above.
bound = {}
for line in floor.splitlines():
    parts = line.split()
    if len(parts) == 5 and parts[0].isdigit() and parts[3].endswith("x"):
        bound[int(parts[0])] = float(parts[3][:-1])
if 187 in bound:
    rows.append(("  bound: the C floor + the in_app array it must write, 187 purchases vs PKCS7_verify", f"{bound[187]:.2f}x", "none", None))
m = re.search(r"library ([\d.]+) us, floor ([\d.]+) us, library/floor ([\d.]+)x", floor)
marginal = float(m.group(3))
rows.append((f"marginal cost of one purchase vs the C floor ({m.group(1)} us vs {m.group(2)} us)", f"{marginal:.1f}x",
             "<= 2x", marginal <= 2))
m = re.search(r"floor\+writer ([\d.]+) us, library/\(floor\+writer\) ([\d.]+)x", floor)
if m:
    rows.append((f"  bound: the floor with its in_app member ({m.group(1)} us a purchase), library / that", f"{float(m.group(2)):.1f}x",
                 "none", None))

r9 = table[9]["pkcs7_us"] / table[9]["lib_us"]
rows.append(("real 9-purchase receipt vs base64 + d2i_PKCS7 + PKCS7_verify (speed)", f"{r9:.1f}x faster", ">= 10x", r9 >= 10))
if 9 in bound:
    rows.append(("  bound: the C floor + its in_app array, 9 purchases vs the same loop", f"{bound[9]:.1f}x", "none", None))

ratios = {}
for line in js.splitlines():
    parts = line.split()
    if len(parts) == 5 and parts[0].isdigit() and parts[4].endswith("x"):
        ratios[int(parts[0])] = float(parts[4][:-1])
worst = max(ratios.values())
rows.append(("/verifyReceipt bodies of 1 / 100 / 1000 transactions vs json.loads + dict walk (time)",
             " / ".join(f"{ratios[n]:.2f}x" for n in sorted(ratios)), "<= 0.5x", worst <= 0.5))

m = re.search(r"187 in-app \((\d+) KB\).*?(\d+) allocs\s+(\d+) KB", receipts)
input_kb, allocs, heap_kb = int(m.group(1)), int(m.group(2)), int(m.group(3))
result_bytes = int(re.search(r"genuine\s+\d+ us/call, result\s+(\d+) bytes", forged).group(1))
heap_ratio = heap_kb * 1024 / (input_kb * 1024 + result_bytes)
rows.append((f"heap per call, 187-purchase receipt ({allocs} allocations, {heap_kb} KB) vs input + result JSON",
             f"{heap_ratio:.1f}x", "<= 2x", heap_ratio <= 2))

if os.path.exists(os.path.join(d, "libsize.out")):
    m = re.search(r"-> \S+: ([\d,]+) bytes", read("libsize.out"))
    size = int(m.group(1).replace(",", "")) / 1048576
    rows.append(("library size, stripped libiapverify.so.1", f"{size:.1f} MiB", "<= 5 MiB", size <= 5))
if os.path.exists(os.path.join(d, "loadtime.out")):
    lt = read("loadtime.out")
    m = re.search(r"VmRSS \+([\d.]+) MiB; of it, mapped files: libiapverify ([\d.]+) MiB, libcrypto ([\d.]+) MiB", lt)
    gain, crypto = float(m.group(1)), float(m.group(3))
    own = float(re.search(r"own share: \+([\d.]+) MiB", lt).group(1))
    rows.append((f"resident memory gained by dlopen + iapv_verifier_new (libcrypto {crypto:.1f} MiB of it, the library's own {own:.1f} MiB)",
                 f"{gain:.1f} MiB", "<= 4 MiB", gain <= 4))
    m = re.search(r"= ([\d.]+) ms", lt)
    rows.append(("load time, dlopen + iapv_verifier_new (median of fresh processes)", f"{float(m.group(1)):.1f} ms", "none", None))

# Verifier start-up beside the baseline library (startup.out, Benchmarks/startup.py), when it ran.
if os.path.exists(os.path.join(d, "startup.out")):
    for line in read("startup.out").splitlines():
        m = re.match(r"\s+(construction|cold \(new verifier per call\)|warm \(reused verifier\))\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)x\s+>= ([\d.]+)x", line)
        if m:
            ratio, goal = float(m.group(4)), float(m.group(5))
            rows.append((f"verifier {m.group(1)} vs the baseline library ({m.group(2)} us vs {m.group(3)} us)",
                         f"{ratio:.1f}x cheaper", f">= {goal:g}x", ratio >= goal))

width = max(len(r[0]) for r in rows)
print("\ncost per purchase, per JSON byte and of carrying the library: the goals, from the runs above")
print(f"{'measured':<{width}}  {'now':>22}  {'goal':>8}  met")
for what, now, goal, met in rows:
    print(f"{what:<{width}}  {now:>22}  {goal:>8}  {'-' if met is None else 'yes' if met else 'no'}")
