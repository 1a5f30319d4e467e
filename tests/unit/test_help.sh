#!/usr/bin/env bash
# Every tool answers --help with its usage, its options and at least one example, and exits 0
# (issue 39: gc3-autotune's help stopped mid-sentence, gc3-mpirun's was mpirun's own).
# Usage: test_help.sh BUILD_DIR SOURCE_DIR
set -u
b=$1
s=$2
pass=0
fail=0
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
# check NAME COMMAND...: exit 0, a usage line, an option line, an "examples:" block naming the tool
check() {
    local name=$1 out rc
    shift
    out=$("$@" --help 2>&1)
    rc=$?
    local ok=1
    [ $rc = 0 ] || { bad "$name --help: exit $rc"; ok=0; }
    grep -qi '^ *usage:' <<< "$out" || { bad "$name --help: no usage line"; ok=0; }
    grep -qE '^ +-{1,2}[a-zA-Z]' <<< "$out" || { bad "$name --help: no option described"; ok=0; }
    awk -v n="$name" 'tolower($0) ~ /^ *examples?:/ { e = 1; next } e && index($0, n) { f = 1 } END { exit !f }' <<< "$out" ||
        { bad "$name --help: no example (an 'examples:' block with a command of $name)"; ok=0; }
    [ $ok = 1 ] && pass=$((pass + 1))
    help_out=$out
}
# has NAME TEXT: the last help printed contains TEXT
has() { if grep -qF -- "$2" <<< "$help_out"; then pass=$((pass + 1)); else bad "$1 --help lacks: $2"; fi; }
hasnt() { if grep -qF -- "$2" <<< "$help_out"; then bad "$1 --help has: $2"; else pass=$((pass + 1)); fi; }

check gc3c "$b/gc3c"
has gc3c "gc3c run ring4.xml"
check gc3_info "$b/gc3_info"
check gc3_bench "$b/benchmarks/gc3_bench"
has gc3_bench "ompi      Open MPI's own collective"
check gc3_rt_bench "$b/benchmarks/gc3_rt_bench"
check gc3-autotune "$s/contrib/gc3-autotune"
has gc3-autotune "candidate). The built-in rules follow the measured ones"   # the sentence that was cut
has gc3-autotune "their defaults."
check gc3-mpirun "$b/contrib/gc3-mpirun"
for t in GC3_COMPONENT_DIR GC3_PRIORITY "--mca mca_base_component_path" "--mca coll_gc3_priority 90" --oversubscribe \
    --allow-run-as-root "An MCA parameter you give yourself wins"; do
    has gc3-mpirun "$t"
done
hasnt gc3-mpirun "mpirun (Open MPI)"   # mpirun's own help
check gc3-cost-check "$s/contrib/gc3-cost-check"
check gc3-cost-fit "$s/contrib/gc3-cost-fit"
check quickstart.sh "$s/contrib/quickstart.sh"
check run-tests.sh "$s/contrib/run-tests.sh"
has run-tests.sh "after CTest's summary how many"
check gpu-lease.sh "$s/contrib/gpu-lease.sh"
has gpu-lease.sh "bench    benchmarks/compare.sh"
check compare.sh "$s/benchmarks/compare.sh"
echo "help: $pass passed, $fail failed"
[ $fail = 0 ]
