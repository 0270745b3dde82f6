#!/usr/bin/env bash
# 8 threads x N mixed calls on one verifier, under ThreadSanitizer: the library and the driver
# are both instrumented. Fails on any TSan report or any result that differs from a single
# thread.   Tests/hardening/stress.sh [N]   (default 100000; CI runs fewer, see .ci/run)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
N=${1:-100000}
TOOLCHAIN=$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")
LIBDIR=$ROOT/.build-tsan-lib/release
IAPV_SANITIZE=1 swift build -c release --product iapverify --sanitize=thread --scratch-path "$ROOT/.build-tsan-lib" 2>&1 | tail -1
ln -sf libiapverify.so "$LIBDIR/libiapverify.so.1"
mkdir -p build/hardening
"$TOOLCHAIN/bin/clang" -fsanitize=thread -O1 -g -IInclude Tests/hardening/driver.c -L"$LIBDIR" -liapverify -lpthread \
   -L"$TOOLCHAIN/lib/swift/linux" -ldispatch -lBlocksRuntime \
   -Wl,-rpath,"$LIBDIR" -Wl,-rpath,"$TOOLCHAIN/lib/swift/linux" -o build/hardening/driver-tsan
TSAN_OPTIONS="halt_on_error=1 exitcode=66" build/hardening/driver-tsan stress 8 "$N"
echo "stress: OK (ThreadSanitizer reported nothing)"
