#!/usr/bin/env bash
# gc3 quickstart: set up (install missing packages when possible, build, install the component
# into ./_install) and run the main job. From the source root:
#
#     ./contrib/quickstart.sh                # set up + main job
#     ./contrib/quickstart.sh --setup-only   # set up only (used by run-tests.sh)
#
# Environment: GC3_PREFIX (install prefix, default ./_install), GC3_BUILD (build folder,
# default ./build), GC3_CONFIGURE_FLAGS (extra configure flags), GC3_NP (ranks, default 4).
set -euo pipefail
case "${1:-}" in -h | --help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0;; esac
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
np=${GC3_NP:-4}
gpus=0
command -v nvidia-smi >/dev/null && gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
say "algorithms: compile each generator for $np ranks (2 nodes x $((np / 2)) GPUs for the hierarchical ones), verify, run"
gc3c=$prefix/bin/gc3c
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for algo in ring allpairs oneshot rhd hierarchical direct twostep allgather_ring reduce_scatter_ring; do
    "$gc3c" gen "$algo" --ranks "$np" --nodes 2 --stats -o "$work/$algo.xml"
    case $algo in
    ring|allpairs|oneshot|rhd|hierarchical) counts="4K 256K 4M";;
    *) counts="1K 64K";;
    esac
    for count in $counts; do
        "$gc3c" run --dtype float32 --op sum --count $count "$work/$algo.xml"
    done
done
say "hand-written MSCCL programs shipped with the tests: verify"
for f in "$src"/tests/corpus/valid/*.xml; do
    post=()
    [ -f "${f%.xml}.post" ] && post=(--post "${f%.xml}.post")
    "$gc3c" verify "${post[@]}" "$f"
done
if [ "$gpus" -gt 0 ]; then
    say "MPI: $np ranks through coll/gc3 on $gpus GPUs: MPI_Allreduce and MPI_Alltoall on device buffers"
    mode=(--device)
    backend=()
else
    say "MPI: $np ranks through coll/gc3, no GPU: the host backend runs MPI_Allreduce and MPI_Alltoall on host buffers"
    mode=()
    backend=(--mca coll_gc3_backend host)
fi
# verbose 1: one line per plan gc3 builds (collective, size class, backend, algorithm)
GC3_COMPONENT_DIR=$comp_dir "$build/contrib/gc3-mpirun" "${backend[@]}" --mca coll_gc3_verbose 1 -np "$np" \
    "$build/tests/mpi/test_coll" "${mode[@]}" --max-count 4194304 2>&1 | sed -n 's/^\[[^]]*\] //;/MPI_COMM_WORLD/p;/test_coll/p' | sort -u
say "done"
