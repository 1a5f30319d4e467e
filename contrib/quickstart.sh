#!/usr/bin/env bash
# gc3 quickstart: set up (install missing packages when possible, build, install the component
# into ./_install) and run the main job.
#
# usage: ./contrib/quickstart.sh [--setup-only]     (from the source root)
#   (none)          set up, then the main job
#   --setup-only    set up only (used by run-tests.sh)
#   -h, --help      this text
#
# The main job compiles and verifies every algorithm, then runs MPI_Allreduce, MPI_Alltoall,
# MPI_Allgather, MPI_Reduce_scatter_block, MPI_Bcast and MPI_Reduce (blocking, nonblocking and
# persistent) through coll/gc3 with one rank per GPU (at least 2 ranks; ranks that share a GPU
# run under an MPS daemon started for the run and stopped after), or with gc3's host backend and
# 4 ranks where there is no GPU. Its last lines say what ran where and how many results were checked.
#
# Environment: GC3_PREFIX (install prefix, default ./_install), GC3_BUILD (build folder,
# default ./build), GC3_CONFIGURE_FLAGS (extra configure flags), GC3_NP (ranks of the main job;
# default one per GPU, at least 2; 4 without GPUs).
#
# examples:
#   ./contrib/quickstart.sh                # set up + main job
#   ./contrib/quickstart.sh --setup-only   # set up only
#   GC3_NP=4 ./contrib/quickstart.sh       # the main job with 4 ranks
#   GC3_BUILD=/tmp/b GC3_CONFIGURE_FLAGS=--without-cuda ./contrib/quickstart.sh --setup-only
set -euo pipefail
case "${1:-}" in -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0;; esac
src=$(cd "$(dirname "$0")/.." && pwd)
cd "$src"
build=${GC3_BUILD:-$src/build}
prefix=${GC3_PREFIX:-$src/_install}
setup_only=0
[ "${1:-}" = "--setup-only" ] && setup_only=1
say() { printf '\n== %s\n' "$*"; }

# ---------------------------------------------------------------- 1. packages
pkgs=(gcc make pkg-config autoconf automake cmake libopenmpi-dev openmpi-bin libhwloc-dev
      libucx-dev libibverbs-dev libxml2-dev)
