#!/usr/bin/env bash
# The portable base64 path, forced (docs/deployment.md#porting-to-another-platform): what a build
# for a processor without AVX2, or another architecture, runs.
#  1. fast_base64.c itself: IAPV_NO_AVX2 in the environment, or -DIAPV_NO_AVX2 at build time,
#     makes the AVX2 bulk decode nothing (without either, on an AVX2 processor, it decodes).
#  2. The release CLI with IAPV_NO_AVX2=1 gives byte-identical results for base64 receipts, so the
#     Swift decoder alone decodes what the two decode together.
set -euo pipefail
cd "$(dirname "$0")/../.."
CC=${CC:-cc}
BIN=${IAPVERIFY_BIN:-build/bin/iapverify}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "base64-fallback FAILED: $*" >&2; exit 1; }
SRC=Sources/CFastBase64
$CC -std=c11 -O1 -Wall -Wextra -Werror -I$SRC/include $SRC/fast_base64.c Tests/c/base64_fallback.c -o "$TMP/avx2"
$CC -std=c11 -O1 -Wall -Wextra -Werror -DIAPV_NO_AVX2 -I$SRC/include $SRC/fast_base64.c Tests/c/base64_fallback.c -o "$TMP/portable"
[ "$(IAPV_NO_AVX2=1 "$TMP/avx2")" = 0 ] || fail "IAPV_NO_AVX2=1 did not turn the AVX2 bulk off"
[ "$("$TMP/portable")" = 0 ] || fail "a -DIAPV_NO_AVX2 build decoded with AVX2"
if grep -qw avx2 /proc/cpuinfo; then
  [ "$("$TMP/avx2")" = 64 ] || fail "on this AVX2 processor the bulk decoded nothing"
fi
n=0
for der in Tests/IAPVerifyTests/Fixtures/receipts/production_2016-02-12_com.mindnode.MindNodePro.der \
           Tests/IAPVerifyTests/Fixtures/receipts/production_2025-04-18_com.dashedspace.analytics_sha256.der \
           Tests/IAPVerifyTests/Fixtures/receipts/sandbox_2015-08-31_com.silverlogic.Kidtrol_22iap.der; do
  base64 -w0 "$der" > "$TMP/receipt.b64"
  "$BIN" receipt "$TMP/receipt.b64" --now 1893456000000 > "$TMP/avx2.json" 2>/dev/null || true
  IAPV_NO_AVX2=1 "$BIN" receipt "$TMP/receipt.b64" --now 1893456000000 > "$TMP/portable.json" 2>/dev/null || true
  grep -q '"verdict"' "$TMP/avx2.json" || fail "no result for $der"
  cmp -s "$TMP/avx2.json" "$TMP/portable.json" || fail "$der as base64: the portable path gives another result"
  n=$((n + 1))
done
echo "base64-fallback: OK (the bulk off by environment and by build flag; $n base64 receipts give the same results)"
