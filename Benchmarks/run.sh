#!/usr/bin/env bash
# Builds and runs the benchmarks against the release library in build/lib.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build/bench
cc -O2 -std=c11 -Wall -IInclude Benchmarks/bench.c -Lbuild/lib -liapverify -lcrypto -ljansson -lpthread \
   -Wl,-rpath,"$PWD/build/lib" -o build/bench/bench
# Each output is also kept in build/bench/*.out for Benchmarks/goals.py (the summary at the end).
build/bench/bench Tests/IAPVerifyTests/Fixtures "${BENCH_ROUNDS:-5}" "${BENCH_SECONDS:-0.4}" | tee build/bench/receipts.out
build/bench/bench jws Tests/IAPVerifyTests/Fixtures "${BENCH_ROUNDS:-5}" "${BENCH_SECONDS:-0.4}"
# Verifier start-up (construction, a new verifier per call, warm) beside the library built from
# the baseline commit, in the same run. The baseline is built once into build/bench/baseline (a
# git worktree; dependencies copied from this checkout's release build) and kept for reruns.
BASELINE_COMMIT=${BENCH_BASELINE:-8345ede}
BASE_DIR=build/bench/baseline
BASE_SO=$BASE_DIR/.build-release/release/libiapverify.so
if [ ! -f "$BASE_SO" ] && git rev-parse --verify -q "$BASELINE_COMMIT^{commit}" > /dev/null; then
    # prune: after `make clean` the old worktree is gone but still registered.
    [ -d "$BASE_DIR" ] || { git worktree prune; git worktree add --detach "$BASE_DIR" "$BASELINE_COMMIT"; }
    if [ -d .build-release/checkouts ] && [ ! -d "$BASE_DIR/.build-release/checkouts" ]; then
        mkdir -p "$BASE_DIR/.build-release"
        cp -a .build-release/checkouts .build-release/repositories .build-release/workspace-state.json "$BASE_DIR/.build-release/"
        [ -f "$BASE_DIR/Package.resolved" ] || cp Package.resolved "$BASE_DIR/" 2> /dev/null || true
    fi
    (cd "$BASE_DIR" && swift build -c release -Xswiftc -static-stdlib --scratch-path .build-release)
fi
cc -O2 -std=c11 -Wall -IInclude Benchmarks/startup.c -Lbuild/lib -liapverify -Wl,-rpath,"$PWD/build/lib" -o build/bench/startup
if [ -f "$BASE_SO" ]; then
    mkdir -p build/bench/baseline-lib
    ln -sf "$PWD/$BASE_SO" build/bench/baseline-lib/libiapverify.so.1
    ln -sf libiapverify.so.1 build/bench/baseline-lib/libiapverify.so
    cc -O2 -std=c11 -Wall -IInclude Benchmarks/startup.c -Lbuild/bench/baseline-lib -liapverify \
       -Wl,-rpath,"$PWD/build/bench/baseline-lib" -o build/bench/startup-baseline
    python3 Benchmarks/startup.py build/bench/startup build/bench/startup-baseline "${STARTUP_ROUNDS:-7}" "${STARTUP_SECONDS:-0.3}" \
        | tee build/bench/startup.out
else
    rm -f build/bench/startup.out
    echo "startup: no baseline library ($BASELINE_COMMIT is not in this clone); skipping the comparison" >&2
fi
# Benchmarks/api/transaction_history_20.json comes from scripts/generate-api-fuzz-seeds.py.
build/bench/bench api Benchmarks/api/transaction_history_20.json Tests/shared/fakeapple/verifier.json \
    Tests/shared/fakeapple/root.pem "${BENCH_ROUNDS:-5}" "${BENCH_SECONDS:-0.4}"
GENUINE=Tests/IAPVerifyTests/Fixtures/receipts/sandbox_2020-05-06_com.nutcall.alert_187iap.der
python3 Benchmarks/make_forged.py "$GENUINE" build/bench/forged-100k.der 100000 > /dev/null
build/bench/bench forged "$GENUINE" build/bench/forged-100k.der "${BENCH_ROUNDS:-5}" "${BENCH_SECONDS:-0.4}" | tee build/bench/forged.out
python3 Benchmarks/json_bench.py build/bench | tee build/bench/json.out
# The engineered C floor (Benchmarks/floor.c): library / floor / PKCS7_verify by purchase count.
cc -O2 -std=c11 -Wall -IInclude Benchmarks/floor_bench.c Benchmarks/floor.c -Lbuild/lib -liapverify -lcrypto -ljansson \
   -Wl,-rpath,"$PWD/build/lib" -o build/bench/floor_bench
build/bench/floor_bench Tests/IAPVerifyTests/Fixtures "${FLOOR_ROUNDS:-3}" "${FLOOR_SECONDS:-0.25}" | tee build/bench/floor.out
# What the library costs to carry: size, what it links statically, load time and resident memory.
cc -O2 -std=c11 -Wall Benchmarks/loadtime.c -ldl -o build/bench/loadtime
if [ -f .build-release/release/libiapverify.so ]; then
    python3 Benchmarks/libsize.py build/lib/libiapverify.so.1 .build-release/release/libiapverify.so | tee build/bench/libsize.out
else
    echo "libsize: no unstripped .build-release/release/libiapverify.so; run make first" >&2
fi
build/bench/loadtime "$PWD/build/lib/libiapverify.so.1" 20 | tee build/bench/loadtime.out
python3 Benchmarks/goals.py build/bench
