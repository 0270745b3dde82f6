#!/usr/bin/env bash
# `make release`'s refusals, cheaply (make test): scripts/release --dry-run in a scratch git
# repository holding only VERSION and CHANGELOG.md. Nothing is built or tagged; the real release
# is tried on a clone of the repository by Tests/release/release-clone.sh (.ci/run).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP" "$TMP.out" "$TMP.err"' EXIT
fail() { echo "release-refusals FAILED: $*" >&2; exit 1; }
cd "$TMP"
git init -q . && git config user.email test@example.org && git config user.name test
echo 1.2.3 > VERSION
printf '# Changelog\n\n## Unreleased\n\n### Added\n\n- something\n\n## [1.2.2] - 2026-01-01\n' > CHANGELOG.md
git add VERSION CHANGELOG.md && git commit -q -m start
# refuses CASE-NAME EXPECTED-MESSAGE-PART
refuses() {
  if "$ROOT/scripts/release" --dry-run > "$TMP.out" 2> "$TMP.err"; then fail "$1: a release would have been made"; fi
  grep -q -- "$2" "$TMP.err" || { cat "$TMP.err" >&2; fail "$1: the refusal does not say '$2'"; }
  echo "ok   release refuses: $1"
}
refuses "an Unreleased top section" "top section of CHANGELOG.md is '## Unreleased'"
sed -i 's/^## Unreleased$/## [1.2.3]/' CHANGELOG.md && git commit -q -am undated
refuses "an undated section" "'## \[1.2.3\]'"
sed -i 's/^## \[1.2.3\]$/## [1.2.4] - 2026-02-01/' CHANGELOG.md && git commit -q -am other
refuses "a section of another version" "needs '## \[1.2.3\] - YYYY-MM-DD'"
sed -i 's/^## \[1.2.4\] - 2026-02-01$/## [1.2.3] - 2026-02-31/' CHANGELOG.md && git commit -q -am baddate
refuses "a date that is no date" "is not a date"
sed -i 's/^## \[1.2.3\] - 2026-02-31$/## [1.2.3] - 2026-02-01/' CHANGELOG.md
refuses "a changed file" "the tree is not clean"
git commit -q -am dated
touch stray.txt
refuses "an untracked file" "?? stray.txt"
rm stray.txt
"$ROOT/scripts/release" --dry-run > "$TMP.out" 2>&1 || { cat "$TMP.out" >&2; fail "a clean, dated tree was refused"; }
grep -q "would tag v1.2.3 (2026-02-01)" "$TMP.out" || { cat "$TMP.out" >&2; fail "the dry run did not say what it would tag"; }
[ -z "$(git tag)" ] || fail "the dry run made a tag"
echo "ok   release: a clean tree with a dated section passes the checks (dry run, no tag)"
git tag -a v1.2.3 -m x
refuses "an existing tag" "the tag v1.2.3 exists already"
echo "release-refusals: OK"
