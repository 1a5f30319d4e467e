#!/usr/bin/env bash
# GPU check of gc3 on Open MPI 5.0: gc3 built against Open MPI 5.0.x (a build packed by
# ompi5-build.sh --pack, or a source tarball, carried in: the GPU machine has no network), then
# test_coll --device through gc3 (MPI_Allreduce, MPI_Alltoall and the rest on device buffers,
# checked against a host computation) with 2 ranks on GPU 0, shared through MPS.
#
#     GC3_OMPI5_ARCHIVE=.device/openmpi-5.0.7-gc3.tar.xz contrib/ompi5-gpu-check.sh
#     GC3_OMPI5_TARBALL=.device/openmpi_5.0.7.orig.tar.xz contrib/ompi5-gpu-check.sh   # builds it (-j all CPUs)
#
# On the GPU machine, after `source .device/env.sh`. Builds in GC3_BUILD_OMPI5 (default
# ./build-ompi5). Starts an MPS daemon (CUDA_MPS_PIPE_DIRECTORY, default /tmp/mps) unless one
# answers there, and stops the one it started. Passes when every result is right and gc3 ran the
# calls on the cuda backend; ends with expect-output's "1 passed, 0 failed".
set -euo pipefail
case "${1:-}" in -h|--help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0;; esac
src=$(cd "$(dirname "$0")/.." && pwd)
build=${GC3_BUILD_OMPI5:-$src/build-ompi5}
t=$SECONDS
ompi=$("$src/contrib/ompi5-build.sh" | tail -n 1)
echo "== Open MPI 5.0 ready in $((SECONDS - t)) s: $("$ompi/bin/ompi_info" | grep -E '^ +(Open MPI|MCA accelerator):' | sed 's/^ *//' | tr -s ' ' | paste -sd ';')"
t=$SECONDS
# builds gc3 against it (ctest -N lists the tests only)
log=$(mktemp)
"$src/contrib/ci-ompi5.sh" -N >"$log" 2>&1 || { cat "$log"; exit 1; }
rm -f "$log"
echo "== gc3 built against it in $((SECONDS - t)) s ($build)"

command -v nvidia-cuda-mps-control >/dev/null || { echo "ompi5-gpu-check: error: no nvidia-cuda-mps-control here (a GPU machine with the CUDA driver is needed)" >&2; exit 1; }
export CUDA_MPS_PIPE_DIRECTORY=${CUDA_MPS_PIPE_DIRECTORY:-/tmp/mps} CUDA_MPS_LOG_DIRECTORY=${CUDA_MPS_LOG_DIRECTORY:-/tmp/mpslog}
if ! echo get_server_list | nvidia-cuda-mps-control >/dev/null 2>&1; then
    mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
    nvidia-cuda-mps-control -d
    trap 'echo quit | nvidia-cuda-mps-control' EXIT
fi
echo "== test_coll --device, 2 ranks on GPU 0 through MPS, Open MPI $("$ompi/bin/ompi_info" --version | sed -n 's/^Open MPI v//p')"
"$src/tests/mpi/expect-output.sh" "allreduce 0-" "(cuda backend, 2 ranks" "alltoall 0-" \
    "nonblocking allreduce runs on gc3's" "persistent alltoall runs on gc3's" "device buffers" "0 failed" \
    "!was built for" "!without MPS" -- \
    "$build/contrib/gc3-mpirun" -x CUDA_VISIBLE_DEVICES=0 -x CUDA_MPS_PIPE_DIRECTORY --mca coll_gc3_verbose 1 \
    -np 2 "$build/tests/mpi/test_coll" --device
