#!/usr/bin/env bash
# contrib/quickstart-summary.sh on made-up outputs of the main job (no GPU needed): 2 ranks sharing
# one GPU through MPS, ranks sharing it without MPS (staged), the host backend, a plan not used,
# wrong results, a run that crashed.
# Usage: test_quickstart_summary.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
S=$here/../../contrib/quickstart-summary.sh
source "$here/../checks.sh" # T, ok, has, hasnt, checks_done
run() { out=$("$S" "$T/log" "${1:-0}" 2>&1); rc=$?; }

W="[h:1] coll:gc3: comm MPI_COMM_WORLD:"
D="[h:1] coll:gc3: comm MPI COMMUNICATOR 3 DUP FROM 0:"
cat >"$T/log" <<EOF
test_coll: ranks on GPUs: 2 ranks on 1 GPU (NVIDIA H200), 2 ranks per GPU through MPS
$W allreduce 0-32K bytes (cuda backend, 2 ranks, nvlink): oneshot LL, 1 channel(s) x 4 instance(s), rule built-in:3, verified
[h:2] coll:gc3: comm MPI_COMM_WORLD: allreduce 0-32K bytes (cuda backend, 2 ranks, nvlink): oneshot LL, 1 channel(s) x 4 instance(s), rule built-in:3, verified
$W allreduce 32K-2M bytes, in place (cuda backend, 2 ranks, nvlink): ring Simple, 4 channel(s) x 4 instance(s), rule built-in:4, verified
$D allreduce 2M-inf bytes (cuda backend, 2 ranks, nvlink): ring Simple, 8 channel(s) x 2 instance(s) (narrowed from 8 x 4 to fit 66 thread blocks per rank), rule built-in:5, verified
$W alltoall 0-16K bytes (cuda backend, 2 ranks, nvlink): direct LL, 1 channel(s) x 1 instance(s), rule built-in:6, verified
$W alltoall 16K-4M bytes (cuda backend, 2 ranks, nvlink): direct Simple, 1 channel(s) x 8 instance(s), rule built-in:10, verified
$W nonblocking allreduce runs on gc3's allreduce_oneshot2 plan, completed by MPI progress
test_coll: 2 ranks, device buffers: 1587 passed, 0 failed
EOF
run
ok "MPS: succeeds" test $rc = 0
ok "MPS: the collectives gc3 ran and where" \
    has "gc3 ran MPI_Allreduce, MPI_Alltoall and MPI_Iallreduce itself on device buffers: 2 ranks on 1 GPU (NVIDIA H200), 2 ranks per GPU through MPS."
ok "MPS: each algorithm once, per collective" \
    has "Algorithms its rules chose (by collective and size): allreduce: oneshot LL, ring Simple; alltoall: direct LL, direct Simple."
ok "MPS: the results" has "Every result was checked against a host computation: 1587 passed, 0 failed (device buffers"
ok "MPS: nothing about plans not used" hasnt "could not be used"

cat >"$T/log" <<EOF
test_coll: ranks on GPUs: 2 ranks on 1 GPU (NVIDIA H200), 2 ranks per GPU without MPS
$W ranks 0 and 1 share GPU 0000:19:00.0 of h without MPS: their kernels would take turns on it (milliseconds a call), so gc3 does not run on this communicator's device buffers: they are staged through host memory. Start the MPS daemon (nvidia-cuda-mps-control -d) or set coll_gc3_shared_gpu to run gc3 there
test_coll: 2 ranks, device buffers: 1587 passed, 0 failed
EOF
run
ok "no MPS: succeeds (the results are right)" test $rc = 0
ok "no MPS: says gc3 did not run on the GPU, and why" \
    has "gc3 did not run the collectives on the GPU: 2 ranks on 1 GPU (NVIDIA H200), 2 ranks per GPU without MPS (ranks 0 and 1 share GPU 0000:19:00.0 of h without MPS)."
