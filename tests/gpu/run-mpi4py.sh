#!/usr/bin/env bash
# Run test_mpi4py_cupy.py with $GC3_TEST_PYTHON (gpu-test.sh --python mpi4py,cupy finds one that has
# both; default python3).
# Usage: run-mpi4py.sh MPIRUN-WRAPPER NP [wrapper options...]
set -u
wrapper=$1
np=$2
shift 2
py=${GC3_TEST_PYTHON:-python3}
exec "$wrapper" "$@" -np "$np" "$py" "$(dirname "$0")/test_mpi4py_cupy.py"
