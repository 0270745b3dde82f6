#!/usr/bin/env python3
"""Verifier start-up against the baseline library, in one run (issue 37).

usage: startup.py THIS_BINARY BASELINE_BINARY [ROUNDS] [SECONDS]

Both binaries are Benchmarks/startup.c, one linked to this build's library and one to the
baseline's. Each round runs one process of each, alternating which goes first, so the machine
state is shared; a figure is the median over rounds and a ratio the median of per-round ratios
(baseline / this build: how many times cheaper this build is).
Goals (issue 37, from the baseline's 853 us construction and 2,847 us cold call): construction
about 17x cheaper, a cold call (a new verifier per call) about 2.4x cheaper, warm no slower.
The first call in a fresh process (library and OpenSSL start-up, the chain's first validation)
is printed without a goal.
"""
import os
import statistics
import subprocess
import sys

this, base = sys.argv[1], sys.argv[2]
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 7
secs = sys.argv[4] if len(sys.argv) > 4 else "0.3"
names = ["first call in a process", "construction", "cold (new verifier per call)", "warm (reused verifier)"]
# Warm is a guard, not a goal: this work must not slow it (0.9x leaves room for noise).
goals = [None, 17.0, 2.4, 0.9]


def run(binary):
    # Each binary finds its own library through its rpath; LD_LIBRARY_PATH would override that.
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    out = subprocess.run([binary, "Tests/IAPVerifyTests/Fixtures", secs], check=True,
                         capture_output=True, text=True, env=env).stdout
    return [float(x) for x in out.split()]


ours, theirs = [], []
for r in range(rounds):
    pair = [(this, ours), (base, theirs)]
    for binary, into in (pair if r % 2 == 0 else pair[::-1]):
        into.append(run(binary))

print(f"\nVerifier start-up vs the baseline library (8345ede), {rounds} interleaved rounds, CPU us per call:")
print(f"  {'':30} {'this build':>11} {'baseline':>11} {'baseline/this':>14}  goal")
missed = []
for i, name in enumerate(names):
    a = statistics.median(o[i] for o in ours)
    b = statistics.median(t[i] for t in theirs)
    ratio = statistics.median(t[i] / o[i] for o, t in zip(ours, theirs))
    goal = goals[i]
    verdict = "" if goal is None else (f">= {goal:g}x " + ("met" if ratio >= goal else "MISSED"))
    if goal is not None and ratio < goal:
        missed.append(name)
    print(f"  {name:30} {a:11.1f} {b:11.1f} {ratio:13.2f}x  {verdict}")
if missed:
    print("  goals missed: " + ", ".join(missed))