ok "no MPS: says what to do" has "run the ranks under MPS (nvidia-cuda-mps-control -d; see the NOTE above) or give every rank a GPU of its own"

cat >"$T/log" <<EOF
$W allreduce 0-64K bytes (host backend, 4 ranks, host): allpairs LL, 1 channel(s) x 1 instance(s), rule built-in:41, verified, 1 fused run of local steps
$W alltoall 0-inf bytes (host backend, 4 ranks, host): direct Simple, 1 channel(s) x 1 instance(s), rule built-in:46, verified
$W allgather 0-64K bytes (host backend, 4 ranks, host): allgather_ring Simple, 1 channel(s) x 1 instance(s), rule built-in:47, NOT USED: a rank could not build it
$W bcast 0-64K bytes, in place (host backend, 4 ranks, host): bcast_direct LL, 1 channel(s) x 1 instance(s), rule built-in:68, verified; memory 385.6 KiB (...)
$W reduce 64K-inf bytes (host backend, 4 ranks, host): reduce_ring Simple, 1 channel(s) x 1 instance(s), rule built-in:78, verified; memory 384 B (...)
[h:2] coll:gc3: comm MPI_COMM_WORLD: allreduce 0-64K bytes (host backend, 4 ranks, host): allpairs LL, 1 channel(s) x 1 instance(s), rule built-in:41, verified, 1 fused run of local steps
$W nonblocking reduce runs on gc3's reduce_ring4_root3 plan, completed by MPI progress
$W nonblocking bcast runs on gc3's bcast_direct4_root3 plan, completed by MPI progress
test_coll: 4 ranks, host buffers: 1586 passed, 0 failed
[h:0] coll:gc3: comm MPI_COMM_WORLD freed: its 4 plan(s) took 1.9 MiB per rank; gc3 now holds 0 B in this process (0 region(s), 0 peer mapping(s)), 0 B waiting to be freed
EOF
run
ok "host backend: the collectives and where" \
    has "gc3 ran MPI_Allreduce, MPI_Alltoall, MPI_Bcast, MPI_Reduce, MPI_Ibcast and MPI_Ireduce itself with its host backend on host buffers (no GPU): 4 ranks on this machine's CPUs."
ok "host backend: bcast's and reduce's algorithms" \
    has "allreduce: allpairs LL; alltoall: direct Simple; bcast: bcast_direct LL; reduce: reduce_ring Simple."
out=$("$S" --lines "$T/log" 2>&1)
ok "--lines: each line once, the communicator's freed line after its plans and the results" \
    eval '[ "$(grep -c "allreduce 0-64K" <<<"$out")" = 1 ] && tail -n 1 <<<"$out" | grep -q "^coll:gc3: comm MPI_COMM_WORLD freed: its 4 plan" &&
          tail -n 2 <<<"$out" | head -n 1 | grep -q "^test_coll: 4 ranks" && ! grep -q "^\\[" <<<"$out"'
run
ok "host backend: a plan not used is counted, not listed as run" \
    eval 'has "1 plan(s) could not be used" && ! has "allgather:"'

sed -i 's/1586 passed, 0 failed/1583 passed, 3 failed/' "$T/log"
echo "rank 1: FAILED allreduce world float sum count 7" >>"$T/log"
run 1
ok "wrong results: fails, saying how many" eval 'test $rc = 1 && has "FAILED: 3 of 1586 checked results were wrong" && has "rank 1: FAILED allreduce"'
printf 'test_coll: ranks on GPUs: 2 ranks on 2 GPUs (NVIDIA H200), one rank per GPU\nSegmentation fault\n' >"$T/log"
run 139
ok "a crash: fails, showing the end of the output" \
    eval 'test $rc = 1 && has "FAILED: the run printed no test_coll summary (exit status 139)" && has "Segmentation fault"'
out=$("$S" --help 2>&1); rc=$?
ok "--help: usage, exit 0" eval 'test $rc = 0 && has "Usage: quickstart-summary.sh LOG [STATUS]"'

checks_done "quickstart-summary.sh"
