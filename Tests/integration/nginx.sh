#!/usr/bin/env bash
# The nginx gateway test: Debian's nginx with lua-nginx-module on a free 127.0.0.1 port, the
# example config, real receipts. nginx is stopped by its PID at the end, even on failure.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
FX=$ROOT/Tests/IAPVerifyTests/Fixtures
TMP=$(mktemp -d)
chmod 755 "$TMP"
stop() {
  if [ -f "$TMP/nginx.pid" ]; then kill "$(cat "$TMP/nginx.pid")" 2>/dev/null; sleep 0.3; fi
  rm -rf "$TMP"
}
trap stop EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# The example config is for one app; this test also needs an app whose subscription has lapsed,
# so it adds the dashedspace yearly plan (expired 2026-04-18) to the same entitlement.
cat > "$TMP/gateway.json" <<JSON
{"entitlement": "premium",
 "verifier": {"bundle_id": "*", "environments": ["Production"],
   "products": {"com.tensquaregames.letsfish2.goldpack_2.T5": {"type": "non_consumable", "entitlements": ["premium"]},
                "api.dashedspace.com.plan.yearly": {"type": "auto_renewable", "entitlements": ["premium"]}}}}
JSON
"$ROOT/examples/nginx/run.sh" "$TMP" "$PORT" "$TMP/gateway.json" || { cat "$TMP/error.log"; exit 1; }
URL=http://127.0.0.1:$PORT/verify
for _ in $(seq 50); do curl -s -o /dev/null "$URL" && break; sleep 0.1; done

code() { curl -s -o "$TMP/body" -w '%{http_code}' "$@"; }
VALID=$FX/receipts/production_2018-07-17_com.tensquaregames.letsfish2.der
EXPIRED=$FX/receipts/production_2025-04-18_com.dashedspace.analytics_sha256.der
python3 - "$VALID" "$TMP/tampered.der" <<'PY'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
i = data.find(b"com.tensquaregames.letsfish2.goldpack")
data[i] ^= 1
open(sys.argv[2], "wb").write(data)
PY
[ "$(code --data-binary @"$VALID" "$URL")" = 200 ] || fail "valid receipt: $(cat "$TMP/body")"
grep -q '"state":"owned"' "$TMP/body" || fail "200 body lacks the entitlement: $(cat "$TMP/body")"
[ "$(code -H "X-Receipt: $(base64 -w0 "$VALID")" -X POST "$URL")" = 200 ] || fail "valid receipt in a header"
[ "$(code --data-binary @"$EXPIRED" "$URL")" = 402 ] || fail "expired subscription: $(cat "$TMP/body")"
[ "$(code --data-binary @"$TMP/tampered.der" "$URL")" = 403 ] || fail "tampered receipt: $(cat "$TMP/body")"
grep -q signature_invalid "$TMP/body" || fail "tampered body: $(cat "$TMP/body")"
[ "$(code --data-binary 'not a receipt' "$URL")" = 400 ] || fail "garbage: $(cat "$TMP/body")"
[ "$(code -X POST "$URL")" = 400 ] || fail "empty body"
[ "$(code "$URL")" = 405 ] || fail "GET"

# Bad input at the edges: the right status, and a JSON body even when nginx answers by itself.
# expect STATUS WHAT BODY_PATTERN CURL_ARGS...
expect() {
  local want=$1 what=$2 pattern=$3 got
  shift 3
  got=$(curl -s -D "$TMP/headers" -o "$TMP/body" -w '%{http_code}' "$@")
  [ "$got" = "$want" ] || { fail "$what: HTTP $got, want $want: $(head -c 300 "$TMP/body")"; return; }
  grep -qi '^content-type: application/json' "$TMP/headers" || fail "$what: not application/json"
  python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$TMP/body" 2>/dev/null \
    || fail "$what: body is not JSON: $(head -c 300 "$TMP/body")"
  grep -q -- "$pattern" "$TMP/body" || fail "$what: body lacks '$pattern': $(head -c 300 "$TMP/body")"
}
B64=$(base64 -w0 "$VALID")
expect 400 "repeated X-Receipt" '"reason":"send one X-Receipt header, not 2"' \
  -H "X-Receipt: $B64" -H "X-Receipt: $B64" -X POST "$URL"
expect 400 "repeated X-Receipt, one empty" 'one X-Receipt header' -H "X-Receipt: $B64" -H "X-Receipt;" -X POST "$URL"
head -c $((5 * 1024 * 1024)) /dev/zero > "$TMP/5m.bin"          # over client_max_body_size (4m)
expect 413 "body over client_max_body_size" 'body too large' --data-binary @"$TMP/5m.bin" "$URL"
expect 413 "chunked body over client_max_body_size" 'body too large' \
  -H 'Transfer-Encoding: chunked' --data-binary @"$TMP/5m.bin" "$URL"
head -c $((3 * 1024 * 1024 + 1)) /dev/zero > "$TMP/3m.bin"      # under nginx's limit, over max_input_bytes
expect 413 "body over max_input_bytes" 'IAPV_E_TOO_LARGE' --data-binary @"$TMP/3m.bin" "$URL"
LONG=$(head -c 9000 /dev/zero | tr '\0' A)                      # one line over large_client_header_buffers (8k)
expect 400 "X-Receipt over the header buffer" 'headers too large' -H "X-Receipt: $LONG" -X POST "$URL"
MID=${LONG:0:7000}                                              # five lines of 7k: over the 4 x 8k in total
expect 400 "headers over the total buffer" 'headers too large' \
  -H "X-A: $MID" -H "X-B: $MID" -H "X-C: $MID" -H "X-D: $MID" -H "X-E: $MID" -X POST "$URL"
expect 414 "request line too long" 'URI too long' "$URL?$LONG"
expect 404 "another path" 'not found' "http://127.0.0.1:$PORT/other"
python3 - "$PORT" > "$TMP/raw" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall(b"NOT HTTP AT ALL\r\n\r\n")
data = b""
while chunk := s.recv(65536):
    data += chunk
sys.stdout.write(data.decode("latin-1"))
PY
{ head -1 "$TMP/raw" | grep -q '^HTTP/1.1 400' && grep -qi '^content-type: application/json' "$TMP/raw" \
  && grep -q '^{"error":"bad request"}' "$TMP/raw"; } || fail "unparsable request: $(head -c 300 "$TMP/raw")"
# The handler's own answers stay as they were after all of this.
[ "$(code --data-binary @"$VALID" "$URL")" = 200 ] || fail "valid receipt after the bad requests: $(cat "$TMP/body")"

workers_before=$(pgrep -P "$(cat "$TMP/nginx.pid")" | sort | tr '\n' ' ')
seq 200 | xargs -P 16 -I{} curl -s -o /dev/null -w '%{http_code}\n' --data-binary @"$VALID" "$URL" > "$TMP/codes"
ok=$(grep -c '^200$' "$TMP/codes")
[ "$ok" = 200 ] || fail "concurrent: only $ok of 200 succeeded ($(sort "$TMP/codes" | uniq -c | tr '\n' ' '))"
workers_after=$(pgrep -P "$(cat "$TMP/nginx.pid")" | sort | tr '\n' ' ')
[ "$workers_before" = "$workers_after" ] || fail "workers changed: $workers_before -> $workers_after"
if grep -E '\[(alert|emerg|crit)\]|exited on signal' "$TMP/error.log"; then fail "errors in the nginx log"; fi

if [ "$failures" -ne 0 ]; then echo "nginx-test: $failures failure(s)"; cat "$TMP/error.log"; exit 1; fi
echo "nginx-test: OK (200 concurrent requests, workers stayed up: $workers_after)"
