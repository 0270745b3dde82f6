#!/usr/bin/env bash
# The Debian packages from `make deb`, installed into the live system with dpkg -i: the C example
# built against them with the system's pkg-config (no -L, no rpath), the installed command, and
# removal. Needs root; skipped (exit 0, with a message) otherwise.
# Usage: Tests/c/deb.sh VERSION DEBDIR
set -euo pipefail
cd "$(dirname "$0")/../.."
VERSION=$1
DEBDIR=$2
DEBVERSION="$VERSION-1"
ARCH=$(dpkg --print-architecture)
MULTIARCH=$(gcc -print-multiarch 2>/dev/null || dpkg-architecture -qDEB_HOST_MULTIARCH)
PACKAGES="libiapverify1 libiapverify-dev iapverify"
fail() { echo "deb-test FAILED: $*" >&2; exit 1; }

for p in $PACKAGES; do
  [ -f "$DEBDIR/${p}_${DEBVERSION}_${ARCH}.deb" ] || fail "$DEBDIR/${p}_${DEBVERSION}_${ARCH}.deb missing (make deb)"
done
echo "-- package contents"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
for p in $PACKAGES; do dpkg-deb --contents "$DEBDIR/${p}_${DEBVERSION}_${ARCH}.deb" > "$TMP/$p.contents"; done
grep -q "usr/lib/$MULTIARCH/libiapverify.so.1 -> libiapverify.so.$VERSION" "$TMP/libiapverify1.contents" \
  || fail "libiapverify1 lacks the SONAME link"
grep -q "usr/lib/$MULTIARCH/pkgconfig/iapverify.pc" "$TMP/libiapverify-dev.contents" || fail "no iapverify.pc in libiapverify-dev"
grep -q 'usr/include/iapverify.h' "$TMP/libiapverify-dev.contents" || fail "no header in libiapverify-dev"
grep -q 'usr/bin/iapverify' "$TMP/iapverify.contents" || fail "no /usr/bin/iapverify in iapverify"
dpkg-deb --field "$DEBDIR/libiapverify1_${DEBVERSION}_${ARCH}.deb" Depends > "$TMP/depends"
grep -q 'libssl3 (>= 3.0.20-1~deb12u2)' "$TMP/depends" || fail "libiapverify1 does not require the fixed libssl3"

if [ "$(id -u)" != 0 ]; then
  echo "deb-test: SKIPPED: installing the packages with dpkg -i needs root (CI runs as root)"
  exit 0
fi
for p in $PACKAGES; do
  if [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)" = "install ok installed" ]; then
    echo "deb-test: SKIPPED: $p is already installed on this system; not replacing it (dpkg -r $PACKAGES to let the test run)"
    exit 0
  fi
done

cleanup() {
  dpkg -r $PACKAGES >/dev/null 2>&1 || true
  rm -rf "$TMP"
}
trap cleanup EXIT

echo "-- dpkg -i"
dpkg -i "$DEBDIR/libiapverify1_${DEBVERSION}_${ARCH}.deb" "$DEBDIR/libiapverify-dev_${DEBVERSION}_${ARCH}.deb" \
        "$DEBDIR/iapverify_${DEBVERSION}_${ARCH}.deb" > "$TMP/dpkg.log" 2>&1 || { cat "$TMP/dpkg.log"; fail "dpkg -i"; }
/sbin/ldconfig -p | grep -E >/dev/null "=> (/usr)?/lib/$MULTIARCH/libiapverify.so.1" || fail "ldconfig does not know libiapverify.so.1"

echo "-- the C example against the installed package (system pkg-config, no rpath)"
# Only the system's directories, so that a copy under /usr/local or build/ cannot stand in.
export PKG_CONFIG_LIBDIR="/usr/lib/$MULTIARCH/pkgconfig:/usr/share/pkgconfig"
unset PKG_CONFIG_PATH LD_LIBRARY_PATH
[ "$(pkg-config --modversion iapverify)" = "$VERSION" ] || fail "pkg-config --modversion iapverify is not $VERSION"
cc -std=c99 -Wall -Werror examples/c/verify_receipt.c $(pkg-config --cflags --libs iapverify jansson) -o "$TMP/verify_receipt"
ldd "$TMP/verify_receipt" | grep -E >/dev/null "libiapverify.so.1 => (/usr)?/lib/$MULTIARCH/libiapverify.so.1" \
  || { ldd "$TMP/verify_receipt"; fail "the consumer does not load the packaged library"; }
R=Tests/IAPVerifyTests/Fixtures/receipts/production_2025-04-18_com.dashedspace.analytics_sha256.der
"$TMP/verify_receipt" '{"bundle_id":"com.dashedspace.analytics"}' "$R" 1893456000000 | tee "$TMP/out"
grep -q '^verdict=valid valid=1' "$TMP/out" || fail "the packaged library did not verify the receipt"

echo "-- the installed command"
[ "$(command -v iapverify)" = /usr/bin/iapverify ] || [ -x /usr/bin/iapverify ] || fail "no /usr/bin/iapverify"
[ "$(/usr/bin/iapverify --version)" = "$VERSION" ] || fail "/usr/bin/iapverify --version is not $VERSION"
/usr/bin/iapverify receipt "$R" --bundle-id com.dashedspace.analytics --now 2030-01-01T00:00:00Z > "$TMP/cli.json" \
  || fail "/usr/bin/iapverify did not say valid"
grep -q '"verdict":"valid"' "$TMP/cli.json" || fail "no valid verdict from /usr/bin/iapverify"

echo "-- dpkg -r"
dpkg -r $PACKAGES > "$TMP/dpkg.log" 2>&1 || { cat "$TMP/dpkg.log"; fail "dpkg -r"; }
[ ! -e "/usr/lib/$MULTIARCH/libiapverify.so.1" ] && [ ! -e /usr/include/iapverify.h ] && [ ! -e /usr/bin/iapverify ] \
  || fail "files left after dpkg -r"
/sbin/ldconfig -p | grep -E >/dev/null "=> (/usr)?/lib/$MULTIARCH/libiapverify.so.1" && fail "ldconfig still lists libiapverify.so.1 after removal"
echo "deb-test: OK"
