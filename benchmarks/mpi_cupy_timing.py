"""Time MPI_Allreduce and MPI_Alltoall on CuPy device arrays through the plain MPI interface
(mpi4py), as an application sees it: average time per blocking call over ranks. Run it under
mpirun twice to compare, e.g. gc3 running the call vs gc3 staging it through host memory
(--mca coll_gc3_enable_allreduce false --mca coll_gc3_enable_alltoall false).
Usage: mpi_cupy_timing.py LABEL [MAXBYTES]"""
import sys
import time

import cupy as cp
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
cp.cuda.Device(rank % cp.cuda.runtime.getDeviceCount()).use()
label = sys.argv[1] if len(sys.argv) > 1 else "run"
maxb = int(sys.argv[2]) if len(sys.argv) > 2 else 64 << 20
if rank == 0:
    print(f"# {label}: {size} ranks; time per call (us), average over ranks", flush=True)
    print(f"{'# bytes':>12} {'allreduce':>12} {'alltoall':>12}", flush=True)
b = 8
while b <= maxb:
    n = max(b // 4, size)
    x = cp.ones(n, dtype=cp.float32)
    y = cp.empty_like(x)
    iters = 50 if b <= (1 << 20) else 10
    res = []
    for which in ("allreduce", "alltoall"):
        for i in range(iters + 5):
            if i == 5:
                comm.Barrier()
                t0 = time.perf_counter()
            if which == "allreduce":
                comm.Allreduce(x, y, op=MPI.SUM)
            else:
                comm.Alltoall(x[: n // size * size], y[: n // size * size])
        dt = (time.perf_counter() - t0) / iters
        res.append(comm.allreduce(dt, op=MPI.SUM) / size * 1e6)
    if rank == 0:
        print(f"{b:12d} {res[0]:12.2f} {res[1]:12.2f}", flush=True)
    b *= 8
