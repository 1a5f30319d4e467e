#!/usr/bin/env bash
# Every test of the `gpu` label runs through this script. It states what the test needs, checks the
# machine for it first and skips the test (exit 77, CTest's SKIP_RETURN_CODE) with one line
# "SKIPPED: needs ..." where the machine has less. Where ranks can share GPUs through MPS, a
# machine of fewer GPUs runs the test that way (the daemon of the gpu_mps fixture). The expected
# verbose lines of gc3's plans follow the shape that runs (thread blocks per rank when ranks share
# a GPU, link class). The command is killed after --limit seconds, with every process it left.
#
#   gpu-test.sh [NEEDS...] [PATTERN...] -- COMMAND [ARGS...]   run one test
#   gpu-test.sh --mps-start RANKS      fixture: start MPS when the machine has fewer GPUs than RANKS
#   gpu-test.sh --mps-stop             fixture: stop it (and whatever a test left running)
#   gpu-test.sh --describe             what the machine has (GPUs, links, MPS, UCX, tools)
#   gpu-test.sh --skips LOG            how many tests were skipped for what (CTest's LastTest.log)
#
# NEEDS (before the patterns):
#   --np N          ranks of the job (the command's -np); one GPU each, or shared through MPS
#   --gpus K        the test spreads its ranks over K GPUs (default N); K < N: it shares them on
#                   purpose (without MPS where the machine has K; CUDA_VISIBLE_DEVICES: the first K)
#   --distinct      the K GPUs must be real ones (never shared through MPS instead)
#   --no-mps        the ranks must not run under MPS
#   --ucx           gc3 built with UCX (its inter-node transport)
#   --ucx-cuda      also a UCX built with CUDA: $GC3_UCX_CUDA (.device/env.sh sets it on the GPU
#                   machine) with lib/libucp.so.0 and lib/ucx/libuct_cuda.so; its lib goes first in
#                   LD_LIBRARY_PATH for the command (mpirun's ranks on this node inherit it)
#   --python M,...  a python3 with these modules (found one is exported as GC3_TEST_PYTHON); a module
#                   M with a tests/gpu/provide-M.sh (mpi4jax) is built for it where it lacks one
#                   (once, in $GC3_BUILD_DIR/python; PYTHONPATH then names it), or the test skipped
#                   saying why; with mpi4py, its MPI must be the build's Open MPI (GC3_MPICC)
#   --tool NAME     NAME on PATH
#   --limit S       seconds before the command is killed (default 100; CTest's TIMEOUT is 120)
#   --why TEXT      what the GPUs are needed for, added to the skip line
# PATTERNS are expect-output.sh's (checked by it); without patterns only the exit status counts.
# Patterns of a plan line, "(cuda backend, R ranks, LINK): ALGO PROTO, C channel(s) x I instance(s)",
# are rewritten to the plan that runs: narrowed to the thread blocks per rank of a shared GPU
# (gc3c gen --max-blocks), or left out, saying so, where the GPUs' link class is not LINK.
#
# Environment: GC3_BUILD_DIR (the build folder; required), GC3_MPICC (the build's mpicc: which Open
# MPI mpi4py must load), GC3_GPU_PROBE (default
# "$GC3_BUILD_DIR/gc3_info --devices": the GPUs as gc3 sees them), GC3_GPU_TEST_DRYRUN=1 (print the
# decision and the command instead of running it: tests/gpu/test-gpu-test.sh).
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
B=${GC3_BUILD_DIR:?gpu-test.sh: GC3_BUILD_DIR (the build folder) is not set}
SKIP=77
mpsdir=$B/gpu-mps

skip() { echo "SKIPPED: needs $*"; exit $SKIP; }
fail() { echo "FAIL: gpu-test: $*"; exit 1; }

# ---------------------------------------------------------------- what the machine has
built_with() { grep -q "^#define GC3_HAVE_$1 1" "$B/config.h" 2>/dev/null; }

