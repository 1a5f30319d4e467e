#!/usr/bin/env bash
# Run a python test under an mpirun wrapper with $GC3_TEST_PYTHON (gpu-test.sh --python M,... finds
# one that has the modules; default python3), PYTHONPATH passed to the ranks.
# Usage: run-python.sh SCRIPT MPIRUN-WRAPPER NP [wrapper options...] [-- script arguments...]
# Example: run-python.sh tests/gpu/test_mpi4py_cupy.py build/contrib/gc3-mpirun 2 --mca coll_gc3_verbose 1
set -u
case "${1:-}" in -h | --help) sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//'; exit 0;; esac
[ $# -ge 3 ] || { echo "usage: run-python.sh SCRIPT MPIRUN-WRAPPER NP [wrapper options...] [-- script arguments...]" >&2; exit 2; }
script=$1
wrapper=$2
np=$3
shift 3
opts=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do opts+=("$1"); shift; done
[ $# -eq 0 ] || shift
[ -z "${PYTHONPATH:-}" ] || opts+=(-x PYTHONPATH)
exec "$wrapper" ${opts[@]+"${opts[@]}"} -np "$np" "${GC3_TEST_PYTHON:-python3}" "$script" "$@"
