/* gc3_bench: an OSU-style sweep that measures, per size and in one run, the same collective
 * several ways:
 *
 *   gc3       MPI_Allreduce / MPI_Alltoall on device buffers, whatever coll component takes the
 *             call: the header says which (Open MPI's MCA variables read through MPI_T), and the
 *             column is labelled "mpi" where coll/gc3 does not run it
 *   nccl      ncclAllReduce / ncclAlltoAll on the same buffers, each call followed by
 *             cudaStreamSynchronize (an MPI call is blocking: nccl-tests' -z 1 regime); libnccl is
 *             loaded at run time, so any NCCL-compatible library (MSCCL++'s) can be given with
 *             --nccl-lib
 *   nccl-reg  the same on buffers from ncclMemAlloc registered with ncclCommRegister (NCCL >= 2.19;
 *             nccl-tests -R 1)
 *   nccl-sym  the same on buffers from ncclMemAlloc in symmetric windows (ncclCommWindowRegister,
 *             NCCL_WIN_COLL_SYMMETRIC; NCCL >= 2.27; nccl-tests -R 2)
 *   staged    cudaMemcpy to pinned host memory, the MPI call on host buffers, cudaMemcpy back:
 *             what a user of a non-CUDA-aware MPI has to write
 *   ompi      the same MPI call on a duplicate of MPI_COMM_WORLD made with the info key
 *             ompi_comm_coll_preference=^gc3, on which Open MPI leaves coll/gc3 out: Open MPI's own
 *             collective (tuned, ...) on the same buffers, what the call costs without gc3. Host
 *             buffers; device buffers only where Open MPI says it is CUDA-aware
 *             (MPIX_Query_cuda_support(), every rank: its own device path, coll/cuda and UCX), else
 *             not measured, saying why (a stock Open MPI crashes on device pointers)
 *
 * Usage (one rank per GPU; see usage() for the options).
 *
 * Conventions follow osu_allreduce / osu_alltoall / osu_bcast / osu_reduce: float32 (allreduce, reduce: sum;
 * bcast, reduce: root 0); the size is the
 * message size (allreduce: the buffer; alltoall: the bytes sent to each peer); each call is
 * timed alone, with an untimed barrier between calls; the latency printed is the average over
 * ranks of each rank's average. algbw = the bytes of a rank's send buffer / latency; busbw =
 * algbw * 2(R-1)/R (allreduce), (R-1)/R (alltoall) or 1 (bcast, reduce), as nccl-tests define them. -c checks each
 * method's result against a host computation after its timed calls. Sizes double from MIN to
 * MAX (K/M/G suffixes). Iterations default to 200 (100 above 1 MB, 20 above 64 MB), warm-up to
 * a tenth of that. --staged-max skips the (slow) staged path above that size. -d host (no GPU)
 * runs the MPI call and ompi on host buffers (gc3's host backend against Open MPI's own collective),
 * for CI; -d cuda on a machine where CUDA sees no GPU stops at once, saying so. A method the machine or the library
 * cannot run is skipped with a "# METHOD: not measured (why)" line; every rank decides alike.
 * --alternate COLL:BYTES (gc3 method only): each call, warm-up and timed, follows an untimed call of
 * that collective and size, right before it (no barrier between): where the two run on different
 * plans, every timed call is the first of its plan after another plan's (with coll_gc3_fifo_pool,
 * a hand-over of the FIFO pool); compare runs with and without the pool in one job. */
#include <mpi.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef GC3_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif
#include "gc3_mpi_util.h"
#include "gc3_mpi_compat.h"
#include "gc3_rules.h"
#include "gc3_runtime.h"
#include "gc3_topo.h"

enum { M_GC3, M_NCCL, M_NCCL_REG, M_NCCL_SYM, M_STAGED, M_OMPI, M_COUNT };
/* The collectives (-t); the rooted ones have their root at rank bench_root (--root). */
/* clang-format off */
enum {
    C_ALLREDUCE, C_ALLTOALL, C_BCAST, C_REDUCE, C_SCAN, C_EXSCAN, C_ALLGATHERV, C_ALLTOALLV, C_REDUCE_SCATTER,
    C_GATHERV, C_SCATTERV, C_COUNT
};
static const char *const coll_names[C_COUNT] = { "allreduce", "alltoall", "bcast", "reduce", "scan", "exscan",
                                                 "allgatherv", "alltoallv", "reduce_scatter", "gatherv", "scatterv" };
/* the collective whose plans a call runs on (coll_gc3_enable_<name>, the rules' name) */
static const char *const plan_names[C_COUNT] = { "allreduce", "alltoall", "bcast", "reduce", "scan", "exscan",
                                                 "allgather", "alltoall", "reduce_scatter_block", "gather",
                                                 "scatter" };
/* clang-format on */
#define IS_ROOTED(c) ((c) == C_BCAST || (c) == C_REDUCE || (c) == C_GATHERV || (c) == C_SCATTERV)
#define IS_V(c) ((c) >= C_ALLGATHERV)
static int               bench_root            = 0;
static const char *const method_names[M_COUNT] = {"gc3", "nccl", "nccl-reg", "nccl-sym", "staged", "ompi"};
#define IS_NCCL(m) ((m) == M_NCCL || (m) == M_NCCL_REG || (m) == M_NCCL_SYM)

/* The part of NCCL's ABI used here (nccl.h), so no NCCL headers are needed to build: the types
 * and the functions of NCCL 2.0 on, ncclAlltoAll (2.28), ncclMemAlloc/ncclMemFree and
 * ncclCommRegister/ncclCommDeregister (2.19), ncclCommWindowRegister/ncclCommWindowDeregister
 * (2.27; ncclWindow_t is a pointer). Those a library lacks are NULL. */
typedef struct {
    char internal[128];
} bench_nccl_id_t;
typedef void *bench_nccl_comm_t;
enum { BENCH_NCCL_FLOAT32 = 7, BENCH_NCCL_SUM = 0, BENCH_NCCL_WIN_COLL_SYMMETRIC = 0x01 };
static struct {
    void *lib;
    int   version;
    int (*get_version)(int *);
    int (*get_unique_id)(bench_nccl_id_t *);
    int (*comm_init_rank)(bench_nccl_comm_t *, int, bench_nccl_id_t, int);
    int (*comm_destroy)(bench_nccl_comm_t);
    int (*all_reduce)(const void *, void *, size_t, int, int, bench_nccl_comm_t, void *);
    int (*all_to_all)(const void *, void *, size_t, int, bench_nccl_comm_t, void *);
    int (*broadcast)(const void *, void *, size_t, int, int, bench_nccl_comm_t, void *);
    int (*reduce)(const void *, void *, size_t, int, int, int, bench_nccl_comm_t, void *);
    int (*send)(const void *, size_t, int, int, bench_nccl_comm_t, void *);
    int (*recv)(void *, size_t, int, int, bench_nccl_comm_t, void *);
    int (*group_start)(void);
    int (*group_end)(void);
    const char *(*error_string)(int);
    int (*mem_alloc)(void **, size_t);
    int (*mem_free)(void *);
    int (*comm_register)(bench_nccl_comm_t, void *, size_t, void **);
    int (*comm_deregister)(bench_nccl_comm_t, void *);
    int (*win_register)(bench_nccl_comm_t, void *, size_t, void **, int);
    int (*win_deregister)(bench_nccl_comm_t, void *);
    bench_nccl_comm_t comm;
} nccl;

/* The buffers of nccl-reg and nccl-sym: from ncclMemAlloc, registered once for the largest size
 * (as nccl-tests do); handle: what ncclCommRegister or ncclCommWindowRegister gave. */
static struct {
    void  *buf[2], *handle[2];
    size_t bytes;
} nreg[M_COUNT];

static int      rank, nranks, on_device = 1;
/* the v-collectives (IS_V): --skew, and this size's counts and displacements (floats) of this rank's call */
static int  skew;
/* --inplace: allreduce, scan and exscan called with MPI_IN_PLACE, the receive buffer holding the input */
static int  bench_inplace;
static int *v_scnt, *v_sdsp, *v_rcnt, *v_rdsp;

/* elements from rank q to rank r (allgatherv, reduce_scatter, gatherv, scatterv: rank q's segment, r unused) of a call of
 * count per segment: count, or with --skew count * 2((q + r) mod R + 1) / (R + 1) (from 2/(R+1) to
 * 2R/(R+1) times count, count on average) */
static int v_seg(int c, size_t count, int q, int r)
{
    const int k = c == C_ALLTOALLV ? (q + r) % nranks : q;
    return (int)(skew ? count * 2 * (size_t)(k + 1) / (size_t)(nranks + 1) : count);
}

/* this rank's counts and displacements (segments back to back, in rank order); the elements of its send and
 * receive buffers */
static void v_layout(int c, size_t count, size_t *in_p, size_t *out_p)
{
    size_t at_s = 0, at_r = 0;
    for (int q = 0; q < nranks; q++) {
        v_scnt[q] = c == C_ALLTOALLV                           ? v_seg(c, count, rank, q)
                    : c == C_REDUCE_SCATTER || c == C_SCATTERV ? v_seg(c, count, q, 0)
                                                               : 0;
        v_rcnt[q] = c == C_ALLTOALLV ? v_seg(c, count, q, rank) : v_seg(c, count, q, 0);
        v_sdsp[q] = (int)at_s;
        v_rdsp[q] = (int)at_r;
        at_s += (size_t)v_scnt[q];
        at_r += (size_t)v_rcnt[q];
    }
    *in_p  = c == C_ALLGATHERV || c == C_GATHERV ? (size_t)v_seg(c, count, rank, 0) : at_s;
    *out_p = c == C_REDUCE_SCATTER || c == C_SCATTERV ? (size_t)v_rcnt[rank] : at_r;
}
static MPI_Comm comm_ompi = MPI_COMM_NULL; /* the ompi method's: coll/gc3 left out of it */
/* --alternate: the untimed call before each call (its collective, elements per rank or per peer,
 * buffers) */
