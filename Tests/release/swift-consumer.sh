#!/usr/bin/env bash
# A new Swift package that depends on this repository exactly as docs/swift.md shows: the manifest
# block of docs/swift.md, with the repository's URL pointed at a clone of this checkout's committed
# history. It must resolve (branch: "main"), build and run; then, on a clone tagged with VERSION,
# the `from:` line of the same block must resolve. Slow (a first debug build of the core): .ci/run
# calls it as `make swift-consumer-test`, make test does not.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
URL=https://github.com/iapverify/iapverify
VERSION=$(cat "$ROOT/VERSION")
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "swift-consumer FAILED: $*" >&2; exit 1; }

# The repository as a user would get it: a clone (committed history only), named as the URL is.
git clone -q "$ROOT" "$TMP/iapverify"
git -C "$TMP/iapverify" checkout -q -B main HEAD

# The manifest: the Swift block after the marker that names this script.
python3 - "$ROOT/docs/swift.md" > "$TMP/Package.swift.in" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
for i, line in enumerate(lines):
    if "Tests/release/swift-consumer.sh" in line and line.lstrip().startswith("<!--"):
        start = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```swift")) + 1
        end = next(j for j in range(start, len(lines)) if lines[j].startswith("```"))
        print("\n".join(lines[start:end]))
        break
else:
    sys.exit("docs/swift.md: no manifest block marked for Tests/release/swift-consumer.sh")
PY
grep -q "\.package(url: \"$URL\", branch: \"main\")" "$TMP/Package.swift.in" || fail "docs/swift.md's manifest has no branch: \"main\" line for $URL"
grep -q "// \.package(url: \"$URL\", from: \"$VERSION\")" "$TMP/Package.swift.in" || fail "docs/swift.md's manifest has no from: \"$VERSION\" line"

APP=$TMP/my-server
mkdir -p "$APP/Sources/Server"
sed "s|$URL|$TMP/iapverify|" "$TMP/Package.swift.in" > "$APP/Package.swift"
cat > "$APP/Sources/Server/main.swift" <<'SWIFT'
import IAPVerify

let verifier = try Verifier(json: Array(#"{"bundle_id": "com.example.app"}"#.utf8))
var options = JWSOptions()
options.kind = .transaction
let report = try verifier.verifyJWS(Array("not.a.token".utf8), options: options, nowMs: 1_767_225_600_000)
print(report.verdict.rawValue)
SWIFT
echo "swift-consumer: building a new package that depends on $URL (branch: \"main\", a clone)"
(cd "$APP" && swift build -c debug 2>&1 | tail -3)
out=$("$(cd "$APP" && swift build -c debug --show-bin-path)/Server")
[ "$out" = "malformed" ] || fail "the consumer printed '$out', expected malformed"
echo "ok   branch: \"main\" resolves, builds and runs (verdict $out)"

# The released form: tag the clone as make release would, switch the lines, resolve.
# -f: a clone of a released repository already has the tag (on the released commit).
git -C "$TMP/iapverify" tag -f -a "v$VERSION" -m "test tag" > /dev/null
sed -e "s|^\(\s*\)\.package(url: \"$TMP/iapverify\", branch: \"main\"),|\1// (branch form off)|" \
    -e "s|^\(\s*\)// \.package(url: \"$TMP/iapverify\", from: \"$VERSION\"),|\1.package(url: \"$TMP/iapverify\", from: \"$VERSION\"),|" \
    "$APP/Package.swift" > "$APP/Package.swift.new" && mv "$APP/Package.swift.new" "$APP/Package.swift"
grep -q "from: \"$VERSION\"),$" "$APP/Package.swift" || fail "could not switch to the from: line"
rm -f "$APP/Package.resolved"
(cd "$APP" && swift package resolve 2>&1 | tail -2)
grep -q "\"version\" : \"$VERSION\"" "$APP/Package.resolved" || { cat "$APP/Package.resolved"; fail "from: \"$VERSION\" did not resolve to v$VERSION"; }
echo "ok   from: \"$VERSION\" resolves to the tag v$VERSION"
echo "swift-consumer: OK"
