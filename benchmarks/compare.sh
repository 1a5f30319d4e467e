#!/usr/bin/env bash
# compare.sh: gc3 against every NCCL mode and staging, side by side in one job per collective
# (allreduce, alltoall, bcast, reduce), on the GPUs of this machine (all of them, then 2 where there
# are more), every result checked; allreduce and alltoall with the FIFOs of before issue 43
# (coll_gc3_zero_copy_fifo_bytes 0, coll_gc3_fifo_slots 4) beside them; where an allreduce's time
# goes (coll_gc3_breakdown); and a communicator's device memory (test_faults comms --device) against
# gc3_info's estimate. Prints, per collective and size, gc3 against the fastest NCCL mode (and against
# the old FIFOs); writes the CSVs, the logs and plots (where matplotlib is there) into the output folder.
#
# usage: benchmarks/compare.sh [--build DIR] [--out DIR] [--gpus N[,N...]] [--colls C[,C...]] [--quick]
#        benchmarks/compare.sh --summary CSV [OLD_CSV]
#   --build DIR   gc3's build folder (default: build, beside this script's folder)
#   --out DIR     where the CSVs and logs go (default: compare-out)
#   --gpus LIST   the GPU counts to measure (default: every GPU of the machine, then 2 where it has
#                 more; CUDA_VISIBLE_DEVICES picks the first N)
#   --colls LIST  the collectives (default: allreduce,alltoall,bcast,reduce; up to 256 MB, alltoall
#                 64 MB per peer on 4 GPUs and 128 MB on 2, bcast and reduce 64 MB)
#   --quick       a few sizes and iterations only (to check that it runs)
#   --summary CSV [OLD_CSV]  no measurement: the summary of a gc3_bench CSV written before (and
#                 against OLD_CSV's gc3 column); runs anywhere
#   -h, --help    this text
# It needs 2 GPUs or more (NCCL takes one rank per GPU); on fewer it says so and exits 77.
# examples:
#   source .device/env.sh; benchmarks/compare.sh --out "$OUT/compare"       # on the GPU machine
#   benchmarks/compare.sh --gpus 4 --quick --out /tmp/compare               # does it run?
#   benchmarks/compare.sh --summary doc/measurements/bench-allreduce-4xh200.csv
set -u
case "${1:-}" in -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0;; esac
# SUMMARY CSV [OLD_CSV]: per size, gc3 against the fastest NCCL mode (and against OLD_CSV's gc3)
summary() {
    awk -F, -v old="${2:-}" '
        BEGIN { if (old != "") while ((getline l < old) > 0) { split(l, c, ","); if (c[4] == "gc3") prev[c[3]] = c[5] } }
        NR == 1 { next }
        { coll = $1; n = $2; b = $3; m = $4; t = $5; if ($8 != "yes") bad[b] = bad[b] " " m
          if (!(b in seen)) { seen[b] = 1; order[++k] = b }
          if (m == "gc3") { g[b] = t; bw[b] = $7 }
          else if (m ~ /^nccl/ && (!(b in best) || t < best[b])) { best[b] = t; mode[b] = m }
          else if (m == "staged") st[b] = t }
        END {
          tail = (old != "") ? " and the FIFOs of before (old)" : ""
          printf "# %s, %d ranks: gc3 against the fastest NCCL mode%s (ratio: NCCL time / gc3 time)\n", coll, n, tail
          tail = (old != "") ? "   old_us  old/new" : ""
          printf "%12s %10s %10s %-9s %7s %9s %9s%s\n", "bytes", "gc3_us", "nccl_us", "mode", "ratio", "busbw", "x_staged", tail
          for (i = 1; i <= k; i++) { b = order[i]
            r = (g[b] > 0 && best[b] > 0) ? best[b] / g[b] : 0
            xs = (b in st && g[b] > 0) ? sprintf("%.1f", st[b] / g[b]) : "-"
            printf "%12d %10.1f %10.1f %-9s %7.2f %9.1f %9s", b, g[b], best[b], mode[b], r, bw[b], xs
            ro = (prev[b] > 0 && g[b] > 0) ? prev[b] / g[b] : 0
            if (old != "") printf " %8.1f %8.2f", prev[b], ro
            if (b in bad) printf "  NOT VALID:%s", bad[b]
            printf "\n" } }' "$1"
}

here=$(cd "$(dirname "$0")/.." && pwd)
B=$here/build
O=compare-out
gpus=
colls="allreduce alltoall bcast reduce"
quick=0
while [ $# -gt 0 ]; do
    case $1 in
    --build) B=$2; shift 2 ;;
    --out) O=$2; shift 2 ;;
    --gpus) gpus=${2//,/ }; shift 2 ;;
    --colls) colls=${2//,/ }; shift 2 ;;
    --quick) quick=1; shift ;;
    --summary) [ -r "${2:-}" ] || { echo "compare.sh: --summary needs a readable CSV" >&2; exit 2; }
        summary "$2" "${3:-}"; exit $? ;;
    *) echo "compare.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
