#!/usr/bin/env bash
# The nginx gateway test: Debian's nginx with lua-nginx-module on a free 127.0.0.1 port, the
# example config, real receipts; then the nginx.conf of docs/lua.md with the README's receipt.
# Each nginx is stopped by its PID at the end, even on failure.
# The library is IAPVERIFY_BUILD_DIR/lib/libiapverify.so.1 (default: the checkout's build).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
export IAPVERIFY_BUILD_DIR=${IAPVERIFY_BUILD_DIR:-$ROOT/build}
BUILD=$IAPVERIFY_BUILD_DIR
FX=$ROOT/Tests/IAPVerifyTests/Fixtures
TMP=$(mktemp -d)
chmod 755 "$TMP"
stop() {
  for pid in "$TMP"/nginx.pid "$TMP"/*/nginx.pid; do
    if [ -f "$pid" ]; then kill "$(cat "$pid")" 2>/dev/null; sleep 0.3; fi
  done
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


# The nginx.conf of docs/lua.md, as written but for this checkout's paths, the port and a temp
# directory of its own. It must start, and answer the README's receipt (base64, 11 KB: over the
# 8k body buffer, so nginx hands it over in a temp file) with the verdict the CLI gives.
python3 - "$ROOT/docs/lua.md" > "$TMP/doc.conf" <<'PY'
import re, sys
m = re.search(r"<!-- skip: Tests/integration/nginx\.sh runs this file.*?-->\n```nginx\n(.*?)```\n",
              open(sys.argv[1]).read(), re.S)
sys.stdout.write(m.group(1) if m else "")
PY
# doc_nginx NAME HTTP_LINES [LUA_CONFIG]: renders the file into $TMP/NAME (HTTP_LINES first in
# http {}, LUA_CONFIG in place of the verifier's config), starts nginx there, prints its URL.
doc_nginx() {
  local dir=$TMP/$1 port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  mkdir -p "$dir"
  python3 - "$TMP/doc.conf" "$dir/nginx.conf" "$ROOT" "$BUILD/lib/libiapverify.so.1" "$port" "$2" ${3+"$3"} <<'PY' || return 1
import sys
src, out, root, lib, port, http = sys.argv[1:7]
text = open(src).read()
subs = [("/path/to/iapverify", root), ("/usr/lib/x86_64-linux-gnu/libiapverify.so.1", lib),
        ("listen 8080;", f"listen 127.0.0.1:{port};"), ("\nhttp {\n", f"\nhttp {{\n    {http}\n")]
if len(sys.argv) > 7:
    subs.append(('{ bundle_id = "com.example.app" }', sys.argv[7]))
for old, new in subs:
    if text.count(old) != 1:
        sys.exit(f"docs/lua.md: its nginx.conf has {text.count(old)} of {old!r}, this test expects 1")
    text = text.replace(old, new)
open(out, "w").write(text)
PY
  nginx -p "$dir" -e "$dir/error.log" -c "$dir/nginx.conf" -g "pid $dir/nginx.pid; error_log $dir/error.log warn;" \
    || { cat "$dir/error.log" >&2; return 1; }
  for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
  echo "http://127.0.0.1:$port/verify"
}
verdict() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get("verdict"))' "$1" 2>/dev/null; }
README_RECEIPT=$FX/receipts/sandbox_2020-07-22_com.revenuecat.sampleapp.der
base64 -w0 "$README_RECEIPT" > "$TMP/readme.b64"
echo '{"bundle_id": "com.example.app"}' > "$TMP/doc-config.json"      # the doc's config, as JSON
"$BUILD/bin/iapverify" receipt "$README_RECEIPT" --config "$TMP/doc-config.json" > "$TMP/cli.json"
"$BUILD/bin/iapverify" receipt "$README_RECEIPT" --config "$ROOT/docs/examples/pro-config.json" > "$TMP/cli-pro.json"
CLI=$(verdict "$TMP/cli.json") CLI_PRO=$(verdict "$TMP/cli-pro.json")
{ [ "$CLI" = environment_rejected ] && [ "$CLI_PRO" = valid ]; } || fail "the CLI's verdicts: $CLI, $CLI_PRO"

if [ ! -s "$TMP/doc.conf" ]; then
  fail "docs/lua.md: no nginx block under <!-- skip: Tests/integration/nginx.sh runs this file ... -->"
elif ! DOC=$(doc_nginx doc "client_body_temp_path $TMP/doc/client_body;"); then
  fail "docs/lua.md: nginx does not start with its nginx.conf"
else
  # receipt STATUS WHAT VERDICT CURL_ARGS...: the status, and the verdict of the result.
  receipt() {
    local want=$1 what=$2 verdict_want=$3 got
    shift 3
    got=$(code "$@")
    { [ "$got" = "$want" ] && [ "$(verdict "$TMP/body")" = "$verdict_want" ]; } \
      || fail "docs/lua.md's nginx.conf, $what: HTTP $got, want $want $verdict_want: $(head -c 300 "$TMP/body")"
  }
  receipt 403 "the README's receipt in base64" "$CLI" --data-binary @"$TMP/readme.b64" "$DOC"
  grep -q 'buffered to a temporary file' "$TMP/doc/error.log" || fail "docs/lua.md's nginx.conf: the body was not in a temp file"
  receipt 403 "the README's receipt in DER" "$CLI" --data-binary @"$README_RECEIPT" "$DOC"
  receipt 400 "not a receipt" malformed --data-binary 'not a receipt' "$DOC"
  { [ "$(code -X POST "$DOC")" = 400 ] && grep -q '"error":"no request body' "$TMP/body"; } \
    || fail "docs/lua.md's nginx.conf, no body: $(head -c 300 "$TMP/body")"
  { [ "$(code --data-binary @"$TMP/3m.bin" "$DOC")" = 413 ] && grep -q 'IAPV_E_TOO_LARGE' "$TMP/body"; } \
    || fail "docs/lua.md's nginx.conf, over max_input_bytes: $(head -c 300 "$TMP/body")"
  [ "$(code --data-binary @"$TMP/5m.bin" "$DOC")" = 413 ] || fail "docs/lua.md's nginx.conf, over client_max_body_size"
  if grep -E '\[(alert|emerg|crit)\]|exited on signal' "$TMP/doc/error.log"; then fail "errors in the docs nginx log"; fi
fi
# The same file with the body kept in memory and the README's config: the receipt is valid.
if [ -s "$TMP/doc.conf" ]; then
  if ! MEM=$(doc_nginx mem "client_body_temp_path $TMP/mem/client_body; client_body_buffer_size 4m;" \
             "[[$(cat "$ROOT/docs/examples/pro-config.json")]]"); then
    fail "docs/lua.md: nginx does not start with its nginx.conf and the README's config"
  else
    { [ "$(code --data-binary @"$TMP/readme.b64" "$MEM")" = 200 ] && [ "$(verdict "$TMP/body")" = "$CLI_PRO" ]; } \
      || fail "docs/lua.md's nginx.conf, the README's receipt in memory: $(head -c 300 "$TMP/body")"
    { [ "$(code --data-binary @"$TMP/3m.bin" "$MEM")" = 413 ] && grep -q 'IAPV_E_TOO_LARGE' "$TMP/body"; } \
      || fail "docs/lua.md's nginx.conf, over max_input_bytes in memory: $(head -c 300 "$TMP/body")"
    if grep -q 'buffered to a temporary file' "$TMP/mem/error.log"; then fail "docs/lua.md's nginx.conf: a body went to a temp file"; fi
  fi
fi

if [ "$failures" -ne 0 ]; then echo "nginx-test: $failures failure(s)"; cat "$TMP/error.log"; exit 1; fi
echo "nginx-test: OK (200 concurrent requests, workers stayed up: $workers_after; docs/lua.md's nginx.conf)"
