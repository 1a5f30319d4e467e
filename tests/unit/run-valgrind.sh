#!/usr/bin/env bash
# The unit tests under valgrind memcheck: invalid accesses, uninitialised values and definite or
# indirect leaks fail. (test_compiler's matrix is left to the sanitized build: too slow here.)
# Usage: run-valgrind.sh BUILD_DIR
set -uo pipefail
b=$1
command -v valgrind >/dev/null || { echo "run-valgrind: valgrind not found (apt-get install valgrind)"; exit 1; }
fail=0
for t in test_ir test_verify test_refexec test_cost test_rules test_topo test_msccl; do
    log=$b/valgrind-$t.log
    if valgrind -q --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=definite,indirect \
        --show-leak-kinds=definite,indirect "$b/tests/unit/$t" > "$log" 2>&1; then
        echo "ok: $t under valgrind ($(tail -n 1 "$log"))"
    else
        echo "FAILED: $t under valgrind (see $log)"
        grep -E -m 20 "==[0-9]+==" "$log"
        fail=1
    fi
done
[ $fail = 0 ] && echo "valgrind: all clean" || echo "valgrind: FAILED"
exit $fail
