#!/usr/bin/env bash
# Go binding tests and the Go example, built straight from this checkout the way docs/go.md says:
# the uninstalled build/lib/pkgconfig/iapverify.pc (`make` writes it; its rpath finds build/lib at
# run time) and a `replace` line to bindings/go. Nothing is installed, no LD_LIBRARY_PATH.
# The library is IAPVERIFY_BUILD_DIR/lib/libiapverify.so.1 (default: the checkout's build).
# bindings/go/apiclient's tests run Tests/shared/fakeapple/serve.py: python3 with `cryptography`.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
export IAPVERIFY_BUILD_DIR=${IAPVERIFY_BUILD_DIR:-$ROOT/build}
BUILD=$IAPVERIFY_BUILD_DIR
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "go-test FAILED: $*" >&2; exit 1; }
[ -f "$BUILD/lib/pkgconfig/iapverify.pc" ] || fail "$BUILD/lib/pkgconfig/iapverify.pc missing: run make"
export PKG_CONFIG_PATH="$BUILD/lib/pkgconfig"
unset LD_LIBRARY_PATH
# Go (1.19 at least) leaves pkg-config's output out of its build cache keys: a cache that once
# linked against another iapverify.pc (an installed one, another checkout) would keep its flags.
# This checkout's own cache holds only builds against this .pc (one cache per build directory).
export GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local GOCACHE="$BUILD/go-cache-checkout"
MODULE=github.com/iapverify/iapverify/bindings/go
# The apiclient tests fail, rather than skip, without python3 and cryptography for the fake API.
export IAPVERIFY_REQUIRE_FAKE_API=1
unformatted=$(cd "$ROOT/bindings/go" && gofmt -l .)
[ -z "$unformatted" ] || fail "gofmt -l: $unformatted"
(cd "$ROOT/bindings/go" && go vet ./... && go test -count=1 ./...)

# examples/go as committed: its go.mod carries the replace line.
(cd "$ROOT/examples/go" && grep -q "^replace $MODULE => ../../bindings/go" go.mod && go build -o "$TMP/example" .) \
  || fail "examples/go does not build from the checkout"

# A new module of the user's, exactly as docs/go.md: require + replace, then go build.
mkdir "$TMP/app" && cp "$ROOT/examples/go/main.go" "$TMP/app/"
(cd "$TMP/app" && go mod init example.com/receipts >/dev/null 2>&1 \
  && go mod edit -require="$MODULE@v0.0.0" -replace="$MODULE=$ROOT/bindings/go" \
  && go build -o "$TMP/app-bin" .) || fail "a new module with the replace line does not build"
for bin in example app-bin; do
  ldd "$TMP/$bin" > "$TMP/ldd"
  grep -q "libiapverify.so.1 => $BUILD/lib/libiapverify.so.1" "$TMP/ldd" || { cat "$TMP/ldd"; fail "$bin does not load $BUILD/lib/libiapverify.so.1"; }
done

echo '{"bundle_id":"com.dashedspace.analytics"}' > "$TMP/config.json"
"$TMP/app-bin" -config "$TMP/config.json" -now 1745000000000 \
    "$ROOT/Tests/IAPVerifyTests/Fixtures/receipts/production_2025-04-18_com.dashedspace.analytics_sha256.der" | tee "$TMP/out"
grep -q 'api.dashedspace.com.plan.yearly *active=true' "$TMP/out"
# The net/http mode: serve on a free port, POST the receipt, expect 200 and the entitlement.
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$TMP/example" -config "$TMP/config.json" -now 1745000000000 -serve "127.0.0.1:$PORT" 2>"$TMP/serve.log" &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$TMP"' EXIT
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break; sleep 0.1; done
code=$(curl -s -o "$TMP/body" -w '%{http_code}' --data-binary \
    @"$ROOT/Tests/IAPVerifyTests/Fixtures/receipts/production_2025-04-18_com.dashedspace.analytics_sha256.der" "http://127.0.0.1:$PORT/verify")
[ "$code" = 200 ] && grep -q '"active":true' "$TMP/body" || { echo "go example server: $code $(cat "$TMP/body")"; exit 1; }
echo "go-test: OK"
