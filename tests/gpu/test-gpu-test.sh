#!/usr/bin/env bash
# The decisions of gpu-test.sh on made-up machines (no GPU needed): fake nvidia-smi,
# nvidia-cuda-mps-control and gc3_info --devices for 0, 1, 2 and 4 GPUs; what it skips and why,
# where it runs the ranks (MPS, CUDA_VISIBLE_DEVICES), the plan lines it expects (narrowed with
# the build's gc3c to the thread blocks of a shared GPU), and that a command past its limit is
# killed with what it left running.
# Usage: test-gpu-test.sh BUILD_DIR
set -u
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
W=$here/gpu-test.sh
source "$here/../checks.sh" # T, ok, has, hasnt, checks_done
checks_all() { for p in "$@"; do has "would check: $p" || return 1; done; }

# ---------------------------------------------------------------- the fakes
mkdir -p "$T/bin" "$T/build"
cat >"$T/bin/nvidia-smi" <<'EOF'
#!/bin/sh
[ "$1" = -L ] || { echo "GPU0 X"; exit 0; }
i=0
while [ $i -lt "$FAKE_GPUS" ]; do echo "GPU $i: NVIDIA H200 (UUID: GPU-$i)"; i=$((i + 1)); done
EOF
cat >"$T/bin/nvidia-cuda-mps-control" <<'EOF'
#!/bin/sh
# a daemon "runs" while $CUDA_MPS_PIPE_DIRECTORY/control exists
d=${CUDA_MPS_PIPE_DIRECTORY:-/tmp/nvidia-mps}
if [ "${1:-}" = -d ]; then mkdir -p "$d" && touch "$d/control"; exit 0; fi
read -r cmd
[ -f "$d/control" ] || { echo "Cannot find MPS control daemon process"; exit 1; }
[ "$cmd" = quit ] && rm -f "$d/control"
exit 0
EOF
# gc3_info --devices: FAKE_GPUS devices (CUDA_VISIBLE_DEVICES applies), FAKE_LINK nvlink|pcie|none
cat >"$T/probe" <<'EOF'
#!/bin/sh
n=$FAKE_GPUS
[ -n "${CUDA_VISIBLE_DEVICES:-}" ] && n=$(echo "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | wc -l)
[ "$n" -gt 0 ] || { echo "# no GPU: CUDA sees no device"; exit 1; }
mps=no
[ -f "${CUDA_MPS_PIPE_DIRECTORY:-/tmp/nvidia-mps}/control" ] && mps=yes
echo "# device pci-bus-id     blocks mps  name"
i=0
while [ $i -lt "$n" ]; do echo "$i        0000:1$i:00.0   ${FAKE_BLOCKS:-132}    $mps  NVIDIA H200"; i=$((i + 1)); done
a=0
while [ $a -lt "$n" ]; do
    b=$((a + 1))
    while [ $b -lt "$n" ]; do
        case $FAKE_LINK in
        nvlink) echo "$a-$b      yes         yes            nvlink";;
        pcie) echo "$a-$b      yes         no             pcie";;
        *) echo "$a-$b      no          no             pcie";;
        esac
        b=$((b + 1))
    done
    a=$((a + 1))
done
EOF
chmod +x "$T/bin/"* "$T/probe"
printf '#define GC3_HAVE_CUDA 1\n#define GC3_HAVE_UCX 1\n' >"$T/build/config.h"
ln -s "$build/gc3c" "$T/build/gc3c"
export PATH="$T/bin:$PATH" GC3_BUILD_DIR=$T/build GC3_GPU_PROBE=$T/probe FAKE_LINK=nvlink GC3_GPU_TEST_DRYRUN=1
export CUDA_MPS_PIPE_DIRECTORY=$T/no-such-mps
unset CUDA_VISIBLE_DEVICES OMPI_MCA_coll_gc3_timeout
M=mpirun
D4=("allreduce 0-128K bytes (cuda backend, 4 ranks, nvlink): oneshot LL, 1 channel(s) x 8 instance(s)"
    "allreduce 128K-512K bytes (cuda backend, 4 ranks, nvlink): allpairs LL, 1 channel(s) x 16 instance(s)"
    "allreduce 2M-16M bytes (cuda backend, 4 ranks, nvlink): ring Simple, 16 channel(s) x 4 instance(s)"
    "alltoall 512K-2M bytes (cuda backend, 4 ranks, nvlink): direct Simple, 1 channel(s) x 8 instance(s)")
