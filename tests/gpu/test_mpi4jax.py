"""mpi4jax with JAX arrays on the GPU through coll/gc3 (MPI4JAX_USE_CUDA_MPI=1: mpi4jax hands
MPI the device pointers; with stock, non-CUDA-aware Open MPI that crashes): allreduce (sum, max;
float32, float64, int32; sizes 0 to 1M + 1), alltoall, and collectives inside a jax.jit function
called in a loop, every result checked against NumPy.

Run under gc3-mpirun with 2 or more ranks, e.g.
    build/contrib/gc3-mpirun --mca coll_gc3_verbose 1 -np 2 python3 tests/gpu/test_mpi4jax.py
(mpi4jax on PYTHONPATH: tests/gpu/provide-mpi4jax.sh). --host runs the same checks on JAX's CPU
arrays, for gc3's host backend (--mca coll_gc3_backend host) on a machine without a GPU."""
import argparse
import os
import sys

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--host", action="store_true", help="JAX arrays on the CPU (no GPU needed)")
ap.add_argument("--iters", type=int, default=10, help="calls of the jitted function (default 10)")
args = ap.parse_args()

# before mpi4jax and jax are imported: device pointers go to MPI as they are (no host copies),
# and JAX takes GPU memory as it needs it (ranks may share the GPU)
os.environ["MPI4JAX_USE_CUDA_MPI"] = "1"
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
if args.host:
    os.environ["JAX_PLATFORMS"] = "cpu"

from mpi4py import MPI  # noqa: E402
import numpy as np  # noqa: E402
import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)  # float64 arrays stay float64
import mpi4jax  # noqa: E402

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
platform = "cpu" if args.host else "gpu"
try:
    devices = jax.devices(platform)
except RuntimeError as e:
    print(f"rank {rank}: FAILED: JAX has no {platform} device ({e}); jax {jax.__version__}", flush=True)
    comm.Abort(1)
local = comm.Split_type(MPI.COMM_TYPE_SHARED).Get_rank()
dev = devices[local % len(devices)]
if rank == 0:
    print(f"mpi4jax {mpi4jax.__version__}, jax {jax.__version__}, {size} ranks, arrays on {dev.platform} "
          f"({dev.device_kind})", flush=True)
checks = failed = 0


def check(what, got, want, on_device=True):
    """got (a JAX array) equals want (NumPy) in shape, dtype and every element, and is on dev"""
    global checks, failed
    checks += 1
    problems = []
    if on_device and got.devices() != {dev}:
        problems.append(f"result on {got.devices()}, not {dev}")
    g = np.asarray(got)
    if g.shape != want.shape or g.dtype != want.dtype:
        problems.append(f"shape/dtype {g.shape} {g.dtype}, want {want.shape} {want.dtype}")
    elif not np.array_equal(g, want):
        bad = np.flatnonzero(g.ravel() != want.ravel())
        i = bad[0]
        problems.append(f"{len(bad)} wrong elements, first [{i}]: got {g.ravel()[i]} want {want.ravel()[i]}")
    if problems:
        failed += 1
        print(f"rank {rank}: FAILED {what}: {'; '.join(problems)}", flush=True)
    elif rank == 0:
        print(f"{what}: ok", flush=True)


def put(a):
    return jax.device_put(a, dev)


# ------------------------------------------------------------------ allreduce, eager calls
def contribution(r, n, dtype):
    """rank r's input: small integers (exact sums in every dtype), differing per rank and element"""
    return ((np.arange(n, dtype=np.int64) * 7 + r * 13) % 101 - 50).astype(dtype)


ops = {"sum": (MPI.SUM, lambda a: np.sum(a, axis=0)), "max": (MPI.MAX, lambda a: np.max(a, axis=0))}
for dtype in (np.float32, np.float64, np.int32):
    for n in (0, 1, 7, 1000, 4099, 100003, 1048577):
        everyone = np.stack([contribution(r, n, dtype) for r in range(size)])
        x = put(everyone[rank])
        for name, (op, oracle) in ops.items():
            y = mpi4jax.allreduce(x, op=op, comm=comm)
            y.block_until_ready()
            check(f"allreduce {np.dtype(dtype).name} {name} n={n}", y, oracle(everyone).astype(dtype))
        check(f"allreduce {np.dtype(dtype).name} n={n}: input unchanged", x, everyone[rank])

# ------------------------------------------------------------------ alltoall
for dtype in (np.int32, np.float32):
    for shape in ((1,), (1000,), (65536,), (3, 5)):
        n = int(np.prod(shape))

        def block(src, dst):  # what rank src sends rank dst
            return (np.arange(n, dtype=np.int64).reshape(shape) + 1000 * dst + 100000 * src).astype(dtype)

        x = put(np.stack([block(rank, p) for p in range(size)]))
        y = mpi4jax.alltoall(x, comm=comm)
        y.block_until_ready()
        check(f"alltoall {np.dtype(dtype).name} {shape} per peer", y, np.stack([block(p, rank) for p in range(size)]))


# ------------------------------------------------------------------ inside jax.jit, in a loop
# on COMM_WORLD and on mpi4jax's default communicator (a clone of it: a second one for gc3)
@jax.jit
def step(x):
    s = mpi4jax.allreduce(x, op=MPI.SUM, comm=comm)
    m = mpi4jax.allreduce(x, op=MPI.MAX)
    return s * 0.5 + 1.0, m


n = 4099
states = [((np.arange(n) + 3 * r) % 13).astype(np.float32) for r in range(size)]  # every rank's x
x = put(states[rank])
for it in range(args.iters):
    x, m = step(x)
    want_m = np.max(np.stack(states), axis=0)
    total = np.sum(np.stack(states), axis=0)
    states = [(total * np.float32(0.5) + np.float32(1.0)).astype(np.float32)] * size
    check(f"jit(allreduce sum, allreduce max) call {it + 1}: sum", x, states[rank])
    check(f"jit(allreduce sum, allreduce max) call {it + 1}: max", m, want_m)

total = comm.allreduce(failed, op=MPI.SUM)
checks_all = comm.allreduce(checks, op=MPI.SUM)
if rank == 0:
    print(f"mpi4jax through gc3 on {dev.platform} arrays: {checks_all - total} passed, {total} failed", flush=True)
sys.exit(1 if total else 0)
