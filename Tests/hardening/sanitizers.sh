#!/usr/bin/env bash
# The Swift test suite under AddressSanitizer and ThreadSanitizer, and the C examples and header
# check under ASan + UBSan against the release library.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
export IAPV_SANITIZE=1
# The test bundle is built, then run directly: `swift test` first lists the tests through XCTest,
# whose listing asks the Swift runtime for every test class's name, and with this many classes the
# runtime's type-name cache frees memory ASan did not allocate (a toolchain bug, in XCTest's
# listing code, before any test runs). XCTest's own test discovery also leaks a few hundred
# bytes; leaks are checked by valgrind and by LeakSanitizer in the fuzz runs instead.
for sanitizer in address thread; do
  scratch="$ROOT/.build-$( [ $sanitizer = address ] && echo asan || echo tsan )"
  swift build --build-tests --sanitize=$sanitizer --scratch-path "$scratch" 2>&1 | tail -1
  bundle="$(swift build --show-bin-path --sanitize=$sanitizer --scratch-path "$scratch")/iapverifyPackageTests.xctest"
  ASAN_OPTIONS=detect_leaks=0 "$bundle" 2>&1 | tail -2
done
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
