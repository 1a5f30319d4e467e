#!/usr/bin/env bash
# What the main job of quickstart.sh ran where, in words, read from its output (test_coll run
# through coll/gc3 with coll_gc3_verbose 1): the collectives gc3 ran itself (allreduce, alltoall,
# allgather, reduce_scatter_block, bcast, reduce, gather, scatter, scan, exscan, their nonblocking and
# persistent forms; the v-forms run on their plans) and with which
# algorithms, on which GPUs (ranks per GPU, MPS) or with its host backend, whether device buffers
# were staged instead, and how many results were checked.
#
# Usage: quickstart-summary.sh LOG [STATUS]
#        quickstart-summary.sh --lines LOG
#   LOG     the run's output (stdout and stderr)
#   STATUS  the run's exit status (default 0)
#   --lines MPI_COMM_WORLD's lines of gc3 and test_coll's, each once, in the order of the run
#           (a communicator's "freed" line after the plans it sums up)
# Exit status: 0 when the run ended well and every checked result was right, 1 otherwise.
# Example: contrib/quickstart-summary.sh build/quickstart-mpi.log 0
set -u
case "${1:-}" in -h | --help | "") sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; [ -n "${1:-}" ]; exit;; esac
if [ "$1" = --lines ]; then
    [ -r "${2:-}" ] || { echo "quickstart-summary: cannot read ${2:-(no LOG given)}" >&2; exit 1; }
    sed -n 's/^\[[^]]*\] //;/MPI_COMM_WORLD/p;/test_coll/p' "$2" | awk '!seen[$0]++'
    exit 0
fi
log=$1
status=${2:-0}
[ -r "$log" ] || { echo "quickstart-summary: cannot read $log" >&2; exit 1; }

# a list in words: "a", "a and b", "a, b and c"
words() {
    local n=$# out="" i=0
    for w in "$@"; do
        i=$((i + 1))
        if [ $i = 1 ]; then out=$w; elif [ $i = "$n" ]; then out="$out and $w"; else out="$out, $w"; fi
    done
    echo "$out"
}
mpi_name() {
    case $1 in
    allreduce) echo MPI_Allreduce;; alltoall) echo MPI_Alltoall;; allgather) echo MPI_Allgather;;
    reduce_scatter_block) echo MPI_Reduce_scatter_block;; bcast) echo MPI_Bcast;; reduce) echo MPI_Reduce;;
    gather) echo MPI_Gather;; scatter) echo MPI_Scatter;; scan) echo MPI_Scan;; exscan) echo MPI_Exscan;;
    *) echo "$1";;
    esac
}

# every rank prints each plan line: "COLL BACKEND ALGO PROTO verified|unused", once each
plans=$(sed -nE 's/^(\[[^]]*\] )?coll:gc3: comm .*: (allreduce|alltoall|allgather|reduce_scatter_block|bcast|reduce|gather|scatter|scan|exscan) [^ ]+ bytes(, in place)? \(([a-z]+) backend, [0-9]+ ranks, [^)]*\): ([A-Za-z_0-9]+) (Simple|LL128|LL)[ ,(](.*)$/\2 \4 \5 \6 \7/p' "$log" |
        awk '{ st = ($0 ~ /NOT USED/) ? "unused" : ($0 ~ /, verified/ ? "verified" : "unused"); k = $1 " " $2 " " $3 " " $4 " " st
               if (!(k in seen)) { seen[k] = 1; print k } }')
used=$(awk '$5 == "verified"' <<<"$plans")
unused=$(grep -c ' unused$' <<<"$plans" || true)
where=$(sed -n 's/^.*test_coll: ranks on GPUs: //p' "$log" | head -1)
result=$(sed -nE 's/^.*test_coll: ([0-9]+) ranks, (device|host) buffers: ([0-9]+) passed, ([0-9]+) failed.*$/\1 \2 \3 \4/p' "$log" | head -1)
staged=$(sed -nE 's/^.*coll:gc3: comm .*: (ranks [0-9]+ and [0-9]+ share GPU .* without MPS): their kernels.*$/\1/p' "$log" | head -1)

