#!/usr/bin/env bash
# A whole `make release` in a scratch clone of this repository (its committed history): the
# Unreleased section dated as VERSION today and committed there, then make release, then what it
# must leave: the annotated tags, build/release/ with the source tarball, the wheel, the three
# .debs and a SHA256SUMS that checks. Nothing is tagged here. Slow (a full build in the clone).
#     Tests/release/release-clone.sh [CLONE_DIR]     (default: a temporary directory, removed)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
VERSION=$(cat "$ROOT/VERSION")
if [ -n "${1:-}" ]; then DIR=$1; else DIR=$(mktemp -d)/iapverify; trap 'rm -rf "$(dirname "$DIR")"' EXIT; fi
fail() { echo "release-clone FAILED: $*" >&2; exit 1; }
git clone -q "$ROOT" "$DIR"
cd "$DIR"
git config user.email release-test@example.org && git config user.name release-test
# On a repository that is released already, the clone's copies of its tags go first.
git tag -d "v$VERSION" "bindings/go/v$VERSION" >/dev/null 2>&1 || true
if grep -m1 '^## ' CHANGELOG.md | grep -q '^## Unreleased'; then
  LOG=$(mktemp)
  if make release > "$LOG" 2>&1; then rm -f "$LOG"; fail "make release tagged an undated CHANGELOG"; fi
  grep -q "refused: the top section of CHANGELOG.md" "$LOG" || { cat "$LOG"; rm -f "$LOG"; fail "no refusal for the undated section"; }
  rm -f "$LOG"
  sed -i "0,/^## Unreleased.*$/s//## [$VERSION] - $(date -u +%F)/" CHANGELOG.md
  git commit -q -am "Release $VERSION (test)"
fi
make release
[ "$(git cat-file -t "v$VERSION")" = tag ] || fail "v$VERSION is not an annotated tag"
[ "$(git cat-file -t "bindings/go/v$VERSION")" = tag ] || fail "bindings/go/v$VERSION is not an annotated tag"
cd build/release
ls
[ -f "iapverify-$VERSION.tar.gz" ] || fail "no source tarball"
ls iapverify-"$VERSION"-py3-none-manylinux_*.whl >/dev/null || fail "no wheel"
for p in libiapverify1 libiapverify-dev iapverify; do ls "${p}_$VERSION-1_"*.deb >/dev/null || fail "no $p .deb"; done
sha256sum -c SHA256SUMS
[ "$(wc -l < SHA256SUMS)" = 5 ] || fail "SHA256SUMS does not list the five artifacts"
tar -xzOf "iapverify-$VERSION.tar.gz" "iapverify-$VERSION/VERSION" | grep -qx "$VERSION" || fail "the tarball's VERSION is not $VERSION"
echo "release-clone: OK"
