#!/usr/bin/env bash
# CLI tests: outputs and the exit codes of docs/cli.md (0 valid, 1 other verdict, 2 usage/config/input).
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${IAPVERIFY_BIN:-build/bin/iapverify}   # IAPVERIFY_BIN: test another build
FX=Tests/IAPVerifyTests/Fixtures
R=$FX/receipts/production_2025-04-18_com.dashedspace.analytics_sha256.der
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failures=0
expect() {  # expect EXIT_CODE DESCRIPTION -- COMMAND...
  local want=$1 what=$2; shift 3
  "$@" > "$TMP/out" 2> "$TMP/err"
  local got=$?
  if [ "$got" != "$want" ]; then
    echo "FAIL ($what): exit $got, wanted $want"; sed 's/^/  stderr: /' "$TMP/err" | head -3; failures=$((failures + 1))
  else
    echo "ok   ($what)"
  fi
}
has() { grep -q -- "$1" "$TMP/$2" || { echo "FAIL: '$1' not in $2"; failures=$((failures + 1)); }; }
hasnt() { ! grep -q -- "$1" "$TMP/$2" || { echo "FAIL: '$1' in $2"; failures=$((failures + 1)); }; }

expect 0 "valid receipt" -- $BIN receipt "$R" --bundle-id com.dashedspace.analytics --now 2030-01-01T00:00:00Z
has '"verdict":"valid"' out
expect 1 "foreign bundle id" -- $BIN receipt "$R" --bundle-id com.example.other --now 1893456000000
has '"verdict":"bundle_mismatch"' out
expect 0 "no bundle id: any app, said on stderr" -- $BIN receipt "$R" --now 1893456000000
has 'bundle_id "\*"' err
echo '{"bundle_id":"com.other","environments":["Production"]}' > "$TMP/config.json"
echo '{"bundle_id":"com.revenuecat.sampleapp","environments":["Production","Sandbox"]}' > "$TMP/sandbox.json"
expect 0 "--bundle-id overrides the config" -- $BIN receipt "$R" --config "$TMP/config.json" --bundle-id com.dashedspace.analytics --now 1893456000000
expect 1 "config bundle id used" -- $BIN receipt "$R" --config "$TMP/config.json" --now 1893456000000
expect 0 "stdin and base64" -- sh -c "base64 '$R' | $BIN receipt - --bundle-id com.dashedspace.analytics --now 1893456000000"
expect 0 "pretty output" -- $BIN receipt "$R" --bundle-id com.dashedspace.analytics --now 1893456000000 --pretty
has '^  "verdict": "valid"' out
echo '{"device_id":"C68BCE28-7E27-494A-A082-ACECB9328171"}' > "$TMP/options.json"
expect 1 "options file with a device id" -- $BIN receipt "$R" --bundle-id com.dashedspace.analytics --now 1893456000000 --options "$TMP/options.json"
has '"verdict":"device_mismatch"' out
expect 1 "garbage input is malformed" -- sh -c "echo 'hello' | $BIN receipt - --bundle-id x --now 1"
has '"verdict":"malformed"' out
expect 0 "inspect" -- $BIN inspect "$R"
has '"trusted":false' out
has '"verdict":"unverified"' out
expect 1 "inspect garbage" -- sh -c "echo 'hello' | $BIN inspect -"
echo '{"bundle_id":"a","colour":"red"}' > "$TMP/bad.json"
expect 2 "unknown config key" -- $BIN receipt "$R" --config "$TMP/bad.json"
has 'IAPV_E_CONFIG: config: unknown key "colour"' err
expect 2 "missing file" -- $BIN receipt /nonexistent --bundle-id x
expect 2 "bad --now" -- $BIN receipt "$R" --bundle-id x --now yesterday
expect 2 "unknown option" -- $BIN receipt "$R" --frobnicate
expect 2 "no subcommand argument" -- $BIN receipt
echo '{"colour":1}' > "$TMP/badopts.json"
expect 2 "bad options file" -- $BIN receipt "$R" --bundle-id x --options "$TMP/badopts.json"
echo '{"bundle_id":"*","max_input_bytes":100}' > "$TMP/small.json"
expect 2 "over max_input_bytes" -- $BIN receipt "$R" --config "$TMP/small.json"
has 'IAPV_E_TOO_LARGE' err
VR=$FX/verifyreceipt
expect 0 "response: status 0" -- $BIN response "$VR/revenuecat_sandbox_status0_2020-07-22_paired.json" --bundle-id com.revenuecat.sampleapp --config "$TMP/sandbox.json" --now 1595440000000 --environment Sandbox
has '"action":"accept"' out
has '"id":"com.revenuecat.annual_39.99.2_week_intro","active":true' out
has '"deprecations":\[\]' out
hasnt 'deprecated' err
expect 1 "response: 21007 from production" -- $BIN response "$VR/alexalok_Invalid_Receipt_Is_From_Test_Environment.json" --config "$TMP/sandbox.json" --environment Production --now 1
has '"action":"retry_sandbox"' out
expect 1 "response: --environment in any case" -- $BIN response "$VR/alexalok_Invalid_Receipt_Is_From_Test_Environment.json" --config "$TMP/sandbox.json" --environment production --now 1
has '"action":"retry_sandbox"' out
expect 1 "response: back-off on attempt 3" -- $BIN response "$VR/alexalok_Invalid_Malformed_Receipt_Data.json" --bundle-id x --attempt 3 --now 1
has '"retry_after_ms":4000' out
expect 2 "response: bad --environment" -- $BIN response "$VR/alexalok_Invalid_Malformed_Receipt_Data.json" --bundle-id x --environment staging
has '--environment must be Production or Sandbox' err
# --endpoint: the deprecated old name of --environment, until the next release; said on stderr.
expect 0 "response: deprecated --endpoint still works" -- $BIN response "$VR/revenuecat_sandbox_status0_2020-07-22_paired.json" --bundle-id com.revenuecat.sampleapp --config "$TMP/sandbox.json" --now 1595440000000 --endpoint sandbox
has '"action":"accept"' out
has '--endpoint is deprecated: use --environment Sandbox' err
expect 2 "response: bad deprecated --endpoint" -- $BIN response "$VR/alexalok_Invalid_Malformed_Receipt_Data.json" --bundle-id x --endpoint staging
expect 0 "response --help does not show --endpoint" -- $BIN response --help
has '--environment' out
hasnt '--endpoint' out
# The options' old spellings still work, each noted in the result's deprecations.
echo '{"endpoint":"sandbox"}' > "$TMP/old-endpoint.json"
expect 1 "response: deprecated options.endpoint" -- $BIN response "$VR/alexalok_Invalid_Malformed_Receipt_Data.json" --bundle-id x --options "$TMP/old-endpoint.json" --now 1
has '"deprecations":\["options.endpoint is deprecated' out
echo '{"environment":"sandbox"}' > "$TMP/old-environment.json"
expect 1 "response: deprecated lower-case options.environment" -- $BIN response "$VR/alexalok_Invalid_Malformed_Receipt_Data.json" --bundle-id x --options "$TMP/old-environment.json" --now 1
has '"deprecations":\["options.environment \\"sandbox\\" is deprecated' out
# Each entry point reads its own options: another one's key is refused by name.
expect 2 "response refuses device_id" -- $BIN response "$VR/alexalok_Invalid_Malformed_Receipt_Data.json" --bundle-id x --options "$TMP/options.json" --now 1
has '"device_id" does not apply to iapv_interpret_response; it is read by iapv_verify_receipt' err
echo '{"environment":"Sandbox"}' > "$TMP/env-options.json"
expect 2 "receipt refuses environment" -- $BIN receipt "$R" --bundle-id com.dashedspace.analytics --options "$TMP/env-options.json" --now 1893456000000
has '"environment" does not apply to iapv_verify_receipt' err
echo '{"transactions":[{"transaction_id":"1","product_id":"p","purchase_date_ms":"1000","expires_date_ms":"5000"}]}' > "$TMP/input.json"
expect 0 "entitlements" -- $BIN entitlements "$TMP/input.json" --bundle-id x --now 2000
has '"state":"active"' out
expect 1 "entitlements: malformed input" -- sh -c "echo '{\"transactions\":3}' | $BIN entitlements - --bundle-id x --now 1"
has '"verdict":"malformed"' out
JWS=$FX/jws/transaction_autorenew_sandbox_2022-11.jws
echo '{"bundle_id":"*","environments":["Sandbox"]}' > "$TMP/sandbox-any.json"
expect 0 "jws: a real signed transaction" -- $BIN jws "$JWS" --config "$TMP/sandbox-any.json" --now 1893456000000
has '"kind":"transaction"' out
echo '{"bundle_id":"*"}' > "$TMP/production-any.json"
expect 1 "jws: production only" -- $BIN jws "$JWS" --config "$TMP/production-any.json" --now 1893456000000
has '"verdict":"environment_rejected"' out
expect 0 "help" -- $BIN --help
for sub in receipt response entitlements jws inspect; do has "^  $sub " out; done
has 'docs/cli.md' out
# Help points into the repository's own manual, never to a document outside it.
if grep -qE '§|\.\./' "$TMP/out"; then echo "FAIL: --help points outside the repository"; failures=$((failures + 1)); fi
for sub in receipt response entitlements jws inspect; do
  expect 0 "$sub --help points to docs/cli.md" -- $BIN $sub --help
  has 'docs/cli.md' out
  if grep -qE '§|\.\./' "$TMP/out"; then echo "FAIL: $sub --help points outside the repository"; failures=$((failures + 1)); fi
