#!/usr/bin/env bash
# ABI tests for the release library: header hygiene, exported symbols, SONAME, dependencies,
# and a C program built against the installed library through pkg-config.
set -euo pipefail
cd "$(dirname "$0")/../.."
LIB=build/lib/libiapverify.so.1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "c-test FAILED: $*" >&2; exit 1; }
CC=${CC:-cc}
CXX=${CXX:-c++}

echo "-- header compiles as C99 -pedantic -Werror and as C++"
$CC -std=c99 -pedantic -Wall -Wextra -Werror -IInclude Tests/c/header_check.c -o "$TMP/h_c"
$CXX -x c++ -std=c++11 -pedantic -Wall -Wextra -Werror -IInclude Tests/c/header_check.c -o "$TMP/h_cxx"
"$TMP/h_c" && "$TMP/h_cxx"

echo "-- the header's IAPV_VERSION_STRING and the library's iapv_version_string() are the VERSION file"
grep -q "^#define IAPV_VERSION_STRING \"$(cat VERSION)\"\$" Include/iapverify.h || fail "IAPV_VERSION_STRING in Include/iapverify.h is not $(cat VERSION) (VERSION)"
printf '#include <stdio.h>\n#include <iapverify.h>\nint main(void) { puts(iapv_version_string()); return 0; }\n' > "$TMP/version.c"
$CC -std=c99 -IInclude "$TMP/version.c" -Lbuild/lib -liapverify -Wl,-rpath,"$PWD/build/lib" -o "$TMP/version"
[ "$("$TMP/version")" = "$(cat VERSION)" ] || fail "iapv_version_string() is $("$TMP/version"), VERSION is $(cat VERSION)"

echo "-- exported symbols equal Tests/c/exported-symbols.txt"
nm -D -g --defined-only "$LIB" | awk '{print $3}' | sort > "$TMP/symbols"
diff -u Tests/c/exported-symbols.txt "$TMP/symbols" || fail "exported symbols differ from the committed list"
grep -o 'iapv_[a-z_0-9]*(' Include/iapverify.h | tr -d '(' | sort -u > "$TMP/declared"
diff -u "$TMP/declared" Tests/c/exported-symbols.txt || fail "the header's functions differ from the exported symbols"
# docs/c-api-rules.md says it is the whole interface: its table lists every function, and says how many.
grep -o '^| `iapv_[a-z_0-9]*(' docs/c-api-rules.md | sed 's/^| `//; s/($//' | sort -u > "$TMP/documented"
diff -u Tests/c/exported-symbols.txt "$TMP/documented" || fail "the functions in docs/c-api-rules.md's table differ from the exported symbols"
grep -q "^All $(wc -l < Tests/c/exported-symbols.txt) that the library exports" docs/c-api-rules.md || fail "docs/c-api-rules.md does not give the number of exported functions"

echo "-- a failed allocation of a result is IAPV_E_NO_MEMORY, not an abort (Tests/c/no_memory.c)"
$CC -std=c99 -Wall -Wextra -Werror -IInclude Tests/c/no_memory.c -Lbuild/lib -liapverify -Wl,-rpath,"$PWD/build/lib" -o "$TMP/no_memory"
"$TMP/no_memory" || fail "an allocation failure did not give IAPV_E_NO_MEMORY"

echo "-- SONAME and RUNPATH"
readelf -d "$LIB" | grep -q 'Library soname: \[libiapverify.so.1\]' || fail "SONAME is not libiapverify.so.1"
if readelf -d "$LIB" | grep -E 'RUNPATH|RPATH' | grep -q -E 'swift|/opt|/usr/lib/swift'; then fail "RUNPATH points into the toolchain"; fi
readelf -d "$LIB" | grep -q 'Library runpath: \[\$ORIGIN\]$' || fail "RUNPATH is not \$ORIGIN, as docs/c.md says"

echo "-- dependencies: no libswift, nothing beyond libc/libm/libstdc++/libgcc_s/libcrypto/libjansson/libsimdjson"
ldd "$LIB" | tee "$TMP/ldd"
if grep -q libswift "$TMP/ldd"; then fail "libswift in ldd"; fi
extra=$(awk '{print $1}' "$TMP/ldd" | grep -v -E '^(linux-vdso\.so\.1|/lib64/ld-linux-x86-64\.so\.2|libc\.so\.6|libm\.so\.6|libstdc\+\+\.so\.6|libgcc_s\.so\.1|libcrypto\.so\.3|libjansson\.so\.4|libsimdjson\.so\.14)$' || true)
[ -z "$extra" ] || fail "unexpected dependencies: $extra"

# FoundationEssentials (through swift-asn1), the regex modules (one String.contains) and libdispatch
# once made up most of the library; any Swift code can bring them back without a compile error.
echo "-- lean: no FoundationEssentials, regex modules or libdispatch linked in; stripped size under 8 MiB"
if [ -f .build-release/release/libiapverify.so ]; then
  heavy=$(nm --defined-only .build-release/release/libiapverify.so | grep -c -E '20FoundationEssentials|17_StringProcessing|12_RegexParser| dispatch_' || true)
  [ "$heavy" -eq 0 ] || fail "$heavy symbols of FoundationEssentials, _StringProcessing, _RegexParser or libdispatch are linked in (Benchmarks/libsize.py says which)"
fi
size=$(stat -L -c %s "$LIB")
[ "$size" -le $((8 * 1048576)) ] || fail "the stripped library is $size bytes, over 8 MiB (Benchmarks/libsize.py says what is in it)"

