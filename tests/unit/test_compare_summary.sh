#!/usr/bin/env bash
# benchmarks/compare.sh --summary: per size, the fastest NCCL mode, gc3 against it, against staging and
# against an older CSV's gc3 column, and the rows some method got wrong, from CSVs made up here (the
# ratios worked out by hand below).
# Usage: test_compare_summary.sh SOURCE_DIR
set -u
s=$1
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
h=collective,ranks,bytes,method,latency_us,algbw_GBps,busbw_GBps,valid
cat >"$t/new.csv" <<CSV
$h
allreduce,4,1048576,gc3,20.000,52.4,78.6,yes
allreduce,4,1048576,nccl,30.000,35.0,52.4,yes
allreduce,4,1048576,nccl-reg,25.000,41.9,62.9,yes
allreduce,4,1048576,nccl-sym,22.000,47.7,71.5,yes
allreduce,4,1048576,staged,400.000,2.6,3.9,yes
allreduce,4,2097152,gc3,50.000,41.9,62.9,yes
allreduce,4,2097152,nccl,40.000,52.4,78.6,yes
allreduce,4,2097152,nccl-sym,45.000,46.6,69.9,no
CSV
cat >"$t/old.csv" <<CSV
$h
allreduce,4,1048576,gc3,30.000,35.0,52.4,yes
allreduce,4,2097152,gc3,40.000,52.4,78.6,yes
CSV
pass=0 fail=0
out=$("$s/benchmarks/compare.sh" --summary "$t/new.csv" "$t/old.csv" 2>&1)
want=("# allreduce, 4 ranks: gc3 against the fastest NCCL mode and the FIFOs of before (old)"
    "     1048576       20.0       22.0 nccl-sym     1.10      78.6      20.0     30.0     1.50"
    "     2097152       50.0       40.0 nccl         0.80      62.9         -     40.0     0.80  NOT VALID: nccl-sym")
for w in "${want[@]}"; do
    if [[ "$out" == *"$w"* ]]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: no line '$w' in:"; echo "$out"; fi
done
"$s/benchmarks/compare.sh" --summary "$t/missing.csv" >/dev/null 2>&1
[ $? = 2 ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: a missing CSV did not exit 2"; }
echo "compare summary: $pass passed, $fail failed"
[ $fail = 0 ]
