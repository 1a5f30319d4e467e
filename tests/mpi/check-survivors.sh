#!/usr/bin/env bash
# What gc3 promises when a rank dies inside a collective (test_faults kill): every survivor gets an
# error within coll_gc3_timeout (test_faults prints "ok, no hang" for a survivor whose call failed
# in time), and gc3's error record of that survivor names what it lost or waited for: a connection
# to a peer that failed (a transport that reports a dead peer, e.g. UCX's endpoint error) or the
# wait that timed out (the rank, thread block and step, and the peer or dependency waited for).
# Which of the two a survivor sees depends on the transport and the timing, not on gc3's promise.
# Usage: check-survivors.sh LOG RANK...   (the survivors' ranks in the test's communicator)
set -u
log=$1
shift
pass=0
fail=0
for r in "$@"; do
    rec=$(grep -aE "coll:gc3: comm .* rank $r: (nonblocking )?allreduce failed: " "$log" | head -n 1)
    if ! grep -aqE "^test_faults kill: rank $r: .*: ok, no hang" "$log"; then
        echo "FAIL: survivor rank $r did not get an error within the timeout (no 'ok, no hang' line)"
        fail=$((fail + 1))
    elif [ -z "$rec" ]; then
        echo "FAIL: survivor rank $r: no error record of gc3 (coll:gc3: ... rank $r: allreduce failed: ...)"
        fail=$((fail + 1))
    elif [[ $rec =~ failed:\ timeout\ after\ [0-9.]+\ s:\ rank\ $r\ tb\ [0-9]+\ .*waited\ for ]] ||
         [[ $rec =~ failed:\ timeout\ after\ [0-9.]+\ s\ waiting\ for\ (rank\ [0-9]+|the\ other\ ranks) ]]; then
        echo "survivor rank $r: error in time, naming the wait: ${rec#*failed: }"
        pass=$((pass + 1))
    elif [[ $rec =~ failed:\ rank\ $r\ tb\ [0-9]+:\ the\ [A-Z]+\ connection\ to\ rank\ [0-9]+\ \(channel\ [0-9]+\)\ failed ]]; then
        echo "survivor rank $r: error in time, naming the lost peer: ${rec#*failed: }"
        pass=$((pass + 1))
    else
        echo "FAIL: survivor rank $r: its error names neither a lost peer nor a wait: $rec"
        fail=$((fail + 1))
    fi
done
echo "survivors: $pass passed, $fail failed"
[ $fail = 0 ] && [ $pass -gt 0 ]
