#!/usr/bin/env bash
# mpich-coll.sh: MPICH's collective test suite (test/mpi/coll) against the Open MPI in use: stock,
# through gc3 with the host backend, and through gc3 on device memory (issue 55). Usage: --help.
# No MPICH code is in this repository: the script builds from an MPICH tree you fetched, in a
# scratch folder outside the repository.
set -uo pipefail

usage() {
    cat <<'EOF'
NAME:
    mpich-coll.sh - MPICH's collective test suite, stock Open MPI against gc3

USAGE:
    contrib/mpich-coll.sh --mpich DIR [--build DIR] [--gc3-build DIR] [--ways stock,host,device]
                          [--np-max N] [--timeout S] [--filter REGEX] [--out FILE.md]
                          [--strictmpi] [--list]
    contrib/mpich-coll.sh --help

DESCRIPTION:
    Builds MPICH's collective tests (test/mpi/coll, with test/mpi/util's mtest and test/mpi/dtpools)
    from a fetched MPICH source tree with the Open MPI in use (mpicc), each C file compiled directly
    (no MPICH configure: the headers it and MPICH's autogen would write, mpitestconf.h,
    dtpoolsconf.h and mtest_mpix.h, are generated in the build folder). Against Open MPI 4.1,
    mtest_mpix.h maps MPI-4's persistent collectives (MPI_Bcast_init, ...) onto Open MPI's MPIX
    extension pcollreq, as MPICH's maps upcoming functions onto MPIX names, and the tests are
    compiled with -DOMPI_OMIT_MPI1_COMPAT_DECLS=0 (opsum and opprod call MPI_Errhandler_set, which
    Open MPI's library has and its mpi.h hides). A program that does not build against the MPI in
    use (coll_large needs MPI-4's large-count functions) is "n/b" in every way. The build is cached
    (make): a second run only recompiles what changed. Nothing is written into the MPICH tree or
    into this repository.

    It then expands the testlists (coll/testlist.in, coll/testlist.gpu) into runs as MPICH's
    runtests would: "program ranks arg=A arg=B env=K=V timeLimit=S mem=GB xfail=WHY strict=B ..."
    gives "mpirun -np ranks [-x K=V] program A B". Lines with more than --np-max ranks are left out,
    except in testlist.gpu, where a program whose every line asks more (reduce 5 and 7, bcast_gpu,
    alltoall_gpu, allgather_gpu, allgatherv_gpu 6) runs its line of fewest ranks with --np-max
    ranks (noted "ranks: 6 in testlist.gpu"); each testlist.gpu line of MPICH's mixed memory types
    (-memtype=all: even ranks host, pinned, device in turn, odd ranks device) is followed by the
    same test with every rank on device, managed and pinned memory (-evenmemtype=K -oddmemtype=K
    with K = device, shared, reg_host; one run per count of a -counts= list, as -count=N), noted
    "added". A line's mem= above MPITEST_MEMORY_TOTAL GB (default 4, as runtests) is "skip"; xfail=,
    strict=, hasgpu=, mpiversion=, resultTest= and the like are written in the table's notes (an
    xfail line still runs). Each run has a time limit; a run that outlives it is killed, with every
    process it started (found by a marker in their environment), and counts as HANG.

    A run passes when it exits 0 and prints "No Errors" (MTest_Finalize, or run_mpitests.c's main),
    is "skip" when it prints "Test Skipped", FAIL otherwise; HANG when killed at its time limit.

WAYS:
    stock    plain mpirun of the Open MPI in use (MPIRUN, default mpirun) with --oversubscribe
             (and --allow-run-as-root as root) and --mca coll ^gc3: Open MPI's own collectives,
             the baseline of the gc3 ways: it runs testlist.in's lines with host (or alone) and
             testlist.gpu's with device.
    host     GC3_BUILD/contrib/gc3-mpirun --mca coll_gc3_backend host: gc3 on host buffers.
    device   GC3_BUILD/contrib/gc3-mpirun (gc3's GPU path), on a machine with an NVIDIA GPU.
    stock and host run the lines of testlist.in and those of testlist.gpu whose memory types
    (-memtype=, -evenmemtype=, -oddmemtype=) are all "host", with mtest built for host memory only.
    device runs every line of testlist.gpu with mtest built with CUDA (HAVE_CUDA, -lcudart from
    CUDA_HOME, default /usr/local/cuda), memory types as testlist.gpu writes them (device, reg_host
    = pinned, shared = managed, all, ...). Their baseline, in the stock column ("(host memory)"):
    the same test on stock Open MPI with every rank on host memory (-evenmemtype=host
    -oddmemtype=host in place of the memory types; a -memtype=all -counts=A,B line as -count=A,
    then -count=B), since a device-memory test must pass through gc3 wherever stock Open MPI
    passes it on host memory (a baseline command that ran already for another line is not run
    again). When ranks outnumber the GPUs, device runs share them through MPS: a daemon that
    answers at CUDA_MPS_PIPE_DIRECTORY (default /tmp/nvidia-mps) is used, otherwise one is
    started in the build folder and stopped at the end.

OPTIONS:
    --mpich DIR        the MPICH source tree: its top folder (DIR/test/mpi/coll) or DIR = test/mpi
                       itself (default: $MPICH_DIR). A sparse checkout of test/mpi is enough, or a
                       copy of its folders coll, util, include and dtpools (1.3 MB) that is not a
                       git checkout: then DIR/COMMIT names MPICH's commit for the table.
    --build DIR        scratch build folder, outside this repository (default: $GC3_MPICH_BUILD,
                       else ${TMPDIR:-/tmp}/gc3-mpich-coll). Logs of every run: DIR/logs/WAY/.
    --gc3-build DIR    gc3's build folder, whose contrib/gc3-mpirun runs the gc3 ways
                       (default: $GC3_BUILD, else this repository's build/)
    --ways LIST        comma-separated, of stock, host, device (default: stock,host)
    --np-max N         leave out testlist lines of more than N ranks (default: 4; testlist.gpu's
                       programs that have no such line run with N ranks: DESCRIPTION)
    --timeout S        time limit of one run in seconds (default: 60; a line's timeLimit= when larger)
    --filter REGEX     only runs whose "program ranks args" matches the extended regex REGEX
    --out FILE.md      write the markdown table to FILE.md too (it always goes to stdout and to
                       BUILD/result.md)
    --strictmpi        build with USE_STRICT_MPI (MPICH's --enable-strictmpi: the op* tests leave out
                       optional datatypes) and skip lines marked strict=false
    --list             print the runs each way would make, build nothing, run nothing
    -h, --help         this text

OUTPUT:
    A markdown table, one row per run (test with its ranks and arguments) and one column per way:
    pass, FAIL, HANG, skip, n/b (not built), or "-" (not run in that way). Then the totals per way,
    and the regressions: each run that passes on stock and does not pass in a gc3 way, with the
    command line that reproduces it. Progress goes to stderr.

EXIT STATUS:
    0 when every run that passes on stock passes in each gc3 way asked for (without stock in
    --ways, every run of a gc3 way must pass); 1 otherwise; 2 on a usage or build error.

ENVIRONMENT:
    MPICH_DIR, GC3_MPICH_BUILD, GC3_BUILD    defaults of --mpich, --build, --gc3-build
    MPICC (default mpicc), MPIRUN (default mpirun), CUDA_HOME (default /usr/local/cuda)
    MPITEST_MEMORY_TOTAL    GB a run may use (mem= above it: skip; default 4, as MPICH's runtests)

EXAMPLES:
    # MPICH's test/mpi only, from GitHub (about 140 MB with the history of those files):
    git clone --filter=blob:none --no-checkout https://github.com/pmodels/mpich /work/mpich-src
    git -C /work/mpich-src sparse-checkout set test/mpi && git -C /work/mpich-src checkout
    # stock Open MPI against gc3's host backend, every line of 4 ranks or fewer:
    contrib/mpich-coll.sh --mpich /work/mpich-src --ways stock,host
    # only the bcast lines, with a shorter time limit, table into a file:
    contrib/mpich-coll.sh --mpich /work/mpich-src --filter '^bcast ' --timeout 30 --out /tmp/b.md
    # on a GPU machine: the device-memory lists too, up to 6 ranks (bcast_gpu, alltoall_gpu, ...):
    contrib/mpich-coll.sh --mpich /work/mpich-src --ways stock,host,device --np-max 6
    # a GPU machine without network: carry a copy of test/mpi's four folders in an ignored folder
    # of the working tree (.peers/ listed in .git/info/exclude), with the commit beside it
    mkdir -p .peers/mpich-src/test/mpi
    git -C /work/mpich-src rev-parse HEAD > .peers/mpich-src/COMMIT
    cp -a /work/mpich-src/test/mpi/{coll,util,include,dtpools} .peers/mpich-src/test/mpi/
    # there, gc3 built with CUDA in build/, 4 ranks sharing the GPU through MPS (the script's):
    contrib/mpich-coll.sh --mpich .peers/mpich-src --build /tmp/mpich-build --ways stock,device
EOF
}

die() { echo "mpich-coll.sh: $*" >&2; exit 2; }
say() { echo "mpich-coll.sh: $*" >&2; }

src=$(cd "$(dirname "$0")/.." && pwd)
mpich=${MPICH_DIR:-}
build=${GC3_MPICH_BUILD:-${TMPDIR:-/tmp}/gc3-mpich-coll}
gc3_build=${GC3_BUILD:-$src/build}
ways=stock,host
np_max=4
timeout_s=60
filter=
out=
strictmpi=0
list_only=0

while [ $# -gt 0 ]; do
    opt=$1
    val=
    case $opt in
    --*=*) val=${opt#*=}; opt=${opt%%=*};;
    esac
    need() {
        if [ -z "$val" ]; then
            [ $# -ge 2 ] && [[ $2 != --* ]] || die "$opt needs a value"
            val=$2
            shifts=2
        fi
    }
    shifts=1
    case $opt in
    -h | --help) usage; exit 0;;
    --mpich) need "$@"; mpich=$val;;
    --build) need "$@"; build=$val;;
    --gc3-build) need "$@"; gc3_build=$val;;
    --ways) need "$@"; ways=$val;;
    --np-max) need "$@"; np_max=$val;;
    --timeout) need "$@"; timeout_s=$val;;
    --filter) need "$@"; filter=$val;;
    --out) need "$@"; out=$val;;
    --strictmpi) strictmpi=1;;
    --list) list_only=1;;
    -*) die "unknown option $opt (mpich-coll.sh --help lists the options)";;
    *) die "unexpected argument $1 (mpich-coll.sh --help lists the options)";;
    esac
    shift $shifts
