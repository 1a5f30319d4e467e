#!/usr/bin/env bash
# CI's Open MPI 5.0 leg: Open MPI 5.0.x built from source (contrib/ompi5-build.sh, cached and
# reused), gc3 built against it in its own build folder, and its MPI tests run there (host
# backend: no GPU needed).
#     contrib/ci-ompi5.sh              # ctest -L mpi
#     contrib/ci-ompi5.sh -R coll      # other ctest arguments instead of -L mpi
# Environment: GC3_BUILD_OMPI5 (build folder, default ./build-ompi5), GC3_CONFIGURE_FLAGS (extra
# configure flags), and those of ompi5-build.sh (GC3_OMPI5_VERSION, GC3_OMPI5_CACHE, ...).
# It fails, saying why, when Open MPI 5.0 can be neither found in the cache nor built.
set -euo pipefail
case "${1:-}" in -h|--help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0;; esac
src=$(cd "$(dirname "$0")/.." && pwd)
ompi=$("$src/contrib/ompi5-build.sh" | tail -n 1)
[ -x "$ompi/bin/mpicc" ] || { echo "ci-ompi5: error: no Open MPI 5.0 installation ($ompi)" >&2; exit 1; }
build=${GC3_BUILD_OMPI5:-$src/build-ompi5}
# a build folder configured for another Open MPI is started afresh
if [ -f "$build/config.status" ] && ! grep -qF "$ompi/bin/mpicc" "$build/config.status"; then
    rm -rf "$build"
fi
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(-L mpi)
GC3_BUILD=$build GC3_PREFIX=$build/_install \
GC3_CONFIGURE_FLAGS="MPICC=$ompi/bin/mpicc --with-ompi-source=$ompi/source ${GC3_CONFIGURE_FLAGS:-}" \
    exec "$src/contrib/run-tests.sh" "${args[@]}"
