#!/usr/bin/env bash
# Renders nginx.conf into PREFIX and starts nginx there: run.sh PREFIX PORT [GATEWAY_CONFIG]
# Stop it with: kill "$(cat PREFIX/nginx.pid)"
# The library is IAPVERIFY_BUILD_DIR/lib/libiapverify.so.1 (default: the checkout's build).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${IAPVERIFY_BUILD_DIR:-$ROOT/build}
PREFIX=$1 PORT=$2 CONFIG=${3:-$ROOT/examples/nginx/gateway.json}
mkdir -p "$PREFIX/client_body"
sed -e "s|@PREFIX@|$PREFIX|g" -e "s|@ROOT@|$ROOT|g" -e "s|@BUILD@|$BUILD|g" -e "s|@PORT@|$PORT|g" -e "s|@CONFIG@|$CONFIG|g" \
    "$ROOT/examples/nginx/nginx.conf" > "$PREFIX/nginx.conf"
nginx -p "$PREFIX" -c "$PREFIX/nginx.conf"
