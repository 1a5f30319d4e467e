#!/usr/bin/env bash
# net-path-bench.sh: the two paths between nodes, GPUDirect against host-staged, measured in one
# run on the same transport: latency (8 B-64 KB) and bandwidth (1-256 MB) of the hierarchical
# allreduce and the two-step alltoall on 2 pseudo-nodes (one rank each; two ranks share one GPU
# through MPS, or take two GPUs where there are). Prints a Markdown table (and writes it to --out).
#
# Usage: benchmarks/net-path-bench.sh [--build DIR] [--out FILE] [--host] [--quick] [-h|--help]
#   --build DIR  the build folder (default: ./build)
#   --out FILE   also write the table there (default: DIR/net-path-bench.md)
#   --host       the host backend on host buffers ("direct" instead of GPUDirect: the same protocol
#                on host memory); needs no GPU and no CUDA-enabled UCX (CI checks the script so)
#   --quick      fewer sizes and calls (CI)
# Needs, without --host: a GPU, gc3 built with CUDA and UCX, and a UCX built with CUDA in
# $GC3_UCX_CUDA (.device/env.sh sets it on the GPU machine), whose lib goes first in
# LD_LIBRARY_PATH for the ranks. MPS is started when one GPU is shared and no daemon answers
# (and stopped at the end). Takes about a minute; the sizes are timed with gc3_bench (each call
# alone, results checked once per size with -c).
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
B=$PWD/build out="" host=0 quick=0
usage() { sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
    case $1 in
    --build) B=$(cd "$2" && pwd) || exit 2; shift 2;;
    --out) out=$2; shift 2;;
    --host) host=1; shift;;
    --quick) quick=1; shift;;
    -h|--help) usage; exit 0;;
    *) echo "net-path-bench: unknown argument $1 (--help)" >&2; exit 2;;
    esac
done
out=${out:-$B/net-path-bench.md}
die() { echo "net-path-bench: $*" >&2; exit 1; }
R=$B/contrib/gc3-mpirun
BENCH=$B/benchmarks/gc3_bench
[ -x "$R" ] && [ -x "$BENCH" ] || die "no $R or $BENCH: build first (contrib/quickstart.sh --setup-only)"
grep -q '^#define GC3_HAVE_UCX 1' "$B/config.h" || die "gc3 was built without UCX: nothing goes between nodes"
work=$(mktemp -d)
mps_started=""
cleanup() {
    [ -z "$mps_started" ] || mps_daemon_quit "$mps_started" || true
    rm -rf "$work"
}
trap cleanup EXIT

env_args=()
if [ $host = 1 ]; then
    dev=host backend=host direct_name=direct
else
    dev=cuda backend=cuda direct_name=GPUDirect
    grep -q '^#define GC3_HAVE_CUDA 1' "$B/config.h" || die "gc3 was built without CUDA (--host measures the host backend)"
    [ -n "${GC3_UCX_CUDA:-}" ] || die "GC3_UCX_CUDA is not set: the GPUDirect path needs a UCX built with CUDA (on the GPU machine, source .device/env.sh)"
    [ -f "$GC3_UCX_CUDA/lib/libucp.so.0" ] || die "GC3_UCX_CUDA=$GC3_UCX_CUDA has no lib/libucp.so.0"
    export LD_LIBRARY_PATH=$GC3_UCX_CUDA/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    env_args=(-x LD_LIBRARY_PATH)
    ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
    [ "$ngpu" -gt 0 ] || die "no GPU (nvidia-smi lists none; --host measures the host backend)"
    if [ "$ngpu" -lt 2 ]; then
        source "$src/contrib/mps-daemon.sh"
        d=${CUDA_MPS_PIPE_DIRECTORY:-/tmp/nvidia-mps}
        if ! mps_answers "$d"; then
            d=$work/mps
            mps_daemon_start "$d" "$work/mpslog" || die "cannot start MPS: $mps_why"
            mps_started=$d
        fi
        export CUDA_MPS_PIPE_DIRECTORY=$d
        env_args+=(-x CUDA_MPS_PIPE_DIRECTORY)
    fi
