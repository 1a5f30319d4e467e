#!/usr/bin/env bash
# CI's Open MPI 5.0 leg: Open MPI 5.0.x built from source (contrib/ompi5-build.sh, cached and
# reused), gc3 built against it in its own build folder, and its MPI tests run there (host
# backend: no GPU needed).
#     contrib/ci-ompi5.sh              # ctest -L mpi
#     contrib/ci-ompi5.sh -R coll      # other ctest arguments instead of -L mpi
#     contrib/ci-ompi5.sh --cuda -L gpu   # against the CUDA-aware build (ompi5-build.sh --cuda),
#                                         # gc3 built with CUDA in ./build-ompi5-cuda (GPU machine)
# Environment: GC3_BUILD_OMPI5 (build folder, default ./build-ompi5, --cuda: ./build-ompi5-cuda),
# GC3_CONFIGURE_FLAGS (extra configure flags), and those of ompi5-build.sh (GC3_OMPI5_VERSION,
# GC3_OMPI5_CACHE, GC3_OMPI5_CUDA, GC3_OMPI5_UCX, ...).
# It fails, saying why, when Open MPI 5.0 can be neither found in the cache nor built.
set -euo pipefail
case "${1:-}" in -h|--help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0;; esac
src=$(cd "$(dirname "$0")/.." && pwd)
cuda=()
suffix=""
if [ "${1:-}" = --cuda ]; then
    cuda=(--cuda)
    suffix=-cuda
    shift
fi
ompi=$("$src/contrib/ompi5-build.sh" "${cuda[@]}" | tail -n 1)
[ -x "$ompi/bin/mpicc" ] || { echo "ci-ompi5: error: no Open MPI 5.0 installation ($ompi)" >&2; exit 1; }
# --cuda: gc3 is built against the UCX that Open MPI was built with (its configure line, in the
# build's stamp), so that one process loads one UCX: linked against the system's, gc3's tests failed
# to link, the CUDA UCX's libuct needing symbols of its own libucs
if [ ${#cuda[@]} -gt 0 ] && [ -f "$ompi/.gc3-complete" ]; then
    ucx=$(tr ' ' '\n' <"$ompi/.gc3-complete" | sed -n 's/^--with-ucx=//p' | tail -n 1)
    ucx_lib=$(tr ' ' '\n' <"$ompi/.gc3-complete" | sed -n 's/^--with-ucx-libdir=//p' | tail -n 1)
    if [ -n "$ucx" ] && [ -n "$ucx_lib" ]; then
        [ -e "$ucx_lib/libucp.so" ] ||
            { echo "ci-ompi5: error: $ucx_lib/libucp.so is gone (contrib/ompi5-build.sh --cuda makes it): build Open MPI again" >&2; exit 1; }
        export CPPFLAGS="-I$ucx/include ${CPPFLAGS:-}"
        export LDFLAGS="-L$ucx_lib -Wl,-rpath,$(dirname "$(readlink -f "$ucx_lib/libucp.so")") ${LDFLAGS:-}"
        echo "ci-ompi5: gc3 built against Open MPI's UCX, $ucx" >&2
    fi
fi
build=${GC3_BUILD_OMPI5:-$src/build-ompi5$suffix}
# a build folder configured for another Open MPI (or another UCX: its .gc3-ucx) is started afresh
if [ -f "$build/config.status" ] && { ! grep -qF "$ompi/bin/mpicc" "$build/config.status" ||
    [ "$(cat "$build/.gc3-ucx" 2>/dev/null)" != "${ucx:-}" ]; }; then
    rm -rf "$build"
fi
mkdir -p "$build" && echo "${ucx:-}" >"$build/.gc3-ucx"
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(-L mpi)
GC3_BUILD=$build GC3_PREFIX=$build/_install \
GC3_CONFIGURE_FLAGS="MPICC=$ompi/bin/mpicc --with-ompi-source=$ompi/source ${GC3_CONFIGURE_FLAGS:-}" \
    exec "$src/contrib/run-tests.sh" "${args[@]}"