done

[[ $np_max =~ ^[0-9]+$ ]] || die "--np-max: a number, not $np_max"
[[ $timeout_s =~ ^[0-9]+$ ]] && [ "$timeout_s" -gt 0 ] || die "--timeout: seconds, not $timeout_s"
declare -A want=()
IFS=, read -r -a way_list <<< "$ways"
for w in "${way_list[@]}"; do
    case $w in stock | host | device) want[$w]=1;; *) die "--ways: stock, host or device, not '$w'";; esac
done
[ ${#want[@]} -gt 0 ] || die "--ways: none given"
way_order=()
for w in stock host device; do [ -z "${want[$w]:-}" ] || way_order+=("$w"); done

# ---- the MPICH tree -------------------------------------------------------------------------
[ -n "$mpich" ] || die "no MPICH tree: give --mpich DIR (or MPICH_DIR); --help says how to fetch one"
if [ -d "$mpich/test/mpi/coll" ]; then
    T=$(cd "$mpich/test/mpi" && pwd)
elif [ -d "$mpich/coll" ] && [ -d "$mpich/util" ]; then
    T=$(cd "$mpich" && pwd)
else
    die "$mpich has neither test/mpi/coll nor coll/: not an MPICH source tree (or test/mpi of one)"
fi
for f in coll/testlist.in util/mtest.c util/mtest_common.c util/mtest_single.c util/run_mpitests.c \
    include/mpitest.h dtpools/include/dtpools.h dtpools/src/dtpools.c; do
    [ -f "$T/$f" ] || die "$T/$f is missing: the MPICH tree is incomplete"
done
# MPICH's commit: its git checkout's HEAD; a copy that is no checkout (test/mpi carried to a
# machine without network, perhaps inside another repository such as this one, whose HEAD is not
# MPICH's) names it in a file COMMIT at its top (DIR/COMMIT) or in test/mpi
mpich_top=$(cd "$T/../.." && pwd -P)
git_top=$(git -C "$T" rev-parse --show-toplevel 2>/dev/null || true)
if [ -n "$git_top" ] && [ "$(cd "$git_top" && pwd -P)" != "$(cd "$src" && pwd -P)" ] &&
    [ -e "$git_top/test/mpi/coll/testlist.in" ]; then
    mpich_commit=$(git -C "$T" rev-parse HEAD 2>/dev/null || echo "unknown")
    mpich_dirty=$(git -C "$T" status --porcelain -- . 2>/dev/null | head -1)
    [ -z "$mpich_dirty" ] || mpich_commit="$mpich_commit (with local changes)"
elif [ -s "$mpich_top/COMMIT" ] || [ -s "$T/COMMIT" ]; then
    mpich_commit="$(head -1 "$mpich_top/COMMIT" 2>/dev/null || head -1 "$T/COMMIT") (a copy, commit from its COMMIT file)"
else
    mpich_commit="unknown (not a git checkout, no COMMIT file)"
fi

# ---- the build folder: outside this repository ------------------------------------------------
build=$(realpath -m "$build")
repo=$(cd "$src" && pwd -P)
case $build/ in "$repo"/*) die "--build $build is inside this repository ($repo): give a scratch folder outside it";; esac
case $build/ in "$(cd "$T" && pwd -P)"/*) die "--build $build is inside the MPICH tree: give a folder outside it";; esac
mkdir -p "$build" || die "cannot create $build"
# one run at a time in a build folder (its runs list, logs and table are shared)
exec 9>"$build/.lock"
flock -n 9 || die "another mpich-coll.sh runs in $build: wait for it, or give another --build"

MPICC=${MPICC:-mpicc}
MPIRUN=${MPIRUN:-mpirun}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
gc3_mpirun=$gc3_build/contrib/gc3-mpirun
if [ -n "${want[host]:-}${want[device]:-}" ] && [ $list_only = 0 ]; then
    [ -x "$gc3_mpirun" ] || die "$gc3_mpirun is missing: build gc3 (./contrib/quickstart.sh --setup-only) or give --gc3-build"
fi
mem_total=${MPITEST_MEMORY_TOTAL:-4}

# ---- expand the testlists -----------------------------------------------------------------------
# One run per line, fields separated by \037 (not whitespace: empty fields stay):
#   list  prog  np  args(space-separated)  envs(space-separated)  timeLimit  mem  notes  memkind
# memkind: host (every memory type host) or gpu.
runs_file=$build/runs.tsv
expand_lists() {
    local list
    for list in testlist.in testlist.gpu; do
        [ -f "$T/coll/$list" ] || continue
        awk -v list="$list" -v npmax="$np_max" -v strict="$strictmpi" -v memtot="$mem_total" '
        function emit(prog, np, args, envs, tl, mem, notes, kind) {
            printf "%s\037%s\037%s\037%s\037%s\037%s\037%s\037%s\037%s\n", list, prog, np, args, envs, tl, mem, notes, kind
        }
        # a testlist.gpu line of MPICH mixed memory types (-memtype=all: even ranks host, pinned,
        # device in turn, odd ranks device), then the same test with every rank on device, managed
        # (shared) and pinned (reg_host) memory: -evenmemtype=K -oddmemtype=K (the tests take
        # -memtype= host or all only), one run per count of a -counts= list (-count=N; -counts=
        # without -memtype=all would still iterate over memory types)
        function emit_gpu(j, np, notes,    a, n, w, rest, counts, nc, c, K, k, cl) {
            emit(P[j], np, A[j], E[j], TL[j], M[j], notes, KIND[j])
            if (A[j] !~ /(^| )-memtype=all( |$)/ || SKIPPED[j]) return
            n = split(A[j], w, " "); rest = ""; counts = ""
            for (k = 1; k <= n; k++) {
                if (w[k] == "-memtype=all") continue
                if (w[k] ~ /^-counts=/) { counts = substr(w[k], 9); continue }
                rest = rest (rest == "" ? "" : " ") w[k]
            }
            nc = (counts == "" ? 1 : split(counts, cl, ","))
            split("device shared reg_host", K, " ")
            KN["device"] = "device"; KN["shared"] = "managed (shared)"; KN["reg_host"] = "pinned (reg_host)"
            for (k = 1; k <= 3; k++)
                for (c = 1; c <= nc; c++)
                    emit(P[j], np, rest (rest == "" ? "" : " ") (counts == "" ? "" : "-count=" cl[c] " ") \
                         "-evenmemtype=" K[k] " -oddmemtype=" K[k], E[j], TL[j], M[j],
                         "added: every rank on " KN[K[k]] " memory (testlist.gpu has -memtype=all" \
                         (counts == "" ? "" : " -counts=" counts) ")" (notes == "" ? "" : "; " notes), "gpu")
        }
        { sub(/#.*/, ""); sub(/^[ \t]+/, ""); sub(/[ \t]+$/, "") }
        NF == 0 { next }
        /^!/ { next }
        {
            prog = $1; np = (NF >= 2 ? $2 : 1)
            if (np !~ /^[0-9]+$/) next
            args = ""; envs = ""; tl = ""; mem = ""; notes = ""; kind = "host"; skip = ""
            for (i = 3; i <= NF; i++) {
                k = $i; v = $i; sub(/=.*/, "", k); sub(/^[^=]*=/, "", v)
                if (k == "arg") {
                    args = args (args == "" ? "" : " ") v
                    if (v ~ /^-(memtype|evenmemtype|oddmemtype)=/) {
                        m = v; sub(/^[^=]*=/, "", m)
                        if (m != "host") kind = "gpu"
                    }
                } else if (k == "env") envs = envs (envs == "" ? "" : " ") v
                else if (k == "timeLimit") tl = v
                else if (k == "mem") { mem = v; if (v + 0 > memtot + 0) skip = "mem=" v " GB > " memtot " GB" }
                else { notes = notes (notes == "" ? "" : " ") $i
                       if (k == "strict" && tolower(v) == "false" && strict == 1) skip = "strict=false" }
            }
            if (skip != "") notes = notes (notes == "" ? "" : " ") "SKIP:" skip
            else if (mem != "") notes = notes (notes == "" ? "" : " ") "mem=" mem
            if (list != "testlist.gpu") {
                if (np + 0 > npmax + 0) next
                emit(prog, np, args, envs, tl, mem, notes, kind)
                next
            }
            # testlist.gpu: kept for END, which sees every line of a program
            nl++; P[nl] = prog; N[nl] = np; A[nl] = args; E[nl] = envs; TL[nl] = tl; M[nl] = mem
            NOTES[nl] = notes; KIND[nl] = kind; SKIPPED[nl] = (skip != "")
            if (np + 0 <= npmax + 0) fits[prog] = 1
            if (!(prog in least) || np + 0 < N[least[prog]] + 0) least[prog] = nl
        }
        END {
            # a program whose every line asks more than --np-max ranks (reduce 5 and 7, bcast_gpu 6,
            # ...) runs its line of fewest ranks with --np-max ranks (2 at least: every test of the
            # list takes any size from 2), rather than not at all
            for (j = 1; j <= nl; j++) {
                if (N[j] + 0 <= npmax + 0) emit_gpu(j, N[j], NOTES[j])
                else if (!(P[j] in fits) && least[P[j]] == j && npmax + 0 >= 2)
                    emit_gpu(j, npmax, (NOTES[j] == "" ? "" : NOTES[j] " ") "ranks: " N[j] " in testlist.gpu, run with " npmax " (--np-max)")
            }
        }' "$T/coll/$list"
    done
}
expand_lists > "$runs_file.all"
if [ -n "$filter" ]; then
    # match against "prog np args"
    while IFS=$'\037' read -r l p n a rest; do
        key="$p $n${a:+ $a}"
        [[ $key =~ $filter ]] && printf '%s\037%s\037%s\037%s\037%s\n' "$l" "$p" "$n" "$a" "$rest"
    done < "$runs_file.all" > "$runs_file"
