#!/usr/bin/env bash
# gc3 tests: set up if needed (see quickstart.sh), then run CTest in the build folder.
#
# usage: ./contrib/run-tests.sh [CTEST ARGUMENTS...]
#   (none)          every test but the GPU tests: ctest -LE gpu (what CI runs)
#   CTEST ARGUMENTS replace the default label filter '-LE gpu' and go to ctest (-L LABEL, -R REGEX,
#                   -E REGEX, -j N, ...). When they select the gpu label, what the machine has
#                   (GPUs, links, MPS, UCX) is printed first, and after CTest's summary how many
#                   tests were skipped for what.
#   -h, --help      this text
# Environment: GC3_BUILD (build folder, default ./build), GC3_FUZZ_SECONDS (bounds each fuzz
# target, default 60), and quickstart.sh's (its --help).
#
# examples:
#   ./contrib/run-tests.sh                     # everything but the GPU tests (what CI runs)
#   ./contrib/run-tests.sh -L gpu              # only the GPU tests (on the GPU machine)
#   ./contrib/run-tests.sh -R 'mpi_algorithm|verbose'
set -euo pipefail
case "${1:-}" in -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0;; esac
src=$(cd "$(dirname "$0")/.." && pwd)
"$src/contrib/quickstart.sh" --setup-only
build=${GC3_BUILD:-$src/build}
cd "$build"
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(-LE gpu)
export GC3_FUZZ_SECONDS=${GC3_FUZZ_SECONDS:-60}
# the gpu label is selected unless it is only named to be excluded
gpu=0
prev=""
for a in "${args[@]}"; do
    case "$prev|$a" in
    -LE\|*|--label-exclude\|*|-E\|*|--exclude-regex\|*) ;;
    *gpu*) gpu=1;;
    esac
    prev=$a
done
[ $gpu = 0 ] || GC3_BUILD_DIR=$build "$src/tests/gpu/gpu-test.sh" --describe
rc=0
ctest --output-on-failure "${args[@]}" || rc=$?
[ $gpu = 0 ] || GC3_BUILD_DIR=$build "$src/tests/gpu/gpu-test.sh" --skips "$build/Testing/Temporary/LastTest.log"
exit $rc