have_header() { echo "#include <$1>" | cc -E $GC3_EXTRA_CPPFLAGS_Q -I/usr/include/libxml2 - >/dev/null 2>&1; }
GC3_EXTRA_CPPFLAGS_Q=${GC3_EXTRA_CPPFLAGS:-}
missing=()
for c in cc make autoreconf automake mpicc mpirun ctest; do command -v $c >/dev/null || missing+=("$c"); done
for h in hwloc.h libxml/parser.h; do have_header $h || missing+=("$h"); done
if [ ${#missing[@]} -gt 0 ]; then
    if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
        say "installing packages (missing: ${missing[*]})"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq "${pkgs[@]}" >/dev/null
    else
        echo "quickstart: missing ${missing[*]}; install: ${pkgs[*]} (as root: apt-get install ...)" >&2
        exit 1
    fi
fi

# ---------------------------------------------------------------- 2. build and install
say "building gc3 in $build (install prefix $prefix)"
if [ ! -x configure ] || [ configure.ac -nt configure ] || [ Makefile.am -nt Makefile.in ]; then
    ./autogen.sh
fi
mkdir -p "$build"
cd "$build"
if [ ! -f Makefile ] || [ "$src/configure" -nt config.status ]; then
    # shellcheck disable=SC2086
    "$src/configure" --prefix="$prefix" ${GC3_CONFIGURE_FLAGS:-} > configure.out 2>&1 || { cat configure.out; exit 1; }
    sed -n '/configuration summary/,$p' configure.out
fi
make -j"$(nproc)" >make.out 2>&1 || { tail -50 make.out; exit 1; }
grep -E 'warning:' make.out || true
make install >/dev/null
comp_dir=$(make -s print-componentdir)
echo "installed: $prefix/bin/gc3c and $comp_dir/mca_coll_gc3.so"
[ $setup_only = 1 ] && exit 0

# ---------------------------------------------------------------- 3. main job
# the GPUs the ranks can use: nvidia-smi's, or as many as CUDA_VISIBLE_DEVICES names
gpus=0
command -v nvidia-smi >/dev/null && gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [ "$gpus" -gt 0 ] && [ -n "${CUDA_VISIBLE_DEVICES+x}" ]; then
    v=$(echo "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | grep -c . || true)
    [ "$v" -lt "$gpus" ] && gpus=$v
fi
if [ -n "${GC3_NP:-}" ]; then
    [[ $GC3_NP =~ ^[1-9][0-9]*$ ]] || { echo "quickstart: GC3_NP=$GC3_NP is not a number of ranks" >&2; exit 2; }
    np=$GC3_NP
elif [ "$gpus" -gt 0 ]; then
    np=$((gpus < 2 ? 2 : gpus))
else
    np=4
fi
nodes=2 # the hierarchical algorithms: 2 nodes of np/2 GPUs
[ $((np % 2)) = 0 ] || nodes=1
work=$(mktemp -d)
mps_ours="" # the pipe directory of the MPS daemon this run started

source "$src/contrib/mps-daemon.sh" # mps_answers, mps_daemon_start, mps_daemon_quit
cleanup() {
    if [ -n "$mps_ours" ]; then
        if ! mps_daemon_quit "$mps_ours"; then
            echo "quickstart: the MPS daemon started for the run still answers; stop it with:" \
                 "echo quit | CUDA_MPS_PIPE_DIRECTORY=$mps_ours nvidia-cuda-mps-control" >&2
            return
        fi
        echo "MPS: the daemon started for the run is stopped"
    fi
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

say "algorithms: compile each generator for $np ranks ($([ $nodes = 2 ] && echo "2 nodes x $((np / 2)) GPUs" || echo "one node") for the hierarchical ones), verify, run"
gc3c=$prefix/bin/gc3c
for algo in ring allpairs oneshot rhd hierarchical direct twostep allgather_ring reduce_scatter_ring; do
    "$gc3c" gen "$algo" --ranks "$np" --nodes $nodes --stats -o "$work/$algo.xml"
    case $algo in
    ring|allpairs|oneshot|rhd|hierarchical) counts="4096 262144 4194304";;
    *) counts="1024 65536";;
    esac
    for count in $counts; do
        # a multiple of every algorithm's chunks per loop (np x np x 16 covers them all)
        unit=$((np * np * 16))
        count=$((count / unit * unit))
        "$gc3c" run --dtype float32 --op sum --count $((count > 0 ? count : unit)) "$work/$algo.xml"
    done
done
say "hand-written MSCCL programs shipped with the tests: verify"
for f in "$src"/tests/corpus/valid/*.xml; do
    post=()
    [ -f "${f%.xml}.post" ] && post=(--post "${f%.xml}.post")
    "$gc3c" verify "${post[@]}" "$f"
done

# Ranks that share a GPU need MPS for gc3 to run there (without it their kernels would take turns
# on the GPU, and gc3 stages their device buffers through host memory): a daemon already running
# is used, otherwise one is started for the run in a private directory and stopped at the end.
mps_howto() { # $1: why MPS cannot be used
    cat >&2 <<EOF

quickstart: NOTE: $np ranks share $gpus GPU(s), and MPS cannot be used: $1.
  Without MPS the ranks' kernels would take turns on a GPU, so gc3 stages their device buffers
  through host memory: the results are right, but this is not gc3's GPU path. To run gc3 on the
  GPU, start MPS (nvidia-cuda-mps-control comes with the NVIDIA driver's utilities, e.g. Ubuntu's
  nvidia-compute-utils-<driver version>) and run again:
      export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
      mkdir -p \$CUDA_MPS_PIPE_DIRECTORY \$CUDA_MPS_LOG_DIRECTORY
      nvidia-cuda-mps-control -d
      ./contrib/quickstart.sh
      echo quit | nvidia-cuda-mps-control
  or give every rank a GPU of its own (GC3_NP=<number of GPUs>, on a machine of 2 GPUs or more).
EOF
}
mpirun_env=()
if [ "$gpus" -gt 0 ] && [ "$np" -gt "$gpus" ]; then
    say "MPS: $np ranks on $gpus GPU(s) share them through MPS"
    d=${CUDA_MPS_PIPE_DIRECTORY:-/tmp/nvidia-mps}
    if ! command -v nvidia-cuda-mps-control >/dev/null; then
        mps_howto "nvidia-cuda-mps-control is not on PATH"
    elif mps_answers "$d"; then
        echo "MPS: using the daemon already running at $d"
        export CUDA_MPS_PIPE_DIRECTORY=$d
        mpirun_env=(-x CUDA_MPS_PIPE_DIRECTORY)
    else
        # it is asked to quit at the end even when it did not answer in time
        mps_ours=$work/mps/pipe
        if mps_daemon_start "$mps_ours" "$work/mps/log"; then
            echo "MPS: daemon started for this run (pipe directory $mps_ours); it is stopped at the end"
            export CUDA_MPS_PIPE_DIRECTORY=$mps_ours
            mpirun_env=(-x CUDA_MPS_PIPE_DIRECTORY)
        else
            mps_howto "$mps_why"
        fi
    fi
fi

if [ "$gpus" -gt 0 ]; then
    say "MPI: $np ranks through coll/gc3 on $gpus GPU(s): MPI_Allreduce, MPI_Alltoall, MPI_Bcast, MPI_Reduce and relatives on device buffers"
    mode=(--device)
    backend=()
else
    say "MPI: $np ranks through coll/gc3, no GPU: the host backend runs MPI_Allreduce, MPI_Alltoall, MPI_Bcast, MPI_Reduce and relatives on host buffers"
    mode=()
    backend=(--mca coll_gc3_backend host)
fi
# verbose 1: one line per plan gc3 builds (collective, size class, backend, algorithm)
log=$build/quickstart-mpi.log
rc=0
GC3_COMPONENT_DIR=$comp_dir "$build/contrib/gc3-mpirun" ${mpirun_env[@]+"${mpirun_env[@]}"} ${backend[@]+"${backend[@]}"} \
    --mca coll_gc3_verbose 1 -np "$np" "$build/tests/mpi/test_coll" ${mode[@]+"${mode[@]}"} --max-count 4194304 \
    >"$log" 2>&1 </dev/null || rc=$?
"$src/contrib/quickstart-summary.sh" --lines "$log"
say "what ran where"
cd "$src" # the log named relative to the source root where it lies beneath it (build/quickstart-mpi.log)
"$src/contrib/quickstart-summary.sh" "${log#"$src"/}" "$rc"