done
expect 0 "--version is the VERSION file" -- $BIN --version
[ "$(cat "$TMP/out")" = "$(cat VERSION)" ] || { echo "FAIL: --version says $(cat "$TMP/out"), VERSION says $(cat VERSION)"; failures=$((failures + 1)); }

# Usage errors exit 2, the bare command included, with the usage on stderr.
expect 2 "bare iapverify is a usage error" -- $BIN
has 'USAGE: iapverify <subcommand>' err
has 'receipt' err
[ ! -s "$TMP/out" ] || { echo "FAIL: bare iapverify wrote to stdout"; failures=$((failures + 1)); }

# Inputs that are not receipts are named, with what to do instead.
{ echo "-----BEGIN PKCS7-----"; base64 -w 64 "$R"; echo "-----END PKCS7-----"; } > "$TMP/receipt.pem"
expect 0 "PEM PKCS7 receipt is decoded" -- $BIN receipt "$TMP/receipt.pem" --bundle-id com.dashedspace.analytics --now 1893456000000
has '"verdict":"valid"' out
sed 's/$/\r/' "$TMP/receipt.pem" > "$TMP/receipt-crlf.pem"
expect 0 "PEM with CRLF line ends, from stdin" -- sh -c "$BIN receipt - --bundle-id com.dashedspace.analytics --now 1893456000000 < '$TMP/receipt-crlf.pem'"
expect 0 "inspect a PEM receipt" -- $BIN inspect "$TMP/receipt.pem"
has '"trusted":false' out
{ echo "-----BEGIN CERTIFICATE-----"; base64 -w 64 "$R"; echo "-----END CERTIFICATE-----"; } > "$TMP/cert.pem"
expect 2 "another PEM block is named" -- $BIN receipt "$TMP/cert.pem" --bundle-id x --now 1
has 'is a PEM "CERTIFICATE" block, not a receipt' err
expect 2 "a /verifyReceipt body given to receipt" -- $BIN receipt "$FX/verifyreceipt/alexalok_Invalid_Malformed_Receipt_Data.json" --bundle-id x --now 1
has 'is JSON, not a receipt' err
has 'iapverify response' err
expect 2 "JSON from stdin given to inspect" -- sh -c "echo ' {\"status\":0}' | $BIN inspect -"
has 'iapverify response' err
: > "$TMP/empty"
expect 2 "empty receipt file" -- $BIN receipt "$TMP/empty" --bundle-id x --now 1
has 'is empty' err

