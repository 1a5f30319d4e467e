#!/usr/bin/env bash
# unit_man_examples / mpi_man_examples: the examples of gc3-algorithm(5) and gc3-rules(5) work as the
# pages say. The examples are taken from the pages themselves: the lines between
#     .\" example-begin NAME
#     .\" example-end
# are the file NAME (without the .EX/.EE lines; the roff escapes \- \e \& undone, any other
# backslash is an error), and the lines between ".\" example-output-begin" and ".\" example-output-end"
# are commands ("$ COMMAND", a line ending in \ continued on the next) each followed by its output
# as the page shows it (wrapped where it is long: compared with the real output with all runs of
# white space made one space).
#   unit: every XML example passes "gc3c verify" (no warning) and "gc3c run" ("results verified";
#         in place too when it says inplace="1"; float32 sum and int32 max), every rules example
#         "gc3_info --rules" (no error or warning), every command shown prints what the page shows.
#         First the same checks run on a copy of the pages with one example broken (a dependency
#         removed) and one output changed: both must be found (the test can fail).
#   mpi:  an MPI job of 4 ranks through gc3's host backend, with the XML examples as
#         coll_gc3_algorithm_dir and the rules example as coll_gc3_rules_file, runs tests/mpi/test_coll
#         (results against a host computation) and its coll_gc3_verbose 1 lines show the pages'
#         programs running where the pages say: alltoall_pairs4 on the 4 ranks, allreduce_halves2 on
#         the 2-rank communicators up to 64 KiB, the rules file's lines for the rest.
# Usage: test_man_examples.sh unit|mpi BUILD_DIR SOURCE_ROOT [PAGE_DIR]
#   PAGE_DIR: where gc3-algorithm.5 and gc3-rules.5 are (default SOURCE_ROOT/doc/man; an installed
#   man5 folder works the same)
set -u
export LC_ALL=C
mode=${1:-}
b=${2:-}
s=${3:-}
pages=${4:-$s/doc/man}
if [ -z "$b" ] || [ -z "$s" ] || { [ "$mode" != unit ] && [ "$mode" != mpi ]; }; then
    echo "usage: test_man_examples.sh unit|mpi BUILD_DIR SOURCE_ROOT [PAGE_DIR]" >&2
    exit 2
fi
b=$(cd "$b" && pwd) || exit 2
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
pass=0; fail=0
ok()  { echo "ok: $1"; pass=$((pass + 1)); }
bad() { echo "FAIL: $1"; fail=$((fail + 1)); }

# the names of the examples of PAGE, one a line
example_names() {
    sed -n 's/^\.\\" example-begin \([^ ]*\)$/\1/p' "$1"
}
# the lines of a marked block of PAGE (START: the whole begin line), roff escapes undone; exit 1
# when the block is missing or unterminated, or holds a backslash that is not \- \e \&
block() {
    START=$2 awk '
        $0 == ENVIRON["START"] { inb = 1; found = 1; next }
        inb && ($0 == ".\\\" example-end" || $0 == ".\\\" example-output-end") { inb = 0; closed = 1; next }
        inb && ($0 == ".EX" || $0 == ".EE") { next }
        inb {
            line = $0
            if (line ~ /^[.\047]/) { print "control line inside an example: " line > "/dev/stderr"; bad = 1 }
            gsub(/\\-/, "-", line); gsub(/\\&/, "", line); gsub(/\\e/, "\001", line)
            if (index(line, "\\")) { print "unknown escape in an example: " $0 > "/dev/stderr"; bad = 1 }
            gsub(/\001/, "\\", line)
            print line
        }
        END { exit !found || inb || bad }' "$1"
}
# squeeze all white space (newlines included) into single spaces
squeeze() { tr -s ' \t\n' '   ' | sed 's/^ //; s/ $//'; }

