#!/usr/bin/env bash
# Build gc3 a second time, host backend only, with AddressSanitizer and UndefinedBehaviorSanitizer,
# and run the unit tests and the host-backend MPI tests under them. Any sanitizer report fails.
# Usage: run-sanitized.sh SRC_DIR BUILD_DIR   (BUILD_DIR: where the sanitized build goes)
set -euo pipefail
src=$(cd "$1" && pwd)
work=$2
mkdir -p "$work"
cd "$work"
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
if [ ! -f Makefile ] || [ "$src/configure" -nt config.status ]; then
    "$src/configure" --without-cuda --prefix="$work/inst" CFLAGS="-g -O1 $san" LDFLAGS="$san" > configure.out 2>&1 ||
        { tail -30 configure.out; exit 1; }
fi
make -j"$(nproc)" > make.out 2>&1 || { tail -40 make.out; exit 1; }
echo "sanitized build: $work ($san)"
# Leaks: checked in the unit tests (libgpuir alone). Under MPI, Open MPI's own allocations that
# live until exit come from libraries without frame pointers that LeakSanitizer cannot attribute,
# so the MPI runs check memory errors and undefined behaviour only (the stress tests measure
# gc3's resources: fds, /dev/shm, resident memory).
export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:exitcode=23
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
mpi_asan=halt_on_error=1:detect_leaks=0:exitcode=23:quarantine_size_mb=8 # a small quarantine: the stress test measures resident memory
fail=0
run() { # NAME COMMAND...: run, keep the output, fail on a non-zero exit or a sanitizer report
    local name=$1 log=$work/$1.log
    shift
    if "$@" > "$log" 2>&1 && ! grep -qE "ERROR: (Address|Leak)Sanitizer|runtime error:" "$log" &&
        grep -qE "[1-9][0-9]* passed, 0 failed|^test_[a-z]*: .*0 failed" "$log"; then
        echo "ok: $name"
    else
        echo "FAILED: $name (see $log)"
        grep -E -A12 "ERROR: (Address|Leak)Sanitizer|runtime error:|FAILED" "$log" | head -40 || true
        fail=1
    fi
}
for t in test_ir test_verify test_refexec test_cost test_rules test_topo test_compiler test_msccl; do
    run "unit-$t" "tests/unit/$t"
done
mpirun_gc3=(contrib/gc3-mpirun -x ASAN_OPTIONS=$mpi_asan -x UBSAN_OPTIONS --mca coll_gc3_backend host)
run mpi-coll-np3 "${mpirun_gc3[@]}" -np 3 tests/mpi/test_coll --max-count 100000
# MSCCL's in-place programs (in place, and out of place with the input copied first)
run mpi-msccl-np4 "${mpirun_gc3[@]}" --mca coll_gc3_algorithm_dir "$src/tests/corpus/msccl" -np 4 tests/mpi/test_coll \
    --max-count 100000
run mpi-fallback-np2 contrib/gc3-mpirun -x ASAN_OPTIONS=$mpi_asan -x UBSAN_OPTIONS --mca coll_gc3_stage_host true \
    -np 2 tests/mpi/test_fallback
# the FIFO pool shared by an executor's plans: its growth, the plans' moves, its end; through the
# component (coll_gc3_fifo_pool): every collective, and communicators freed
run mpi-runtime-pool-np3 "${mpirun_gc3[@]}" -np 3 tests/mpi/test_runtime --backend host --pool-mix-only
run mpi-coll-pool-np3 "${mpirun_gc3[@]}" --mca coll_gc3_fifo_pool 1 -np 3 tests/mpi/test_coll --max-count 100000
run mpi-comms-pool-np2 "${mpirun_gc3[@]}" --mca coll_gc3_fifo_pool 1 --mca coll_gc3_memory_budget 67108864 -np 2 \
    tests/mpi/test_faults comms
run mpi-stress-np2 "${mpirun_gc3[@]}" -np 2 tests/mpi/test_faults stress --calls 300 --comms 30
run mpi-comms-np2 "${mpirun_gc3[@]}" --mca coll_gc3_memory_budget 67108864 -np 2 tests/mpi/test_faults comms
run mpi-threads-np2 "${mpirun_gc3[@]}" -np 2 tests/mpi/test_faults threads --calls 100
run mpi-skip-np2 "${mpirun_gc3[@]}" --mca coll_gc3_timeout 2 -np 2 tests/mpi/test_faults skip
run mpi-crossed-np3 "${mpirun_gc3[@]}" --mca coll_gc3_timeout 60 -np 3 tests/mpi/test_crossed crossed --max-count 70000
run mpi-crossed-threads-np2 "${mpirun_gc3[@]}" --mca coll_gc3_timeout 60 -np 2 tests/mpi/test_crossed threads --calls 20
run mpi-crossed-skip-np3 "${mpirun_gc3[@]}" --mca coll_gc3_timeout 2 -np 3 tests/mpi/test_crossed skip
if [ $fail = 0 ]; then echo "sanitizers: all runs clean"; else echo "sanitizers: FAILED"; fi
exit $fail