# GPUs nvidia-smi lists (all of the machine's; 0 without nvidia-smi)
smi_gpus() {
    command -v nvidia-smi >/dev/null 2>&1 || { echo 0; return; }
    nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true
}

# The GPUs this process sees, as gc3 sees them (gc3_info --devices): sets ngpu, blocks[d], name[d],
# mps_on[d], access[a-b], atomics[a-b]. Returns 1 with the probe's output in probe_out when none.
# The MPS fixture keeps the answer for the tests of its run (it creates a CUDA context on every
# GPU, a second or so); "probe fresh" asks again.
probe() {
    local line d key="# CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-}"
    ngpu=0
    blocks=() name=() mps_on=()
    declare -gA access=() atomics=()
    if [ "${1:-}" != fresh ] && [ "$(head -1 "$mpsdir/devices" 2>/dev/null)" = "$key" ]; then
        probe_out=$(tail -n +2 "$mpsdir/devices")
    else
        probe_out=$(${GC3_GPU_PROBE:-"$B/gc3_info" --devices} 2>&1) || return 1
    fi
    while IFS= read -r line; do
        if [[ $line =~ ^([0-9]+-[0-9]+)\ +([a-z]+)\ +([a-z]+) ]]; then
            access[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
            atomics[${BASH_REMATCH[1]}]=${BASH_REMATCH[3]}
        elif [[ $line =~ ^([0-9]+)\ +[^\ ]+\ +([0-9]+)\ +([a-z]+)\ +(.*)$ ]]; then
            d=${BASH_REMATCH[1]}
            blocks[d]=${BASH_REMATCH[2]}
            mps_on[d]=${BASH_REMATCH[3]}
            name[d]=${BASH_REMATCH[4]}
            ngpu=$((d + 1))
        fi
    done <<<"$probe_out"
    [ "$ngpu" -gt 0 ]
}

mps_control() { command -v nvidia-cuda-mps-control >/dev/null 2>&1; }
# mps_answers, mps_daemon_start, mps_daemon_quit
source "$src/contrib/mps-daemon.sh"

# The pipe directory of a running MPS daemon the tests may use: the fixture's, or one the caller
# started (CUDA_MPS_PIPE_DIRECTORY, or the default directory). Empty when there is none.
mps_pipe() {
    local d
    for d in "$(cat "$mpsdir/pipe-dir" 2>/dev/null)" "${CUDA_MPS_PIPE_DIRECTORY:-/tmp/nvidia-mps}"; do
        [ -n "$d" ] && mps_answers "$d" && { echo "$d"; return; }
    done
}

find_python() { # $1: comma-separated modules
    local p imports=${1//,/, }
    for p in $(which -a python3 2>/dev/null) /opt/torch/.venv/bin/python3; do
        [ -x "$p" ] && "$p" -c "import $imports" 2>/dev/null && { echo "$p"; return; }
    done
}

# every ucx_info there is: on PATH, and the CUDA-enabled UCX of $GC3_UCX_CUDA (.device/env.sh; a
# wheel's unpacked binaries may lack the execute bit: given it, or run through the loader by ucx_run)
ucx_infos() {
    command -v ucx_info 2>/dev/null
    if [ -n "${GC3_UCX_CUDA:-}" ] && [ -f "$GC3_UCX_CUDA/bin/ucx_info" ]; then
        [ -x "$GC3_UCX_CUDA/bin/ucx_info" ] || chmod +x "$GC3_UCX_CUDA/bin/ucx_info" 2>/dev/null
        echo "$GC3_UCX_CUDA/bin/ucx_info"
    fi
    return 0
}

# run a ucx_info ($1) with its own UCX's libraries first
ucx_run() {
    local u=$1 lib
    shift
    lib=$(dirname "$(dirname "$u")")/lib
    if [ -x "$u" ]; then
        LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$u" "$@" 2>&1
    else
        LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} /lib64/ld-linux-x86-64.so.2 "$u" "$@" 2>&1
    fi
}

# Processes started for a test carry GC3_GPU_TEST_TAG=$B:<its wrapper's pid>. Kill those whose tag
# starts with $1 (TERM, then KILL); say which.
kill_tagged() {
    local p pids=() left=()
    for p in /proc/[0-9]*; do
        p=${p#/proc/}
        [ "$p" = $$ ] && continue
        grep -qzF "GC3_GPU_TEST_TAG=$1" "/proc/$p/environ" 2>/dev/null && pids+=("$p")
    done
    [ ${#pids[@]} -gt 0 ] || return 0
    echo "gpu-test: killing ${#pids[@]} process(es) left running: $(for p in "${pids[@]}"; do
        printf '%s(%s) ' "$p" "$(cat /proc/$p/comm 2>/dev/null)"; done)"
    kill -TERM "${pids[@]}" 2>/dev/null
    for _ in 1 2 3 4 5 6; do
        left=()
        for p in "${pids[@]}"; do [ -d "/proc/$p" ] && left+=("$p"); done
        [ ${#left[@]} -gt 0 ] || return 0
        sleep 0.5
    done
    kill -KILL "${left[@]}" 2>/dev/null
}

# ---------------------------------------------------------------- the fixture: MPS
mps_start() {
    local ranks=$1 d
    built_with CUDA || skip "gc3 built with CUDA"
    [ "$(smi_gpus)" -gt 0 ] || skip "a GPU (nvidia-smi lists none)"
    probe fresh || fail "nvidia-smi lists GPUs but gc3_info --devices sees none: $probe_out"
    rm -f "$mpsdir/pipe-dir" "$mpsdir/ours"
    mkdir -p "$mpsdir"
    printf '# CUDA_VISIBLE_DEVICES=%s\n%s\n' "${CUDA_VISIBLE_DEVICES:-}" "$probe_out" >"$mpsdir/devices"
    if [ "$ngpu" -ge "$ranks" ]; then
        if mps_answers "$mpsdir/pipe"; then # left by an earlier run that did not end
            echo "$mpsdir/pipe" >"$mpsdir/pipe-dir"
            touch "$mpsdir/ours"
            mps_stop_daemon
        fi
        echo "MPS not started: $ngpu GPUs, as many as the most ranks of a test ($ranks)"
        exit 0
    fi
    mps_control || skip "nvidia-cuda-mps-control (MPS) on PATH, for tests of more ranks than the $ngpu GPU(s)"
    d=$mpsdir/pipe
    if mps_answers "$d"; then
        touch "$mpsdir/ours"
        echo "MPS: the daemon this build started before still runs at $d: used"
    elif d=$(mps_pipe) && [ -n "$d" ]; then
        echo "MPS: using the daemon already running at $d"
    else
        d=$mpsdir/pipe
        mps_daemon_start "$d" "$mpsdir/log" || fail "$mps_why"
        touch "$mpsdir/ours"
        echo "MPS: daemon started, pipe directory $d, log $mpsdir/log"
    fi
    echo "$d" >"$mpsdir/pipe-dir"
    # a process pointed at it must run under MPS (this starts the server)
    CUDA_MPS_PIPE_DIRECTORY=$d probe fresh || { mps_stop_daemon; fail "under MPS, gc3_info --devices sees no GPU: $probe_out"; }
    [ "${mps_on[0]}" = yes ] || { mps_stop_daemon; fail "a process pointed at $d does not run under MPS: $probe_out"; }
    echo "MPS: a process pointed at it runs under MPS on ${name[0]}"
    exit 0
}

mps_stop_daemon() {
    local d
    d=$(cat "$mpsdir/pipe-dir" 2>/dev/null)
    rm -f "$mpsdir/pipe-dir"
    [ -f "$mpsdir/ours" ] && [ -n "$d" ] || return 0
    rm -f "$mpsdir/ours"
    if ! mps_daemon_quit "$d"; then
        echo "FAIL: gpu-test: the MPS daemon at $d still answers after quit"
        return 1
    fi
    echo "MPS: daemon at $d stopped"
}

mps_stop() {
    built_with CUDA || skip "gc3 built with CUDA"
    [ "$(smi_gpus)" -gt 0 ] || skip "a GPU (nvidia-smi lists none)"
    kill_tagged "$B:"
    rm -f "$mpsdir/devices"
    if [ -f "$mpsdir/ours" ]; then
        mps_stop_daemon || exit 1
    else
        rm -f "$mpsdir/pipe-dir"
        echo "MPS: no daemon of this build to stop"
    fi
    exit 0
}

# ---------------------------------------------------------------- run-tests.sh's reports
describe() {
    local n u p
    echo "== the GPU machine (tests/gpu/gpu-test.sh --describe)"
    n=$(smi_gpus)
    if [ "$n" -eq 0 ]; then
        echo "GPUs: none (nvidia-smi $(command -v nvidia-smi >/dev/null && echo lists none || echo is not on PATH)):" \
             "every gpu test is skipped"
    else
        echo "GPUs (nvidia-smi -L):"
        nvidia-smi -L 2>&1 | sed 's/^/  /'
        echo "links (nvidia-smi topo -m):"
        nvidia-smi topo -m 2>&1 | sed '/^$/,$d; s/^/  /'
        if built_with CUDA; then
            echo "as gc3 sees them (gc3_info --devices: thread blocks of its kernel per GPU, MPS, peer access, link class):"
            probe fresh
            echo "$probe_out" | sed 's/^/  /'
        else
            echo "gc3 was built without CUDA: every gpu test is skipped"
        fi
    fi
    if mps_control; then
        p=$(mps_pipe)
        echo "MPS: nvidia-cuda-mps-control at $(command -v nvidia-cuda-mps-control); ${p:+a daemon answers at $p}${p:-no daemon running: the gpu_mps fixture starts one in $mpsdir when a test has more ranks than there are GPUs}"
    else
        echo "MPS: nvidia-cuda-mps-control is not on PATH: tests of more ranks than GPUs are skipped"
    fi
    u=$(ucx_infos)
    [ -n "$u" ] || echo "UCX: no ucx_info on PATH (nor \$GC3_UCX_CUDA/bin)"
    for u in $u; do
        p=$(ucx_run "$u" -d | sed -n 's/.*Transport: *\(cuda[a-z_]*\).*/\1/p' | sort -u | tr '\n' ' ')
        p=${p% }
        echo "UCX: $u, $(ucx_run "$u" -v | sed -n 's/.*Library version: *//p' | head -1); CUDA transports: ${p:-none}"
    done
    echo "gc3 built with UCX (pseudo-node tests): $(built_with UCX && echo yes || echo no)"
    p=$(find_python mpi4py,cupy)
    echo "python3 with mpi4py and cupy: ${p:-none}"
    p=$(find_python mpi4py,jax)
    u=${GC3_MPI4JAX_SRC:-$(ls "$src"/.device/mpi4jax-*.tar.gz 2>/dev/null | sort -V | tail -1)}
    echo "python3 with mpi4py and jax: ${p:-none}; mpi4jax: $([ -n "$p" ] && "$p" -c 'import mpi4jax' 2>/dev/null &&
        echo "installed there" || echo "${u:+built from $u by the test that needs it}${u:-no source (GC3_MPI4JAX_SRC or .device/mpi4jax-*.tar.gz)}")"
    echo "compute-sanitizer: $(command -v compute-sanitizer || echo none)"
}

skips() { # $1: CTest's LastTest.log
    [ -f "$1" ] || { echo "gpu-test: no $1"; return 0; }
    awk '/^[0-9]+\/[0-9]+ Test: /{t=$3} /^SKIPPED: /{sub(/^SKIPPED: /, ""); n[$0]++; who[$0]=who[$0] " " t; total++}
        END {
            printf "== skipped: %d test(s)%s\n", total, total ? ", for what:" : ""
            for (r in n) printf "  %d x %s:%s\n", n[r], r, who[r] | "sort -rn"
        }' "$1"
}

case "${1:-}" in
--mps-start) mps_start "${2:?--mps-start RANKS}";;
--mps-stop) mps_stop;;
--describe) describe; exit 0;;
--skips) skips "${2:?--skips LOG}"; exit 0;;
esac

