"""mpi4py with CuPy arrays through coll/gc3: Allreduce (out of place and in place), Alltoall and
Iallreduce (its request completed by Wait, and by Test) on device memory give the right answer
(with stock, non-CUDA-aware Open MPI they crash). Run under gc3-mpirun, e.g.
    build/contrib/gc3-mpirun --mca coll_gc3_verbose 1 -np 2 python3 tests/gpu/test_mpi4py_cupy.py"""
import sys
import time

import cupy as cp
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
cp.cuda.Device(rank % cp.cuda.runtime.getDeviceCount()).use()
checks = failed = 0


def fail(what, why):
    global failed
    failed += 1
    print(f"rank {rank}: FAILED {what}: {why}", flush=True)


def check(what, got, want):
    """got equals want (CuPy arrays) in shape, dtype and every element"""
    global checks
    checks += 1
    cp.cuda.runtime.deviceSynchronize()
    if got.shape != want.shape or got.dtype != want.dtype:
        why = f"shape/dtype {got.shape} {got.dtype}, want {want.shape} {want.dtype}"
    elif not bool(cp.all(got == want)):
        bad = cp.flatnonzero(got.ravel() != want.ravel())
        i = int(bad[0])
        why = f"{bad.size} wrong elements, first [{i}]: got {got.ravel()[i]} want {want.ravel()[i]}"
    else:
        if rank == 0:
            print(f"{what}: ok", flush=True)
        return
    fail(what, why)


def mine(n, dtype, r=None):
    """rank r's input (default this rank): small integers, exact in every dtype"""
    return ((cp.arange(n, dtype=cp.int64) * 7 + (rank if r is None else r) * 13) % 101 - 50).astype(dtype)


def everyone(n, dtype):
    return cp.stack([mine(n, dtype, r) for r in range(size)])


for n in (1, 7, 1000, 1 << 20):
    x = cp.arange(n, dtype=cp.float32) + rank
    y = cp.empty_like(x)
    comm.Allreduce(x, y, op=MPI.SUM)
    check(f"Allreduce float32 sum n={n}", y, cp.arange(n, dtype=cp.float32) * size + size * (size - 1) / 2)
for dtype, op, name in ((cp.float64, MPI.MAX, "max"), (cp.int32, MPI.SUM, "sum")):
    x = mine(100003, dtype)
    comm.Allreduce(MPI.IN_PLACE, x, op=op)
    all_ = everyone(100003, dtype)
    check(f"Allreduce in place {cp.dtype(dtype).name} {name} n=100003", x,
          all_.max(axis=0) if op == MPI.MAX else all_.sum(axis=0).astype(dtype))

for n in (1, 1000, 65536):
    x = (cp.arange(n * size, dtype=cp.int32) + 1000000 * rank).reshape(size, n)
    y = cp.empty_like(x)
    comm.Alltoall(x, y)
    want = cp.stack([cp.arange(n, dtype=cp.int32) + rank * n + 1000000 * p for p in range(size)])
    check(f"Alltoall int32 n={n} per peer", y, want)

# nonblocking: the request completes by Wait (then it is MPI.REQUEST_NULL), or by Test in a loop
for n in (7, 4099, 1 << 20):
    x = mine(n, cp.float32)
    y = cp.empty_like(x)
    req = comm.Iallreduce(x, y, op=MPI.SUM)
    req.Wait()
    check(f"Iallreduce float32 sum n={n}, completed by Wait", y, everyone(n, cp.float32).sum(axis=0))
    checks += 1
    if req != MPI.REQUEST_NULL:
        fail(f"Iallreduce n={n}", "the request is not MPI_REQUEST_NULL after Wait")
x = mine(65536, cp.int32)
y = cp.empty_like(x)
req = comm.Iallreduce(x, y, op=MPI.MAX)
deadline, tests = time.monotonic() + 60, 0
while not req.Test():
    tests += 1
    if time.monotonic() > deadline:
        fail("Iallreduce int32 max", f"not complete after {tests} tests in 60 s")
        comm.Abort(1)
check("Iallreduce int32 max n=65536, completed by Test", y, everyone(65536, cp.int32).max(axis=0))

total = comm.allreduce(failed, op=MPI.SUM)
checks_all = comm.allreduce(checks, op=MPI.SUM)
if rank == 0:
    print(f"mpi4py+cupy through gc3: {checks_all - total} passed, {total} failed")
sys.exit(1 if total else 0)