colls=()
algos=()
for c in allreduce alltoall allgather reduce_scatter_block bcast reduce gather scatter scan exscan; do
    a=$(awk -v c="$c" '$1 == c { if (!($3 " " $4 in s)) { s[$3 " " $4] = 1; l = l (l == "" ? "" : ", ") $3 " " $4 } } END { print l }' <<<"$used")
    [ -n "$a" ] || continue
    colls+=("$(mpi_name "$c")")
    algos+=("$c: $a")
done
# nonblocking and persistent calls on those plans: "nonblocking allreduce runs on gc3's ... plan"
for k in "nonblocking allreduce:MPI_Iallreduce" "nonblocking alltoall:MPI_Ialltoall" \
         "nonblocking allgather:MPI_Iallgather" "nonblocking reduce_scatter_block:MPI_Ireduce_scatter_block" \
         "nonblocking bcast:MPI_Ibcast" "nonblocking reduce:MPI_Ireduce" \
         "nonblocking gather:MPI_Igather" "nonblocking scatter:MPI_Iscatter" \
         "nonblocking scan:MPI_Iscan" "nonblocking exscan:MPI_Iexscan" \
         "persistent allreduce:MPIX_Allreduce_init" "persistent alltoall:MPIX_Alltoall_init" \
         "persistent allgather:MPIX_Allgather_init" "persistent reduce_scatter_block:MPIX_Reduce_scatter_block_init" \
         "persistent bcast:MPIX_Bcast_init" "persistent reduce:MPIX_Reduce_init"; do
    grep -q "coll:gc3: comm .*: ${k%%:*} runs on gc3's" "$log" && colls+=("${k#*:}")
done
backends=$(awk '{ print $2 }' <<<"$used" | sort -u | tr '\n' ' ')

if [ -z "$result" ]; then
    echo "FAILED: the run printed no test_coll summary (exit status $status); its last lines ($log):"
    tail -n 20 "$log"
    exit 1
fi
if [ ${#colls[@]} -eq 0 ]; then
    if [ -n "$staged" ]; then
        echo "gc3 did not run the collectives on the GPU: ${where:-the ranks share a GPU without MPS} ($staged)."
        echo "Their device buffers were staged through host memory by Open MPI's own collectives (right, but slow):"
        echo "to run gc3 there, run the ranks under MPS (nvidia-cuda-mps-control -d; see the NOTE above) or give every rank a GPU of its own."
    else
        echo "gc3 built no plan: every call was staged or passed on to Open MPI (see $log)."
    fi
else
    case $backends in
    "cuda ") echo "gc3 ran $(words "${colls[@]}") itself on device buffers: ${where:-(where the ranks ran is not in the output)}.";;
    "host ") echo "gc3 ran $(words "${colls[@]}") itself with its host backend on host buffers (no GPU): ${result%% *} ranks on this machine's CPUs.";;
    *) echo "gc3 ran $(words "${colls[@]}") itself (backends: ${backends% }): ${where:-?}.";;
    esac
    (IFS=';'; echo "Algorithms its rules chose (by collective and size):${algos[*]/#/ }.")
fi
[ "${unused:-0}" = 0 ] || echo "$unused plan(s) could not be used: their calls were staged or passed on (lines with NOT USED in $log)."
read -r _ kind pass fail <<<"$result"
if [ "$fail" = 0 ]; then
    echo "Every result was checked against a host computation: $pass passed, 0 failed ($kind buffers; full output: $log)."
else
    echo "FAILED: $fail of $((pass + fail)) checked results were wrong (full output: $log)."
    grep -m 10 -E 'FAILED|got .* want' "$log"
    [ "$status" != 0 ] || status=1
fi
# a run that staged its calls or left plans unused is not a failure (the lines above say so)
[ "$status" = 0 ] && exit 0
echo "FAILED: the run ended with exit status $status (full output: $log)."
exit 1