# ---------------------------------------------------------------- one test
np=0 K=0 distinct=0 nomps=0 ucx=0 ucxcuda=0 pymods="" tools=() limit=100 why=""
while [ $# -gt 0 ]; do
    case $1 in
    --np) np=$2; shift 2;;
    --gpus) K=$2; shift 2;;
    --distinct) distinct=1; shift;;
    --no-mps) nomps=1; shift;;
    --ucx) ucx=1; shift;;
    --ucx-cuda) ucx=1; ucxcuda=1; shift;;
    --python) pymods=$2; shift 2;;
    --tool) tools+=("$2"); shift 2;;
    --limit) limit=$2; shift 2;;
    --why) why=" ($2)"; shift 2;;
    --) break;;
    --*) echo "gpu-test.sh: unknown option $1" >&2; exit 2;;
    *) break;;
    esac
done
pats=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do pats+=("$1"); shift; done
[ "${1:-}" = "--" ] || { echo "gpu-test.sh: no '-- COMMAND'" >&2; exit 2; }
shift
[ $# -gt 0 ] && [ "$np" -gt 0 ] || { echo "gpu-test.sh: --np N and a COMMAND are required" >&2; exit 2; }
# the command's own -np must be the one declared
prev=""
for a in "$@"; do
    n=""
    if [ "$prev" = "-np" ]; then n=$a; else [[ $a =~ -np\ ([0-9]+) ]] && n=${BASH_REMATCH[1]}; fi
    [ -z "$n" ] || [ "$n" = "$np" ] || { echo "gpu-test.sh: --np $np but the command runs -np $n" >&2; exit 2; }
    prev=$a
done
[ "$K" -gt 0 ] || K=$np

built_with CUDA || skip "gc3 built with CUDA"
[ "$(smi_gpus)" -gt 0 ] || skip "a GPU (nvidia-smi lists none)"
probe || fail "nvidia-smi lists GPUs but gc3_info --devices sees none: $probe_out"
for t in "${tools[@]}"; do command -v "$t" >/dev/null 2>&1 || skip "$t on PATH"; done
[ $ucx = 0 ] || built_with UCX || skip "gc3 built with UCX (its inter-node transport)"
if [ $ucxcuda = 1 ]; then
    [ -n "${GC3_UCX_CUDA:-}" ] || skip "a UCX built with CUDA: GC3_UCX_CUDA is not set (on the GPU machine .device/env.sh sets it)"
    [ -f "$GC3_UCX_CUDA/lib/libucp.so.0" ] && [ -f "$GC3_UCX_CUDA/lib/ucx/libuct_cuda.so" ] ||
        skip "a UCX built with CUDA: GC3_UCX_CUDA=$GC3_UCX_CUDA has no lib/libucp.so.0 and lib/ucx/libuct_cuda.so"
    export LD_LIBRARY_PATH=$GC3_UCX_CUDA/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
if [ -n "$pymods" ]; then
    # a module that tests/gpu/provide-M.sh can build (mpi4jax): the python that has the others gets
    # it built (once, in $B/python) where it lacks it; PYTHONPATH then names where it is
    own=() provided=()
    for m in ${pymods//,/ }; do
        if [ -x "$here/provide-$m.sh" ]; then provided+=("$m"); else own+=("$m"); fi
    done
    GC3_TEST_PYTHON=$(find_python "$pymods")
    if [ -z "$GC3_TEST_PYTHON" ] && [ ${#provided[@]} -gt 0 ]; then
        GC3_TEST_PYTHON=$(find_python "$(IFS=,; echo "${own[*]:-sys}")")
    fi
    [ -n "$GC3_TEST_PYTHON" ] || skip "a python3 with ${pymods//,/ and }"
    # mpi4py binds the python to one Open MPI (the libmpi it loads): it must be the build's, whose
    # mpirun starts the ranks (GC3_MPICC: the build's mpicc; mpi4py's MPI.Get_library_version(),
    # asked without MPI_Init, names the one it loads here)
    if [[ ,$pymods, == *,mpi4py,* ]] && [ -n "${GC3_MPICC:-}" ]; then
        want=$("$GC3_MPICC" --showme:version 2>/dev/null | sed -n 's/.*Open MPI \([0-9][0-9a-z.]*\).*/\1/p')
        have=$("$GC3_TEST_PYTHON" -c 'import mpi4py; mpi4py.rc.initialize = False; from mpi4py import MPI
print(MPI.Get_library_version().splitlines()[0])' 2>/dev/null)
        case "$have," in
        "Open MPI v$want,"*) ;;
        *) [ -z "$want" ] || skip "a python3 whose mpi4py uses this build's Open MPI $want ($GC3_TEST_PYTHON's mpi4py" \
            "loads ${have:-an MPI it cannot name}); build one against it: MPICC=$GC3_MPICC $GC3_TEST_PYTHON -m pip" \
            "install --no-binary mpi4py mpi4py" ;;
        esac
    fi
    for m in ${provided[@]+"${provided[@]}"}; do
        dir=$("$here/provide-$m.sh" "$GC3_TEST_PYTHON" "$B/python") || skip "$dir"
        [ -z "$dir" ] || PYTHONPATH=$dir${PYTHONPATH:+:$PYTHONPATH}
    done
    [ -z "${PYTHONPATH:-}" ] || export PYTHONPATH
    export GC3_TEST_PYTHON
fi

# where the ranks run: g GPUs (the first of those visible), share ranks on the busiest
g=$((ngpu < K ? ngpu : K))
mps=""
if [ "$g" -lt "$K" ]; then
    [ $distinct = 0 ] || skip "$K GPUs, this machine has $ngpu$why"
    if [ $nomps = 0 ]; then
        mps=$(mps_pipe)
        [ -n "$mps" ] || skip "$K GPUs, or MPS to share $ngpu$why; no MPS daemon answers (the gpu_mps fixture starts one with nvidia-cuda-mps-control)"
    fi
fi
if [ "$K" -lt "$np" ] && [ "$ngpu" -gt "$K" ]; then # the test shares K GPUs on purpose: the first K
    if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
        CUDA_VISIBLE_DEVICES=$(echo "$CUDA_VISIBLE_DEVICES" | cut -d, -f1-"$K")
    else
        CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((K - 1)))
    fi
    export CUDA_VISIBLE_DEVICES
fi
used=$((np < g ? np : g))
share=$(((np + g - 1) / g))
# peer access and the link class between the GPUs the ranks use (one GPU: nvlink, as the component)
link=nvlink
for ((a = 0; a < used; a++)); do
    for ((b = a + 1; b < used; b++)); do
        [ "${access[$a-$b]:-no}" = yes ] || skip "peer access between GPUs $a and $b (gc3 maps its peers' memory)"
        [ "${atomics[$a-$b]:-no}" = yes ] || link=pcie
    done
done
budget=${blocks[0]}
for ((d = 1; d < used; d++)); do [ "${blocks[d]}" -lt "$budget" ] && budget=${blocks[d]}; done
budget=$((budget / share))

if [ $nomps = 1 ]; then
    export CUDA_MPS_PIPE_DIRECTORY=$mpsdir/none # no daemon there: these ranks run without MPS
elif [ -n "$mps" ]; then
    # mpirun's ranks on this node inherit the environment (a one-node test)
    export CUDA_MPS_PIPE_DIRECTORY=$mps
fi
# a stuck gc3 call reports itself (rank, block, step) before the limit kills it
export OMPI_MCA_coll_gc3_timeout=${OMPI_MCA_coll_gc3_timeout:-60}

# the plan lines of the patterns, as they run here
re='^(.*\(cuda backend, ([0-9]+) ranks, )([a-z]+)\): ([a-z_0-9]+) (Simple|LL|LL128), ([0-9]+) channel\(s\) x ([0-9]+) instance\(s\)$'
checked=()
for p in ${pats[@]+"${pats[@]}"}; do
    if [[ $p =~ $re ]]; then
        head="${BASH_REMATCH[1]}${BASH_REMATCH[3]}): ${BASH_REMATCH[4]} ${BASH_REMATCH[5]},"
        R=${BASH_REMATCH[2]} L=${BASH_REMATCH[3]} algo=${BASH_REMATCH[4]} proto=${BASH_REMATCH[5]}
        C=${BASH_REMATCH[6]} I=${BASH_REMATCH[7]}
        if [ "$L" != "$link" ]; then
            echo "gpu-test: NOTE: not checked here: '$p' (the GPUs' link class is $link)"
            continue
        fi
        fit=$("$B/gc3c" gen "$algo" --ranks "$R" --proto "$proto" --channels "$C" --instances "$I" \
              --max-blocks "$budget" -o /dev/null 2>&1) || fail "gc3c gen $algo --max-blocks $budget: $fit"
        if [[ $fit =~ narrowed\ from\ [0-9]+\ x\ [0-9]+\ to\ ([0-9]+)\ x\ ([0-9]+) ]]; then
            p="$head ${BASH_REMATCH[1]} channel(s) x ${BASH_REMATCH[2]} instance(s) (narrowed from $C x $I to fit $budget thread blocks per rank)"
        fi
    fi
    checked+=("$p")
done

where="$np rank(s) on $used GPU(s) (${name[0]}$([ "$used" -gt 1 ] && echo ", link $link"))"
[ "$share" -gt 1 ] && where="$where, $share per GPU $([ -n "$mps" ] && echo "through MPS ($mps)" || echo "without MPS")"
echo "gpu-test: $where; $budget thread blocks per rank; limit $limit s${CUDA_VISIBLE_DEVICES:+; CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES}"
tag="$B:$$"
kill_tagged "$B:" # an earlier test of this build killed by CTest itself (gpu tests run one at a time)
run=(timeout --verbose -k 5 "$limit" "$@") # says so when it kills
[ ${#checked[@]} -eq 0 ] && [ ${#pats[@]} -eq 0 ] || run=("$src/tests/mpi/expect-output.sh" ${checked[@]+"${checked[@]}"} -- "${run[@]}")
if [ "${GC3_GPU_TEST_DRYRUN:-0}" = 1 ]; then
    for p in ${checked[@]+"${checked[@]}"}; do echo "gpu-test: would check: $p"; done
    echo "gpu-test: would run: $*"
    [ $ucxcuda = 0 ] || echo "gpu-test: with LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
    echo "gpu-test: with CUDA_MPS_PIPE_DIRECTORY=${CUDA_MPS_PIPE_DIRECTORY:-} CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-}${GC3_TEST_PYTHON:+ GC3_TEST_PYTHON=$GC3_TEST_PYTHON PYTHONPATH=${PYTHONPATH:-}}"
    exit 0
fi
# (stdin: timeout puts the command in a process group of its own, which must not read a terminal)
GC3_GPU_TEST_TAG=$tag "${run[@]}" </dev/null
rc=$?
kill_tagged "$tag"
if [ $rc -eq $SKIP ]; then
    echo "FAIL: gpu-test: the command itself exited with $SKIP (not a skip)"
    rc=1
fi
exit $rc