static struct {
    int    on, a2a;
    size_t count, bytes;
    void  *s, *r;
} alt;
#ifdef GC3_HAVE_CUDA
static cudaStream_t stream;
static cudaError_t  cuda_error; /* of run_once's last failed cudaStreamSynchronize */
#endif

static void die(const char *msg)
{
    if (rank == 0) {
        fprintf(stderr, "gc3_bench: %s\n", msg);
    }
    MPI_Finalize();
    exit(2);
}

/* -d cuda where CUDA sees no GPU (every rank decides alike): stop at once, saying so, before any
 * header or NCCL attempt (which would fail for the same reason, and the buffers after it). */
static void need_gpu(void)
{
    int  ok = 0, all = 0, first = 0;
    char err[256] = "";
#ifdef GC3_HAVE_CUDA
    int         ndev = 0;
    cudaError_t e    = cudaGetDeviceCount(&ndev);
    ok               = e == cudaSuccess && ndev > 0;
    gc3_snprintf_cut(err, sizeof(err), "%s", e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
#else
    gc3_snprintf_cut(err, sizeof(err), "this build of gc3_bench has no CUDA");
#endif
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!all) {
        int bad = ok ? nranks : rank;
        MPI_Allreduce(&bad, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (rank == first) { /* the first rank without one says why */
            fprintf(stderr, "gc3_bench: no GPU: rank %d finds no CUDA device (%s), and -d cuda (the default) measures "
                            "device buffers. On a machine without GPUs measure host buffers: -d host (with --mca "
                            "coll_gc3_backend host gc3 runs them, e.g. gc3-mpirun -np 2 --mca coll_gc3_backend host "
                            "gc3_bench -d host)\n", rank, err);
        }
        MPI_Finalize();
        exit(2);
    }
}

/* ---- which module runs the "gc3" column: Open MPI's MCA variables, read through MPI_T ---- */

/* An integer (or boolean, or enumerated) MCA variable by its full name: 1 and *value when it
 * exists; text (when given) the name of an enumerated value, else the number. */
static int cvar_get(const char *name, long long *value, char *text, size_t textlen)
{
    union {
        int                i;
        unsigned           u;
        long               l;
        unsigned long      ul;
        long long          ll;
        unsigned long long ull;
        _Bool              b;
        char               pad[64];
    } v;
    char              n[256], d[4], item[128];
    int               idx, verb, bind, scope, nl = sizeof(n), dl = sizeof(d), count = 0, ni = 0, il, iv, ok;
    MPI_Datatype      dt;
    MPI_T_enum        et;
    MPI_T_cvar_handle h;

    if (MPI_T_cvar_get_index(name, &idx) != MPI_SUCCESS ||
        MPI_T_cvar_get_info(idx, n, &nl, &verb, &dt, &et, d, &dl, &bind, &scope) != MPI_SUCCESS) {
        return 0;
    }
    if (dt != MPI_INT && dt != MPI_UNSIGNED && dt != MPI_LONG && dt != MPI_UNSIGNED_LONG && dt != MPI_LONG_LONG &&
        dt != MPI_UNSIGNED_LONG_LONG && dt != MPI_C_BOOL) {
        return 0; /* not an integer: never read into the union (a string's count is its length) */
    }
    if (MPI_T_cvar_handle_alloc(idx, NULL, &h, &count) != MPI_SUCCESS) {
        return 0;
    }
    memset(&v, 0, sizeof(v));
    ok = count == 1 && MPI_T_cvar_read(h, &v) == MPI_SUCCESS;
    MPI_T_cvar_handle_free(&h);
    if (!ok) {
        return 0;
    }
    *value = dt == MPI_INT ? v.i : dt == MPI_UNSIGNED ? (long long)v.u : dt == MPI_LONG ? v.l
           : dt == MPI_UNSIGNED_LONG ? (long long)v.ul : dt == MPI_LONG_LONG ? v.ll
           : dt == MPI_UNSIGNED_LONG_LONG ? (long long)v.ull : v.b;
    if (text != NULL) {
        snprintf(text, textlen, "%lld", *value);
        nl = sizeof(n);
        if (et != MPI_T_ENUM_NULL && MPI_T_enum_get_info(et, &ni, n, &nl) == MPI_SUCCESS) {
            for (int i = 0; i < ni; i++) {
                il = sizeof(item);
                if (MPI_T_enum_get_item(et, i, &iv, item, &il) == MPI_SUCCESS && iv == *value) {
                    snprintf(text, textlen, "%.*s", (int)textlen - 1, item);
                }
            }
        }
    }
    return 1;
}

/* The coll component other than gc3 with the highest priority among those that would take
 * MPI_Allreduce/MPI_Alltoall of MPI_COMM_WORLD here (every coll_NAME_priority variable, less
 * the components that never do: self only on communicators of one rank, inter only on
 * intercommunicators, sync and ftagree add to the collectives below them or only agree, han
 * steps aside within one node (5.0), cuda/accelerator only stage device buffers and pass host
 * ones through; and those whose coll_NAME_enable is false). -1 when none. */
static long long top_other_coll(int multinode, char *who, size_t wholen)
{
    long long best = -1, p, en;
    int       n = 0;

    MPI_T_cvar_get_num(&n);
    for (int i = 0; i < n; i++) {
        char         name[256], d[4], comp[64], var[96];
        int          nl = sizeof(name), dl = sizeof(d), verb, bind, scope;
        size_t       len;
        MPI_Datatype dt;
        MPI_T_enum   et;
        if (MPI_T_cvar_get_info(i, name, &nl, &verb, &dt, &et, d, &dl, &bind, &scope) != MPI_SUCCESS) {
            continue;
        }
        len = strlen(name);
        if (strncmp(name, "coll_", 5) != 0 || len <= 5 + 9 || strcmp(name + len - 9, "_priority") != 0 ||
            len - 14 >= sizeof(comp)) {
            continue;
        }
        memcpy(comp, name + 5, len - 14);
        comp[len - 14] = '\0';
        if (strchr(comp, '_') != NULL || !strcmp(comp, "gc3") || !strcmp(comp, "inter") || !strcmp(comp, "sync") ||
            !strcmp(comp, "ftagree") || (!strcmp(comp, "self") && nranks > 1) || (!strcmp(comp, "han") && !multinode) ||
            ((!strcmp(comp, "cuda") || !strcmp(comp, "accelerator")) && !on_device)) {
            continue;
        }
        snprintf(var, sizeof(var), "coll_%s_enable", comp);
        if (!cvar_get(name, &p, NULL, 0) || p < 0 || (cvar_get(var, &en, NULL, 0) && en == 0)) {
            continue;
        }
        p = p < 100 ? p : 100;
        if (p > best) {
            best = p;
            snprintf(who, wholen, "%s", comp);
        }
    }
    return best;
}

/* Whether coll/gc3 runs this benchmark's MPI calls on MPI_COMM_WORLD (1), and what the header says
 * either way. Open MPI stacks the coll components a communicator selects by priority, and the
 * highest one that provides a collective runs it; gc3 then runs device buffers on the GPU and
 * host buffers only with backend host. Read from Open MPI's own settings, however they were given
 * (--mca, OMPI_MCA_ variables, files); what a call then does is for coll_gc3_verbose 2 to say.
 * Collective: the verdict holds on every rank. */
static int gc3_column(const char *coll, int multinode, char *what, size_t len, char *other, size_t otherlen)
{
    char        backend[32] = "", who[64] = "", var[64], why[320] = "";
    long long   prio = 0, top, v = 0, max_bytes = 0;
    int         prov, mine, all, sure = 1; /* sure: gc3 certainly does not run it when why says so */

    snprintf(other, otherlen, "Open MPI's own coll components");
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &prov) != MPI_SUCCESS) {
        gc3_snprintf_cut(why, sizeof(why), "cannot tell: MPI_T is not available");
        sure = 0;
    } else {
        char      name[64];
        long long p = top_other_coll(multinode, name, sizeof(name));
        if (p >= 0) {
            gc3_snprintf_cut(other, otherlen, "coll/%s, priority %lld", name, p);
        }
        snprintf(var, sizeof(var), "coll_gc3_enable_%s", coll);
        if (!cvar_get("coll_gc3_priority", &prio, NULL, 0)) {
            gc3_snprintf_cut(why, sizeof(why), "component not loaded: no coll_gc3_priority in this MPI; run under gc3-mpirun, "
                                       "or add gc3's folder to mca_base_component_path");
        } else if (prio < 0) {
            gc3_snprintf_cut(why, sizeof(why), "coll_gc3_priority %lld disables it", prio);
        } else if ((top = top_other_coll(multinode, who, sizeof(who))) >= (prio < 100 ? prio : 100)) {
            /* Open MPI caps priorities at 100 and sorts equal ones in no set order */
            gc3_snprintf_cut(why, sizeof(why), "coll_gc3_priority %lld%s is %s %s's %lld%s", prio,
                     prio > 100 ? " (taken as 100)" : "", top > prio ? "below" : "equal to", who, top,
                     top > prio ? "" : ": Open MPI picks either");
            sure = top > prio;
        } else if (cvar_get(var, &v, NULL, 0) && v == 0) {
            gc3_snprintf_cut(why, sizeof(why), "%s is false", var);
        } else if (cvar_get("coll_gc3_stage_host", &v, NULL, 0) && v != 0) {
            gc3_snprintf_cut(why, sizeof(why), "coll_gc3_stage_host is true: calls take the staging path");
        } else if (!cvar_get("coll_gc3_backend", &v, backend, sizeof(backend))) {
            gc3_snprintf_cut(why, sizeof(why), "cannot tell: no coll_gc3_backend");
            sure = 0;
        } else if (!on_device && strcmp(backend, "host") != 0) {
            gc3_snprintf_cut(why, sizeof(why), "backend %s on host buffers: --mca coll_gc3_backend host runs them", backend);
        } else if (on_device && !strcmp(backend, "host")) {
            gc3_snprintf_cut(why, sizeof(why), "backend host on device buffers: gc3 stages them through the host collectives");
        }
        (void)cvar_get("coll_gc3_max_bytes", &max_bytes, NULL, 0);
        MPI_T_finalize();
    }
    mine = why[0] == '\0';
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (all) {
        int n = gc3_snprintf_cut(what, len, "coll/gc3 (backend %s, priority %lld)", backend, prio);
        if (max_bytes > 0 && (size_t)n < len) {
            gc3_snprintf_cut(what + n, len - (size_t)n, "; calls of more than coll_gc3_max_bytes %lld bytes are passed on",
                     max_bytes);
        }
    } else {
        gc3_snprintf_cut(what, len, "%sNOT gc3 (%s): %s Open MPI's own %scollectives, labelled 'mpi'", sure ? "" : "maybe ",
                 mine ? "the MCA settings differ between ranks: gc3 does not run it on some" : why,
                 sure ? "these are" : "perhaps", on_device ? "" : "host ");
    }
    return all;
}

