#!/usr/bin/env bash
# The Swift example, end to end: builds examples/swift (its build folder is examples/swift/.build),
# starts the server on 127.0.0.1 on a free port with the fake Apple PKI's verifier config and a
# fixed clock, and sends it real HTTP requests (curl) carrying tokens signed by that PKI
# (examples/swift/tests/make_tokens.py, which needs Python's cryptography package).
#
#     examples/swift/run-tests.sh          # from anywhere; exits non-zero when a check fails
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CONFIG="$ROOT/Tests/shared/fakeapple/verifier.json"
WORK="$(mktemp -d)"
SERVER_PID=""
START=$SECONDS

cleanup() {
    if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT

# A Python that can sign: the test venv of `make test`, else this machine's python3, else
# python3 with cryptography installed for this user.
PYTHON=""
for candidate in "$ROOT/build/venv/bin/python" python3; do
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import cryptography' 2>/dev/null; then
        PYTHON="$candidate"
        break
    fi
done
if [[ -z "$PYTHON" ]]; then
    echo "swift-example: installing Python's cryptography package for this user (pip install --user)"
    python3 -m pip install --quiet --user cryptography
    PYTHON=python3
fi

echo "swift-example: building (swift build -c debug --package-path examples/swift)"
swift build -c debug --package-path "$HERE"
BIN="$(swift build -c debug --package-path "$HERE" --show-bin-path)/PurchaseServer"

"$PYTHON" "$HERE/tests/make_tokens.py" > "$WORK/tokens.json"
token() { "$PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$WORK/tokens.json" "$1"; }
NOW_MS="$(token now_ms)"
ALICE="$(token alice)"
BOB="$(token bob)"

# The server picks a free port (--port 0) and says which on its first line.
IAPV_EXAMPLE_NOW_MS="$NOW_MS" "$BIN" --config "$CONFIG" --host 127.0.0.1 --port 0 \
    > "$WORK/server.out" 2> "$WORK/server.err" &
SERVER_PID=$!
PORT=""
for _ in $(seq 1 300); do
    PORT="$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$WORK/server.out" | head -n 1)"
    [[ -n "$PORT" ]] && break
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
        echo "swift-example: the server exited before listening:" >&2
        cat "$WORK/server.out" "$WORK/server.err" >&2
        exit 1
    fi
    sleep 0.1
done
if [[ -z "$PORT" ]]; then
    echo "swift-example: the server did not say it was listening within 30 s" >&2
    cat "$WORK/server.err" >&2
    exit 1
fi
BASE="http://127.0.0.1:$PORT"
echo "swift-example: server on $BASE, clock fixed at $NOW_MS"

PASSED=0
FAILED=0

# check NAME STATUS EXPR: the last answer had HTTP status STATUS and the Python expression EXPR
# is true of its JSON body `b`.
check() {
    local name="$1" want="$2" expr="$3" got
    got="$(cat "$WORK/status")"
    if [[ "$got" == "$want" ]] && "$PYTHON" -c '
import json, sys
b = json.load(open(sys.argv[1]))
sys.exit(0 if eval("(" + sys.argv[2] + ")") else 1)' "$WORK/body" "$expr" 2>/dev/null; then
        PASSED=$((PASSED + 1))
        echo "ok   $name"
    else
        FAILED=$((FAILED + 1))
        echo "FAIL $name: wanted HTTP $want and $expr; got HTTP $got $(head -c 600 "$WORK/body")"
    fi
}

# post PATH JSON-FILE | get PATH: the answer's body goes to $WORK/body, its status to $WORK/status.
post() {
    curl -sS -o "$WORK/body" -w '%{http_code}' -H 'Content-Type: application/json' --data-binary "@$2" "$BASE$1" \
        > "$WORK/status" || echo "no answer (curl $?)" > "$WORK/status"
}
get() {
    curl -sS -o "$WORK/body" -w '%{http_code}' "$BASE$1" > "$WORK/status" || echo "no answer (curl $?)" > "$WORK/status"
}
claim() {   # claim USER TOKEN-NAME
    printf '{"user_id": "%s", "signed_transaction": "%s"}' "$1" "$(token "$2")" > "$WORK/request.json"
    post /transactions "$WORK/request.json"
}
notify() {  # notify TOKEN-NAME
    printf '{"signedPayload": "%s"}' "$(token "$1")" > "$WORK/request.json"
    post /apple/notifications "$WORK/request.json"
}

