#!/usr/bin/env bash
# The libFuzzer targets (one ASan binary, the target chosen by IAPV_FUZZ_TARGET): receipt, response,
# entitlements, config, options, jws, and the App Store Server API's api (answers) and apicall (request
# building); their input layouts are in Sources/iapverify-fuzz/. api seeds: scripts/generate-api-fuzz-seeds.py.
#
#   Fuzz/run.sh replay [TARGET...]            every committed input once: Fuzz/corpus, Fuzz/seeds and
#                                             Fuzz/regressions. Deterministic; `make test` runs this.
#   Fuzz/run.sh campaign SECONDS [TARGET...]  open-ended exploration (`make fuzz`), corpus in build/fuzz
#   Fuzz/run.sh campaign-runs N [TARGET...]   the same, stopping after N executions per target
#   Fuzz/run.sh minimise [TARGET...]          merge what campaigns found into Fuzz/corpus (to commit)
#
# Fails on any finding, or if libFuzzer never started (no INITED) or ran without coverage.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
MODE=${1:-replay}
shift || true
case "$MODE" in
  campaign|campaign-runs) BUDGET=${1:?"$MODE needs a number"}; shift ;;
  replay|minimise) ;;
  *) echo "usage: Fuzz/run.sh replay|campaign SECONDS|campaign-runs N|minimise [TARGET...]" >&2; exit 2 ;;
esac
TARGETS=${*:-receipt response entitlements config options jws api apicall}
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
LIMITS=(-timeout=5 -rss_limit_mb=2048 -malloc_limit_mb=256)

committed() {  # the committed input folders of a target that exist
  for d in Fuzz/corpus/$1 Fuzz/seeds/$1 Fuzz/regressions/$1; do [ -d "$d" ] && echo "$d"; done
}

report_finding() {  # CI keeps only the console: print the cause and the input, so it can be replayed
  local log=$1 artifacts=$2
  grep -m4 -E "Fatal error|ERROR:|SUMMARY:|out-of-memory|timeout" "$log" | sed 's/^/    /'
  for a in "$artifacts"/*; do
    [ -f "$a" ] || continue
    echo "    input $(basename "$a") ($(wc -c < "$a") bytes), base64:"
    base64 -w 100 "$a" | head -c 20000 | sed 's/^/      /'
  done
}

status=0
case "$MODE" in
replay)
  printf "%-13s %8s %s\n" target inputs result
  for t in $TARGETS; do
    mkdir -p "$OUT/replay-artifacts/$t"
    rm -f "$OUT/replay-artifacts/$t"/*
    log=$OUT/$t.replay.log
    dirs=$(committed "$t")
    inputs=$(find $dirs -type f 2>/dev/null | wc -l)
    # -runs=0: run every input of the given folders once, then stop; nothing random happens.
    IAPV_FUZZ_TARGET=$t "$BIN" $dirs -runs=0 "${LIMITS[@]}" -artifact_prefix="$OUT/replay-artifacts/$t/" > "$log" 2>&1
    rc=$?
    result=ok
    grep -q INITED "$log" || { result="never started (no INITED)"; status=1; }
    [ $rc -eq 0 ] || { result="FINDING (exit $rc): see $log"; status=1; }
    printf "%-13s %8s %s\n" "$t" "$inputs" "$result"
    [ $rc -eq 0 ] || report_finding "$log" "$OUT/replay-artifacts/$t"
  done
  ;;
campaign|campaign-runs)
  if [ "$MODE" = campaign ]; then STOP=(-max_total_time="$BUDGET"); else STOP=(-runs="$BUDGET"); fi
  printf "%-13s %10s %8s %6s %8s %s\n" target execs exec/s cov corpus result
  for t in $TARGETS; do
    mkdir -p "$OUT/corpus/$t" "$OUT/artifacts/$t"
    log=$OUT/$t.log
    IAPV_FUZZ_TARGET=$t "$BIN" "$OUT/corpus/$t" $(committed "$t") "${STOP[@]}" "${LIMITS[@]}" \
        -artifact_prefix="$OUT/artifacts/$t/" -print_final_stats=1 > "$log" 2>&1
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
    [ $rc -eq 0 ] || report_finding "$log" "$OUT/artifacts/$t"
  done
  ;;
minimise)
  for t in $TARGETS; do
    mkdir -p "Fuzz/corpus/$t" "$OUT/corpus/$t"
    # Keeps in Fuzz/corpus only inputs that add coverage over the seeds and what is already there.
    IAPV_FUZZ_TARGET=$t "$BIN" -merge=1 "Fuzz/corpus/$t" "$OUT/corpus/$t" "${LIMITS[@]}" > "$OUT/$t.merge.log" 2>&1 \
      || { echo "$t: merge failed, see $OUT/$t.merge.log"; status=1; }
    echo "$t: $(ls "Fuzz/corpus/$t" | wc -l) inputs, $(du -sh "Fuzz/corpus/$t" | cut -f1) in Fuzz/corpus/$t"
  done
  ;;
esac
exit $status