# Every example of the pages in folder $1, extracted into $2 (algorithm files also into $2/algorithms),
# checked with gc3c and gc3_info; every output block's commands run in $2. Prints ok/FAIL lines.
check_pages() {
    local dir=$1 out=$2 page name f o cmd expect got n=0
    mkdir -p "$out/algorithms"
    for page in "$dir/gc3-algorithm.5" "$dir/gc3-rules.5"; do
        [ -f "$page" ] || { bad "no page $page"; continue; }
        for name in $(example_names "$page"); do
            n=$((n + 1))
            if block "$page" ".\\\" example-begin $name" > "$out/$name"; then
                ok "$(basename "$page"): example $name extracted ($(wc -l < "$out/$name") lines)"
            else
                bad "$(basename "$page"): example $name cannot be extracted"
                continue
            fi
            case $name in *.xml) cp "$out/$name" "$out/algorithms/";; esac
        done
    done
    for need in allreduce2.xml alltoall4.xml example.rules; do
        [ -s "$out/$need" ] || bad "no example $need in the pages"
    done
    (( n >= 3 )) || bad "only $n examples in the pages"
    for f in "$out"/*.xml; do
        [ -f "$f" ] || continue
        name=$(basename "$f")
        o=$(cd "$out" && "$b/gc3c" verify "$name" 2>&1)
        if [ $? -eq 0 ] && grep -q "^$name: OK (" <<<"$o" && ! grep -q "warning" <<<"$o"; then
            ok "gc3c verify $name"
        else
            echo "$o" | head -20; bad "gc3c verify $name"
        fi
        for args in "" "--dtype int32 --op max"; do
            o=$(cd "$out" && "$b/gc3c" run $args "$name" 2>&1)
            if [ $? -eq 0 ] && grep -q ": results verified$" <<<"$o"; then ok "gc3c run $args $name"
            else echo "$o" | head -20; bad "gc3c run $args $name"; fi
        done
        if grep -q 'inplace="1"' "$f"; then
            o=$(cd "$out" && "$b/gc3c" run --inplace "$name" 2>&1)
            if [ $? -eq 0 ] && grep -q "in-place: results verified$" <<<"$o"; then ok "gc3c run --inplace $name"
            else echo "$o" | head -20; bad "gc3c run --inplace $name"; fi
        fi
    done
    for f in "$out"/*.rules; do
        [ -f "$f" ] || continue
        name=$(basename "$f")
        o=$(cd "$out" && "$b/gc3_info" --rules "$name" --algorithm-dir algorithms 2>&1)
        if [ $? -eq 0 ] && ! grep -qiE "warning|error|cannot" <<<"$o"; then ok "gc3_info --rules $name"
        else echo "$o" | head -20; bad "gc3_info --rules $name"; fi
    done
    # the commands shown with their output
    for page in "$dir/gc3-algorithm.5" "$dir/gc3-rules.5"; do
        [ -f "$page" ] || continue
        local k=0 nblocks
        nblocks=$(grep -c '^\.\\" example-output-begin$' "$page")
        # one block at a time: the k-th begin line is made unique for block()
        while [ $k -lt "$nblocks" ]; do
            k=$((k + 1))
            awk -v k=$k '$0 == ".\\\" example-output-begin" && ++i == k { print ".\\\" example-output-begin THIS"; next } { print }' \
                "$page" > "$out/page.tmp"
            if ! block "$out/page.tmp" ".\\\" example-output-begin THIS" > "$out/block.txt"; then
                bad "$(basename "$page"): output block $k cannot be extracted"; continue
            fi
            # commands and their outputs: records separated by the "$ " lines
            awk -v dir="$out" '
                function flush() { if (cmd != "") { print cmd > (dir "/cmd." n); close(dir "/cmd." n); printf "%s", ex > (dir "/exp." n); close(dir "/exp." n) } }
                /^\$ / { flush(); n++; cmd = substr($0, 3); ex = ""; cont = (cmd ~ /\\$/); sub(/\\$/, "", cmd); next }
                cont { line = $0; cont = (line ~ /\\$/); sub(/\\$/, "", line); sub(/^[ \t]+/, "", line); cmd = cmd " " line; next }
                { ex = ex $0 "\n" }
                END { flush(); print n > (dir "/ncmd") }' "$out/block.txt"
            local c ncmd
            ncmd=$(cat "$out/ncmd" 2>/dev/null)
            [ "${ncmd:-0}" -ge 1 ] 2>/dev/null || { bad "$(basename "$page"): output block $k shows no command"; continue; }
            for ((c = 1; c <= ncmd; c++)); do
                cmd=$(cat "$out/cmd.$c")
                expect=$(squeeze < "$out/exp.$c")
                got=$(cd "$out" && PATH="$b:$PATH" bash -c "$cmd" 2>&1 | squeeze)
                if [ "$got" = "$expect" ]; then ok "$(basename "$page"): \$ $cmd prints what the page shows"
                else
                    bad "$(basename "$page"): \$ $cmd prints something else than the page shows"
                    echo "  page: $expect"; echo "  real: $got"
                fi
            done
            rm -f "$out"/cmd.* "$out"/exp.* "$out/ncmd"
        done
    done
}

if [ "$mode" = unit ]; then
    # the checks find a broken example and a changed output: a copy of the pages with allreduce2.xml's
    # first dependency removed and one line of gc3c's output changed
    mkdir -p "$w/planted/pages"
    cp "$pages/gc3-algorithm.5" "$pages/gc3-rules.5" "$w/planted/pages/" 2>/dev/null
    sed -i '0,/^ *depid="1" deps="0"\/>$/s/depid="1" deps="0"//; 0,/8 steps, Simple/s/8 steps, Simple/9 steps, Simple/' \
        "$w/planted/pages/gc3-algorithm.5"
    planted=$(fail=0; pass=0; check_pages "$w/planted/pages" "$w/planted/out"; echo "planted: $fail")
    if grep -q "^FAIL: gc3c verify allreduce2.xml" <<<"$planted" && grep -q "^FAIL: gc3c run  allreduce2.xml" <<<"$planted" &&
        grep -q '^FAIL: gc3-algorithm.5: \$ gc3c verify allreduce2.xml prints something else' <<<"$planted"; then
        ok "a planted broken example (a dependency removed) and a changed output are found"
    else
        echo "$planted" | grep -v "^ok:" | head -20
        bad "a planted broken example or changed output is not found"
    fi
    check_pages "$pages" "$w/out"
    echo "man page examples: $pass passed, $fail failed"
    [ $fail = 0 ]
    exit
fi

# ---- mpi: the examples in an MPI job
check_pages "$pages" "$w/out" > "$w/unit.log"
grep -q "^FAIL" "$w/unit.log" && { cat "$w/unit.log"; bad "the examples do not pass the unit checks"; }
a=$w/out/algorithms
r=$w/out/example.rules
# the lines of the rules example that the job must show in use
line_of() { grep -nE "$1" "$r" | head -1 | cut -d: -f1; }
l_ring2=$(line_of '^allreduce +1 +2 +host +64K-inf +ring +channels=2')
l_allpairs=$(line_of '^allreduce +1 +\* +\* +0-64K +allpairs +proto=LL')
l_direct=$(line_of '^alltoall +1 +\* +\* +\* +direct +proto=LL')
[ -n "$l_ring2" ] && [ -n "$l_allpairs" ] && [ -n "$l_direct" ] || bad "the rules example lacks the lines this test expects"
want=(
    "coll:gc3: algorithm directory $a: 2 program(s) read and verified"
    "alltoall 0-inf bytes (host backend, 4 ranks, host): alltoall_pairs4 Simple, 1 channel(s) x 1 instance(s), rule $a/alltoall4.xml, verified"
    "allreduce 0-64K bytes (host backend, 2 ranks, host): allreduce_halves2 Simple, 1 channel(s) x 1 instance(s), rule $a/allreduce2.xml, verified"
    "allreduce 0-64K bytes, in place (host backend, 2 ranks, host): allreduce_halves2 Simple, 1 channel(s) x 1 instance(s), rule $a/allreduce2.xml, verified"
    "allreduce 64K-inf bytes (host backend, 2 ranks, host): ring Simple, 2 channel(s) x 1 instance(s), rule $r:$l_ring2, verified"
    "allreduce 0-64K bytes (host backend, 4 ranks, host): allpairs LL, 1 channel(s) x 1 instance(s), rule $r:$l_allpairs, verified"
    "alltoall 0-inf bytes, in place (host backend, 4 ranks, host): direct LL, 1 channel(s) x 1 instance(s), rule $r:$l_direct, verified"
    "nonblocking alltoall runs on gc3's alltoall_pairs4 plan"
    "nonblocking allreduce runs on gc3's allreduce_halves2 plan"
    "test_coll: 4 ranks, host buffers: "
)
unwanted=("coll:gc3: rules file:" "using the built-in rules" "coll:gc3: algorithm directory: " "NOT USED" "timeout")
o=$(cd "$w" && timeout 250 "$b/contrib/gc3-mpirun" --mca coll_gc3_backend host --mca coll_gc3_verbose 1 \
    --mca coll_gc3_algorithm_dir "$a" --mca coll_gc3_rules_file "$r" -np 4 "$b/tests/mpi/test_coll" --max-count 20000 2>&1)
rc=$?
[ $rc -eq 0 ] && ok "the MPI job (4 ranks, host backend) exits 0" || bad "the MPI job exits $rc"
grep -qE "test_coll: 4 ranks, host buffers: [0-9]+ passed, 0 failed" <<<"$o" && ok "test_coll: every result right" ||
    bad "test_coll reports failures (or no summary)"
for p in "${want[@]}"; do
    grep -qF -- "$p" <<<"$o" && ok "shown: $p" || bad "not shown: $p"
done
for p in "${unwanted[@]}"; do
    ! grep -qF -- "$p" <<<"$o" && ok "not shown: $p" || { grep -F -- "$p" <<<"$o" | head -5; bad "shown: $p"; }
done
[ $fail = 0 ] || { echo "-- the job's output (last 40 lines):"; tail -n 40 <<<"$o"; }
echo "man page examples in MPI: $pass passed, $fail failed"
[ $fail = 0 ]