/* ---- the algorithm gc3 runs at each size: its rules, for this job's shape ---- */

/* A string MCA variable by its full name into text ("" when it is not there or empty). */
static void cvar_str(const char *name, char *text, size_t len)
{
    char              n[256], d[4], *buf;
    int               idx, verb, bind, scope, nl = sizeof(n), dl = sizeof(d), count = 0;
    MPI_Datatype      dt;
    MPI_T_enum        et;
    MPI_T_cvar_handle h;

    text[0] = '\0';
    if (MPI_T_cvar_get_index(name, &idx) != MPI_SUCCESS ||
        MPI_T_cvar_get_info(idx, n, &nl, &verb, &dt, &et, d, &dl, &bind, &scope) != MPI_SUCCESS || dt != MPI_CHAR ||
        MPI_T_cvar_handle_alloc(idx, NULL, &h, &count) != MPI_SUCCESS) {
        return;
    }
    if (count > 0 && (buf = calloc((size_t)count + 1, 1)) != NULL) {
        if (MPI_T_cvar_read(h, buf) == MPI_SUCCESS) {
            gc3_snprintf_cut(text, len, "%s", buf);
        }
        free(buf);
    }
    MPI_T_cvar_handle_free(&h);
}

/* What the component decides from (coll_gc3_select.c, coll_gc3_shape.c): its rules (the rules file,
 * else or where it cannot be used the built-in ones, the algorithm directory's programs first), the
 * communicator's nodes (coll_gc3_pseudo_nodes splits them), ranks per node and link class, and
 * coll_gc3_max_bytes; rank 0 names the plan of each size from them. */
static struct {
    gc3_rules_t *R;
    int          nodes, gpus, slots, max_blocks; /* max_blocks: the plan's thread blocks a rank, at most (0: any) */
    int          shared_gpu, staged_nomps;       /* coll_gc3_shared_gpu; ranks share a GPU without MPS */
    long long    max_bytes;
    gc3_link_t   link;
    char         what[600];
} plans;

/* Collective (every rank calls it); only where coll/gc3 runs the benchmark's calls. */
static void plans_init(MPI_Comm node)
{
    char       file[512], dir[512];
    long long  v = 0;
    int        prov, K = 0, S, local, groups, most;
    gc3_diag_t diag;

    plans.slots = GC3_FIFO_SLOTS_DEFAULT;
    file[0] = dir[0] = '\0';
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &prov) == MPI_SUCCESS) {
        cvar_str("coll_gc3_rules_file", file, sizeof(file));
        cvar_str("coll_gc3_algorithm_dir", dir, sizeof(dir));
        K                = cvar_get("coll_gc3_pseudo_nodes", &v, NULL, 0) && v > 0 ? (int)v : 0;
        plans.slots      = cvar_get("coll_gc3_fifo_slots", &v, NULL, 0) && v >= 2 && v <= 1024 ? (int)v : plans.slots;
        plans.max_blocks = cvar_get("coll_gc3_max_blocks", &v, NULL, 0) && v > 0 ? (int)v : 0;
        plans.max_bytes  = cvar_get("coll_gc3_max_bytes", &v, NULL, 0) && v > 0 ? v : 0;
        plans.shared_gpu = cvar_get("coll_gc3_shared_gpu", &v, NULL, 0) && v != 0;
        MPI_T_finalize();
    }
    /* nodes: one per host, or per coll_gc3_pseudo_nodes ranks of a host; gpus: the most ranks of one */
    MPI_Comm_size(node, &S);
    MPI_Comm_rank(node, &local);
    groups = local != 0 ? 0 : K > 0 ? (S + K - 1) / K : 1;
    most   = K > 0 && K < S ? K : S;
    MPI_Allreduce(&groups, &plans.nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&most, &plans.gpus, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    /* the link: the host backend's on host buffers; on device buffers NVLink where every pair of GPUs
     * of a host has native peer atomics, else PCIe */
    plans.link = on_device ? GC3_LINK_NVLINK : GC3_LINK_HOST;
#ifdef GC3_HAVE_CUDA
    if (on_device) {
        gc3_gpu_info_t   me;
        gc3_gpu_seat_t   mine, *seats;
        gc3_gpu_budget_t b;
        int              dev = 0, world;
        memset(&me, 0, sizeof(me));
        me.device = -1;
        if (cudaGetDevice(&dev) == cudaSuccess) {
            (void)gc3_gpu_probe(dev, &me, NULL);
        }
        gc3_gpu_seat(&mine, &me, gc3_exec_device_blocks(GC3_BACKEND_CUDA, dev, NULL));
        MPI_Comm_size(MPI_COMM_WORLD, &world);
        if ((seats = calloc((size_t)world, sizeof(mine))) == NULL)
            die("out of memory");
        MPI_Allgather(&mine, sizeof(mine), MPI_BYTE, seats, sizeof(mine), MPI_BYTE, MPI_COMM_WORLD);
        /* the thread blocks a plan may have and whether ranks share a GPU without MPS (the component
         * then stages their device buffers), as the component's communicator counts them */
        gc3_gpu_budget(seats, world, plans.max_blocks, plans.shared_gpu, &b);
        plans.link = gc3_gpu_seats_link(seats, world);
        free(seats);
        plans.max_blocks   = b.budget == INT_MAX ? 0 : b.budget > 0 ? b.budget : 1; /* (none fits: 1 refuses) */
        plans.staged_nomps = b.refused;
    }
#endif
    if (rank != 0) {
        return;
    }
    gc3_diag_init(&diag);
    if (file[0] == '\0' || gc3_rules_read_file(file, &diag, &plans.R) != GC3_OK) {
        (void)gc3_rules_parse(gc3_rules_builtin_text(), "built-in", &diag, &plans.R);
    }
    if (plans.R != NULL && dir[0] != '\0') {
        int added = 0;
        (void)gc3_rules_add_xml_dir(plans.R, dir, &diag, &added);
    }
    gc3_diag_cleanup(&diag);
    gc3_snprintf_cut(plans.what, sizeof(plans.what), "%d node(s) x %d rank(s), %s; rules: %s%s%s", plans.nodes,
                     plans.gpus, gc3_link_name(plans.link), plans.R ? plans.R->source : "none",
                     dir[0] ? ", algorithm directory " : "", dir);
}

/* Rank 0: the plan of collective c (coll: its name) for a call of count elements (alltoall: to each
 * peer), as the verbose plan line names it: "ring Simple 1x1" (channels x instances), or why there
 * is none. */
static void plan_name(const char *coll, int c, size_t count, char *out, size_t len)
{
    const uint64_t    bytes   = (uint64_t)count * sizeof(float) * (c == C_ALLTOALL ? (uint64_t)nranks : 1);
    const int         inplace = c == C_BCAST || bench_inplace; /* bcast's plans are in place: one buffer */
    const int         rooted  = c == C_BCAST || c == C_REDUCE;
    gc3_coll_t        gc;
    const gc3_rule_t *r;

    if (plans.R == NULL || gc3_coll_from_name(coll, &gc) != GC3_OK) {
        gc3_snprintf_cut(out, len, "?");
        return;
    }
    if (plans.staged_nomps) {
        gc3_snprintf_cut(out, len, "staged(shared-gpu-no-mps)");
        return;
    }
    if (plans.max_bytes > 0 && bytes > (uint64_t)plans.max_bytes) {
        gc3_snprintf_cut(out, len, "passed-on(max_bytes)");
        return;
    }
    r = gc3_rules_match_root(plans.R, gc, plans.nodes, plans.gpus, plans.link, bytes, nranks, inplace,
                             rooted ? bench_root : -1);
    if (r == NULL) {
        gc3_snprintf_cut(out, len, "passed-on(no-rule)");
        return;
    }
    {
        gc3_rule_target_t t = { .ranks      = nranks,
                                .nodes      = plans.nodes,
                                .inplace    = inplace,
                                .slots      = plans.slots,
                                .max_blocks = plans.max_blocks > 0 ? plans.max_blocks : 1 << 20,
                                .root       = rooted ? bench_root : 0 };
        gc3_rule_made_t   made;
        gc3_ir_program_t *p = NULL;
        gc3_diag_t        diag;
        gc3_diag_init(&diag);
        if (gc3_rule_program(r, &t, &diag, &p, &made) == GC3_OK) {
            gc3_snprintf_cut(out, len, "%s %s %dx%d", r->algo, gc3_proto_name(gc3_proto_runs_as(made.proto)),
                             made.channels, made.instances);
        } else {
            gc3_snprintf_cut(out, len, "%s(no-plan)", r->algo);
        }
        gc3_ir_program_destroy(p);
        gc3_diag_cleanup(&diag);
    }
}

/* "2.3x faster" or "4.1x slower": the MPI call against a method of latency other ("-" when either is
 * not measured) */