echo "-- a C program built straight from the checkout: build/lib/pkgconfig/iapverify.pc, no install"
[ "$(PKG_CONFIG_PATH=build/lib/pkgconfig pkg-config --modversion iapverify)" = "$(cat VERSION)" ] || fail "uninstalled .pc version is not VERSION"
$CC -std=c99 -Wall -Werror examples/c/verify_receipt.c \
    $(PKG_CONFIG_PATH="$PWD/build/lib/pkgconfig" pkg-config --cflags --libs iapverify jansson) -o "$TMP/uninstalled"
ldd "$TMP/uninstalled" > "$TMP/ldd-uninstalled"
grep -q "libiapverify.so.1 => $PWD/build/lib/libiapverify.so.1" "$TMP/ldd-uninstalled" || fail "the checkout build does not load build/lib"
env -u LD_LIBRARY_PATH "$TMP/uninstalled" '{"bundle_id":"com.dashedspace.analytics"}' \
    Tests/IAPVerifyTests/Fixtures/receipts/production_2025-04-18_com.dashedspace.analytics_sha256.der 1893456000000 > "$TMP/out0"
grep -q '^verdict=valid valid=1' "$TMP/out0" || fail "the checkout build did not verify the receipt"

echo "-- make install runs ldconfig into the live system only (not under DESTDIR)"
printf '#!/bin/sh\necho "$*" >> %s\n' "$TMP/ldconfig.calls" > "$TMP/fake-ldconfig" && chmod +x "$TMP/fake-ldconfig"
make -s install PREFIX=/usr/local DESTDIR="$TMP/stage" LDCONFIG="$TMP/fake-ldconfig" >/dev/null
[ ! -e "$TMP/ldconfig.calls" ] || fail "make install DESTDIR=... ran ldconfig"
[ -f "$TMP/stage/usr/local/lib/pkgconfig/iapverify.pc" ] && ! grep -q rpath "$TMP/stage/usr/local/lib/pkgconfig/iapverify.pc" \
  || fail "installed iapverify.pc missing or carries an rpath"
[ -x "$TMP/stage/usr/local/bin/iapverify" ] || fail "make install did not install the iapverify command"

echo "-- building against the DESTDIR stage with PKG_CONFIG_SYSROOT_DIR (docs/c.md)"
flags=$(PKG_CONFIG_PATH="$TMP/stage/usr/local/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$TMP/stage" pkg-config --cflags --libs iapverify)
case " $flags " in *" -I$TMP/stage/usr/local/include "*" -L$TMP/stage/usr/local/lib "*) ;;
  *) fail "pkg-config with PKG_CONFIG_SYSROOT_DIR gave '$flags', not the stage's paths";; esac
$CC -std=c99 -Wall -Werror examples/c/verify_receipt.c $flags $(pkg-config --cflags --libs jansson) -o "$TMP/staged"
LD_LIBRARY_PATH="$TMP/stage/usr/local/lib" "$TMP/staged" '{"bundle_id":"com.dashedspace.analytics"}' \
    Tests/IAPVerifyTests/Fixtures/receipts/production_2025-04-18_com.dashedspace.analytics_sha256.der 1893456000000 > "$TMP/out-staged"
grep -q '^verdict=valid valid=1' "$TMP/out-staged" || fail "the program built against the stage did not verify the receipt"
if [ "$(id -u)" = 0 ]; then
  make -s install PREFIX="$TMP/live" LDCONFIG="$TMP/fake-ldconfig" >/dev/null 2>"$TMP/install.err"
  head -1 "$TMP/ldconfig.calls" | grep -qx '' || fail "make install did not run ldconfig (calls: $(cat "$TMP/ldconfig.calls"))"
  grep -q "is not searched by the dynamic linker" "$TMP/install.err" || fail "no note for a LIBDIR the dynamic linker does not search"
else
  echo "   (not root: the live ldconfig run is not checked)"
fi

echo "-- a C program built against the installed library via pkg-config"
make -s install PREFIX="$TMP/prefix" LDCONFIG= >/dev/null
test -L "$TMP/prefix/lib/libiapverify.so" && test -L "$TMP/prefix/lib/libiapverify.so.1" || fail "SONAME symlinks missing"
export PKG_CONFIG_PATH="$TMP/prefix/lib/pkgconfig"
$CC -std=c99 -Wall -Werror examples/c/verify_receipt.c $(pkg-config --cflags --libs iapverify jansson) \
    -Wl,-rpath,"$TMP/prefix/lib" -o "$TMP/verify_receipt"
readelf -d "$TMP/verify_receipt" | grep -q 'NEEDED.*libiapverify.so.1' || fail "consumer does not record the SONAME"
"$TMP/verify_receipt" '{"bundle_id":"com.dashedspace.analytics"}' \
    Tests/IAPVerifyTests/Fixtures/receipts/production_2025-04-18_com.dashedspace.analytics_sha256.der 1893456000000 \
    | tee "$TMP/out"
grep -q '^verdict=valid valid=1' "$TMP/out" || fail "installed library did not verify the receipt"
grep -q 'api.dashedspace.com.plan.yearly active=false state=expired' "$TMP/out" || fail "entitlements not printed"
set +e
"$TMP/verify_receipt" '{"bundle_id":"com.other.app"}' \
    Tests/IAPVerifyTests/Fixtures/receipts/production_2025-04-18_com.dashedspace.analytics_sha256.der 1893456000000 > "$TMP/out2"
rc=$?
set -e
[ "$rc" = 1 ] && grep -q '^verdict=bundle_mismatch' "$TMP/out2" || fail "a foreign bundle id was not rejected"
echo "c-test: OK"
