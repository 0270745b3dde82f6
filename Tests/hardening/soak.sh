#!/usr/bin/env bash
# Resident-set growth over N receipt verifications (default 1,000,000): at most 1 MiB after the
# first tenth (warm-up).   Tests/hardening/soak.sh [N]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
mkdir -p build/hardening
cc -O2 -std=c11 -Wall -IInclude Tests/hardening/driver.c -Lbuild/lib -liapverify -lpthread \
   -Wl,-rpath,"$ROOT/build/lib" -o build/hardening/driver
build/hardening/driver soak "${1:-1000000}"