else
    cp "$runs_file.all" "$runs_file"
fi
nruns=$(wc -l < "$runs_file")
[ "$nruns" -gt 0 ] || die "no testlist line left (--np-max $np_max${filter:+, --filter '$filter'})"

# which ways run a line, and with which build of mtest: host (no GPU support) or cuda
applies() { # WAY LIST KIND -> prints the flavor, or nothing when the way does not run the line
    local way=$1 list=$2 kind=$3
    case $way in
    stock)
        # testlist.in's lines: when the host way runs them (or stock alone is asked); every
        # testlist.gpu line when the device way runs it: its baseline, on host memory
        if [ "$list" = testlist.gpu ] && [ -n "${want[device]:-}" ]; then echo host
        elif [ "$kind" = host ] && { [ -n "${want[host]:-}" ] || [ -z "${want[device]:-}" ]; }; then echo host; fi;;
    host) [ "$kind" = host ] && echo host;;
    device) [ "$list" = testlist.gpu ] && echo cuda;;
    esac
}

if [ $list_only = 1 ]; then
    i=0
    while IFS=$'\037' read -r l p n a e _ _ notes kind; do
        i=$((i + 1))
        ws=()
        for w in "${way_order[@]}"; do [ -z "$(applies "$w" "$l" "$kind")" ] || ws+=("$w"); done
        printf '%3d  %-14s %s %s%s%s  [%s]%s\n' "$i" "$l" "$p" "$n" "${a:+ $a}" "${e:+  env: $e}" \
            "${ws[*]:-none}" "${notes:+  ($notes)}"
    done < "$runs_file"
    exit 0
