#!/usr/bin/env bash
# The Swift test suite under AddressSanitizer and ThreadSanitizer, and the C examples and header
# check under ASan + UBSan against the release library.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
export IAPV_SANITIZE=1
# XCTest's own test discovery leaks a few hundred bytes; leaks are checked by valgrind and by
# LeakSanitizer in the fuzz runs instead.
ASAN_OPTIONS=detect_leaks=0 swift test --sanitize=address --scratch-path "$ROOT/.build-asan" --parallel 2>&1 | tail -3
swift test --sanitize=thread --scratch-path "$ROOT/.build-tsan" --parallel 2>&1 | tail -3
mkdir -p build/hardening
for src in examples/c/verify_receipt.c Tests/c/header_check.c; do
  out=build/hardening/$(basename "$src" .c)-asan
  cc -std=c99 -g -fsanitize=address,undefined -fno-sanitize-recover=all -IInclude "$src" \
     -Lbuild/lib -liapverify $(pkg-config --cflags --libs jansson) -Wl,-rpath,"$ROOT/build/lib" -o "$out"
done
build/hardening/header_check-asan
for f in Tests/IAPVerifyTests/Fixtures/receipts/*.der Tests/IAPVerifyTests/Fixtures/hostile/r_*.der; do
  rc=0
  build/hardening/verify_receipt-asan '{"bundle_id":"*","environments":["Production","Sandbox"]}' "$f" 1893456000000 > /dev/null || rc=$?
  [ "$rc" -le 1 ] || { echo "sanitizers: $f exit $rc"; exit 1; }
done
echo "sanitizers: OK (Swift tests under ASan and TSan; C examples under ASan+UBSan)"
