#!/usr/bin/env bash
# The wheel on a slim machine: in a private mount namespace where libjansson and libsimdjson are
# hidden (their files replaced by an empty one, so the dynamic linker cannot load them), install
# the wheel into a fresh venv and run every Python example of README.md and docs/ with it. The
# wheel carries both libraries itself; only libcrypto comes from the system.
#   Tests/python/slim-install.sh WHEEL
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
WHEEL="$(readlink -f "$1")"
PYTHON="${PYTHON:-python3}"
if ! unshare -m true 2>/dev/null; then
  echo "slim-install: SKIPPED: this machine cannot make a private mount namespace (unshare -m needs root)" >&2
  exit 0
fi
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
hidden=()
for soname in libjansson.so.4 libsimdjson.so.14; do
  for dir in /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu /usr/lib64 /usr/lib; do
    [ -e "$dir/$soname" ] && hidden+=("$(readlink -f "$dir/$soname")")
  done
done
# The examples need the binding's http extra and what the docs' snippets import.
unshare -m env ROOT="$ROOT" WHEEL="$WHEEL" TMP="$TMP" PYTHON="$PYTHON" bash -euo pipefail -c '
  for f in "$@"; do mount --bind /dev/null "$f"; done
  cd "$ROOT"
  "$PYTHON" -m venv "$TMP/venv"
  "$TMP/venv/bin/pip" install -q "$WHEEL" httpx cryptography -r examples/python/requirements.txt
  # Prove the two libraries are out of reach here, and that the wheel loads without them.
  if "$TMP/venv/bin/python" -c "import ctypes; ctypes.CDLL(\"libjansson.so.4\")" 2>/dev/null; then
    echo "slim-install: libjansson is still loadable: the test would prove nothing" >&2; exit 1; fi
  cd "$ROOT"
  "$TMP/venv/bin/python" -c "import iapverify; print(\"slim-install: iapverify\", iapverify.library_version(), \"loads without system jansson and simdjson\")"
  "$PYTHON" Tests/docs/run_examples.py --only python --installed --python "$TMP/venv/bin/python"
' slim-install "${hidden[@]}"