static void ratio_text(char *out, size_t len, double other, double mine, int measured)
{
    if (!measured || !(other > 0) || !(mine > 0)) {
        gc3_snprintf_cut(out, len, "-");
    } else if (other >= mine) {
        gc3_snprintf_cut(out, len, "%.1fx faster", other / mine);
    } else {
        gc3_snprintf_cut(out, len, "%.1fx slower", mine / other);
    }
}

/* ---- NCCL ---- */

static void nccl_version_text(char *out, size_t len)
{
    int v = nccl.version; /* NCCL_VERSION_CODE: 2.9 on X*10000+Y*100+Z, before X*1000+Y*100+Z */
    if (v >= 10000) {
        snprintf(out, len, "%d.%d.%d", v / 10000, v / 100 % 100, v % 100);
    } else {
        snprintf(out, len, "%d.%d.%d", v / 1000, v / 100 % 10, v % 100);
    }
}

/* Whether two ranks of a node use the same GPU (through MPS, or taking turns): NCCL refuses a
 * communicator with two ranks on one device ("Duplicate GPU detected", every version up to 2.28
 * at least), so the NCCL methods are then not measured. Collective. */
static int ranks_share_gpu(MPI_Comm node)
{
    char bus[32], *all;
    int  n, local = 0, dup = 0, any = 0;
#ifdef GC3_HAVE_CUDA
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetPCIBusId(bus, sizeof(bus), dev) != cudaSuccess)
#endif
    {
        snprintf(bus, sizeof(bus), "?%d", rank); /* unknown: counted as its own */
    }
    MPI_Comm_size(node, &n);
    MPI_Comm_rank(node, &local);
    all = calloc((size_t)n, sizeof(bus));
    if (all == NULL) {
        die("out of memory");
    }
    MPI_Allgather(bus, sizeof(bus), MPI_CHAR, all, sizeof(bus), MPI_CHAR, node);
    for (int q = 0; q < n; q++) {
        dup |= q != local && strncmp(all + (size_t)q * sizeof(bus), bus, sizeof(bus)) == 0;
    }
    free(all);
    MPI_Allreduce(&dup, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    return any;
}

/* Load libnccl and make a communicator of MPI_COMM_WORLD. 0 when NCCL is usable; otherwise why
 * not is in why (the same on every rank). lacks[M_NCCL_REG/M_NCCL_SYM]: the first function that
 * method needs and the library lacks on some rank ("" when it has them all). */
static int nccl_open(const char *path, char *why, size_t whylen, const char *lacks[M_COUNT])
{
    static const char *const reg_fn[] = {"ncclCommRegister", "ncclCommDeregister", "ncclMemAlloc", "ncclMemFree"};
    static const char *const sym_fn[] = {"ncclCommWindowRegister", "ncclCommWindowDeregister", "ncclMemAlloc",
                                         "ncclMemFree"};
    bench_nccl_id_t id;
    int             ok, all, have[2][4], have_all[2][4];

    nccl.lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    ok       = nccl.lib != NULL;
    memset(have, 0, sizeof(have));
    if (ok) {
#define NCCL_SYM(field, name) (nccl.field = (__typeof__(nccl.field))dlsym(nccl.lib, name))
        NCCL_SYM(get_version, "ncclGetVersion");
        NCCL_SYM(get_unique_id, "ncclGetUniqueId");
        NCCL_SYM(comm_init_rank, "ncclCommInitRank");
        NCCL_SYM(comm_destroy, "ncclCommDestroy");
        NCCL_SYM(all_reduce, "ncclAllReduce");
        NCCL_SYM(all_to_all, "ncclAlltoAll"); /* NCCL >= 2.28; before, grouped send/recv */
        NCCL_SYM(broadcast, "ncclBroadcast");
        NCCL_SYM(reduce, "ncclReduce");
        NCCL_SYM(send, "ncclSend");
        NCCL_SYM(recv, "ncclRecv");
        NCCL_SYM(group_start, "ncclGroupStart");
        NCCL_SYM(group_end, "ncclGroupEnd");
        NCCL_SYM(error_string, "ncclGetErrorString");
        NCCL_SYM(mem_alloc, "ncclMemAlloc");
        NCCL_SYM(mem_free, "ncclMemFree");
        NCCL_SYM(comm_register, "ncclCommRegister");
        NCCL_SYM(comm_deregister, "ncclCommDeregister");
        NCCL_SYM(win_register, "ncclCommWindowRegister");
        NCCL_SYM(win_deregister, "ncclCommWindowDeregister");
#undef NCCL_SYM
        ok = nccl.get_version && nccl.get_unique_id && nccl.comm_init_rank && nccl.comm_destroy && nccl.all_reduce &&
             nccl.broadcast && nccl.reduce &&
             nccl.error_string && ((nccl.send && nccl.recv && nccl.group_start && nccl.group_end) || nccl.all_to_all);
        if (!ok) {
            gc3_snprintf_cut(why, whylen, "%s lacks the NCCL functions used here", path);
        }
        for (int f = 0; f < 4; f++) {
            have[0][f] = dlsym(nccl.lib, reg_fn[f]) != NULL;
            have[1][f] = dlsym(nccl.lib, sym_fn[f]) != NULL;
        }
    } else {
        gc3_snprintf_cut(why, whylen, "cannot load %s: %s", path, dlerror());
    }
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    MPI_Allreduce(have, have_all, 8, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!all) {
        if (ok) {
            gc3_snprintf_cut(why, whylen, "%s could not be loaded on every rank", path);
        }
        return -1;
    }
    for (int f = 3; f >= 0; f--) {
        lacks[M_NCCL_REG] = have_all[0][f] ? lacks[M_NCCL_REG] : reg_fn[f];
        lacks[M_NCCL_SYM] = have_all[1][f] ? lacks[M_NCCL_SYM] : sym_fn[f];
    }
    nccl.get_version(&nccl.version);
    if (rank == 0) {
        nccl.get_unique_id(&id);
    }
    MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
    ok = nccl.comm_init_rank(&nccl.comm, nranks, id, rank) == 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!all) {
        gc3_snprintf_cut(why, whylen, "ncclCommInitRank failed%s", ok ? " on another rank" : "");
        return -1;
    }
    return 0;
}

/* Undo nccl_register of method m (collective for nccl-sym: every rank calls it alike). */
static void nccl_unregister(int m)
{
    for (int b = 0; b < 2; b++) {
        if (nreg[m].handle[b] != NULL) {
            (void)(m == M_NCCL_SYM ? nccl.win_deregister : nccl.comm_deregister)(nccl.comm, nreg[m].handle[b]);
        }
        if (nreg[m].buf[b] != NULL) {
            (void)nccl.mem_free(nreg[m].buf[b]);
        }
        nreg[m].handle[b] = nreg[m].buf[b] = NULL;
    }
}

/* The send and receive buffers of nccl-reg or nccl-sym, of bytes each: from ncclMemAlloc, then
 * registered (nccl-sym: a symmetric window each, collectively). 0 when every rank has them;
 * otherwise why not is in why (rank 0's reason, or that another rank failed). */
static int nccl_register(int m, size_t bytes, char *why, size_t whylen)
{
    const char *fn = m == M_NCCL_SYM ? "ncclCommWindowRegister" : "ncclCommRegister";
    int         rc = 0, ok = 1, all = 0, step;

    why[0] = '\0';
    for (step = 0; step < 3 && ok; step++) {
        for (int b = 0; b < 2 && ok; b++) {
            if (step == 0) {
                rc = nccl.mem_alloc(&nreg[m].buf[b], bytes);
                ok = rc == 0 && nreg[m].buf[b] != NULL;
                if (!ok) {
                    gc3_snprintf_cut(why, whylen, "ncclMemAlloc of %zu bytes failed: %s", bytes, nccl.error_string(rc));
                }
#ifdef GC3_HAVE_CUDA
                else if (cudaMemset(nreg[m].buf[b], 0xA5, bytes) != cudaSuccess) { /* garbage, as gc3_test_alloc */
                    ok = 0;
                    gc3_snprintf_cut(why, whylen, "cudaMemset of a buffer from ncclMemAlloc failed");
                }
#endif
            } else if (step == 1) {
                rc = m == M_NCCL_SYM ? nccl.win_register(nccl.comm, nreg[m].buf[b], bytes, &nreg[m].handle[b],
                                                         BENCH_NCCL_WIN_COLL_SYMMETRIC)
                                     : nccl.comm_register(nccl.comm, nreg[m].buf[b], bytes, &nreg[m].handle[b]);
                ok = rc == 0;
                if (!ok) {
                    gc3_snprintf_cut(why, whylen, "%s failed: %s", fn, nccl.error_string(rc));
                }
            } else if (nreg[m].handle[b] == NULL) {
                /* NCCL returns success and no handle where it registers nothing: NCCL_LOCAL_REGISTER=0,
                 * peers reached through copies, or (nccl-sym) no symmetric support in the communicator */
                ok = 0;
                gc3_snprintf_cut(why, whylen, "%s registered nothing (NCCL_LOCAL_REGISTER=0, or no %s support between these "
                                      "ranks: NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=REG says why)",
                         fn, m == M_NCCL_SYM ? "symmetric memory" : "registration");
            }
        }
        /* a step every rank finished before the next: window registration is collective */
        MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
        if (ok && !all) {
            gc3_snprintf_cut(why, whylen, "%s failed on another rank", step == 0 ? "ncclMemAlloc" : fn);
        }
        ok = all;
    }
    if (!ok) {
        nccl_unregister(m);
        return -1;
    }
    nreg[m].bytes = bytes;
    return 0;
}

/* ---- the calls ---- */

