#!/usr/bin/env bash
# The rockspec: `luarocks lint`, `luarocks make` into build/lua-tree, and t/test.lua run against
# the module as installed there. Skipped, with a message, when luarocks is not installed
# (scripts/bootstrap installs it).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
VERSION=$(cat "$ROOT/VERSION")
ROCK_FILE="lua-resty-iapverify-$VERSION-1.rockspec"
cd "$ROOT/bindings/lua"
[ -f "$ROCK_FILE" ] || { echo "lua-rock FAILED: bindings/lua/$ROCK_FILE missing (the rockspec must follow VERSION)" >&2; exit 1; }
ls lua-resty-iapverify-*.rockspec | grep -v -x -F "$ROCK_FILE" && { echo "lua-rock FAILED: stale rockspecs beside $ROCK_FILE" >&2; exit 1; }
if ! command -v luarocks >/dev/null; then
  echo "lua-rock: SKIPPED: luarocks is not installed (apt-get install luarocks, or run scripts/bootstrap)"
  exit 0
fi
luarocks lint "$ROCK_FILE"
TREE="$ROOT/build/lua-tree"
rm -rf "$TREE"
luarocks --tree "$TREE" make --deps-mode none "$ROCK_FILE" > "$ROOT/build/lua-rock.log" 2>&1 \
  || { cat "$ROOT/build/lua-rock.log"; echo "lua-rock FAILED: luarocks make" >&2; exit 1; }
LUA_PATH="$TREE/share/lua/5.1/?.lua;;" IAPVERIFY_LUA_INSTALLED=1 \
  luajit t/test.lua "$ROOT" "$ROOT/build/lib/libiapverify.so.1"
echo "lua-rock: OK"
