#!/usr/bin/env bash
# After `make docc`: the DocC check really fails on a broken symbol link. docc converts a copy of
# the catalog against the symbol graph make docc extracted, with warnings as errors: the copy as
# it is must pass, and the copy with one link to a symbol that does not exist must fail naming it.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "docc-broken-link FAILED: $*" >&2; exit 1; }
graph=$(find "$ROOT/.build-docc" -path '*/extracted-symbols/*' -name IAPVerify.symbols.json | head -n 1)
[ -n "$graph" ] || fail "no IAPVerify symbol graph under .build-docc: run make docc first"
convert() {  # convert CATALOG -> docc's exit status; its output in $TMP/log
  docc convert "$1" --additional-symbol-graph-dir "$(dirname "$graph")" --fallback-display-name IAPVerify \
    --fallback-bundle-identifier IAPVerify --warnings-as-errors --output-path "$TMP/out" > "$TMP/log" 2>&1
}
cp -r "$ROOT/Sources/IAPVerify/IAPVerify.docc" "$TMP/good.docc"
convert "$TMP/good.docc" || { cat "$TMP/log" >&2; fail "the catalog as it is does not convert"; }
cp -r "$ROOT/Sources/IAPVerify/IAPVerify.docc" "$TMP/broken.docc"
printf '\n- ``NoSuchVerifierSymbol``\n' >> "$TMP/broken.docc/IAPVerify.md"
if convert "$TMP/broken.docc"; then fail "a link to a symbol that does not exist passed"; fi
grep -q "NoSuchVerifierSymbol" "$TMP/log" || { cat "$TMP/log" >&2; fail "docc failed without naming the broken link"; }
echo "docc-broken-link: OK (a broken symbol link fails the build)"