/* The MPI call of collective c on comm (bcast: the root's buffer is s, the others' r). */
static int mpi_call(int c, size_t count, void *s, void *r, MPI_Comm comm)
{
    switch (c) {
    case C_ALLGATHERV:
        return MPI_Allgatherv(s, v_rcnt[rank], MPI_FLOAT, r, v_rcnt, v_rdsp, MPI_FLOAT, comm);
    case C_ALLTOALLV:
        return MPI_Alltoallv(s, v_scnt, v_sdsp, MPI_FLOAT, r, v_rcnt, v_rdsp, MPI_FLOAT, comm);
    case C_REDUCE_SCATTER:
        return MPI_Reduce_scatter(s, r, v_rcnt, MPI_FLOAT, MPI_SUM, comm);
    case C_GATHERV:
        return MPI_Gatherv(s, v_rcnt[rank], MPI_FLOAT, r, v_rcnt, v_rdsp, MPI_FLOAT, bench_root, comm);
    case C_SCATTERV:
        return MPI_Scatterv(s, v_scnt, v_sdsp, MPI_FLOAT, r, v_rcnt[rank], MPI_FLOAT, bench_root, comm);
    case C_ALLTOALL: return MPI_Alltoall(s, (int)count, MPI_FLOAT, r, (int)count, MPI_FLOAT, comm);
    case C_BCAST:
        return MPI_Bcast(rank == bench_root ? s : r, (int)count, MPI_FLOAT, bench_root, comm);
    case C_REDUCE:
        return MPI_Reduce(s, r, (int)count, MPI_FLOAT, MPI_SUM, bench_root, comm);
    case C_SCAN:
        return MPI_Scan(s, r, (int)count, MPI_FLOAT, MPI_SUM, comm);
    case C_EXSCAN:
        return MPI_Exscan(s, r, (int)count, MPI_FLOAT, MPI_SUM, comm);
    default: return MPI_Allreduce(s, r, (int)count, MPI_FLOAT, MPI_SUM, comm);
    }
}

/* One call of method m of collective c on the buffers (s, r: device or host; hs, hr: pinned host for
 * staging). 0, or an MPI, NCCL or (-1) CUDA error. */
static int run_once(int m, int c, size_t count, void *s, void *r, void *hs, void *hr)
{
    size_t total = c == C_ALLTOALL ? count * (size_t)nranks : count, bytes = total * sizeof(float), vin = 0, vout = 0;
    int    rc    = 0;

    if (IS_V(c)) { /* (the layout of this size is set: v_layout) */
        for (int q = 0; q < nranks; q++) {
            vin += (size_t)v_scnt[q];
            vout += (size_t)v_rcnt[q];
        }
        vin  = c == C_ALLGATHERV || c == C_GATHERV ? (size_t)v_rcnt[rank] : vin;
        vout = c == C_REDUCE_SCATTER || c == C_SCATTERV ? (size_t)v_rcnt[rank] : vout;
        /* a rooted call's root-only side is staged at the root only */
        vin  = c == C_SCATTERV && rank != bench_root ? 0 : vin;
        vout = c == C_GATHERV && rank != bench_root ? 0 : vout;
        if (m == M_STAGED) {
            gc3_test_copy(on_device, hs, s, vin * sizeof(float));
            rc = mpi_call(c, count, hs, hr, MPI_COMM_WORLD);
            gc3_test_copy(on_device, r, hr, vout * sizeof(float));
            return rc;
        }
        return m == M_GC3    ? mpi_call(c, count, s, r, MPI_COMM_WORLD)
               : m == M_OMPI ? mpi_call(c, count, s, r, comm_ompi)
                             : 1;
    }

    /* --inplace: the receive buffer holds the input; MPI gets MPI_IN_PLACE (staged: that buffer is what is
     * copied in, into hr), NCCL one pointer */
    void *in = s, *h_in = hs;
    if (bench_inplace) {
        in = MPI_IN_PLACE, s = r, h_in = hr;
    }
    switch (m) {
    case M_GC3:
        rc = mpi_call(c, count, in, r, MPI_COMM_WORLD);
        break;
    case M_OMPI:
        rc = mpi_call(c, count, in, r, comm_ompi);
        break;
    case M_STAGED:
        /* copied in where the call reads the buffer, out where it writes it (bcast: the root's is read,
         * the others' written; reduce: every rank's read, the root's written) */
        if (c != C_BCAST || rank == bench_root) {
            gc3_test_copy(on_device, h_in, s, bytes);
        }
        rc = mpi_call(c, count, bench_inplace ? MPI_IN_PLACE : hs, hr, MPI_COMM_WORLD);
        if (c == C_BCAST ? rank != bench_root : c != C_REDUCE || rank == bench_root) {
            gc3_test_copy(on_device, r, hr, bytes);
        }
        break;
#ifdef GC3_HAVE_CUDA
    case M_NCCL:
    case M_NCCL_REG:
    case M_NCCL_SYM: /* the same calls: NCCL finds the registration or window by the address */
        if (c == C_ALLREDUCE) {
            rc = nccl.all_reduce(s, r, count, BENCH_NCCL_FLOAT32, BENCH_NCCL_SUM, nccl.comm, stream);
        } else if (c == C_BCAST) { /* in place at the root, as MPI_Bcast */
            rc =
                nccl.broadcast(s, rank == bench_root ? s : r, count, BENCH_NCCL_FLOAT32, bench_root, nccl.comm, stream);
        } else if (c == C_REDUCE) {
            rc = nccl.reduce(s, r, count, BENCH_NCCL_FLOAT32, BENCH_NCCL_SUM, bench_root, nccl.comm, stream);
        } else if (nccl.all_to_all != NULL) {
            rc = nccl.all_to_all(s, r, count, BENCH_NCCL_FLOAT32, nccl.comm, stream);
        } else {
            rc = nccl.group_start();
            for (int q = 0; q < nranks && rc == 0; q++) {
                rc = nccl.send((const float *)s + (size_t)q * count, count, BENCH_NCCL_FLOAT32, q, nccl.comm, stream);
                rc = rc ? rc : nccl.recv((float *)r + (size_t)q * count, count, BENCH_NCCL_FLOAT32, q, nccl.comm, stream);
            }
            rc = nccl.group_end() || rc;
        }
        if (rc == 0 && (cuda_error = cudaStreamSynchronize(stream)) != cudaSuccess) {
            rc = -1;
        }
        break;
#endif
    default: rc = 1; break;
    }
    return rc;
}

static void report_failure(int m, const char *label, size_t bytes, int rc)
{
    const char *text = "MPI error";
    (void)m;
#ifdef GC3_HAVE_CUDA
    text = rc == -1 ? cudaGetErrorString(cuda_error) : IS_NCCL(m) ? nccl.error_string(rc) : text;
#endif
    fprintf(stderr, "gc3_bench: rank %d: %s at %zu bytes failed (%d: %s)\n", rank, label, bytes, rc, text);
}

/* The input of rank q, element i; and what the result must be. */
static float input_of(int q, size_t i)
{
    return (float)((q + 1) * (int)(i % 13 + 1));
}

/* 1 when out (this rank's receive buffer after a call of collective c) is right; ranks whose receive
 * buffer the call does not write (bcast: the root; reduce: all but the root) have nothing to check. */
static int check_result(int c, size_t count, const float *out)
{
    if ((c == C_BCAST && rank == bench_root) || ((c == C_REDUCE || c == C_GATHERV) && rank != bench_root) ||
        (c == C_EXSCAN && rank == 0)) {
        return 1; /* (exscan: MPI leaves rank 0's undefined) */
    }
    if (IS_V(c)) {
        size_t at = 0; /* reduce_scatter: where this rank's block starts in every input */
        for (int q = 0; q < rank; q++) {
            at += (size_t)v_seg(c, count, q, 0);
        }
        const int one = c == C_REDUCE_SCATTER || c == C_SCATTERV; /* this rank's one segment */
        for (int q = 0; q < (one ? 1 : nranks); q++) {
            size_t from = 0; /* alltoallv: where q's segment to this rank starts in q's input */
            for (int r = 0; c == C_ALLTOALLV && r < rank; r++) {
                from += (size_t)v_seg(c, count, q, r);
            }
            for (int i = 0; i < v_rcnt[one ? rank : q]; i++) {
                float want = c == C_ALLGATHERV || c == C_GATHERV ? input_of(q, (size_t)i)
                             : c == C_ALLTOALLV                  ? input_of(q, from + (size_t)i)
                             : c == C_SCATTERV                   ? input_of(bench_root, at + (size_t)i)
                                               : (float)(nranks * (nranks + 1) / 2 * (int)((at + (size_t)i) % 13 + 1));
                float got  = out[(one ? 0 : (size_t)v_rdsp[q]) + (size_t)i];
                if (got != want) {
                    fprintf(stderr, "gc3_bench: rank %d: segment %d element %d is %g, want %g\n", rank, q, i, got,
                            want);
                    return 0;
                }
            }
        }
        return 1;
    }
    for (size_t i = 0; i < (c == C_ALLTOALL ? count * (size_t)nranks : count); i++) {
        /* the ranks whose inputs a reduction sums: every one, or a prefix (scan: 0 to this one; exscan: to the
           one before) */
        const int upto = c == C_SCAN ? rank + 1 : c == C_EXSCAN ? rank : nranks;
        float     want = c == C_ALLTOALL ? input_of((int)(i / count), (size_t)rank * count + i % count)
                         : c == C_BCAST  ? input_of(bench_root, i)
                                         : (float)(upto * (upto + 1) / 2 * (int)(i % 13 + 1));
        if (out[i] != want) {
            fprintf(stderr, "gc3_bench: rank %d: element %zu is %g, want %g\n", rank, i, out[i], want);
            return 0;
        }
    }
    return 1;
}