D2=("allreduce 2M-8M bytes (cuda backend, 2 ranks, nvlink): ring Simple, 8 channel(s) x 4 instance(s)")
coll4() { out=$("$W" --np 4 "${D4[@]}" "0 failed" -- $M -np 4 test_coll --device 2>&1); rc=$?; }
coll2() { out=$("$W" --np 2 "${D2[@]}" "0 failed" -- $M -np 2 test_coll --device 2>&1); rc=$?; }
otherdev() { out=$("$W" --np 2 --distinct --why "buffers on another GPU" "0 failed" -- $M -np 2 test_faults otherdev 2>&1); rc=$?; }
nomps() { out=$("$W" --np 2 --gpus 1 --no-mps "share GPU" -- $M -np 2 test_coll --device 2>&1); rc=$?; }
shared4() { out=$("$W" --np 4 --gpus 2 "narrowed from 16 x 8 to fit" -- $M -np 4 gc3_bench 2>&1); rc=$?; }
kill3() { out=$("$W" --np 3 --why "survivors must be on gc3's path" -- bash -c "$M -np 3 test_faults kill" 2>&1); rc=$?; }

# ---------------------------------------------------------------- no GPU, no CUDA
export FAKE_GPUS=0
coll2
ok "0 GPUs: skipped, needs a GPU" test $rc = 77 -a "$out" = "SKIPPED: needs a GPU (nvidia-smi lists none)"
out=$("$W" --mps-start 4 2>&1); rc=$?
ok "0 GPUs: the MPS fixture is skipped" test $rc = 77
out=$("$W" --mps-stop 2>&1); rc=$?
ok "0 GPUs: the MPS fixture's cleanup is skipped" test $rc = 77
out=$(PATH=/usr/bin:/bin "$W" --np 2 -- $M -np 2 x 2>&1); rc=$?
ok "no nvidia-smi: skipped" test $rc = 77
export FAKE_GPUS=1
printf '#define GC3_HAVE_UCX 1\n' >"$T/build/config.h"
coll2
ok "a build without CUDA: skipped" test $rc = 77 -a "$out" = "SKIPPED: needs gc3 built with CUDA"
printf '#define GC3_HAVE_CUDA 1\n' >"$T/build/config.h"
out=$("$W" --np 4 --ucx -- $M -np 4 x 2>&1); rc=$?
ok "a build without UCX: a pseudo-node test is skipped" test $rc = 77 -a "$out" = "SKIPPED: needs gc3 built with UCX (its inter-node transport)"
printf '#define GC3_HAVE_CUDA 1\n#define GC3_HAVE_UCX 1\n' >"$T/build/config.h"
out=$(env -u GC3_UCX_CUDA "$W" --np 2 --ucx-cuda -- $M -np 2 x 2>&1); rc=$?
ok "no CUDA-enabled UCX: a GPUDirect test is skipped, saying why" test $rc = 77 -a "$out" = "SKIPPED: needs a UCX built with CUDA: GC3_UCX_CUDA is not set (on the GPU machine .device/env.sh sets it)"
out=$(GC3_UCX_CUDA=$T/no-ucx "$W" --np 2 --ucx-cuda -- $M -np 2 x 2>&1); rc=$?
ok "a GC3_UCX_CUDA without UCX's libraries: skipped, saying why" test $rc = 77 -a "$out" = "SKIPPED: needs a UCX built with CUDA: GC3_UCX_CUDA=$T/no-ucx has no lib/libucp.so.0 and lib/ucx/libuct_cuda.so"
mkdir -p "$T/ucx/lib/ucx"
touch "$T/ucx/lib/libucp.so.0" "$T/ucx/lib/ucx/libuct_cuda.so"
out=$(GC3_UCX_CUDA=$T/ucx LD_LIBRARY_PATH=/x "$W" --np 1 --ucx-cuda -- $M -np 1 x 2>&1); rc=$?
ok "a CUDA-enabled UCX: its libraries first for the command" eval 'test $rc = 0 && has "with LD_LIBRARY_PATH=$T/ucx/lib:/x"'
out=$("$W" --np 1 --python gc3_no_such_module -- python3 x 2>&1); rc=$?
ok "a missing python module: skipped" test $rc = 77 -a "$out" = "SKIPPED: needs a python3 with gc3_no_such_module"
# a module gpu-test.sh builds (provide-mpi4jax.sh), with a fake python3: it imports the modules of
# FAKE_PY_MODULES and those installed under a PYTHONPATH entry; its pip "builds" mpi4jax (FAKE_PIP=fail: fails)
mkdir -p "$T/pybin" "$T/sdist/mpi4jax-9.9"
cat >"$T/pybin/python3" <<'EOF'
#!/bin/bash
if [ "$1" = -m ] && [ "$2" = pip ]; then
    [ "${FAKE_PIP:-}" != fail ] || { echo "error: nanobind mismatch"; exit 1; }
    while [ "$1" != --target ]; do shift; done
    mkdir -p "$2/mpi4jax" && echo "built $2" >>"$FAKE_PIP_LOG"
    exit 0
