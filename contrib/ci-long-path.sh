#!/usr/bin/env bash
# CI: the tests whose messages carry paths (algorithm files, rules files, the verbose lines), from a
# copy of this checkout in a folder whose path is at least 150 characters long: no message may be
# cut there (issue 39: a NOT USED line lost its end when built in a deeper folder). Builds the host
# backend only (--without-cuda: the CUDA kernels add minutes and no path), then runs those tests.
#
# usage: contrib/ci-long-path.sh [CTEST REGEX]
#   CTEST REGEX     the tests to run (default: the mpi_algorithm*, verbose, rules and parameter
#                   tests and the unit tests that print paths)
#   -h, --help      this text
# Environment: GC3_LONG_PATH_ROOT (where the copy goes, default ${TMPDIR:-/tmp}); the copy is removed
# at the end unless GC3_LONG_PATH_KEEP=1.
#
# examples:
#   contrib/ci-long-path.sh
#   contrib/ci-long-path.sh 'mpi_algorithm_slots'
set -uo pipefail
case "${1:-}" in -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0;; esac
src=$(cd "$(dirname "$0")/.." && pwd)
regex=${1:-'mpi_algorithm|verbose|mpi_rules|mpi_params|mpi_msccl_inplace_np4|unit_rules|unit_corpus|unit_gc3c_cli|unit_help'}
root=${GC3_LONG_PATH_ROOT:-${TMPDIR:-/tmp}}
top=$(mktemp -d "$root/gc3-long-path.XXXXXX") || exit 1
[ "${GC3_LONG_PATH_KEEP:-0}" = 1 ] || trap 'rm -rf "$top"' EXIT
dir=$top
while [ ${#dir} -lt 150 ]; do dir=$dir/a-folder-of-a-checkout-with-a-long-path; done
dir=$dir/gc3
mkdir -p "$dir" || exit 1
echo "== long path (${#dir} characters): $dir"
# the checkout's files (tracked and new ones, not what git ignores: no build folders)
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
    (cd "$src" && git ls-files -z --cached --others --exclude-standard | tar cf - --no-recursion --null -T -) |
        (cd "$dir" && tar xf -) || exit 1
else
    (cd "$src" && tar cf - --exclude=./build --exclude=./build-ompi5 --exclude=./_install .) | (cd "$dir" && tar xf -) || exit 1
fi
cd "$dir" || exit 1
GC3_CONFIGURE_FLAGS="--without-cuda ${GC3_CONFIGURE_FLAGS:-}" ./contrib/quickstart.sh --setup-only || exit 1
cd build || exit 1
ctest --output-on-failure -R "$regex"
