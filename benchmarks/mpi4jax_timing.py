"""Time mpi4jax.allreduce on JAX arrays on the GPU, as a JAX user calls it (inside jax.jit, each
call waited for with block_until_ready), two ways in one run:
  gc3     the device array goes to MPI as it is (MPI4JAX_USE_CUDA_MPI=1): coll/gc3 runs the call
  staged  copy to a host NumPy array, MPI_Allreduce on host memory, copy back to the GPU
          (what a JAX user of a non-CUDA-aware MPI does)
Every result is checked once before it is timed. Prints one Markdown table row per size: time per
call in microseconds, the mean over the calls of the slowest rank.

Run under gc3-mpirun with mpi4jax importable, e.g. on one GPU shared by 2 ranks through MPS:
    PYTHONPATH=$(tests/gpu/provide-mpi4jax.sh python3 build/python) \\
        build/contrib/gc3-mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -np 2 \\
        python3 benchmarks/mpi4jax_timing.py --sizes 8,1M"""
import argparse
import os
import sys
import time


def parse_bytes(s):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    s = s.strip().upper().rstrip("B")
    return int(float(s[:-1]) * mult[s[-1]]) if s and s[-1] in mult else int(s)


def show_bytes(b):
    for unit, m in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if b >= m and b % m == 0:
            return f"{b // m} {unit}"
    return f"{b} B"


ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--sizes", default="8,1M", help="comma-separated message sizes in bytes, K/M suffixes (default 8,1M)")
ap.add_argument("--iters", type=int, default=200, help="timed calls per size and way (default 200)")
ap.add_argument("--warmup", type=int, default=20, help="untimed calls first (default 20)")
ap.add_argument("--host", action="store_true", help="JAX arrays on the CPU (checks the script without a GPU)")
ap.add_argument("--per-jit", type=int, default=0, metavar="K",
                help="also time K allreduces inside one jitted call (lax.fori_loop), per allreduce: what a "
                     "time-step loop inside jax.jit pays (0: not; default 0)")
args = ap.parse_args()
sizes = [parse_bytes(s) for s in args.sizes.split(",")]

os.environ.setdefault("MPI4JAX_USE_CUDA_MPI", "1")  # (0: mpi4jax copies through host memory itself)
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
if args.host:
    os.environ["JAX_PLATFORMS"] = "cpu"

from mpi4py import MPI  # noqa: E402
import numpy as np  # noqa: E402
import jax  # noqa: E402
import mpi4jax  # noqa: E402

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
devices = jax.devices("cpu" if args.host else "gpu")
dev = devices[comm.Split_type(MPI.COMM_TYPE_SHARED).Get_rank() % len(devices)]


@jax.jit
def through_mpi(x):
    return mpi4jax.allreduce(x, op=MPI.SUM, comm=comm)


@jax.jit
def through_mpi_loop(x):
    # K allreduces in one call; each averages, so the values stay those of the first
    return jax.lax.fori_loop(0, args.per_jit, lambda i, y: mpi4jax.allreduce(y, op=MPI.SUM, comm=comm) / size, x)


def staged(x):
    h = np.asarray(x)  # device -> host (waits for x)
    out = np.empty_like(h)
    comm.Allreduce(h, out, op=MPI.SUM)
    return jax.device_put(out, dev)


def per_call_us(fn, x):
    for _ in range(args.warmup):
        fn(x).block_until_ready()
    comm.Barrier()
    t0 = time.perf_counter()
    for _ in range(args.iters):
        fn(x).block_until_ready()
    mine = (time.perf_counter() - t0) / args.iters * 1e6
    return comm.allreduce(mine, op=MPI.MAX)


if rank == 0:
    print(f"# mpi4jax {mpi4jax.__version__}, jax {jax.__version__}: {size} ranks, arrays on {dev.platform} "
          f"({dev.device_kind}); float32 sum; {args.iters} calls per size and way", flush=True)
    loop = f" | {args.per_jit} per jit call (us each) | staged / that" if args.per_jit > 0 else ""
    print(f"| call | size | through gc3 (us) | staged (us) | staged / gc3{loop} |")
    print("|---|---|---|---|---|" + ("---|---|" if args.per_jit > 0 else ""), flush=True)
wrong = 0
for b in sizes:
    n = max(b // 4, 1)
    x = jax.device_put((np.arange(n) % 17 + rank).astype(np.float32), dev)
    want = (np.arange(n) % 17 * size + size * (size - 1) // 2).astype(np.float32)
    for name, fn in (("through gc3", through_mpi), ("staged", staged)):
        if not np.array_equal(np.asarray(fn(x)), want):
            wrong += 1
            print(f"rank {rank}: WRONG result {name}, {show_bytes(b)}", flush=True)
    if comm.allreduce(wrong, op=MPI.SUM):
        break
    t_gc3 = per_call_us(through_mpi, x)
    t_staged = per_call_us(staged, x)
    loop = ""
    if args.per_jit > 0:
        if not np.allclose(np.asarray(through_mpi_loop(x)), want / size):
            wrong += 1
            print(f"rank {rank}: WRONG result {args.per_jit} per jit call, {show_bytes(b)}", flush=True)
        t_loop = per_call_us(through_mpi_loop, x) / args.per_jit
        loop = f" | {t_loop:.1f} | {t_staged / t_loop:.2f}x"
    if rank == 0:
        print(f"| mpi4jax allreduce | {show_bytes(n * 4)} | {t_gc3:.1f} | {t_staged:.1f} | {t_staged / t_gc3:.2f}x{loop} |",
              flush=True)
sys.exit(1 if comm.allreduce(wrong, op=MPI.SUM) else 0)