fi
[ "$1" = -c ] || exit 2
case $2 in *Get_library_version*) echo "${FAKE_MPI_LIB:-Open MPI v4.1.6, package: fake}"; exit 0;; *print*) echo py312-fake; exit 0;; esac
for m in $(echo "$2" | sed -n 's/^import \([a-z0-9_., ]*\).*/\1/p' | tr ',' ' '); do
    case " $FAKE_PY_MODULES " in *" ${m%%.*} "*) continue;; esac
    found=0
    for d in ${PYTHONPATH//:/ }; do [ -d "$d/${m%%.*}" ] && found=1; done
    [ $found = 1 ] || { echo "ModuleNotFoundError: No module named '$m'" >&2; exit 1; }
done
exit 0
EOF
chmod +x "$T/pybin/python3"
pyt() { out=$(PATH=$T/pybin:$PATH FAKE_PY_MODULES="sys mpi4py jax pip setuptools nanobind" FAKE_PIP_LOG=$T/pip.log \
              "$W" --np 1 --python mpi4py,jax,mpi4jax -- x 2>&1); rc=$?; }
GC3_MPI4JAX_SRC=$T/no-such.tar.gz pyt
ok "mpi4jax, no source: skipped, saying why" test $rc = 77 -a "$out" = "SKIPPED: needs mpi4jax: GC3_MPI4JAX_SRC=$T/no-such.tar.gz does not exist"
GC3_MPI4JAX_SRC=$T/sdist/mpi4jax-9.9 FAKE_PIP=fail pyt
ok "mpi4jax that does not build: skipped, with pip's last line and its log" \
    eval 'test $rc = 77 && has "SKIPPED: needs mpi4jax: building it from $T/sdist/mpi4jax-9.9 failed (error: nanobind mismatch; log $T/build/python/mpi4jax-9.9-py312-fake.build.log)"'
GC3_MPI4JAX_SRC=$T/sdist/mpi4jax-9.9 pyt
ok "mpi4jax built for the python that has the other modules, put on PYTHONPATH" \
    eval 'test $rc = 0 && has "building mpi4jax-9.9 for $T/pybin/python3" && has "GC3_TEST_PYTHON=$T/pybin/python3 PYTHONPATH=$T/build/python/mpi4jax-9.9-py312-fake"'
GC3_MPI4JAX_SRC=$T/sdist/mpi4jax-9.9 pyt
ok "mpi4jax built once: the next test uses it" \
    eval 'test $rc = 0 && hasnt "building" && has "PYTHONPATH=$T/build/python/mpi4jax-9.9-py312-fake" && test $(wc -l <"$T/pip.log") = 1'
touch -d "+1 minute" "$T/sdist/mpi4jax-9.9"
GC3_MPI4JAX_SRC=$T/sdist/mpi4jax-9.9 pyt
ok "mpi4jax built again when its source is newer" eval 'test $rc = 0 && has "building" && test $(wc -l <"$T/pip.log") = 2'
out=$(PATH=$T/pybin:$PATH FAKE_PY_MODULES="sys mpi4py jax mpi4jax" "$W" --np 1 --python mpi4py,jax,mpi4jax -- x 2>&1); rc=$?
ok "the python's own mpi4jax: nothing built, PYTHONPATH unchanged" \
    eval 'test $rc = 0 && hasnt "building" && has "GC3_TEST_PYTHON=$T/pybin/python3 PYTHONPATH=${PYTHONPATH:-}"'
# mpi4py must load the build's Open MPI (GC3_MPICC names it): another one skips the test, saying so
printf '#!/bin/sh\necho "mpicc: Open MPI 5.0.7 (Language: C)"\n' >"$T/mpicc" && chmod +x "$T/mpicc"
out=$(PATH=$T/pybin:$PATH FAKE_PY_MODULES="sys mpi4py cupy" GC3_MPICC=$T/mpicc "$W" --np 1 --python mpi4py,cupy -- x 2>&1); rc=$?
ok "mpi4py of another Open MPI: skipped, naming both and how to build one" \
    eval 'test $rc = 77 && has "SKIPPED: needs a python3 whose mpi4py uses this build'"'"'s Open MPI 5.0.7 ($T/pybin/python3'"'"'s mpi4py loads Open MPI v4.1.6, package: fake); build one against it: MPICC=$T/mpicc $T/pybin/python3 -m pip install --no-binary mpi4py mpi4py"'
out=$(PATH=$T/pybin:$PATH FAKE_PY_MODULES="sys mpi4py cupy" FAKE_MPI_LIB="Open MPI v5.0.7, package: fake" GC3_MPICC=$T/mpicc \
      "$W" --np 1 --python mpi4py,cupy -- x 2>&1); rc=$?
ok "mpi4py of the build's Open MPI: run" eval 'test $rc = 0 && has "GC3_TEST_PYTHON=$T/pybin/python3"'
out=$(PATH=$T/pybin:$PATH FAKE_PY_MODULES="sys mpi4py cupy" FAKE_MPI_LIB="Open MPI v5.0.70, package: fake" GC3_MPICC=$T/mpicc \
      "$W" --np 1 --python mpi4py,cupy -- x 2>&1); rc=$?
ok "mpi4py of Open MPI 5.0.70 is not 5.0.7's" test $rc = 77
out=$("$W" --np 1 --tool gc3-no-such-tool -- x 2>&1); rc=$?
ok "a missing tool: skipped" test $rc = 77 -a "$out" = "SKIPPED: needs gc3-no-such-tool on PATH"
out=$(GC3_GPU_PROBE=false "$W" --np 2 -- $M -np 2 x 2>&1); rc=$?
ok "nvidia-smi lists a GPU that gc3_info cannot see: a failure, not a skip" test $rc = 1
out=$("$W" --np 2 -- $M -np 3 x 2>&1); rc=$?
ok "--np and the command's -np differ: usage error" test $rc = 2

# ---------------------------------------------------------------- 1 GPU
coll2
ok "1 GPU, no MPS: 2 ranks skipped" test $rc = 77 -a "${out%%;*}" = "SKIPPED: needs 2 GPUs, or MPS to share 1"
otherdev
ok "1 GPU: otherdev skipped, saying why" test $rc = 77 -a "$out" = "SKIPPED: needs 2 GPUs, this machine has 1 (buffers on another GPU)"
nomps
ok "1 GPU: the test without MPS runs, pointed at no daemon" \
    eval 'test $rc = 0 && has "CUDA_MPS_PIPE_DIRECTORY=$T/build/gpu-mps/none " && has "2 rank(s) on 1 GPU(s) (NVIDIA H200), 2 per GPU without MPS"'
out=$("$W" --mps-start 4 2>&1); rc=$?
ok "1 GPU: the fixture starts MPS in the build folder and checks a process runs under it" \
    eval 'test $rc = 0 && has "daemon started, pipe directory $T/build/gpu-mps/pipe" && has "runs under MPS"'
coll4
ok "1 GPU + MPS: 4 ranks run through MPS" eval 'test $rc = 0 && has "CUDA_MPS_PIPE_DIRECTORY=$T/build/gpu-mps/pipe "'
ok "1 GPU + MPS: 4 ranks share 132 blocks: 33 per rank" has "4 per GPU through MPS ($T/build/gpu-mps/pipe); 33 thread blocks per rank"
ok "1 GPU + MPS: one-shot 1 x 8 (32 blocks) fits 33" has "would check: ${D4[0]}"
ok "1 GPU + MPS: all-pairs 1 x 16 (64 blocks) narrowed to 1 x 8" \
    has "would check: allreduce 128K-512K bytes (cuda backend, 4 ranks, nvlink): allpairs LL, 1 channel(s) x 8 instance(s) (narrowed from 1 x 16 to fit 33 thread blocks per rank)"
ok "1 GPU + MPS: ring 16 x 4 (64 blocks) narrowed to 16 x 2" \
    has "would check: allreduce 2M-16M bytes (cuda backend, 4 ranks, nvlink): ring Simple, 16 channel(s) x 2 instance(s) (narrowed from 16 x 4 to fit 33 thread blocks per rank)"
ok "1 GPU + MPS: direct 1 x 8 (32 blocks) fits" has "would check: ${D4[3]}"
ok "1 GPU + MPS: the other patterns stay" has "would check: 0 failed"
coll2
ok "1 GPU + MPS: 2 ranks, 66 blocks each: the 2-GPU ring unchanged" eval 'test $rc = 0 && has "would check: ${D2[0]}" && has "66 thread blocks per rank"'
FAKE_BLOCKS=40 coll2
ok "1 GPU + MPS: the tests of the fixture's run use its answer about the GPUs" has "66 thread blocks per rank"
mv "$T/build/gpu-mps/devices" "$T/devices"
FAKE_BLOCKS=40 coll2
mv "$T/devices" "$T/build/gpu-mps/devices"
ok "1 GPU of 40 blocks + MPS: the ring 8 x 4 (32 blocks) narrowed to fit 20" \
    has "would check: allreduce 2M-8M bytes (cuda backend, 2 ranks, nvlink): ring Simple, 8 channel(s) x 2 instance(s) (narrowed from 8 x 4 to fit 20 thread blocks per rank)"
kill3
ok "1 GPU + MPS: the kill test runs (survivors on gc3's path)" eval 'test $rc = 0 && has "3 per GPU through MPS"'
shared4
ok "1 GPU + MPS: the shared-GPU test runs its 4 ranks on the one GPU through MPS" \
    eval 'test $rc = 0 && has "4 per GPU through MPS" && hasnt "CUDA_VISIBLE_DEVICES=0,1"'
nomps
ok "1 GPU + MPS: the test without MPS is still pointed at no daemon" has "CUDA_MPS_PIPE_DIRECTORY=$T/build/gpu-mps/none "
out=$("$W" --mps-stop 2>&1); rc=$?
ok "1 GPU: the fixture's cleanup stops MPS" eval 'test $rc = 0 && has "stopped" && ! test -f "$T/build/gpu-mps/pipe/control"'
coll4
ok "1 GPU after the fixture: 4 ranks skipped again" test $rc = 77
kill3
ok "1 GPU without MPS: the kill test skipped, saying why" \
    test "$out" = "SKIPPED: needs 3 GPUs, or MPS to share 1 (survivors must be on gc3's path); no MPS daemon answers (the gpu_mps fixture starts one with nvidia-cuda-mps-control)"
out=$(CUDA_MPS_PIPE_DIRECTORY=$T/own-mps; nvidia-cuda-mps-control -d; "$W" --mps-start 4 2>&1; echo quit | nvidia-cuda-mps-control)
ok "1 GPU: a daemon the caller started is used, not a second one" has "using the daemon already running at $T/own-mps"
"$W" --mps-stop >/dev/null 2>&1

# ---------------------------------------------------------------- 2 GPUs
export FAKE_GPUS=2
"$W" --mps-start 4 >/dev/null 2>&1
coll2
ok "2 GPUs: 2 ranks on their own GPUs, without MPS" \
    eval 'test $rc = 0 && has "2 rank(s) on 2 GPU(s) (NVIDIA H200, link nvlink); 132 thread blocks" && has "CUDA_MPS_PIPE_DIRECTORY=$T/no-such-mps " && has "would check: ${D2[0]}"'
coll4
ok "2 GPUs + MPS: 4 ranks, 2 per GPU through MPS, 66 blocks each: every 4-GPU line as it is" \
    eval 'test $rc = 0 && has "2 per GPU through MPS" && has "66 thread blocks per rank" && checks_all "${D4[@]}"'
shared4
ok "2 GPUs: the shared-GPU test as written (2 ranks per GPU without MPS, all GPUs visible)" \
    eval 'test $rc = 0 && has "2 per GPU without MPS" && hasnt "CUDA_VISIBLE_DEVICES=0"'
otherdev
ok "2 GPUs: otherdev runs" test $rc = 0
kill3
ok "2 GPUs + MPS: the kill test runs through MPS" eval 'test $rc = 0 && has "2 per GPU through MPS"'
"$W" --mps-stop >/dev/null 2>&1
FAKE_LINK=pcie coll2
ok "2 GPUs without peer atomics: the NVLink plan lines left out, saying so, the rest checked" \
    eval 'test $rc = 0 && has "NOTE: not checked here: '"'"'${D2[0]}'"'"' (the GPUs'"'"' link class is pcie)" && hasnt "would check: ${D2[0]}" && has "would check: 0 failed"'
FAKE_LINK=none coll2
ok "2 GPUs without peer access: skipped" test $rc = 77 -a "$out" = "SKIPPED: needs peer access between GPUs 0 and 1 (gc3 maps its peers' memory)"

# ---------------------------------------------------------------- 4 GPUs
export FAKE_GPUS=4
out=$("$W" --mps-start 4 2>&1); rc=$?
ok "4 GPUs: the fixture starts no MPS" eval 'test $rc = 0 && has "MPS not started: 4 GPUs" && ! test -e "$T/build/gpu-mps/pipe-dir"'
coll4
ok "4 GPUs: one GPU per rank, every pattern as written" \
    eval 'test $rc = 0 && has "4 rank(s) on 4 GPU(s)" && test "$(grep -c "would check: " <<<"$out")" = 5 && checks_all "${D4[@]}"'
shared4
ok "4 GPUs: the shared-GPU test on the first 2" eval 'test $rc = 0 && has "CUDA_VISIBLE_DEVICES=0,1" && has "2 per GPU without MPS"'
nomps
ok "4 GPUs: the test without MPS on the first one" has "CUDA_VISIBLE_DEVICES=0"
out=$(CUDA_VISIBLE_DEVICES=3,2,1,0 "$W" --np 4 --gpus 2 -- $M -np 4 x 2>&1)
ok "4 GPUs, CUDA_VISIBLE_DEVICES given: the first 2 of those" has "CUDA_VISIBLE_DEVICES=3,2"
kill3
ok "4 GPUs: the kill test on 3 GPUs" eval 'test $rc = 0 && has "3 rank(s) on 3 GPU(s)"'

# ---------------------------------------------------------------- running for real
unset GC3_GPU_TEST_DRYRUN
out=$("$W" --np 1 "hello" "!oops" -- echo hello 2>&1); rc=$?
ok "a command whose output matches passes" eval 'test $rc = 0 && has "expect-output: 1 passed, 0 failed"'
out=$("$W" --np 1 "bye" -- echo hello 2>&1); rc=$?
ok "a command whose output lacks a pattern fails" eval 'test $rc = 1 && has "FAIL: output lacks: bye"'
out=$("$W" --np 1 -- sh -c 'exit 77' 2>&1); rc=$?
ok "a command that exits 77 fails (it is not a skip)" eval 'test $rc = 1 && has "not a skip"'
start=$SECONDS
out=$("$W" --np 1 --limit 2 -- sh -c "setsid sleep 300 </dev/null >/dev/null 2>&1 & echo started; sleep 300" 2>&1); rc=$?
ok "a hung command fails after its limit, within seconds" eval 'test $rc = 124 && test $((SECONDS - start)) -lt 20 && has "sending signal TERM" && has "started"'
ok "what it left running (a process in its own session) is killed" has "killing 1 process(es) left running"
left=0
for p in /proc/[0-9]*; do grep -qzF "GC3_GPU_TEST_TAG=$T/build:" "$p/environ" 2>/dev/null && left=$((left + 1)); done
ok "no process of the test is left" test $left = 0

# ---------------------------------------------------------------- the skip report
cat >"$T/LastTest.log" <<'EOF'
1/3 Test: gpu_a
Output:
SKIPPED: needs 2 GPUs, this machine has 1
2/3 Test: gpu_b
Output:
gpu-test: 2 rank(s) on 1 GPU(s)
3/3 Test: gpu_c
Output:
SKIPPED: needs 2 GPUs, this machine has 1
EOF
out=$("$W" --skips "$T/LastTest.log")
ok "the skip report counts the tests per reason" \
    eval 'has "== skipped: 2 test(s), for what:" && has "2 x needs 2 GPUs, this machine has 1: gpu_a gpu_c"'

checks_done "gpu-test.sh decisions"