static void usage(FILE *out)
{
    fputs("usage: gc3_bench [-t allreduce|alltoall|bcast|reduce|scan|exscan|allgatherv|alltoallv|reduce_scatter|\n"
          "                  gatherv|scatterv] [-d cuda|host] [-c]\n"
          "                 [-m MIN:MAX] [-i ITERS] [-x WARMUP] [--skew] [--inplace]\n"
          "                 [--methods gc3,nccl,nccl-reg,nccl-sym,staged,ompi] [--staged-max BYTES] [--nccl-lib PATH]\n"
          "                 [--csv FILE] [--alternate allreduce|alltoall:BYTES] [--root R]\n"
          "  (under mpirun, one rank per GPU)\n"
          "  -t, --type           the collective (default allreduce; alltoall: -m is the bytes to each peer;\n"
          "                       bcast, reduce, gatherv, scatterv: the root is --root; allgatherv, alltoallv,\n"
          "                       reduce_scatter, gatherv, scatterv: -m is the bytes of each rank's segment, sum\n"
          "                       for reduce_scatter; NCCL not measured)\n"
          "  --skew               the v-collectives: uneven segments, rank q's (alltoallv: q to\n"
          "                       r's) 2((q + r) mod R + 1)/(R + 1) times the size (the same bytes in all)\n"
          "  --inplace            allreduce, scan, exscan: MPI_IN_PLACE, the receive buffer holding the input\n"
          "                       (every method: staged copies that buffer in and out; NCCL gets one pointer);\n"
          "                       the input is copied back into it after each timed call, untimed\n"
          "  -d, --accelerator    cuda (default): device buffers (where CUDA sees no GPU it stops, saying so);\n"
          "                       host: host buffers (gc3 runs them with --mca coll_gc3_backend host: for CI)\n"
          "  -c, --validation     check each method's result against a host computation\n"
          "  -m, --message-size   sizes MIN:MAX in bytes, doubling (K, M, G allowed; default 4:64M)\n"
          "  -i, --iterations     timed calls per size (default 200, 100 above 1 MB, 20 above 64 MB)\n"
          "  -x, --warmup         untimed calls first (default a tenth of the iterations)\n"
          "  --methods            which to run, comma-separated (default all):\n"
          "                         gc3       the MPI call (the header says whether coll/gc3 runs it; the column\n"
          "                                   is labelled mpi where it does not)\n"
          "                         nccl      NCCL on the same buffers, each call synchronized\n"
          "                         nccl-reg  NCCL on ncclMemAlloc buffers registered with ncclCommRegister (>= 2.19)\n"
          "                         nccl-sym  NCCL on ncclMemAlloc buffers in symmetric windows (>= 2.27)\n"
          "                         staged    through pinned host memory: copy, the MPI call on host buffers, copy\n"
          "                                   (device buffers)\n"
          "                         ompi      Open MPI's own collective on the same buffers, on a communicator gc3\n"
          "                                   is left out of (info ompi_comm_coll_preference=^gc3): what the call\n"
          "                                   costs without gc3 (host buffers; device buffers where this Open MPI\n"
          "                                   is CUDA-aware, MPIX_Query_cuda_support(), else not measured)\n"
          "                       a method that cannot run is skipped with a line saying why (NCCL takes one\n"
          "                       rank per GPU: ranks that share one do not measure NCCL)\n"
          "  --staged-max         skip the staged path above this size\n"
          "  --nccl-lib           the NCCL library to load (default libnccl.so.2, or $GC3_BENCH_NCCL)\n"
          "  --csv                also write the results as CSV to FILE (one row per size and method)\n"
          "  --alternate          (with --methods gc3) before each call, an untimed call of that collective and\n"
          "                       size (alltoall: bytes to each peer): where it runs on another gc3 plan, each\n"
          "                       timed call follows another plan's call (what coll_gc3_fifo_pool's hand-over costs)\n"
          "  --root               bcast, reduce: the root rank (default 0)\n"
          "  -h, --help           this text\n"
          "examples:\n"
          "  gc3-mpirun -np 4 gc3_bench -t allreduce -c -m 4:1G --staged-max 64M --csv allreduce.csv   # 4 GPUs\n"
          "  gc3-mpirun -np 2 --mca coll_gc3_backend host gc3_bench -d host -c -m 4:1M   # no GPU: host buffers\n",
          out);
}

/* ---- main ---- */

int main(int argc, char **argv)
{
    const char *coll = "allreduce", *csv_path = NULL, *nccl_path = getenv("GC3_BENCH_NCCL");
    const char *lacks[M_COUNT] = {NULL};
    size_t      minb = 4, maxb = 64u << 20, staged_max = SIZE_MAX;
    int         validate = 0, iters_opt = -1, warm_opt = -1, use[M_COUNT], a2a, c, failed = 0, multinode, node_size;
    int         is_gc3, methods_given = 0, cidx;
    const char *ompi_aware = ""; /* -d cuda: what Open MPI said of its CUDA-awareness */
    const char *label[M_COUNT];
    char        why[M_COUNT][512], column[512], other[160];
    MPI_Comm    node;
    FILE       *csv = NULL;

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout); /* before MPI_Init: works without mpirun */
            return 0;
        }
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    for (int m = 0; m < M_COUNT; m++) {
        use[m]    = 1;
        why[m][0] = '\0';
    }
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char       *e;
        if (!strcmp(o, "-c") || !strcmp(o, "--validation")) {
            validate = 1;
            continue;
        }
        if (!strcmp(o, "--skew")) {
            skew = 1;
            continue;
        }
        if (!strcmp(o, "--inplace")) {
            bench_inplace = 1;
            continue;
        }
        {
            /* the options that take a value: any other is unknown, named as such */
            static const char *const with_value[] = { "-t",         "--type",         "-d",        "--accelerator",
                                                      "-m",         "--message-size", "-i",        "--iterations",
                                                      "-x",         "--warmup",       "--methods", "--staged-max",
                                                      "--nccl-lib", "--csv",          "--root",    "--alternate" };
            char                     text[300];
            size_t                   k = 0;
            while (k < sizeof(with_value) / sizeof(with_value[0]) && strcmp(o, with_value[k]) != 0)
                k++;
            if (k == sizeof(with_value) / sizeof(with_value[0])) {
                gc3_snprintf_cut(text, sizeof(text), "unknown option %s (gc3_bench --help lists the options)", o);
                die(text);
            }
            if (v == NULL) {
                gc3_snprintf_cut(text, sizeof(text), "%s needs a value (gc3_bench --help)", o);
                die(text);
            }
        }
        i++;
        if (!strcmp(o, "-t") || !strcmp(o, "--type")) {
            coll = v;
        } else if (!strcmp(o, "-d") || !strcmp(o, "--accelerator")) {
            on_device = strcmp(v, "host") != 0;
            if (on_device && strcmp(v, "cuda") != 0) die("-d takes cuda or host");
        } else if (!strcmp(o, "-m") || !strcmp(o, "--message-size")) {
            minb = gc3_test_parse_bytes(v, &e);
            if (*e == ':') {
                maxb = gc3_test_parse_bytes(e + 1, &e);
            } else {
                maxb = minb, minb = 4;
            }
            if (*e != '\0' || minb == 0 || maxb < minb) die("-m takes MIN:MAX in bytes (K, M, G allowed), MIN > 0");
        } else if (!strcmp(o, "-i") || !strcmp(o, "--iterations")) {
            iters_opt = atoi(v);
            if (iters_opt < 1) die("-i takes a positive count");
        } else if (!strcmp(o, "-x") || !strcmp(o, "--warmup")) {
            warm_opt = atoi(v);
            if (warm_opt < 0) die("-x takes a count >= 0");
        } else if (!strcmp(o, "--methods")) {
            memset(use, 0, sizeof(use));
            methods_given = 1;
            for (const char *p = v; *p != '\0';) {
                size_t n = strcspn(p, ",");
                int    m = 0;
                while (m < M_COUNT && (strlen(method_names[m]) != n || strncmp(p, method_names[m], n) != 0)) m++;
                if (n == 3 && !strncmp(p, "mpi", 3)) m = M_GC3; /* the label of the MPI call's column */
                if (m == M_COUNT) {
                    die("--methods takes a comma-separated list of gc3, nccl, nccl-reg, nccl-sym, staged, ompi");
                }
                use[m] = 1;
                p += n + (p[n] == ',');
            }
        } else if (!strcmp(o, "--staged-max")) {
            staged_max = gc3_test_parse_bytes(v, &e);
            if (*e != '\0') die("--staged-max takes bytes (K, M, G allowed)");
        } else if (!strcmp(o, "--nccl-lib")) {
            nccl_path = v;
        } else if (!strcmp(o, "--csv")) {
            csv_path = v;
        } else if (!strcmp(o, "--root")) {
            bench_root = (int)strtol(v, &e, 10);
            if (*e != '\0' || *v == '\0' || bench_root < 0)
                die("--root takes a rank >= 0");
        } else if (!strcmp(o, "--alternate")) {
            const char *colon = strchr(v, ':');
            alt.on            = 1;
            alt.a2a           = colon != NULL && (size_t)(colon - v) == 8 && !strncmp(v, "alltoall", 8);
            if (colon == NULL || (!alt.a2a && ((size_t)(colon - v) != 9 || strncmp(v, "allreduce", 9)))) {
                die("--alternate takes allreduce:BYTES or alltoall:BYTES");
            }
            alt.bytes = gc3_test_parse_bytes(colon + 1, &e);
            alt.count = alt.bytes / sizeof(float);
            if (*e != '\0' || alt.count == 0)
                die("--alternate takes allreduce:BYTES or alltoall:BYTES, BYTES >= 4");
        }
    }
    for (c = 0; c < C_COUNT && strcmp(coll, coll_names[c]) != 0; c++) {
    }
    if (c == C_COUNT)
        die("-t takes allreduce, alltoall, bcast, reduce, scan, exscan, allgatherv, alltoallv, reduce_scatter, gatherv "
            "or scatterv");
    if (skew && !IS_V(c))
        die("--skew is for allgatherv, alltoallv, reduce_scatter, gatherv and scatterv");
    if (bench_inplace && c != C_ALLREDUCE && c != C_SCAN && c != C_EXSCAN)
        die("--inplace is for allreduce, scan and exscan");
    if (bench_inplace && alt.on) /* (the alternate call would run in place on a buffer never filled) */
        die("--inplace and --alternate do not go together");
    v_scnt = calloc((size_t)nranks, sizeof(int));
    v_sdsp = calloc((size_t)nranks, sizeof(int));
    v_rcnt = calloc((size_t)nranks, sizeof(int));
    v_rdsp = calloc((size_t)nranks, sizeof(int));
    if (v_scnt == NULL || v_sdsp == NULL || v_rcnt == NULL || v_rdsp == NULL)
        die("out of memory");
    if (bench_root >= nranks)
        die("--root takes a rank of the job (below the number of ranks)");
    a2a  = c == C_ALLTOALL || IS_V(c); /* (sizes: the bytes of each rank's segment) */
    cidx = c; /* (the rows' printing has a buffer named c) */
    for (int m = M_NCCL; m < M_COUNT && alt.on; m++) {
        if (use[m]) die("--alternate runs with --methods gc3 only");
    }
    /* staged copies device buffers through host memory (on host buffers there is nothing to stage);
     * ompi is Open MPI's own collective on the same buffers: on device buffers only where Open MPI
     * says it is CUDA-aware, on every rank (a stock one crashes on device pointers) */
    if (!on_device && use[M_STAGED]) {
        snprintf(why[M_STAGED], sizeof(why[0]), "%s",
                 "host buffers: nothing to stage; the ompi column is Open MPI's own collective on them");
        use[M_STAGED] = 0;
    }
    if (on_device && use[M_OMPI]) {
        int mine = gc3_mpi_cuda_aware(&ompi_aware), all = 0;
        MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
        if (!all) {
            snprintf(why[M_OMPI], sizeof(why[0]),
                     "device buffers, and %s: its own collectives would crash on them; the staged column copies "
                     "them through host memory",
                     mine ? "the Open MPI of another rank is not CUDA-aware" : ompi_aware);
            use[M_OMPI] = 0;
        }
    }
    if (on_device) {
        need_gpu();
    }
