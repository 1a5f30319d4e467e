#!/usr/bin/env bash
# Run OSU micro-benchmarks (default osu_allreduce, osu_alltoall and osu_iallreduce; OSU_COLLS picks
# others) on device buffers (-d cuda) with validation (-c) through coll/gc3, beside the same sizes staged through host
# memory (gc3 with the collective disabled, i.e. what a stock non-CUDA-aware Open MPI user must
# do) and OSU's NCCL benchmarks when they were built; then print one table with the ratios.
#
# OSU is not part of gc3: build it yourself (configure it with --enable-cuda, and --enable-ncclomb
# for the NCCL columns) and give this script the folder holding its benchmarks.
#
# Usage: benchmarks/run-osu.sh OSU_DIR [NP] [MAX_BYTES] [LOG_DIR]
#   OSU_DIR    a folder under which osu_allreduce etc. are found (e.g. the install's libexec)
#   NP         ranks, one per GPU (default: the number of GPUs nvidia-smi lists, else 2)
#   MAX_BYTES  largest size (default 64M; K/M/G suffixes allowed)
#   LOG_DIR    where the raw OSU outputs go (default: a temporary folder, named at the end)
# Environment: OSU_COLLS (the benchmarks, without osu_: e.g. "allgatherv alltoallv gatherv scatterv
# reduce_scatter gather scatter iallgatherv ialltoallv igatherv iscatterv ireduce_scatter igather iscatter";
# the staged runs disable the coll_gc3_enable_ parameter each runs under), GC3_MPIRUN (default:
# contrib/gc3-mpirun of the build in build/ or here, or on PATH), OSU_ITERS
# (iterations per size, default OSU's own), OSU_EXTRA (more options for every OSU run), MPIRUN_EXTRA
# (more mpirun options, e.g. "-x CUDA_MPS_PIPE_DIRECTORY" where ranks share a GPU through MPS),
# OSU_BUFFERS=host (host buffers and gc3's host backend, for machines without GPUs: then the
# "staged" column is Open MPI's own collective on host memory).
# Exit status: non-zero when any gc3 run fails or OSU reports a validation failure in one (the staged
# and NCCL runs' failures are reported, not counted).
set -uo pipefail
osu_dir=${1:?usage: run-osu.sh OSU_DIR [NP] [MAX_BYTES] [LOG_DIR]}
np=${2:-}
max=${3:-64M}
logs=${4:-$(mktemp -d /tmp/gc3-osu.XXXXXX)}
here=$(cd "$(dirname "$0")" && pwd)
mpirun_gc3=${GC3_MPIRUN:-}
for m in "$here/../contrib/gc3-mpirun" "$here/../build/contrib/gc3-mpirun" "$(command -v gc3-mpirun)"; do
    [ -z "$mpirun_gc3" ] && [ -n "$m" ] && [ -x "$m" ] && mpirun_gc3=$m
done
[ -n "$mpirun_gc3" ] || { echo "run-osu.sh: no gc3-mpirun found: build gc3 or set GC3_MPIRUN" >&2; exit 2; }
if [ -z "$np" ]; then
    np=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
    [ "${np:-0}" -ge 2 ] || np=2
fi
case $max in # OSU's -m takes plain bytes
    *[kK]) max=$(( ${max%?} << 10 )) ;;
    *[mM]) max=$(( ${max%?} << 20 )) ;;
    *[gG]) max=$(( ${max%?} << 30 )) ;;
esac
mkdir -p "$logs"
find_bench() { find "$osu_dir" -name "$1" -type f -perm -u+x 2>/dev/null | head -n 1; }
iters=()
[ -n "${OSU_ITERS:-}" ] && iters=(-i "$OSU_ITERS")
if [ "${OSU_BUFFERS:-cuda}" = host ]; then
    accel=()
    gc3opt=(--mca coll_gc3_backend host)
else
    accel=(-d cuda)
    gc3opt=()
fi
status=0
colls=${OSU_COLLS:-allreduce alltoall iallreduce}
# the coll_gc3_enable_ parameter a benchmark's calls run under: its blocking form's plain collective
enable_of() {
    local c=${1#i}
    case $c in
    allgatherv) echo allgather ;; alltoallv) echo alltoall ;; gatherv) echo gather ;; scatterv) echo scatter ;;
    reduce_scatter) echo reduce_scatter_block ;; *) echo "$c" ;;
    esac
}