# --now in seconds is refused with a hint; milliseconds and RFC 3339 are accepted.
expect 2 "--now in seconds" -- $BIN receipt "$R" --bundle-id com.dashedspace.analytics --now 1893456000
has 'looks like Unix seconds' err
has '1893456000000' err
has '2030-01-01T00:00:00Z' err
expect 0 "--now in milliseconds" -- $BIN receipt "$R" --bundle-id com.dashedspace.analytics --now 1893456000000

# Errors on files say why.
expect 2 "missing file says why" -- $BIN receipt "$TMP/nonexistent.der" --bundle-id x --now 1
has 'No such file or directory' err
expect 2 "a directory says why" -- $BIN receipt "$TMP" --bundle-id x --now 1
has 'Is a directory' err
expect 2 "missing config file says why" -- $BIN receipt "$R" --config "$TMP/nonexistent.json" --now 1
has 'No such file or directory' err

# Shared defaults with the library (environments ["Production"]); "*" only when no bundle id is given anywhere.
SB=$FX/receipts/sandbox_2020-07-22_com.revenuecat.sampleapp.der
expect 1 "no config: Production only, like the library" -- $BIN receipt "$SB" --bundle-id com.revenuecat.sampleapp --now 1893456000000
has '"verdict":"environment_rejected"' out
echo '{"environments":["Production","Sandbox"]}' > "$TMP/no-bundle.json"
expect 0 "config without bundle_id: any app, said on stderr" -- $BIN receipt "$SB" --config "$TMP/no-bundle.json" --now 1893456000000
has 'bundle_id "\*"' err
has '"bundle_id":"not_checked"' out
expect 0 "config without bundle_id, --bundle-id given: nothing said" -- $BIN receipt "$SB" --config "$TMP/no-bundle.json" --bundle-id com.revenuecat.sampleapp --now 1893456000000
if grep -q 'bundle_id "\*"' "$TMP/err"; then echo "FAIL: warned although --bundle-id was given"; failures=$((failures + 1)); fi
echo '{"bundle_id":"*","max_input_bytes":6000}' > "$TMP/small-options.json"
python3 -c 'import json; print(json.dumps({"delivered_transaction_ids": [str(i) for i in range(2000)]}))' > "$TMP/big-options.json"
expect 2 "options over max_input_bytes" -- $BIN receipt "$R" --config "$TMP/small-options.json" --options "$TMP/big-options.json" --now 1893456000000
has 'IAPV_E_TOO_LARGE' err