fi
# the algorithms measured, at every size (the built-in rules take direct alltoall below 32 KB)
cat >"$work/rules" <<'EOF'
allreduce  2-*  *  *  0-512K    hierarchical  proto=LL
allreduce  2-*  *  *  512K-inf  hierarchical
alltoall   2-*  *  *  0-512K    twostep       proto=LL
alltoall   2-*  *  *  512K-inf  twostep
EOF
if [ $quick = 1 ]; then
    lat=(-m 8:1K -i 20) bw=(-m 1M:2M -i 5)
else
    lat=(-m 8:64K -i 200 -x 20) bw=(-m 1M:256M -i 20 -x 3)
fi

# one path, one collective, one range: gc3_bench's CSV, and the path its plans ran (verbose 1)
run() { # path coll tag range...
    local path=$1 coll=$2 tag=$3 log
    shift 3
    log=$work/$path-$coll-$tag.log
    "$R" ${env_args[@]+"${env_args[@]}"} --mca coll_gc3_backend "$backend" --mca coll_gc3_pseudo_nodes 1 \
        --mca coll_gc3_net_path "$path" --mca coll_gc3_rules_file "$work/rules" --mca coll_gc3_verbose 1 -np 2 \
        "$BENCH" -d "$dev" -t "$coll" -c --methods gc3 "$@" --csv "$work/$path-$coll-$tag.csv" >"$log" 2>&1 ||
        { tail -20 "$log" >&2; die "gc3_bench ($path, $coll) failed: $log"; }
    grep -q 'FAIL' "$log" && { grep FAIL "$log" >&2; die "results wrong ($path, $coll)"; }
    local want=host-staged
    [ "$path" = staged ] || want=$direct_name
    grep -q "$want: slots in" "$log" ||
        { grep -m1 'coll:gc3:.*2 nodes' "$log" >&2; die "the $path run did not run the $want path (its plan line above)"; }
    cp "$log" "$B/net-path-bench-$path-$coll-$tag.log"
}
t0=$SECONDS
for path in gpudirect staged; do
    for coll in allreduce alltoall; do
        run $path $coll lat "${lat[@]}"
        run $path $coll bw "${bw[@]}"
    done
done

# the table: per size, both paths' latency (small sizes) or bus bandwidth (large), and the ratio
val() { # csv column(5: latency, 7: busbw) size
    awk -F, -v s="$3" -v c="$2" '$3 == s && $4 == "gc3" {print $c}' "$1"
}
{
    echo "# net-path-bench: $direct_name against host-staged between 2 pseudo-nodes x 1 rank ($backend backend)"
    echo
    echo "$(date -u +%Y-%m-%d), $( [ $host = 1 ] && echo "host buffers" || nvidia-smi -L 2>/dev/null | head -1 | sed 's/ (UUID.*//')," \
         "UCX $(grep -m1 -o 'through UCX[^;]*' "$work/gpudirect-allreduce-lat.log" | head -1 | sed 's/through UCX //')," \
         "${ngpu:+$ngpu GPU(s), }hierarchical allreduce and two-step alltoall at every size, float32, each call timed alone"
    for kind in lat bw; do
        echo
        if [ $kind = lat ]; then
            echo "| bytes | allreduce $direct_name (us) | allreduce staged (us) | staged / $direct_name | alltoall $direct_name (us) | alltoall staged (us) | staged / $direct_name |"
            col=5
        else
            echo "| bytes | allreduce $direct_name busbw (GB/s) | allreduce staged busbw (GB/s) | $direct_name / staged | alltoall $direct_name busbw (GB/s) | alltoall staged busbw (GB/s) | $direct_name / staged |"
            col=7
        fi
        echo "|---|---|---|---|---|---|---|"
        for s in $(awk -F, 'NR > 1 {print $3}' "$work/gpudirect-allreduce-$kind.csv" | sort -n | uniq); do
            row="| $s"
            for coll in allreduce alltoall; do
                a=$(val "$work/gpudirect-$coll-$kind.csv" $col "$s")
                b=$(val "$work/staged-$coll-$kind.csv" $col "$s")
                r=$(awk -v a="$a" -v b="$b" -v k=$kind 'BEGIN {
                    if (a == "" || b == "" || a + 0 == 0 || b + 0 == 0) print "-";
                    else printf "%.2f", k == "lat" ? b / a : a / b }')
                row="$row | ${a:--} | ${b:--} | $r"
            done
            echo "$row |"
        done
    done
    echo
    echo "Measured in $((SECONDS - t0)) s; logs: $B/net-path-bench-*.log"
} | tee "$out"
