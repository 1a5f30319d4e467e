"""mpi4py with CuPy arrays through coll/gc3: Allreduce and Alltoall on device memory give the
right answer (with stock, non-CUDA-aware Open MPI both crash). Run under gc3-mpirun."""
import sys

import cupy as cp
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
cp.cuda.Device(rank % cp.cuda.runtime.getDeviceCount()).use()
failed = 0
for n in (1, 7, 1000, 1 << 20):
    x = cp.arange(n, dtype=cp.float32) + rank
    y = cp.empty_like(x)
    comm.Allreduce(x, y, op=MPI.SUM)
    cp.cuda.runtime.deviceSynchronize()
    want = cp.arange(n, dtype=cp.float32) * size + size * (size - 1) / 2
    ok = bool(cp.all(y == want))
    failed += not ok
    if rank == 0:
        print(f"Allreduce float32 n={n}: {'ok' if ok else 'WRONG'}", flush=True)
for n in (1, 1000, 65536):
    x = (cp.arange(n * size, dtype=cp.int32) + 1000000 * rank).reshape(size, n)
    y = cp.empty_like(x)
    comm.Alltoall(x, y)
    cp.cuda.runtime.deviceSynchronize()
    want = cp.stack([cp.arange(n, dtype=cp.int32) + rank * n + 1000000 * p for p in range(size)])
    ok = bool(cp.all(y == want))
    failed += not ok
    if rank == 0:
        print(f"Alltoall int32 n={n} per peer: {'ok' if ok else 'WRONG'}", flush=True)
total = comm.allreduce(failed, op=MPI.SUM)
if rank == 0:
    print(f"mpi4py+cupy through gc3: {7 - total} passed, {total} failed")
sys.exit(1 if total else 0)