fi

# ---- build ----------------------------------------------------------------------------------------
flavors=()
while IFS=$'\037' read -r l p n a e _ _ notes kind; do
    for w in "${way_order[@]}"; do
        f=$(applies "$w" "$l" "$kind")
        [ -z "$f" ] || [[ " ${flavors[*]} " == *" $f "* ]] || flavors+=("$f")
    done
done < "$runs_file"
command -v "$MPICC" >/dev/null || die "$MPICC not found (set MPICC)"
command -v make >/dev/null || die "make not found"
ompi_version=$("$MPIRUN" --version 2>/dev/null | head -1)

write_if_changed() { # FILE: stdin into FILE unless FILE has it already (keeps make's cache)
    local tmp=$1.new
    cat > "$tmp"
    if cmp -s "$tmp" "$1"; then rm -f "$tmp"; else mv "$tmp" "$1"; fi
}

build_flavor() { # FLAVOR: host or cuda; builds BUILD/FLAVOR/bin/PROGRAM for every program of the runs
    local fl=$1 dir=$build/$1 progs p extra_cpp="" extra_lib=""
    mkdir -p "$dir/include" "$dir/obj" "$dir/bin"
    if [ "$fl" = cuda ]; then
        [ -f "$CUDA_HOME/include/cuda_runtime_api.h" ] || die "the device way needs CUDA: no $CUDA_HOME/include/cuda_runtime_api.h (set CUDA_HOME)"
        extra_cpp="-DHAVE_CUDA=1 -I$CUDA_HOME/include"
        extra_lib="-L$CUDA_HOME/lib64 -Wl,-rpath,$CUDA_HOME/lib64 -lcudart"
    fi
    # what MPICH's test/mpi/configure would define for an MPI that is not MPICH, on Linux
    write_if_changed "$dir/include/mpitestconf.h" <<EOF
/* Generated by gc3's contrib/mpich-coll.sh in place of MPICH test/mpi's configure. */
#define HAVE_STDARG_H 1
#define HAVE_STDLIB_H 1
#define HAVE_STRING_H 1
#define HAVE_UNISTD_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_RESOURCE_H 1
#define HAVE_GETRUSAGE 1
#define HAVE__BOOL 1
#define HAVE_LONG_DOUBLE 1
#define HAVE_LONG_LONG 1
#define HAVE_LONG_LONG_INT 1
#define HAVE_LONG_DOUBLE__COMPLEX 1
#define USE_LONG_DOUBLE_COMPLEX 1
#define HAVE_MPI_WIN_CREATE 1
#define HAVE_MPI_INIT_THREAD 1
#define HAVE_MPI_SPAWN 1
#define HAVE_MPI_IO 1
#define POINTERINT_t intptr_t
#define THREAD_PACKAGE_NAME THREAD_PACKAGE_POSIX
$([ $strictmpi = 1 ] && echo "#define USE_STRICT_MPI 1
#define ENABLE_STRICTMPI 1")
#include <stdint.h>
EOF
    # MPICH generates mtest_mpix.h to map upcoming MPI functions onto their MPIX names (outside
    # MPICH its autogen writes it empty). Open MPI 4.1 has MPI-4's persistent collectives
    # (MPI_Bcast_init, ...: the p_* tests) as its MPIX extension pcollreq: mapped here.
    {
        echo "/* Generated by gc3's contrib/mpich-coll.sh in place of MPICH's mtest_mpix.h. */"
        echo "#if defined(OPEN_MPI) && MPI_VERSION < 4 && defined(__has_include)"
        echo "#if __has_include(<mpi-ext.h>)"
        echo "#include <mpi-ext.h>"
        echo "#endif"
        echo "#endif"
        echo "#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && MPI_VERSION < 4"
        for f in Allgather Allgatherv Allreduce Alltoall Alltoallv Alltoallw Barrier Bcast Exscan \
            Gather Gatherv Reduce Reduce_scatter Reduce_scatter_block Scan Scatter Scatterv \
            Neighbor_allgather Neighbor_allgatherv Neighbor_alltoall Neighbor_alltoallv Neighbor_alltoallw; do
            echo "#define MPI_${f}_init MPIX_${f}_init"
        done
        echo "#endif"
    } | write_if_changed "$dir/include/mtest_mpix.h"
    # dtpools' configure header, which dtpools_internal.h includes as "../dtpoolsconf.h": found
    # through -I$dir/dtp/include
    mkdir -p "$dir/dtp/include"
    write_if_changed "$dir/dtp/dtpoolsconf.h" <<EOF
/* Generated by gc3's contrib/mpich-coll.sh in place of MPICH test/mpi/dtpools' configure. */
#define HAVE_STDLIB_H 1
#define HAVE_STRING_H 1
#define HAVE_LIMITS_H 1
#define HAVE_STDINT_H 1
#define HAVE_SYS_TYPES_H 1
#define HAVE_STRDUP 1
#define HAVE_MEMSET 1
EOF
    # the programs of the runs some way asked for makes in this flavor
    progs=$(while IFS=$'\037' read -r l p n a e _ _ notes kind; do
        for w in "${way_order[@]}"; do [ "$(applies "$w" "$l" "$kind")" != "$fl" ] || { echo "$p"; break; }; done
    done < "$runs_file" | sort -u)
    {
        echo "# Generated by gc3's contrib/mpich-coll.sh: MPICH's test/mpi/coll against $MPICC ($fl)"
        echo "T := $T"
        echo "CC := $MPICC"
        echo "CPPFLAGS := -I$dir/include -I\$(T)/include -I\$(T)/dtpools/include -I$dir/dtp/include -DOMPI_OMIT_MPI1_COMPAT_DECLS=0 $extra_cpp"
        echo "CFLAGS := -O2 -g -w"
        echo "LIBS := $extra_lib -lm"
        echo "HDRS := Makefile $dir/include/mpitestconf.h $dir/include/mtest_mpix.h $dir/dtp/dtpoolsconf.h \$(wildcard \$(T)/include/*.h \$(T)/dtpools/include/*.h)"
        echo "MTEST := obj/mtest.o obj/mtest_common.o obj/mtest_single.o obj/dtypes.o \\"
        echo "    \$(patsubst \$(T)/dtpools/src/%.c,obj/dtp_%.o,\$(wildcard \$(T)/dtpools/src/*.c))"
        echo "PROGS := $(for p in $progs; do printf 'bin/%s ' "$p"; done)"
        echo "all: \$(PROGS)"
        echo "obj/%.o: \$(T)/util/%.c \$(HDRS) ; \$(CC) \$(CPPFLAGS) \$(CFLAGS) -c \$< -o \$@"
        echo "obj/dtp_%.o: \$(T)/dtpools/src/%.c \$(HDRS) ; \$(CC) \$(CPPFLAGS) \$(CFLAGS) -c \$< -o \$@"
        echo "obj/coll_%.o: \$(T)/coll/%.c \$(HDRS) ; \$(CC) \$(CPPFLAGS) \$(CFLAGS) -c \$< -o \$@"
        echo "libmtest.a: \$(MTEST) ; rm -f \$@ && ar rcs \$@ \$^"
        for p in $progs; do
            [ -f "$T/coll/$p.c" ] || { echo "bin/$p: ; @echo 'no $T/coll/$p.c' >&2; false"; continue; }
            # a test without main() defines run(): util/run_mpitests.c's main (built without
            # MULTI_TESTS) calls it, as MPICH's per-test Makefile_mpitests.mk links it
            if grep -qE '^[[:space:]]*int[[:space:]]+main[[:space:]]*\(' "$T/coll/$p.c"; then
                echo "bin/$p: obj/coll_$p.o libmtest.a ; \$(CC) \$(CFLAGS) \$^ \$(LIBS) -o \$@"
            else
                echo "bin/$p: obj/coll_$p.o obj/run_mpitests.o libmtest.a ; \$(CC) \$(CFLAGS) \$^ \$(LIBS) -o \$@"
            fi
        done
    } | write_if_changed "$dir/Makefile"
    say "building MPICH's coll tests ($fl) in $dir"
    if ! make -C "$dir" -k -j "$(nproc)" >"$dir/make.log" 2>&1; then
        say "some programs did not build against $MPICC (n/b in the table; $dir/make.log says why):" \
            "$(sed -n 's|^make: \*\*\* \[Makefile:[0-9]*: bin/\([^]]*\)\].*|\1|p' "$dir/make.log" | sort -u | tr '\n' ' ')"
        grep -E ': error:' "$dir/make.log" | grep -v collect2 | head -5 >&2
    fi
}
for fl in "${flavors[@]}"; do build_flavor "$fl"; done

# ---- run ------------------------------------------------------------------------------------------
root_flag=()
[ "$(id -u)" = 0 ] && root_flag=(--allow-run-as-root)
way_cmd() { # WAY: the launcher's words, into the array cmd
    case $1 in
    stock) cmd=("$MPIRUN" --oversubscribe "${root_flag[@]}" --mca coll ^gc3);;
    host) cmd=("$gc3_mpirun" --mca coll_gc3_backend host);;
    device) cmd=("$gc3_mpirun" "${mps_flag[@]}");;
    esac
}