#ifdef GC3_HAVE_CUDA
    if (on_device) {
        gc3_test_select_gpu(MPI_COMM_WORLD);
        /* ordered after the legacy default stream, like gc3's own: the cudaMemcpy that clears the
         * result before validation must not race with the collective's writes */
        cudaStreamCreateWithFlags(&stream, cudaStreamDefault);
    }
#else
    if (on_device) die("this build has no CUDA: use -d host");
#endif
    if (alt.on) {
        size_t total = alt.a2a ? alt.count * (size_t)nranks : alt.count;
        float *h     = malloc(total * sizeof(float));
        alt.s        = gc3_test_alloc(on_device, total * sizeof(float));
        alt.r        = gc3_test_alloc(on_device, total * sizeof(float));
        if (h == NULL || alt.s == NULL || alt.r == NULL) die("out of memory");
        for (size_t i = 0; i < total; i++) {
            h[i] = input_of(rank, i);
        }
        gc3_test_copy(on_device, alt.s, h, total * sizeof(float));
        free(h);
    }
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_size);
    multinode = node_size < nranks;
    MPI_Allreduce(MPI_IN_PLACE, &multinode, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    /* which module runs the MPI call: the column is labelled gc3 only where coll/gc3 does */
    is_gc3 = gc3_column(plan_names[c], multinode, column, sizeof(column), other, sizeof(other));
    if (is_gc3 && use[M_GC3]) {
        plans_init(node);
    }
    if (use[M_OMPI]) { /* a communicator Open MPI leaves coll/gc3 out of (the info key of its coll selection) */
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "ompi_comm_coll_preference", "^gc3");
        MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &comm_ompi);
        MPI_Info_free(&info);
        MPI_Comm_set_name(comm_ompi, "gc3_bench ompi (without gc3)");
    }
    for (int m = 0; m < M_COUNT; m++) {
        label[m] = m == M_GC3 && !is_gc3 ? "mpi" : method_names[m];
    }
    if (on_device) {
        const char *path = nccl_path ? nccl_path : "libnccl.so.2";
        int         want = use[M_NCCL] || use[M_NCCL_REG] || use[M_NCCL_SYM];
        char        text[512] = "", ver[32];
        if (want && IS_V(c)) {
            gc3_snprintf_cut(text, sizeof(text), "NCCL has no %s with per-rank counts (codes group ncclSend/ncclRecv)",
                             coll);
        } else if (want && (c == C_SCAN || c == C_EXSCAN)) {
            gc3_snprintf_cut(text, sizeof(text), "NCCL has no %s", coll);
        } else if (want && ranks_share_gpu(node)) {
            gc3_snprintf_cut(text, sizeof(text), "ranks share a GPU: NCCL takes one rank per GPU");
        } else if (want && nccl_open(path, text, sizeof(text), lacks) == 0) { /* else text says why */
            size_t regb = (a2a ? maxb * (size_t)nranks : maxb) + 64;
            nccl_version_text(ver, sizeof(ver));
            for (int m = M_NCCL_REG; m <= M_NCCL_SYM; m++) {
                if (use[m] && lacks[m] != NULL) {
                    gc3_snprintf_cut(why[m], sizeof(why[m]), "libnccl %s lacks %s", ver, lacks[m]);
                } else if (use[m]) {
                    (void)nccl_register(m, (regb + 4095) / 4096 * 4096, why[m], sizeof(why[m]));
                }
            }
        }
        for (int m = M_NCCL; m <= M_NCCL_SYM; m++) {
            if (use[m] && text[0] != '\0') {
                gc3_snprintf_cut(why[m], sizeof(why[m]), "%s", text);
            }
        }
    } else {
        for (int m = M_NCCL; m <= M_NCCL_SYM; m++) {
            if (use[m]) gc3_snprintf_cut(why[m], sizeof(why[m]), "host buffers");
        }
    }
    for (int m = M_NCCL; m <= M_NCCL_SYM; m++) {
        use[m] = use[m] && why[m][0] == '\0';
    }
    if (rank == 0 && csv_path != NULL && (csv = fopen(csv_path, "w")) == NULL) {
        fprintf(stderr, "gc3_bench: cannot write %s\n", csv_path);
    }
    if (csv != NULL) {
        fprintf(csv, "collective,ranks,bytes,method,latency_us,algbw_GBps,busbw_GBps,valid\n");
    }
    if (rank == 0) {
        char ver[32];
        char root[32] = "";
        if (IS_ROOTED(c)) {
            snprintf(root, sizeof(root), ", root %d", bench_root);
        }
        printf("# gc3_bench %s%s, %d ranks, %s buffers, float32%s%s; %s\n", coll,
               bench_inplace ? " in place (MPI_IN_PLACE)" : "", nranks, on_device ? "device (cuda)" : "host",
               c == C_ALLREDUCE || c == C_REDUCE || c == C_REDUCE_SCATTER || c == C_SCAN || c == C_EXSCAN ? " sum" : "",
               root, validate ? "validation on" : "validation off");
        if (IS_V(c)) {
            printf("# size: the bytes of each rank's segment%s; the calls run on gc3's %s plans\n",
                   skew ? " on average (--skew: rank q's, alltoallv q to r's, is 2((q + r) mod R + 1)/(R + 1) times it)"
                        : "",
                   plan_names[c]);
        }
        printf("# gc3 column: %s\n", column);
        if (use[M_OMPI]) {
            printf("# ompi column: Open MPI's own collective on the same %s buffers (%s%s%s), on a communicator "
                   "that leaves coll/gc3 out (info ompi_comm_coll_preference=^gc3)\n",
                   on_device ? "device" : "host", other, on_device ? "; " : "", on_device ? ompi_aware : "");
        }
        for (int m = M_STAGED; m <= M_OMPI; m++) {
            if (why[m][0] != '\0' && (methods_given || m == M_STAGED || on_device)) {
                printf("# %s: not measured (%s)\n", method_names[m], why[m]);
            }
        }
        if (alt.on) {
            printf("# each call follows an untimed %s of %zu bytes%s (--alternate)\n", alt.a2a ? "alltoall" : "allreduce",
                   alt.bytes, alt.a2a ? " to each peer" : "");
        }
        for (int m = M_NCCL; m <= M_NCCL_SYM; m++) {
            if (why[m][0] != '\0') {
                printf("# %s: not measured (%s)\n", method_names[m], why[m]);
            } else if (use[m]) {
                nccl_version_text(ver, sizeof(ver));
                printf("# %s: %s, NCCL %s, each call synchronized; %s\n", method_names[m],
                       nccl_path ? nccl_path : "libnccl.so.2", ver,
                       m == M_NCCL     ? "the same buffers as the MPI call"
                       : m == M_NCCL_REG ? "buffers from ncclMemAlloc registered with ncclCommRegister"
                                         : "buffers from ncclMemAlloc in symmetric windows (ncclCommWindowRegister)");
            }
        }
        printf("# latency: average over ranks (us); busbw GB/s; %s vs X: the MPI call is N x faster (or slower) than "
               "X at that size (X's latency over its, or its over X's)%s\n",
               label[M_GC3],
               use[M_NCCL] || use[M_NCCL_REG] || use[M_NCCL_SYM] ? "; best_nccl: the fastest NCCL mode at that size"
                                                                 : "");
        if (plans.R != NULL) {
            char budget[48] = "";
            if (plans.max_blocks > 0) {
                gc3_snprintf_cut(budget, sizeof(budget), " (at most %d a rank)", plans.max_blocks);
            }
            printf("# algorithm: the plan gc3's rules choose at that size (algorithm, protocol, channels x instances) "
                   "for %s; a rule's channels x instances narrowed as gc3 narrows a plan to the thread blocks it "
                   "may have%s (coll_gc3_max_blocks; on GPUs its rank's share of what the GPU holds at once; "
                   "coll_gc3_verbose 1 prints the plans gc3 built, and any it could not)\n",
                   plans.what, budget);
        }
        printf("%-10s", "# Size");
        for (int m = 0; m < M_COUNT; m++) {
            if (use[m]) printf(" %*s(us)", 12 - 4, label[m]);
        }
        for (int m = 0; m < M_COUNT; m++) {
            if (use[m]) printf(" %*s_busbw", 14 - 6, label[m]);
        }
        if (use[M_GC3] && (use[M_NCCL] || use[M_NCCL_REG] || use[M_NCCL_SYM])) {
            char h[48];
            snprintf(h, sizeof(h), "%s vs best_nccl", label[M_GC3]);
            printf(" %9s %17s", "best_nccl", h);
        }
        for (int m = M_STAGED; m <= M_OMPI; m++) {
            if (use[M_GC3] && use[m]) {
                char h[48];
                snprintf(h, sizeof(h), "%s vs %s", label[M_GC3], method_names[m]);
                printf(" %14s", h);
            }
        }
        printf("%s%s\n", validate ? " Validation" : "", plans.R != NULL ? " algorithm" : "");
        fflush(stdout);
    }
    for (size_t bytes = minb; bytes <= maxb; bytes *= 2) {
        size_t count = bytes / sizeof(float), total = a2a ? count * (size_t)nranks : count, v_in = total, v_out = total;
        int    iters = iters_opt > 0 ? iters_opt : bytes > (64u << 20) ? 20 : bytes > (1u << 20) ? 100 : 200;
        int    warm  = warm_opt >= 0 ? warm_opt : iters / 10;
        int    run[M_COUNT], valid[M_COUNT], best = -1;
        double lat[M_COUNT] = {0}, bus[M_COUNT] = {0};
        float *h = NULL, *ho = NULL;
        void  *s = NULL, *r = NULL, *hs = NULL, *hr = NULL;

        if (count == 0) {
            continue;
        }
        if (IS_V(c)) {
            v_layout(c, count, &v_in, &v_out);
            total = v_in > v_out ? v_in : v_out;
        }
        for (int m = 0; m < M_COUNT; m++) {
            run[m]   = use[m] && (m != M_STAGED || bytes <= staged_max);
            valid[m] = 1;
        }
        h  = malloc(total * sizeof(float));
        ho = malloc(total * sizeof(float));
        s  = gc3_test_alloc(on_device, total * sizeof(float));
        r  = gc3_test_alloc(on_device, total * sizeof(float));
#ifdef GC3_HAVE_CUDA
        if (on_device && run[M_STAGED]) {
            cudaMallocHost(&hs, total * sizeof(float));
            cudaMallocHost(&hr, total * sizeof(float));
        }
#endif
        if (!on_device && run[M_STAGED]) {
            hs = malloc(total * sizeof(float));
            hr = malloc(total * sizeof(float));
        }
        if (h == NULL || ho == NULL || s == NULL || r == NULL || (run[M_STAGED] && (hs == NULL || hr == NULL))) {
            die("out of memory");
        }
        for (size_t i = 0; i < total; i++) {
            h[i] = input_of(rank, i);
        }
        gc3_test_copy(on_device, s, h, total * sizeof(float));
        for (int m = 0; m < M_COUNT; m++) {
            double t = 0, sum = 0;
            int    ok = 1, allok = 1, rc = 0;
            void  *ms = s, *mr = r; /* nccl-reg, nccl-sym: their registered buffers */
            if (!run[m]) {
                continue;
            }
            if (m == M_NCCL_REG || m == M_NCCL_SYM) {
                ms = nreg[m].buf[0];
                mr = nreg[m].buf[1];
                gc3_test_copy(on_device, ms, h, total * sizeof(float));
            }
            if (bench_inplace) {
                gc3_test_copy(on_device, mr, h, total * sizeof(float));
            }
            for (int it = 0; it < warm + iters && ok; it++) {
                double t0;
                if (alt.on && (rc = run_once(m, alt.a2a ? C_ALLTOALL : C_ALLREDUCE, alt.count, alt.s, alt.r, NULL, NULL)) != 0) {
                    report_failure(m, "the --alternate call", alt.bytes, rc);
                    ok = 0;
                    break;
                }
                t0 = MPI_Wtime();
                rc = run_once(m, c, count, ms, mr, hs, hr);
                ok = rc == 0;
                if (it >= warm) {
                    t += MPI_Wtime() - t0;
                }
                if (bench_inplace) { /* the input again, untimed, from the device's copy of it (the send
                                        * buffer): the gap to the next call stays as short as between
                                        * out-of-place calls, within coll_gc3_resident_us (with a copy
                                        * from pageable host memory there, in-place scan and exscan measured
                                        * 15-25 us slower than out-of-place ones on one H100) */
                    gc3_test_copy(on_device, mr, ms, total * sizeof(float));
                }
                MPI_Barrier(MPI_COMM_WORLD);
            }
            t /= iters;
            if (validate && ok) {
                memset(ho, 0, total * sizeof(float));
                /* no stale result passes (in place: the input, which only rank 0's scan keeps) */
                gc3_test_copy(on_device, mr, bench_inplace ? h : ho, total * sizeof(float));
                rc = run_once(m, c, count, ms, mr, hs, hr);
                ok = rc == 0;
                gc3_test_copy(on_device, ho, mr, total * sizeof(float));
                ok = ok && check_result(c, count, ho);
                gc3_test_copy(on_device, ho, ms, v_in * sizeof(float)); /* the send buffer: read only */
                if (ok && memcmp(ho, h, v_in * sizeof(float)) != 0) {
                    fprintf(stderr, "gc3_bench: rank %d: the send buffer changed\n", rank);
                    ok = 0;
                }
                if (ok && alt.on) { /* the last alternate call's result too */
                    size_t atotal = alt.a2a ? alt.count * (size_t)nranks : alt.count;
                    float *ha     = malloc(atotal * sizeof(float));
                    if (ha == NULL) die("out of memory");
                    gc3_test_copy(on_device, ha, alt.r, atotal * sizeof(float));
                    ok = check_result(alt.a2a ? C_ALLTOALL : C_ALLREDUCE, alt.count, ha);
                    free(ha);
                }
            }
            if (rc != 0) {
                report_failure(m, label[m], bytes, rc);
            }
            MPI_Allreduce(&t, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            MPI_Allreduce(&ok, &allok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
            lat[m]   = sum / nranks * 1e6;
            bus[m]   = (double)total * sizeof(float) / (lat[m] * 1e-6) / 1e9 *
                     (a2a ? (double)(nranks - 1) / nranks : c == C_ALLREDUCE ? 2.0 * (nranks - 1) / nranks : 1.0);
            valid[m] = allok;
            failed |= !allok;
            if (IS_NCCL(m) && allok && (best < 0 || lat[m] < lat[best])) {
                best = m;
            }
            if (csv != NULL) {
                fprintf(csv, "%s,%d,%zu,%s,%.3f,%.3f,%.3f,%s\n", coll, nranks, bytes, label[m], lat[m],
                        (double)total * sizeof(float) / (lat[m] * 1e-6) / 1e9, bus[m],
                        !validate ? "unchecked" : allok ? "yes" : "NO");
            }
        }
        if (rank == 0) {
            char c[24];
            int  bad = -1;
            printf("%-10zu", bytes);
            for (int m = 0; m < M_COUNT; m++) {
                snprintf(c, sizeof(c), run[m] ? "%.2f" : "-", lat[m]);
                if (use[m]) printf(" %12s", c);
            }
            for (int m = 0; m < M_COUNT; m++) {
                snprintf(c, sizeof(c), run[m] ? "%.2f" : "-", bus[m]);
                if (use[m]) printf(" %14s", c);
            }
            if (use[M_GC3] && (use[M_NCCL] || use[M_NCCL_REG] || use[M_NCCL_SYM])) {
                ratio_text(c, sizeof(c), best >= 0 ? lat[best] : 0, lat[M_GC3], best >= 0 && run[M_GC3]);
                printf(" %9s %17s", best >= 0 ? method_names[best] : "-", c);
            }
            for (int m = M_STAGED; m <= M_OMPI; m++) {
                if (use[M_GC3] && use[m]) {
                    ratio_text(c, sizeof(c), lat[m], lat[M_GC3], run[m] && run[M_GC3]);
                    printf(" %14s", c);
                }
            }
            for (int m = M_COUNT - 1; m >= 0; m--) {
                bad = run[m] && !valid[m] ? m : bad;
            }
            if (validate) {
                printf(" %s", bad < 0 ? "Pass" : "FAIL(");
                if (bad >= 0) printf("%s)", label[bad]);
            }
            if (plans.R != NULL) {
                char name[160];
                size_t big = count; /* a v-call runs as loops of its largest segment */
                for (int q = 0; IS_V(cidx) && q < nranks; q++) {
                    for (int r = 0; r < nranks; r++) {
                        big = (size_t)v_seg(cidx, count, q, r) > big ? (size_t)v_seg(cidx, count, q, r) : big;
                    }
                }
                plan_name(plan_names[cidx], IS_V(cidx) ? C_ALLTOALL : cidx, big, name, sizeof(name));
                printf(" %s", name);
            }
            printf("\n");
            fflush(stdout);
        }
        gc3_test_free(on_device, s);
        gc3_test_free(on_device, r);
#ifdef GC3_HAVE_CUDA
        if (on_device && run[M_STAGED]) {
            cudaFreeHost(hs);
            cudaFreeHost(hr);
        }
#endif
        if (!on_device && run[M_STAGED]) {
            free(hs);
            free(hr);
        }
        free(h);
        free(ho);
    }
    if (csv != NULL) {
        fclose(csv);
    }
    if (nccl.comm != NULL) {
        nccl_unregister(M_NCCL_SYM);
        nccl_unregister(M_NCCL_REG);
        nccl.comm_destroy(nccl.comm);
    }
    if (alt.on) {
        gc3_test_free(on_device, alt.s);
        gc3_test_free(on_device, alt.r);
    }
    if (comm_ompi != MPI_COMM_NULL) {
        MPI_Comm_free(&comm_ompi);
    }
    gc3_rules_destroy(plans.R);
    MPI_Comm_free(&node);
    MPI_Finalize();
    return failed;
}