# -- POST /transactions: each transaction delivered once, to its owner only --------------------
claim "$ALICE" lifetime
check "a valid transaction is delivered" 200 'b["status"] == "accepted" and b["delivered"] == ["2000000000000001"]'
claim "$ALICE" lifetime
check "claimed again by its owner: nothing new delivered" 200 'b["status"] == "accepted" and b["delivered"] == []'
claim "$BOB" lifetime
check "claimed by another user (its appAccountToken names Alice): 409" 409 'b["verdict"] == "owned_by_another_user"'
claim "$BOB" album
check "a transaction without appAccountToken goes to its first claimant" 200 'b["delivered"] == ["2000000000000002"]'
claim "$ALICE" album
check "then another user's claim is refused: 409" 409 'b["verdict"] == "owned_by_another_user"'
claim "$ALICE" foreign
check "a transaction for another app is refused: 400 bundle_mismatch" 400 'b["verdict"] == "bundle_mismatch"'
claim "$ALICE" tampered
check "a tampered transaction is refused: 400 signature_invalid" 400 'b["verdict"] == "signature_invalid"'
claim "$ALICE" not_a_transaction
check "a notification sent as a transaction is refused: 400 malformed" 400 'b["verdict"] == "malformed"'

# -- POST /apple/notifications: applied once, in order, to the purchase's owner -----------------
notify subscribed
check "a notification applies (SUBSCRIBED, Alice's by appAccountToken)" 200 \
    'b["status"] == "apply" and b["user_id"] == "'"$ALICE"'"'
notify subscribed
check "the same notification again is a duplicate: 200, nothing changes" 200 'b["status"] == "ignore_duplicate"'
notify stale
check "a notification signed before the last applied one is stale: 200, nothing changes" 200 'b["status"] == "ignore_stale"'
notify coins
check "a consumable bought (ONE_TIME_CHARGE) is delivered" 200 'b["status"] == "apply" and b["delivered"] == ["1000000000000900"]'
notify coins
check "its duplicate delivers nothing" 200 'b["status"] == "ignore_duplicate" and "delivered" not in b'
notify refund
check "its REFUND takes it back" 200 'b["status"] == "apply" and b["revoked"] == ["1000000000000900"] and b["delivered"] == []'
notify someone_else
check "a renewal whose appAccountToken names another user: 409" 409 'b["verdict"] == "owned_by_another_user"'
notify forged
check "a forged notification is refused: 400 signature_invalid" 400 'b["verdict"] == "signature_invalid"'

# -- requests that are not what the routes take ------------------------------------------------
printf 'not json' > "$WORK/request.json"
post /apple/notifications "$WORK/request.json"
check "a body that is not JSON: 400" 400 '"error" in b'
printf '{"payload": "x"}' > "$WORK/request.json"
post /apple/notifications "$WORK/request.json"
check "JSON of the wrong shape: 422" 422 '"error" in b'

# -- GET /users/{id}/entitlements: what the notifications and claims came to ------------------
get "/users/$ALICE/entitlements"
check "Alice's entitlements: the lifetime purchase and the subscription (auto-renew still on)" 200 '
{e["id"]: (e["state"], e["active"]) for e in b["entitlements"]} == {
    "com.example.fake.lifetime": ("owned", True), "com.example.fake.monthly": ("active", True)}
and [e for e in b["entitlements"] if e["id"] == "com.example.fake.monthly"][0]["will_renew"] is True
and b["now_ms"] == '"$NOW_MS"
get "/users/$BOB/entitlements"
check "Bob's entitlements: the album only" 200 '[(e["id"], e["active"]) for e in b["entitlements"]] == [("com.example.fake.album", True)]'
get "/users/nobody/entitlements"
check "a user with no purchase has no entitlement" 200 'b["entitlements"] == []'

if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    FAILED=$((FAILED + 1))
    echo "FAIL the server is no longer running"
fi
echo "swift-example: $((SECONDS - START)) s"
echo "swift-example: $PASSED passed, $FAILED failed"
if [[ "$FAILED" -ne 0 ]]; then
    echo "swift-example: the server's log:" >&2
    tail -n 40 "$WORK/server.err" >&2
    exit 1
fi