# MPS for the device way when ranks outnumber the GPUs
mps_flag=()
mps_ours=""
cleanup() {
    kill_job
    if [ -n "$mps_ours" ]; then
        mps_daemon_quit "$mps_ours" ||
            say "the MPS daemon started for the run still answers; stop it: echo quit | CUDA_MPS_PIPE_DIRECTORY=$mps_ours nvidia-cuda-mps-control"
    fi
}
job_tag=""
kill_job() { # every process still carrying this job's marker in its environment (ranks orphaned by a killed mpirun)
    [ -n "$job_tag" ] || return 0
    local f pid pids=()
    for f in $(grep -lzx "GC3_MPICH_COLL_JOB=$job_tag" /proc/[0-9]*/environ 2>/dev/null); do
        pid=${f#/proc/}; pid=${pid%/environ}
        [ "$pid" != $$ ] && pids+=("$pid")
    done
    [ ${#pids[@]} = 0 ] || kill -KILL "${pids[@]}" 2>/dev/null
    return 0
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
if [ -n "${want[device]:-}" ]; then
    gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
    [ "${gpus:-0}" -gt 0 ] || say "WARNING: no GPU seen by nvidia-smi: the device way will fail"
    maxnp=$(awk -F'\037' '$1 == "testlist.gpu" && $3 > m { m = $3 } END { print m + 0 }' "$runs_file")
    if [ "${gpus:-0}" -gt 0 ] && [ "$maxnp" -gt "$gpus" ]; then
        # shellcheck source=contrib/mps-daemon.sh
        source "$src/contrib/mps-daemon.sh"
        d=${CUDA_MPS_PIPE_DIRECTORY:-/tmp/nvidia-mps}
        if mps_answers "$d"; then
            say "MPS: using the daemon at $d ($maxnp ranks on $gpus GPU(s))"
        elif mps_daemon_start "$build/mps/pipe" "$build/mps/log"; then
            mps_ours=$build/mps/pipe d=$mps_ours
            say "MPS: daemon started at $d for the run ($maxnp ranks on $gpus GPU(s)); stopped at the end"
        else
            say "WARNING: MPS cannot be used (${mps_why:-}): ranks sharing a GPU are not on gc3's GPU path"
            d=""
        fi
        if [ -n "$d" ]; then export CUDA_MPS_PIPE_DIRECTORY=$d; mps_flag=(-x CUDA_MPS_PIPE_DIRECTORY); fi
    fi
fi

declare -A res=() why=() cmdline=() first_run=()
i=0
start_all=$SECONDS
# which gc3 ran: its component's checksum before and after (a rebuild during the run mixes versions)
gc3_so() {
    local so=${GC3_COMPONENT_DIR:-$gc3_build/component}/mca_coll_gc3.so
    [ -f "$so" ] || { echo "none"; return; }
    so=$(readlink -f "$so")
    echo "$so, sha256 $(sha256sum "$so" | cut -c1-12), built $(date -u -r "$so" '+%Y-%m-%d %H:%M:%S UTC')"
}
gc3_before=$(gc3_so)
gc3_src=$(git -C "$src" describe --always --dirty 2>/dev/null || echo unknown)
while IFS=$'\037' read -r l p n a e tl _ notes kind; do
    i=$((i + 1))
    for w in "${way_order[@]}"; do
        fl=$(applies "$w" "$l" "$kind")
        [ -n "$fl" ] || { res[$i,$w]="-"; continue; }
        if [[ $notes == *SKIP:* ]]; then res[$i,$w]=skip; why[$i,$w]=${notes#*SKIP:}; continue; fi
        bin=$build/$fl/bin/$p
        way_cmd "$w"
        envargs=()
        for kv in $e; do envargs+=(-x "$kv"); done
        read -r -a argv <<< "$a"
        counts=""
        if [ "$w" = stock ] && [ "$kind" = gpu ]; then
            # the baseline of a device-memory line: the same test with every rank on host memory
            # (-evenmemtype=host -oddmemtype=host; -memtype= takes host or all only, and all with
            # -counts=A,B iterates over memory types even with -memtype=host: there, one run per
            # count, -count=A then -count=B, and the baseline passes when each does)
            mixed=0 bargv=()
            for k in "${!argv[@]}"; do
                case ${argv[k]} in
                -memtype=all) mixed=1;;
                -memtype=* | -evenmemtype=* | -oddmemtype=*) ;;
                *) bargv+=("${argv[k]}");;
                esac
            done
            argv=()
            for k in "${bargv[@]}"; do
                if [ $mixed = 1 ] && [[ $k == -counts=* ]]; then counts=${k#-counts=}; counts=${counts//,/ }
                else argv+=("$k"); fi
            done
            argv+=(-evenmemtype=host -oddmemtype=host)
        fi
        full=("${cmd[@]}" "${envargs[@]}" -np "$n" "$bin" "${argv[@]}")
        cmdline[$i,$w]="${full[*]}"
        if [ -n "$counts" ]; then
            cmdline[$i,$w]="for c in $counts; do ${full[*]} -count=\$c || break; done"
            full=(bash -c 'cs=$1; shift; for c in $cs; do "$@" -count="$c" || exit; done' count-loop "$counts" "${full[@]}")
        fi
        t=$timeout_s
        [[ $tl =~ ^[0-9]+$ ]] && [ "$tl" -gt "$t" ] && t=$tl
        mkdir -p "$build/logs/$w" "$build/run"
        log=$build/logs/$w/$(printf '%03d' "$i")-$p.log
        same=${first_run[$w|${cmdline[$i,$w]}]:-}
        if [ -n "$same" ]; then
            # the same command ran already (the host-memory baseline of lines that differ only in
            # memory types): its result, not a second run
            res[$i,$w]=${res[$same,$w]}; why[$i,$w]=${why[$same,$w]:-}
            [ "${res[$i,$w]}" != pass ] || why[$i,$w]="the same command as #$same"
            echo "# the same command as #$same: ${cmdline[$i,$w]}" > "$log"
        elif [ ! -x "$bin" ]; then
            # not built against this MPI (e.g. MPI-4 functions Open MPI 4.1 lacks): no way runs it
            res[$i,$w]=n/b
            why[$i,$w]="not built: $(grep -m1 -E "coll/$p\.c:[0-9]+(:[0-9]+)?: (error|undefined reference)" \
                "$build/$fl/make.log" | sed -e 's|.*/coll/||' -e 's/[`'"'"']//g' | cut -c1-120)"
            echo "${why[$i,$w]}" > "$log"
        else
            job_tag=$$-$i-$w
            t0=$SECONDS
            ( cd "$build/run" && echo "# ${full[*]}" &&
              GC3_MPICH_COLL_JOB=$job_tag exec timeout -k 10 "$t" "${full[@]}" ) >"$log" 2>&1 </dev/null
            rc=$?
            kill_job
            job_tag=""
            if [ $rc = 124 ] || [ $rc = 137 ]; then
                res[$i,$w]=HANG; why[$i,$w]="killed after $t s"
            elif grep -qE '^[[:space:]]*No [Ee]rrors[[:space:]]*$' "$log" && [ $rc = 0 ]; then
                res[$i,$w]=pass
            elif grep -qE '^[[:space:]]*Test Skipped[[:space:]]*$' "$log"; then
                res[$i,$w]=skip; why[$i,$w]="Test Skipped"
            else
                res[$i,$w]=FAIL
                why[$i,$w]="exit $rc: $(grep -vE '^#|^[[:space:]]*$|^[[:space:]]*No [Ee]rrors[[:space:]]*$' "$log" | grep -m1 -iE 'error|abort|signal|fail|found|mismatch' | cut -c1-160)"
            fi
            printf 'mpich-coll.sh: [%d/%d] %-6s %-4s %s (%ds)\n' "$i" "$nruns" "$w" "${res[$i,$w]}" \
                "$p $n${a:+ $a}" "$((SECONDS - t0))" >&2
            first_run[$w|${cmdline[$i,$w]}]=$i
        fi
    done
done < "$runs_file"

# ---- the table ---------------------------------------------------------------------------------
declare -A label=([stock]="stock Open MPI" [host]="gc3 host backend" [device]="gc3 device")
table=$build/result.md
regressions=0
{
    echo "MPICH's collective tests (test/mpi/coll, MPICH $mpich_commit) against $ompi_version;"
    echo "gc3 from $gc3_build (source $src at $gc3_src); $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $((SECONDS - start_all)) s."
    if [ -n "${want[host]:-}${want[device]:-}" ]; then
        echo "gc3's component: $gc3_before."
        if [ -n "${want[device]:-}" ]; then
            cuda_aware=$(ompi_info --parsable --all 2>/dev/null | sed -n 's/^mca:mpi:base:param:mpi_built_with_cuda_support:value://p')
            echo "Stock Open MPI built with CUDA support: ${cuda_aware:-unknown} (the baseline of the device-memory lines)."
        fi
        gc3_after=$(gc3_so)
        [ "$gc3_after" = "$gc3_before" ] ||
            echo "**WARNING: gc3's component changed during the run** (now $gc3_after): the gc3 columns mix two builds."
    fi
    echo "Runs: testlists' lines of at most $np_max ranks${filter:+ matching /$filter/}; time limit ${timeout_s} s (a line's timeLimit= when larger)."
    echo
    hdr="| # | test (ranks, arguments) |"
    sep="|---|---|"
    for w in "${way_order[@]}"; do hdr+=" ${label[$w]} |"; sep+="---|"; done
    echo "$hdr notes |"
    echo "$sep---|"
    i=0
    unrun=0
    while IFS=$'\037' read -r l p n a e _ _ notes kind; do
        i=$((i + 1))
        row="| $i | \`$p $n${a:+ $a}\`${e:+ (env $e)}$([ "$l" = testlist.gpu ] && echo " *(gpu list)*") |"
        ran=0 nb=""
        for w in "${way_order[@]}"; do
            r=${res[$i,$w]}
            [ "$r" = "-" ] || ran=1
            [ "$r" = n/b ] && nb=${why[$i,$w]}
            case $r in FAIL | HANG) r="**$r**";; esac
            [ "$w" = stock ] && [ "$kind" = gpu ] && [ "$r" != "-" ] && r+=" (host memory)"
            row+=" $r |"
        done
        [ $ran = 1 ] || { unrun=$((unrun + 1)); continue; }
        notes=${notes/SKIP:/skip: }
        [ -z "$nb" ] || notes="${notes:+$notes; }$nb"
        echo "$row ${notes//|/\\|} |"
    done < "$runs_file"
    [ $unrun = 0 ] || { echo; echo "$unrun more testlist lines are for no way asked here (testlist.in's: --ways ...,host; device memory: --ways ...,device)."; }
    echo
    echo "| way | runs | pass | FAIL | HANG | skip | not built |"
    echo "|---|---|---|---|---|---|---|"
    for w in "${way_order[@]}"; do
        declare -A c=([pass]=0 [FAIL]=0 [HANG]=0 [skip]=0 [n/b]=0)
        tot=0
        for ((j = 1; j <= nruns; j++)); do
            r=${res[$j,$w]}
            [ "$r" = "-" ] && continue
            tot=$((tot + 1)); c[$r]=$((c[$r] + 1))
        done
        echo "| ${label[$w]} | $tot | ${c[pass]} | ${c[FAIL]} | ${c[HANG]} | ${c[skip]} | ${c[n/b]} |"
        unset c
    done
    echo
    reg=""
    for w in "${way_order[@]}"; do
        [ "$w" = stock ] && continue
        for ((j = 1; j <= nruns; j++)); do
            r=${res[$j,$w]}
            case $r in - | pass | n/b) continue;; esac
            base=${res[$j,stock]:-none}
            if [ "$base" = pass ] || { [ -z "${want[stock]:-}" ] && [ "$r" != skip ]; }; then
                regressions=$((regressions + 1))
                reg+="- #$j ${label[$w]}: **$r** (${why[$j,$w]:-}; stock: ${base})"$'\n'
                reg+="  \`${cmdline[$j,$w]:-}\`"$'\n'
            fi
        done
    done
    if [ -n "$reg" ]; then
        if [ -n "${want[stock]:-}" ]; then echo "Runs that pass on stock Open MPI and not through gc3:"
        else echo "Runs that do not pass through gc3 (stock Open MPI not run):"; fi
        echo
        printf '%s' "$reg"
    else
        echo "Through gc3: every run that passes on stock Open MPI passes."
    fi
    other=""
    for ((j = 1; j <= nruns; j++)); do
        for w in "${way_order[@]}"; do
            r=${res[$j,$w]}
            case $r in FAIL | HANG) ;; *) continue;; esac
            [ "$w" = stock ] || [ "${res[$j,stock]:-none}" != pass ] || continue
            [ "$w" != stock ] && [ -z "${want[stock]:-}" ] && continue
            other+="- #$j ${label[$w]}: $r (${why[$j,$w]:-})"$'\n'"  \`${cmdline[$j,$w]:-}\`"$'\n'
        done
    done
    if [ -n "$other" ]; then
        echo
        echo "Failures that are not regressions (stock Open MPI does not pass them either):"
        echo
        printf '%s' "$other"
    fi
    echo
    echo "Logs: $build/logs/WAY/NNN-PROGRAM.log (the first line is the command)."
} > "$table"
cat "$table"
[ -z "$out" ] || cp "$table" "$out" || die "cannot write $out"
[ $regressions = 0 ]
