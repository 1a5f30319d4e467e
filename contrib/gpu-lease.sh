#!/usr/bin/env bash
# gpu-lease.sh: builds and gpu tests of gc3 on a GPU machine lent for a short while, as background
# jobs that outlive the command that starts them (the machine's next command gets a fresh copy of
# the working tree: the jobs work in a copy of their own). Builds run in parallel; each job's GPU
# part waits for the others' (one at a time, flock), so that tests never share the GPUs.
#
# usage: contrib/gpu-lease.sh start [JOB...]   start the jobs (default: stock), return at once
#        contrib/gpu-lease.sh wait [SECONDS]   wait until every job ended (at most SECONDS, default
#                                              540), print the timeline and each test summary, and
#                                              pack the logs into $OUT/gpu-lease.tgz (where $OUT is set)
#   -h, --help                           this text
# JOBs:
#   stock    gc3 against the machine's Open MPI: ./contrib/quickstart.sh --setup-only, then ctest -L gpu
#   ompi5    Open MPI 5.0.x built with CUDA (contrib/ompi5-build.sh --cuda), gc3 against it
#            (contrib/ci-ompi5.sh --cuda), ctest -L gpu there
#   ompi41   the same with Open MPI 4.1.x, in build-ompi41-cuda
#   bench    benchmarks/compare.sh on the stock build (after stock's tests where both are started;
#            its own build where stock is not): gc3 against every NCCL mode and staging, the FIFOs of
#            before beside them, coll_gc3_breakdown, a communicator's device memory; CSVs and logs in
#            logs/bench
# The Open MPI sources: GC3_OMPI5_TARBALL / GC3_OMPI41_TARBALL, else the newest
# .device/openmpi_5.*.orig.tar.xz / openmpi_4.1.*.orig.tar.xz of the tree (the GPU machine has no
# network); their versions are read from the names. Or builds packed elsewhere (5.5 min less of
# the lease each): GC3_OMPI5_ARCHIVE / GC3_OMPI41_ARCHIVE, else the newest
# .device/openmpi-5.*-cuda.build.tar.xz / openmpi-4.1.*-cuda.build.tar.xz, made on any machine with
# the same folders, e.g. for 4.1.4:
#   GC3_OMPI5_VERSION=4.1.4 GC3_OMPI5_TARBALL=.device/openmpi_4.1.4.orig.tar.xz \
#   GC3_OMPI5_CACHE=/tmp/gc3-lease/ompi GC3_UCX_CUDA=/tmp/gc3-ucx-cuda/libucx \
#   contrib/ompi5-build.sh --cuda --pack .device/openmpi-4.1.4-cuda.build.tar.xz
# (the UCX unpacked from .device/ucx-cuda.tgz where env.sh unpacks it on the GPU machine).
# Environment: GC3_LEASE_DIR (default /tmp/gc3-lease: the copy of the tree in tree/, logs in logs/),
# GC3_LEASE_CTEST (ctest's selection instead of -L gpu, e.g. "-R gpu_p2p"; GC3_LEASE_CTEST_<JOB>, e.g.
# GC3_LEASE_CTEST_ompi41, for one job only), GC3_OMPI5_CACHE (default
# $GC3_LEASE_DIR/ompi: the Open MPI builds). Source the machine's environment script (.device/env.sh)
# first, in the command that starts the jobs.
#
# examples: (each line one command on the GPU machine; wait as often as the jobs need)
#   source .device/env.sh; contrib/gpu-lease.sh start stock ompi5 ompi41
#   contrib/gpu-lease.sh wait 540
#   source .device/env.sh; contrib/gpu-lease.sh start stock bench   # tests, then the measurements
set -u
case "${1:-}" in -h | --help | "") awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"
    [ -n "${1:-}" ]; exit $?;; esac
D=${GC3_LEASE_DIR:-/tmp/gc3-lease}
L=$D/logs
src=$(cd "$(dirname "$0")/.." && pwd)
say() { echo "$(date +%T) $*" >>"$L/timeline.txt"; }

newest() { # PATTERN: the newest file of .device matching it
    ls "$src"/.device/$1 2>/dev/null | sort -V | tail -1
}
version_of() { # an openmpi_X.Y.Z.orig.tar.* name: X.Y.Z
    basename "$1" | sed -n 's/^openmpi[-_]\([0-9][0-9.]*[0-9]\)[.-].*/\1/p'
}