# Offer signatures (docs/offer-signatures.md): every kind signs; a bad request is exit 2 with a message.
SIGNER=Tests/shared/fakeapple/signer.json
NONCE=0F6E6A3C-1C2B-4D7A-9E8F-123456789ABC
echo "{\"kind\":\"promotional_offer_v1\",\"nonce\":\"$NONCE\",\"product_id\":\"pro.monthly\",\"offer_identifier\":\"WINBACK1\"}" > "$TMP/v1.json"
echo "{\"kind\":\"promotional_offer_v2\",\"nonce\":\"$NONCE\",\"product_id\":\"pro.yearly\",\"offer_identifier\":\"SAVE20\",\"transaction_id\":\"2000000123\"}" > "$TMP/promo.json"
echo "{\"kind\":\"introductory_offer_eligibility\",\"nonce\":\"$NONCE\",\"product_id\":\"pro.monthly\",\"allow_introductory_offer\":false,\"transaction_id\":\"2000000456\"}" > "$TMP/intro.json"
echo "{\"kind\":\"advanced_commerce_request\",\"nonce\":\"$NONCE\",\"request\":\"{\\\"operation\\\":\\\"CREATE_SUBSCRIPTION\\\"}\"}" > "$TMP/commerce.json"
expect 0 "sign promotional_offer_v1" -- $BIN sign "$TMP/v1.json" --signer "$SIGNER" --now 1700000000123
has '"kind":"promotional_offer_v1"' out
has '"key_id":"FAKEKEY123"' out
has '"nonce":"0f6e6a3c-1c2b-4d7a-9e8f-123456789abc"' out
has '"timestamp_ms":1700000000123' out
has '"signature":"[A-Za-z0-9+/]*=*"' out
has '"jws":null' out
for kind in promo intro commerce; do
  expect 0 "sign $kind" -- $BIN sign "$TMP/$kind.json" --signer "$SIGNER" --now 1700000000123
  has '"timestamp_ms":1700000000000' out
  has '"signature":null' out
  has '"jws":"[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*"' out
