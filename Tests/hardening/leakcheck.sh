#!/usr/bin/env bash
# valgrind memcheck over the public C ABI: N calls of each entry point (valid, invalid and error
# paths). Fails unless "definitely lost" and "indirectly lost" are both 0 bytes and there are no
# invalid reads or writes.   Tests/hardening/leakcheck.sh [N]   (default 10000)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
N=${1:-10000}
mkdir -p build/hardening
cc -O1 -g -std=c11 -Wall -IInclude Tests/hardening/driver.c -Lbuild/lib -liapverify -lpthread \
   -Wl,-rpath,"$ROOT/build/lib" -o build/hardening/driver
valgrind --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect \
   --suppressions=Tests/hardening/valgrind.supp --error-exitcode=99 \
   build/hardening/driver leak "$N" 2> build/hardening/valgrind.log
grep -E "definitely lost|indirectly lost|possibly lost|ERROR SUMMARY" build/hardening/valgrind.log | sed 's/^==[0-9]*== */valgrind: /'
grep -q "definitely lost: 0 bytes" build/hardening/valgrind.log || grep -q "All heap blocks were freed" build/hardening/valgrind.log
grep -q "ERROR SUMMARY: 0 errors" build/hardening/valgrind.log
echo "leakcheck: OK"
