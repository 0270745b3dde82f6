#!/usr/bin/env bash
# Builds the libFuzzer binary (ASan) and runs each target for SECONDS on its corpus, then replays
# the committed regressions. Fails on any finding, or if libFuzzer never started (no INITED).
#   Fuzz/run.sh SECONDS [TARGET...]
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
SECONDS_EACH=${1:-300}
shift || true
TARGETS=${*:-receipt response entitlements config options jws}
OUT=$ROOT/build/fuzz
mkdir -p "$OUT"
# The fuzz target lives in the root package so that the sanitizer flags reach the core too.
# swiftc's -sanitize=fuzzer alone left release objects without coverage counters (libFuzzer then
# runs blind: "no interesting inputs"), so the coverage kinds libFuzzer needs are explicit.
swift build -c release --product iapverify-fuzz --scratch-path "$ROOT/.build-fuzz" --sanitize=fuzzer --sanitize=address \
    -Xswiftc -sanitize-coverage=edge,inline-8bit-counters,pc-table,trace-cmp \
    2>&1 | grep -v -E "Cannot export local symbol|^\s*$" | tail -3
BIN=$ROOT/.build-fuzz/release/iapverify-fuzz
[ -x "$BIN" ] || { echo "fuzz: build failed"; exit 1; }
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
# Swift's own crash backtracer reads memory ASan considers poisoned and buries the finding.
export SWIFT_BACKTRACE=enable=no
status=0
printf "%-13s %10s %8s %6s %8s %s\n" target execs exec/s cov corpus result
for t in $TARGETS; do
  mkdir -p "$OUT/corpus/$t" "$OUT/artifacts/$t"
  log=$OUT/$t.log
  IAPV_FUZZ_TARGET=$t "$BIN" "$OUT/corpus/$t" "Fuzz/seeds/$t" -max_total_time="$SECONDS_EACH" -timeout=5 \
      -rss_limit_mb=2048 -malloc_limit_mb=256 -artifact_prefix="$OUT/artifacts/$t/" -print_final_stats=1 > "$log" 2>&1
  rc=$?
  result=ok
  grep -q INITED "$log" || { result="never started (no INITED)"; status=1; }
  if grep -q "no interesting inputs were found" "$log" || ! grep -q "cov: " "$log"; then
    result="not instrumented for coverage"; status=1
  fi
  [ $rc -eq 0 ] || { result="FINDING (exit $rc): see $log and $OUT/artifacts/$t"; status=1; }
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$')
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*')
  corpus=$(ls "$OUT/corpus/$t" | wc -l)
  printf "%-13s %10s %8s %6s %8s %s\n" "$t" "${execs:-?}" "${rate:-?}" "${cov:-?}" "$corpus" "$result"
  if [ $rc -ne 0 ]; then
    # CI keeps only the console: print the cause and the input, so a finding can be replayed.
    grep -m4 -E "Fatal error|ERROR:|SUMMARY:|out-of-memory|timeout" "$log" | sed 's/^/    /'
    for a in "$OUT/artifacts/$t"/*; do
      [ -f "$a" ] || continue
      echo "    input $(basename "$a") ($(wc -c < "$a") bytes), base64:"
      base64 -w 100 "$a" | head -c 20000 | sed 's/^/      /'
    done
  fi
  # Committed regression inputs: each must run clean.
  if compgen -G "Fuzz/regressions/$t/*" > /dev/null; then
    IAPV_FUZZ_TARGET=$t "$BIN" Fuzz/regressions/$t/* > "$OUT/$t.regressions.log" 2>&1 || { echo "$t: a regression input fails again"; status=1; }
  fi
done
exit $status