done
expect 0 "sign from stdin, pretty" -- sh -c "$BIN sign - --signer $SIGNER --now 1700000000123 --pretty < '$TMP/v1.json'"
has '^  "kind": "promotional_offer_v1"' out
echo '{"kind":"promotional_offer_v1","product_id":"p","offer_identifier":"o"}' > "$TMP/no-nonce.json"
expect 2 "sign without a nonce" -- $BIN sign "$TMP/no-nonce.json" --signer "$SIGNER" --now 1700000000123
has 'nonce' err
echo "{\"kind\":\"promotional_offer\",\"nonce\":\"$NONCE\",\"product_id\":\"p\",\"offer_identifier\":\"o\"}" > "$TMP/ambiguous.json"
expect 2 "sign the unsuffixed promotional_offer" -- $BIN sign "$TMP/ambiguous.json" --signer "$SIGNER" --now 1700000000123
has 'ambiguous: use "promotional_offer_v1"' err
echo "{\"kind\":\"coupon\",\"nonce\":\"$NONCE\"}" > "$TMP/bad-kind.json"
expect 2 "sign an unknown kind" -- $BIN sign "$TMP/bad-kind.json" --signer "$SIGNER" --now 1700000000123
has 'unknown' err
echo "{\"kind\":\"advanced_commerce_request\",\"nonce\":\"$NONCE\",\"request\":\"not json\"}" > "$TMP/bad-request.json"
expect 2 "sign a request that is not JSON" -- $BIN sign "$TMP/bad-request.json" --signer "$SIGNER" --now 1700000000123
has 'JSON' err
expect 2 "sign given a receipt" -- $BIN sign "$R" --signer "$SIGNER" --now 1700000000123
has 'is a receipt, not JSON' err
expect 2 "sign without --signer" -- $BIN sign "$TMP/v1.json" --now 1700000000123
if grep -q 'PRIVATE KEY' "$TMP/out" "$TMP/err"; then echo "FAIL: the private key was printed"; failures=$((failures + 1)); fi

# The input kind is told from the bytes as read, the same way everywhere: DER is never trimmed
# (this receipt ends in a space byte), text is.
[ "$(tail -c 1 "$SB" | od -An -tx1 | tr -d ' ')" = 20 ] || { echo "FAIL: $SB no longer ends in 0x20"; failures=$((failures + 1)); }
echo '{"bundle_id":"com.revenuecat.sampleapp","environments":["Production","Sandbox"]}' > "$TMP/sb.json"
expect 0 "ocsp-request: DER ending in a space byte" -- $BIN ocsp-request "$SB" --config "$TMP/sb.json" --now 1893456000000
has '"verdict":"valid"' out
has '"request":"M' out
expect 0 "ocsp-request: the same DER from stdin" -- sh -c "$BIN ocsp-request - --config '$TMP/sb.json' --now 1893456000000 < '$SB'"
expect 0 "receipt: the same DER" -- $BIN receipt "$SB" --config "$TMP/sb.json" --now 1893456000000
{ printf ' \n'; base64 -w 76 "$SB"; printf '\n \n'; } > "$TMP/sb.b64"
expect 0 "ocsp-request: base64 with whitespace around it" -- $BIN ocsp-request "$TMP/sb.b64" --config "$TMP/sb.json" --now 1893456000000
{ printf '\n '; cat "$JWS"; printf ' \r\n\n'; } > "$TMP/spaced.jws"
expect 0 "jws: whitespace around the token" -- $BIN jws "$TMP/spaced.jws" --config "$TMP/sandbox-any.json" --now 1893456000000
expect 0 "ocsp-request: whitespace around a JWS" -- $BIN ocsp-request "$TMP/spaced.jws" --config "$TMP/sandbox-any.json" --now 1893456000000
has '"request":"' out

