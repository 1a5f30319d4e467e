#!/usr/bin/env bash
# Run test_mpi4py_cupy.py with the first python3 on PATH that has both mpi4py and cupy.
# Usage: run-mpi4py.sh MPIRUN-WRAPPER NP [wrapper options...]
set -u
wrapper=$1
np=$2
shift 2
py=""
for p in $(which -a python3 2>/dev/null) /opt/torch/.venv/bin/python3; do
    if [ -x "$p" ] && "$p" -c 'import cupy, mpi4py' 2>/dev/null; then py=$p; break; fi
done
if [ -z "$py" ]; then
    echo "run-mpi4py: no python3 with mpi4py and cupy found"
    echo "mpi4py: 0 passed, 1 failed"
    exit 1
fi
exec "$wrapper" "$@" -np "$np" "$py" "$(dirname "$0")/test_mpi4py_cupy.py"