run=$B/contrib/gc3-mpirun
bench=$B/benchmarks/gc3_bench
for f in "$run" "$bench" "$B/tests/mpi/test_faults" "$B/gc3_info"; do
    [ -x "$f" ] || { echo "compare.sh: $f is missing: build gc3 first (--build)" >&2; exit 2; }
done
have=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
if [ -z "$gpus" ]; then
    gpus=$have
    [ "$have" -gt 2 ] && gpus="$have 2"
fi
if [ "$have" -lt 2 ]; then
    echo "compare.sh: this machine has $have GPU(s); NCCL and the comparison need 2 or more"
    exit 77
fi
mkdir -p "$O"

rc=0
for g in $gpus; do
    [ "$g" -le "$have" ] || { echo "compare.sh: $g GPUs asked, this machine has $have"; rc=1; continue; }
    vis=$(seq -s, 0 $((g - 1)))
    for coll in $colls; do
        # the largest size; old: gc3 with the FIFOs of before, for the collectives issue 43 changed
        old=$O/$coll-${g}gpu-fifo-before.csv
        case $coll in
        allreduce) max=256M ;;
        alltoall) max=$((g == 2 ? 128 : 64))M ;;
        bcast | reduce) max=64M old= ;;
        *) echo "compare.sh: unknown collective '$coll' (allreduce, alltoall, bcast, reduce)"; rc=1; continue ;;
        esac
        sizes=4:$max iters=()
        [ $quick = 1 ] && sizes=4:4M iters=(-i 5)
        new=$O/$coll-${g}gpu.csv
        echo "== $g GPUs, $coll: every method${old:+, then gc3 with the FIFOs of before} ($(date +%T))"
        CUDA_VISIBLE_DEVICES=$vis "$run" -np "$g" "$bench" -t $coll -c -m $sizes "${iters[@]}" --staged-max 16M --csv "$new" \
            >"$O/$coll-${g}gpu.log" 2>&1 || { echo "gc3_bench failed: $O/$coll-${g}gpu.log"; tail -5 "$O/$coll-${g}gpu.log"; rc=1; }
        if [ -n "$old" ]; then
            CUDA_VISIBLE_DEVICES=$vis "$run" -np "$g" --mca coll_gc3_zero_copy_fifo_bytes 0 --mca coll_gc3_fifo_slots 4 \
                "$bench" -t $coll -c -m $sizes "${iters[@]}" --methods gc3 --csv "$old" >"$O/$coll-${g}gpu-fifo-before.log" 2>&1 ||
                { echo "gc3_bench failed: $O/$coll-${g}gpu-fifo-before.log"; rc=1; }
        fi
        [ -s "$new" ] && summary "$new" ${old:+"$old"} | tee "$O/$coll-${g}gpu.summary"
    done
    echo "== $g GPUs: where an allreduce's time goes, 8 B-64 MB (coll_gc3_breakdown) ($(date +%T))"
    bsizes=8:64M
    [ $quick = 1 ] && bsizes=8:4M
    CUDA_VISIBLE_DEVICES=$vis "$run" -np "$g" --mca coll_gc3_breakdown 1 "$bench" -t allreduce -m $bsizes "${iters[@]}" \
        --methods gc3 >"$O/breakdown-${g}gpu.log" 2>&1 || { echo "gc3_bench failed: $O/breakdown-${g}gpu.log"; rc=1; }
    echo "== $g GPUs: device memory of 32 communicators used as issue 43 says ($(date +%T))"
    # (test_faults comms needs a budget: one nothing reaches, so that every plan is as at defaults)
    CUDA_VISIBLE_DEVICES=$vis "$run" -np "$g" --mca coll_gc3_memory_budget 64000000000 \
        "$B/tests/mpi/test_faults" comms --device --comms 32 --max-count 16777216 \
        >"$O/memory-${g}gpu.log" 2>&1 || rc=1
    grep -E "per communicator|test_faults comms:" "$O/memory-${g}gpu.log" | head -4
    "$B/gc3_info" --gpus "$g" --memory allreduce:8,allreduce:64K,allreduce:64M,alltoall:1K,alltoall:64K,alltoall:1M \
        >"$O/memory-${g}gpu-estimate.txt" 2>&1
    tail -1 "$O/memory-${g}gpu-estimate.txt"
    if python3 -c 'import matplotlib' 2>/dev/null; then
        csvs=()
        for coll in $colls; do [ -s "$O/$coll-${g}gpu.csv" ] && csvs+=("$O/$coll-${g}gpu.csv"); done
        [ ${#csvs[@]} -gt 0 ] && "$here/benchmarks/plot" "$O/bench-${g}gpu.png" "${csvs[@]}" \
            --title "gc3 against NCCL and staging, $g GPUs" >/dev/null 2>&1 || true
    fi
done
exit $rc
