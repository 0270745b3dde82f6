#!/usr/bin/env bash
# Go binding tests and the Go example, against the library installed into a temporary prefix.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# A stable prefix: Go caches cgo link flags, so a temporary one would go stale between runs.
PREFIX="$ROOT/build/prefix"
make -s -C "$ROOT" install PREFIX="$PREFIX" >/dev/null
export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig" LD_LIBRARY_PATH="$PREFIX/lib"
export GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local GOCACHE="${GOCACHE:-$ROOT/build/go-cache}"
(cd "$ROOT/bindings/go" && go vet ./... && go test -count=1 ./...)
cd "$ROOT/examples/go"
go build -o "$TMP/example" .
echo '{"bundle_id":"com.dashedspace.analytics"}' > "$TMP/config.json"
"$TMP/example" -config "$TMP/config.json" -now 1745000000000 \
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