# JOB: the job, in the copy of the tree; its GPU part under the lock
job() {
    local j=$1 t=$SECONDS rc tar arch ver sel own=GC3_LEASE_CTEST_$1
    read -r -a sel <<<"${!own:-${GC3_LEASE_CTEST:--L gpu}}" # (words: -R 'a|b' stays one regex)
    cd "$D/tree" || return 1
    say "$j: start"
    case $j in
    stock)
        ./contrib/quickstart.sh --setup-only >"$L/stock-build.log" 2>&1
        rc=$?; say "stock: build rc=$rc ($((SECONDS - t)) s)"
        [ $rc = 0 ] || return 1
        touch "$L/stock.built"
        (cd build && flock "$D/gpu.lock" ctest "${sel[@]}" --output-on-failure) >"$L/stock-test.log" 2>&1
        rc=$?; say "stock: ctest rc=$rc ($((SECONDS - t)) s)"
        cp build/tests/expect-output-failed.* "$L/" 2>/dev/null ;;
    ompi5 | ompi41)
        if [ $j = ompi5 ]; then
            tar=${GC3_OMPI5_TARBALL:-$(newest 'openmpi_5.*.orig.tar.*')}
            arch=${GC3_OMPI5_ARCHIVE:-$(newest 'openmpi-5.*-cuda.build.tar.xz')}
        else
            tar=${GC3_OMPI41_TARBALL:-$(newest 'openmpi_4.1.*.orig.tar.*')}
            arch=${GC3_OMPI41_ARCHIVE:-$(newest 'openmpi-4.1.*-cuda.build.tar.xz')}
        fi
        [ -f "$tar" ] || [ -f "$arch" ] || { say "$j: no Open MPI source tarball nor packed build (see --help)"; return 1; }
        ver=$(version_of "$([ -f "$arch" ] && echo "$arch" || echo "$tar")")
        local env=(GC3_OMPI5_VERSION="$ver" GC3_OMPI5_TARBALL="$tar" GC3_OMPI5_ARCHIVE="$arch" GC3_BUILD_OMPI5="$D/tree/build-$j-cuda")
        env "${env[@]}" contrib/ompi5-build.sh --cuda >"$L/$j-ompi.log" 2>&1
        rc=$?; say "$j: Open MPI $ver rc=$rc ($((SECONDS - t)) s)"
        [ $rc = 0 ] || return 1
        env "${env[@]}" contrib/ci-ompi5.sh --cuda -R gc3_lease_builds_only >"$L/$j-build.log" 2>&1
        say "$j: gc3 built ($((SECONDS - t)) s)"
        flock "$D/gpu.lock" env "${env[@]}" contrib/ci-ompi5.sh --cuda "${sel[@]}" --output-on-failure >"$L/$j-test.log" 2>&1
        rc=$?; say "$j: ctest rc=$rc ($((SECONDS - t)) s)"
        mkdir -p "$L/$j-failed" && cp "build-$j-cuda"/tests/expect-output-failed.* "$L/$j-failed/" 2>/dev/null ;;
    bench)
        if [[ " $started " == *" stock "* ]]; then # stock builds and tests first: wait for it
            while [ ! -e "$L/stock.done" ]; do sleep 5; done
            [ -e "$L/stock.built" ] || { say "bench: the stock build failed"; return 1; }
        else
            ./contrib/quickstart.sh --setup-only >"$L/bench-build.log" 2>&1 || { say "bench: build failed"; return 1; }
        fi
        flock "$D/gpu.lock" benchmarks/compare.sh --out "$L/bench" >"$L/bench-test.log" 2>&1
        rc=$?; say "bench: compare.sh rc=$rc ($((SECONDS - t)) s)" ;;
    *)
        say "$j: unknown job (stock, ompi5, ompi41, bench)"; return 2 ;;
    esac
    return 0
}

case $1 in
start)
    shift
    [ $# -gt 0 ] || set -- stock
    mkdir -p "$L" "$D/tree"
    export GC3_OMPI5_CACHE=${GC3_OMPI5_CACHE:-$D/ompi}
    # the copy of the tree (built outputs of an earlier start kept: a second start rebuilds what changed)
    tar -C "$src" --exclude=./build --exclude='./build-*' --exclude=./_install -cf - . | tar -C "$D/tree" -xf -
    for j in "$@"; do
        rm -f "$L/$j.done" "$L/$j.built"
        setsid bash -c "$(declare -f say newest version_of job); D='$D' L='$L' src='$src' started='$*'; job $j; echo \$? >'$L/$j.done'" \
            </dev/null >"$L/$j.out" 2>&1 &
    done
    echo "gpu-lease: started ${*} (logs in $L; contrib/gpu-lease.sh wait to follow them)" ;;
wait)
    end=$((SECONDS + ${2:-540}))
    running=1
    while [ $running = 1 ]; do
        running=0
        for o in "$L"/*.out; do
            [ -e "$o" ] && [ ! -e "${o%.out}.done" ] && running=1
        done
        [ $running = 0 ] || [ $SECONDS -ge "$end" ] && break
        sleep 5
    done
    cat "$L/timeline.txt" 2>/dev/null
    for f in "$L"/*-test.log; do
        [ -e "$f" ] && echo "$(basename "$f"): $(grep -E 'tests passed|No tests were found' "$f" | tail -1)"
    done
    cat "$L"/bench/*.summary 2>/dev/null
    [ $running = 0 ] && echo "gpu-lease: every job ended" || echo "gpu-lease: jobs still running"
    [ -n "${OUT:-}" ] && tar -C "$D" -czf "$OUT/gpu-lease.tgz" logs && echo "gpu-lease: logs in \$OUT/gpu-lease.tgz"
    true ;;
*)
    echo "gpu-lease: unknown command '$1' (see --help)" >&2; exit 2 ;;
esac
