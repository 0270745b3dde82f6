#!/usr/bin/env bash
# The Swift test suite under AddressSanitizer and ThreadSanitizer, and the C examples and header
# check under ASan + UBSan against the release library.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
export IAPV_SANITIZE=1
# ASan: the test bundle is built, then run directly. `swift test` first lists the tests through
# XCTest, whose listing asks the Swift runtime for every test class's name, and with this many
# classes the runtime's type-name cache frees memory ASan did not allocate (a toolchain bug in
# XCTest's listing code, before any test runs). XCTest's own test discovery also leaks a few
# hundred bytes; leaks are checked by valgrind and by LeakSanitizer in the fuzz runs instead.
swift build --build-tests --sanitize=address --scratch-path "$ROOT/.build-asan" 2>&1 | tail -1
ASAN_OPTIONS=detect_leaks=0 "$(swift build --show-bin-path --sanitize=address --scratch-path "$ROOT/.build-asan")/iapverifyPackageTests.xctest" 2>&1 | tail -2
# TSan: the same bundle, one process per test class (the listing trips the same toolchain bug
# under TSan). One process for all classes would not do: a dispatch worker's write to a stack slot
# of an earlier test and a later test's read of the reused slot look like a race to TSan, which
# does not see libdispatch's synchronisation.
swift build --build-tests --sanitize=thread --scratch-path "$ROOT/.build-tsan" 2>&1 | tail -1
tsan_bundle="$(swift build --show-bin-path --sanitize=thread --scratch-path "$ROOT/.build-tsan")/iapverifyPackageTests.xctest"
classes=$(grep -rhoE '^(final )?class [A-Za-z0-9_]+: XCTestCase' Tests/IAPVerifyTests | sed -E 's/.*class ([A-Za-z0-9_]+):.*/\1/' | sort -u)
[ -n "$classes" ] || { echo "sanitizers: no XCTestCase classes found" >&2; exit 1; }
tests=0
for c in $classes; do
  out=$("$tsan_bundle" "IAPVerifyTests.$c" 2>&1) || { echo "$out" | tail -60; echo "sanitizers: TSan failed in $c" >&2; exit 1; }
  n=$(echo "$out" | grep -oE 'Executed [0-9]+ tests?' | tail -1 | grep -oE '[0-9]+')
  tests=$((tests + ${n:-0}))
done
echo "TSan: $tests tests in $(echo "$classes" | wc -l) classes, one process each: no reports"
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
