#!/usr/bin/env bash
# coll_gc3_breakdown: run COMMAND (with --mca coll_gc3_breakdown 1), then check that every breakdown
# line's phases add up to its total (each phase is measured between its own clock reads; their sum must
# be the time from entry to return, which is measured apart), that each names its run's calls, and that
# the sizes given (SIZE... before --) each have a line.
#     check-breakdown.sh SIZE... -- COMMAND...
set -u
sizes=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do sizes+=("$1"); shift; done
[ "${1:-}" = "--" ] || { echo "usage: check-breakdown.sh SIZE... -- COMMAND..." >&2; exit 2; }
shift
out=$("$@" 2>&1)
rc=$?
echo "$out" | grep "breakdown of" | head -20
[ $rc = 0 ] || { echo "$out" | tail -20; echo "FAIL: exit status $rc"; exit 1; }
fail=0
for s in "${sizes[@]}"; do
    echo "$out" | grep -q "breakdown of [a-z_]* $s bytes, [0-9]* calls" || { echo "FAIL: no breakdown line for $s bytes"; fail=1; }
done
# find plan A, start B, stream order C, post D, posted to completion seen E (...), return F; total T
bad=$(echo "$out" | grep "breakdown of" | sed -E 's/.*find plan ([0-9.]+), start ([0-9.]+), stream order ([0-9.]+), post ([0-9.]+), posted to completion seen ([0-9.]+) \(.*\), return ([0-9.]+); total ([0-9.]+).*/\1 \2 \3 \4 \5 \6 \7/' |
    awk '{ s = $1 + $2 + $3 + $4 + $5 + $6; d = s - $7; if (d < 0) d = -d;
           if (NF != 7 || $7 <= 0 || d > 0.05 * $7 + 1.0) print "phases " s " us against total " $7 " us: " $0 }')
[ -z "$bad" ] || { echo "FAIL: $bad"; fail=1; }
n=$(echo "$out" | grep -c "breakdown of")
[ "$n" -gt 0 ] || { echo "FAIL: no breakdown line"; fail=1; }
[ $fail = 0 ] && echo "check-breakdown: $n line(s), phases add up to their totals: passed" && exit 0
exit 1
