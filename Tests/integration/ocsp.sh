#!/usr/bin/env bash
# Revocation end to end: OpenSSL's own OCSP responder answers for the fake PKI of
# Tests/shared/fakeapple/ocsp (it listens on every address; the test talks to 127.0.0.1). The CLI
# prints the leaf's request and responder; the answer goes back in --options ocsp_responses.
# Under "revocation": "required": no answer, good, the good answer read past its nextUpdate
# (stale), unknown (the responder's index names another certificate), revoked (index rewritten),
# and a forged answer. The responder signs at the real time, so --now is the clock.
set -euo pipefail
cd "$(dirname "$0")/../.."
CLI=build/bin/iapverify
FX=Tests/shared/fakeapple/ocsp
TMP=$(mktemp -d)
PID=
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$TMP"; }
trap cleanup EXIT
fail() { echo "ocsp-test FAILED: $*" >&2; exit 1; }

python3 - "$FX/root.pem" > "$TMP/config.json" <<'PY'
import json, sys
print(json.dumps({"bundle_id": "com.example.fake", "revocation": "required",
                  "trust": {"include_apple_roots": False, "roots_pem": [open(sys.argv[1]).read()]}}))
PY
NOW=$(date +%s%3N)
TOKEN="$FX/transaction.jws"

start_responder() {  # $1: the index file
  openssl ocsp -index "$1" -port 39217 -rsigner "$FX/wwdr.pem" -rkey "$FX/wwdr.key.pem" -CA "$FX/wwdr.pem" \
      -ndays 7 > "$TMP/responder.log" 2>&1 &
  PID=$!
  # Wait for it to listen (it serves one connection at a time, so no probe connection).
  for _ in $(seq 1 100); do
    grep -q "waiting for OCSP client connections" "$TMP/responder.log" 2>/dev/null && return 0
    sleep 0.1
  done
  cat "$TMP/responder.log"; fail "openssl ocsp did not start"
}
stop_responder() { kill "$PID"; wait "$PID" 2>/dev/null || true; PID=; }

# POSTs the leaf's OCSP request to the responder the certificate names; prints the answer, base64.
fetch() {
  "$CLI" ocsp-request "$TOKEN" --config "$TMP/config.json" --now "$NOW" > "$TMP/request.json" || true
  python3 - "$TMP/request.json" <<'PY'
import base64, json, sys, urllib.request
r = json.load(open(sys.argv[1]))
assert r["responder_url"] == "http://127.0.0.1:39217/ocsp", r
req = urllib.request.Request(r["responder_url"], data=base64.b64decode(r["request"]),
                             headers={"Content-Type": "application/ocsp-request"})
print(base64.b64encode(urllib.request.urlopen(req, timeout=10).read()).decode())
PY
}

verdict() {  # $1: options file or empty; $2: the time to check at (default now)
  local rc=0 at=${2:-$NOW}
  if [ -n "$1" ]; then "$CLI" jws "$TOKEN" --config "$TMP/config.json" --now "$at" --options "$1" > "$TMP/out.json" || rc=$?
  else "$CLI" jws "$TOKEN" --config "$TMP/config.json" --now "$at" > "$TMP/out.json" || rc=$?; fi
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["verdict"], r["revocation"]["status"])' "$TMP/out.json"
  return 0
}

echo "-- required, no answer yet: revocation_unknown, with the request to send"
[ "$(verdict "")" = "revocation_unknown unchecked" ] || fail "expected revocation_unknown: $(cat "$TMP/out.json")"

echo "-- the responder says good"
serial=$(openssl x509 -in "$FX/leaf.pem" -noout -serial | cut -d= -f2)
printf 'V\t450101000000Z\t\t%s\tunknown\t/CN=leaf\n' "$serial" > "$TMP/index.txt"
start_responder "$TMP/index.txt"
printf '{"ocsp_responses": ["%s"]}' "$(fetch)" > "$TMP/good.json"
[ "$(verdict "$TMP/good.json")" = "valid good" ] || fail "expected valid/good: $(cat "$TMP/out.json")"
stop_responder

echo "-- the same good answer, read 8 days later (past its nextUpdate, -ndays 7): stale"
[ "$(verdict "$TMP/good.json" $((NOW + 8 * 86400000)))" = "revocation_unknown unknown" ] \
  || fail "expected revocation_unknown for a stale answer: $(cat "$TMP/out.json")"
grep -q stale "$TMP/out.json" || fail "the reason does not say stale: $(cat "$TMP/out.json")"

echo "-- the responder does not know the certificate (its index holds another serial): unknown"
printf 'V\t450101000000Z\t\t%s\tunknown\t/CN=other\n' "0123456789ABCDEF" > "$TMP/index.txt"
start_responder "$TMP/index.txt"
printf '{"ocsp_responses": ["%s"]}' "$(fetch)" > "$TMP/unknown.json"
[ "$(verdict "$TMP/unknown.json")" = "revocation_unknown unknown" ] || fail "expected revocation_unknown: $(cat "$TMP/out.json")"
stop_responder

echo "-- the responder says revoked"
printf 'R\t450101000000Z\t251231000000Z,keyCompromise\t%s\tunknown\t/CN=leaf\n' "$serial" > "$TMP/index.txt"
start_responder "$TMP/index.txt"
printf '{"ocsp_responses": ["%s"]}' "$(fetch)" > "$TMP/revoked.json"
[ "$(verdict "$TMP/revoked.json")" = "revoked revoked" ] || fail "expected revoked: $(cat "$TMP/out.json")"
stop_responder

echo "-- an answer for the good leaf does not help a forged one: the fixture signed by another key"
printf '{"ocsp_responses": ["%s"]}' "$(base64 -w0 "$FX/forged.der")" > "$TMP/forged.json"
[ "$(verdict "$TMP/forged.json")" = "revocation_unknown unknown" ] || fail "expected revocation_unknown: $(cat "$TMP/out.json")"
echo "ocsp-test: OK"