# A receipt given to jws, and a JWS given to receipt, are named (exit 2), with the command to use.
expect 2 "jws given a DER receipt" -- $BIN jws "$SB" --bundle-id x --now 1
has 'is a receipt, not a JWS' err
has 'iapverify receipt' err
expect 2 "jws given a base64 receipt" -- $BIN jws "$TMP/sb.b64" --bundle-id x --now 1
has 'is a receipt, not a JWS' err
expect 2 "jws given a PEM receipt" -- $BIN jws "$TMP/receipt.pem" --bundle-id x --now 1
has 'is a receipt, not a JWS' err
expect 2 "jws given an empty file" -- $BIN jws "$TMP/empty" --bundle-id x --now 1
has 'is empty' err
expect 2 "receipt given a JWS" -- $BIN receipt "$JWS" --bundle-id x --now 1
has 'is a StoreKit 2 JWS, not a receipt' err
has 'iapverify jws' err
expect 2 "inspect given a JWS from stdin" -- sh -c "$BIN inspect - < '$JWS'"
has 'iapverify jws' err
expect 2 "response given a DER receipt" -- $BIN response "$SB" --bundle-id x --now 1
has 'iapverify receipt' err
expect 2 "entitlements given a JWS" -- $BIN entitlements "$JWS" --bundle-id x --now 1
has 'iapverify jws' err
expect 1 "entitlements given the JSON 0 (a 0x30 byte) reads it as JSON" -- sh -c "printf 0 | $BIN entitlements - --bundle-id x --now 1"
has '"verdict":"malformed"' out

# api-response: --options is required, and its help says so.
expect 0 "api-response --help" -- $BIN api-response --help
has ' --options <options>' out
hasnt '\[--options' out
expect 2 "api-response without --options" -- sh -c "echo '{}' | $BIN api-response - --bundle-id x --now 1"
has 'options' err

# "Any app" is said only where a bundle is checked: not for entitlements or ocsp-request.
expect 0 "jws, config without bundle_id: any app, said" -- $BIN jws "$JWS" --config "$TMP/no-bundle.json" --now 1893456000000
has 'bundle_id "\*"' err
echo '{"endpoint": "subscription_statuses", "http_status": 500}' > "$TMP/api-options.json"
expect 1 "api-response, no bundle id: any app, said" -- sh -c "echo '{}' | $BIN api-response - --options '$TMP/api-options.json' --now 1"
has 'bundle_id "\*"' err
expect 1 "response, no bundle id: any app, said" -- $BIN response "$VR/alexalok_Invalid_Malformed_Receipt_Data.json" --now 1
has 'bundle_id "\*"' err
expect 0 "entitlements, no bundle id: nothing said" -- $BIN entitlements "$TMP/input.json" --now 2000
hasnt 'bundle_id' err
expect 0 "ocsp-request, no bundle id: nothing said" -- $BIN ocsp-request "$SB" --config "$TMP/no-bundle.json" --now 1893456000000
hasnt 'bundle_id' err
expect 0 "ocsp-request, no config: nothing said" -- $BIN ocsp-request "$JWS" --now 1893456000000
hasnt 'bundle_id' err

if [ "$failures" -ne 0 ]; then echo "cli-test: $failures failure(s)"; exit 1; fi
echo "cli-test: OK"
