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
check mpich-coll.sh "$s/contrib/mpich-coll.sh"
check compare.sh "$s/benchmarks/compare.sh"

# issue 56: an unknown option is named, as such, with a pointer to --help, exit 2 (not "--bogus needs a
# value" or "an option needs a value"); an option without its value is named too. gc3_bench and
# gc3_rt_bench read their options after MPI_Init: run as singletons here.
refuses() { # NAME TEXT COMMAND...: exit 2, TEXT in the output
    local name=$1 want=$2 out rc
    shift 2
    out=$(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 60 "$@" 2>&1)
    rc=$?
    if [ $rc = 2 ] && grep -qF -- "$want" <<< "$out"; then pass=$((pass + 1)); else
        bad "$name ${*:2}: exit $rc (want 2), output: $(head -3 <<< "$out") (want: $want)"; fi
}
refuses gc3_info "gc3_info: unknown option --bogus (gc3_info --help lists the options)" "$b/gc3_info" --bogus
refuses gc3_info "gc3_info: unknown option --bogus (gc3_info --help" "$b/gc3_info" --gpus 2 --bogus 1
refuses gc3_info "gc3_info: --rules needs a value" "$b/gc3_info" --rules
refuses gc3_bench "gc3_bench: unknown option --bogus (gc3_bench --help lists the options)" "$b/benchmarks/gc3_bench" --bogus
refuses gc3_bench "gc3_bench: unknown option --bogus (gc3_bench --help" "$b/benchmarks/gc3_bench" -c --bogus 1
refuses gc3_bench "gc3_bench: --root needs a value" "$b/benchmarks/gc3_bench" -c --root
refuses gc3_rt_bench "gc3_rt_bench: unknown option --bogus (gc3_rt_bench --help lists the options)" \
    "$b/benchmarks/gc3_rt_bench" --bogus
refuses gc3_rt_bench "gc3_rt_bench: --max needs a value" "$b/benchmarks/gc3_rt_bench" --min 1K --max

# issue 56: gc3_rt_bench's host example runs as --help prints it, as root too (mpirun itself refuses
# root without --allow-run-as-root; gc3-mpirun adds it), without the test's own MPI variables; on the
# host backend its kernel column is "-" (not measured), not zeros
check gc3_rt_bench "$b/benchmarks/gc3_rt_bench"
example=$(grep -E '^ +[^ ]*mpirun .*gc3_rt_bench .*# host backend' <<< "$help_out" | sed 's/#.*//')
if [ -z "$example" ]; then
    bad "gc3_rt_bench --help: no host-backend example"
else
    out=$(cd "$b" && env -u OMPI_ALLOW_RUN_AS_ROOT -u OMPI_ALLOW_RUN_AS_ROOT_CONFIRM \
        PATH="$b/contrib:$b/benchmarks:$PATH" timeout 120 bash -c "$example" 2>&1)
    rc=$?
    rows=$(awk '/^ *[0-9]/ && $6 == "ok"' <<< "$out" | wc -l)
    zeros=$(awk '/^ *[0-9]/ && $3 != "-"' <<< "$out" | wc -l)
    if [ $rc = 0 ] && [ "$rows" -gt 0 ] && [ "$zeros" = 0 ] && grep -qF "# kernel(us): not measured ('-')" <<< "$out"; then
        pass=$((pass + 1))
    else
        bad "gc3_rt_bench's example '$example': exit $rc, $rows rows checked, $zeros with a kernel time: $(tail -5 <<< "$out")"
    fi
fi

# issue 56: gc3-autotune --help under the name it is run by: installed (on PATH) "gc3-autotune", not
# the source tree's "contrib/gc3-autotune"; its usage lines aligned under the name
tmpbin=$(mktemp -d)
cp "$s/contrib/gc3-autotune" "$tmpbin/"
help_out=$(PATH="$tmpbin:$PATH" gc3-autotune --help 2>&1)
has gc3-autotune "usage: gc3-autotune [-np N]"
has gc3-autotune "  gc3-autotune -np 4 --max 256M --out site.rules"
has gc3-autotune "                    [--backend cuda|host]"
hasnt gc3-autotune "contrib/gc3-autotune"
rm -rf "$tmpbin"
help_out=$("$s/contrib/gc3-autotune" --help 2>&1)
has gc3-autotune "usage: $s/contrib/gc3-autotune [-np N]"

echo "help: $pass passed, $fail failed"
[ $fail = 0 ]
