#!/usr/bin/env bash
# gc3 tests: set up if needed (see quickstart.sh), then run CTest in the build folder.
#     ./contrib/run-tests.sh              # everything but the GPU tests (what CI runs)
#     ./contrib/run-tests.sh -L gpu       # only the GPU tests (on the GPU machine)
# Any arguments replace the default label filter '-LE gpu' and go to ctest.
# GC3_FUZZ_SECONDS bounds each fuzz target (default 60).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
"$src/contrib/quickstart.sh" --setup-only
cd "${GC3_BUILD:-$src/build}"
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(-LE gpu)
export GC3_FUZZ_SECONDS=${GC3_FUZZ_SECONDS:-60}
exec ctest --output-on-failure "${args[@]}"