# run LABEL LOGNAME COMMAND...: keep the output, report failures
run() {
    local label=$1 log=$logs/$2.log
    shift 2
    echo "== $label: $*" | tee "$log"
    "$@" >> "$log" 2>&1
    local rc=$?
    if [ $rc -ne 0 ] || grep -q -i "fail\|DATA VALIDATION ERROR" "$log"; then
        echo "   FAILED (exit $rc): see $log"
        tail -n 20 "$log" | sed 's/^/   | /'
        return 1
    fi
    grep -oE "coll:gc3: comm [^:]*: ([a-z_]+ [^ ]+ bytes[^:]*: [a-z_]+ [A-Za-z0-9]+|nonblocking [a-z_]+ runs on gc3's [^ ]+)" "$log" |
        sed 's/^coll:gc3: comm [^:]*: //' | sort -u | sed 's/^/   gc3: /'
    return 0
}

for coll in $colls; do
    bench=$(find_bench "osu_$coll")
    if [ -z "$bench" ]; then
        echo "osu_$coll not found under $osu_dir" >&2
        status=1
        continue
    fi
    base=$(enable_of "$coll")
    run "gc3 $coll" "gc3-$coll" "$mpirun_gc3" -np "$np" ${MPIRUN_EXTRA:-} "${gc3opt[@]}" --mca coll_gc3_verbose 2 \
        "$bench" "${accel[@]}" -c -m "1:$max" "${iters[@]}" ${OSU_EXTRA:-} || status=1
    # (a failure here is Open MPI's own collective's, reported, not gc3's: the exit status is gc3's)
    run "staged $coll" "staged-$coll" "$mpirun_gc3" -np "$np" ${MPIRUN_EXTRA:-} "${gc3opt[@]}" --mca "coll_gc3_enable_$base" false \
        "$bench" "${accel[@]}" -c -m "1:$max" "${iters[@]}" ${OSU_EXTRA:-} || true
    nccl=$(find_bench "osu_nccl_$coll")
    if [ -n "$nccl" ] && [ ${#accel[@]} -gt 0 ]; then
        run "nccl $coll" "nccl-$coll" "$mpirun_gc3" -np "$np" ${MPIRUN_EXTRA:-} "$nccl" "${accel[@]}" -m "1:$max" "${iters[@]}" \
            ${OSU_EXTRA:-} || true
    fi
done

# One table per collective: OSU's average latency (us) per size, and the ratios to gc3.
table() {
    local coll=$1
    [ -f "$logs/gc3-$coll.log" ] || return 0
    echo
    echo "osu_$coll ${accel[*]:-(host buffers)}, $np ranks: average latency (us); staged/gc3 and nccl/gc3 > 1 mean gc3 is faster"
    awk -v coll="$coll" '
        FNR == 1 { src = FILENAME; sub(/.*\//, "", src); sub(/-.*/, "", src) }
        /^[0-9]+[ \t]/ { v[src, $1] = $2; if (src == "gc3") { sizes[++n] = $1 } }
        END {
            printf "%12s %12s %12s %12s %10s %10s\n", "bytes", "gc3", "staged", "nccl", "staged/gc3", "nccl/gc3"
            for (i = 1; i <= n; i++) {
                s = sizes[i]; g = v["gc3", s]; st = v["staged", s]; nc = v["nccl", s]
                printf "%12s %12s %12s %12s %10s %10s\n", s, g, (st == "" ? "-" : st), (nc == "" ? "-" : nc),
                       (st == "" || g == 0 ? "-" : sprintf("%.2f", st / g)), (nc == "" || g == 0 ? "-" : sprintf("%.2f", nc / g))
            }
        }' "$logs/gc3-$coll.log" "$logs/staged-$coll.log" $( [ -f "$logs/nccl-$coll.log" ] && echo "$logs/nccl-$coll.log")
}
for coll in $colls; do table "$coll"; done
echo
echo "raw OSU outputs: $logs"
[ $status -eq 0 ] && echo "osu: all gc3 runs completed and validated" || echo "osu: some runs FAILED"
exit $status
