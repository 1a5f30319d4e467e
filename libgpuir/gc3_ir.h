/* gc3 / libgpuir: the IR of a compiled collective algorithm.
 *
 * The model follows the MSCCL XML format (<algo>/<gpu>/<tb>/<step>) field for field, so
 * algorithm files written for MSCCL/RCCL load as they are, and gc3_ir_write_* emits files
 * MSCCL can load. A chunk is (elements of the collective) / nchunksperloop; see
 * gc3_coll_chunk_elems() for what "elements of the collective" is per collective. */
#ifndef GC3_IR_H
#define GC3_IR_H

#include <stdint.h>
#include <stdio.h>
#include "gc3_status.h"

typedef enum {
    GC3_COLL_ALLREDUCE,
    GC3_COLL_ALLTOALL,
    GC3_COLL_ALLGATHER,
    GC3_COLL_REDUCE_SCATTER,
    GC3_COLL_BCAST, /* bcast, reduce, gather, scatter are rooted: a program is compiled for one root */
    GC3_COLL_REDUCE,
    GC3_COLL_GATHER,
    GC3_COLL_SCATTER,
    GC3_COLL_SCAN, /* scan, exscan: prefix reductions (gc3_coll_desc_t.prefix) */
    GC3_COLL_EXSCAN,
    GC3_COLL_CUSTOM, /* anything else: needs an explicit postcondition table */
    GC3_COLL_COUNT
} gc3_coll_t;

typedef enum { GC3_PROTO_SIMPLE, GC3_PROTO_LL, GC3_PROTO_LL128, GC3_PROTO_COUNT } gc3_proto_t;

typedef enum { GC3_BUF_NONE = -1, GC3_BUF_INPUT = 0, GC3_BUF_OUTPUT = 1, GC3_BUF_SCRATCH = 2, GC3_BUF_COUNT = 3 } gc3_buf_t;

typedef enum {
    GC3_STEP_SEND,  /* s    : send src                                             */
    GC3_STEP_RECV,  /* r    : receive into dst                                      */
    GC3_STEP_RCS,   /* rcs  : receive into dst and send it on                       */
    GC3_STEP_RRC,   /* rrc  : receive, reduce with src, store in dst                */
    GC3_STEP_RRS,   /* rrs  : receive, reduce with src, send the result             */
    GC3_STEP_RRCS,  /* rrcs : receive, reduce with src, store in dst and send it    */
    GC3_STEP_CPY,   /* cpy  : local copy src -> dst                                 */
    GC3_STEP_RE,    /* re   : local reduce dst = dst op src                         */
    GC3_STEP_NOP,   /* nop  : no data; carries a dependency                         */
    GC3_STEP_COUNT
} gc3_step_type_t;

/* What a step type does, as bit flags (one table, used by verifier, executors, runtime). */
enum {
    GC3_STEP_F_RECV      = 1 << 0, /* pops a message from the recv peer's FIFO */
    GC3_STEP_F_SEND      = 1 << 1, /* pushes a message to the send peer's FIFO */
    GC3_STEP_F_READ_SRC  = 1 << 2, /* reads local src */
    GC3_STEP_F_WRITE_DST = 1 << 3, /* writes local dst */
    GC3_STEP_F_REDUCE    = 1 << 4, /* combines two values with the op */
    GC3_STEP_F_READ_DST  = 1 << 5  /* reads local dst (re) */
};
unsigned     gc3_step_flags(gc3_step_type_t type);
const char  *gc3_step_type_name(gc3_step_type_t type);
const char  *gc3_coll_name(gc3_coll_t coll);
const char  *gc3_proto_name(gc3_proto_t proto);
/* The protocol gc3's runtime runs a program of `proto` with: itself, except LL128, which gc3 does not
 * implement and runs as Simple (the closest in bandwidth: LL128 carries 120 of every 128 bytes, LL
 * half). The executor, the cost model and the component's messages all ask this. */
gc3_proto_t  gc3_proto_runs_as(gc3_proto_t proto);
char         gc3_buf_char(gc3_buf_t buf); /* 'i' 'o' 's', '-' for none */

/* ---- what a collective is ----
 * One descriptor per gc3_coll_t (the table in ir.c), the one place that says it: the executor
 * (segments, in-place buffers), the built-in postconditions, the reference executor, the XML
 * reader's in-place form, the compiler's traces, the rules, the tools and the MPI component all
 * read it. A buffer holds one segment (allreduce's input and output, allgather's input,
 * reduce_scatter's output) or one segment per rank (alltoall's both, allgather's output,
 * reduce_scatter's input); a segment is k = nchunksperloop / (ngpus when a buffer has a segment
 * per rank, else 1) chunks. Output chunk j*k+m of rank r (j: its segment, m < k) is input chunk
 * s*k+m of rank j (s = r when the input has a segment per rank, else 0); a reducing collective
 * combines that input chunk of every rank instead. In an in-place call the inner buffer lives
 * inside the other one, at this rank's segment of it (slice) or at its start.
 * Rooted collectives (bcast, reduce, gather, scatter): one buffer is the root's only (root_buf); the
 * others' is not significant and is never read or written (MPI lets them pass NULL). Where the output
 * has one segment the source is the root instead of rank j: bcast's output chunk m of every rank is
 * input chunk m of the root; scatter's output chunk m of rank r is input chunk r*k+m of the root.
 * Gather is allgather's rule at the root only (output chunk j*k+m is input chunk m of rank j);
 * reduce's output chunk m of the root combines input chunk m of every rank. gc3_coll_access says
 * which buffers a rank may touch. A prefix reduction combines input chunk m of ranks 0 to r (scan) or
 * 0 to r-1 (exscan: rank 0's output is not significant and never touched) into rank r's output chunk m. */
typedef struct {
    gc3_coll_t  coll;
    const char *name;          /* gc3's and the IR's: "allreduce", ..., "reduce_scatter", "custom" */
    const char *mpi_name;      /* the MPI call's (rules format, messages): "reduce_scatter_block" */
    const char *aliases[3];    /* other spellings read (MSCCL, RCCL, msccl-tools), NULL-terminated */
    int         in_per_rank;   /* the input holds one segment per rank */
    int         out_per_rank;  /* the output holds one segment per rank */
    int         reduces;       /* the result combines every rank's input with the op */
    int         builtin_post;  /* the postcondition follows from the above (0: custom, carried) */
    gc3_buf_t   inplace_inner; /* in place: the buffer that lives inside the other */
    int         inplace_slice; /* ... at this rank's segment of the other (1) or at its start (0) */
    int         rooted;        /* one rank is the root ... */
    gc3_buf_t   root_buf;      /* ... and the only one with this buffer (bcast, scatter: the input; reduce,
                                  gather: the output); GC3_BUF_NONE when not rooted */
    int         prefix;        /* a prefix reduction: 1 inclusive (scan), 2 exclusive (exscan), else 0 */
    const char *v_name;        /* the MPI call with per-rank counts that runs on this collective's plans
                                  ("alltoallv", ..., "reduce_scatter"); NULL: none */
} gc3_coll_desc_t;
/* The descriptor of coll (custom's for a value out of range: never NULL). */
const gc3_coll_desc_t *gc3_coll_desc(gc3_coll_t coll);
/* What rank `rank` of a collective with root `root` (-1: not rooted) may do with its buffer `buf`
 * (input or output; scratch is always both): GC3_COLL_ACC_READ | GC3_COLL_ACC_WRITE, or 0 when the
 * buffer is not there (a non-root's root_buf: bcast's and scatter's input, reduce's and gather's output). Out-of-place inputs
 * are read-only for every collective; this says what in-place calls allow too, so a reduce's
 * non-root never writes its input (its send buffer, whatever the root's call). */
enum { GC3_COLL_ACC_READ = 1, GC3_COLL_ACC_WRITE = 2 };
unsigned     gc3_coll_access(gc3_coll_t coll, int root, int rank, gc3_buf_t buf);
/* Segments of `buf` (input or output) of coll: 1, or ngpus when it has one per rank. */
int          gc3_coll_segments(gc3_coll_t coll, gc3_buf_t buf, int ngpus);
/* The size the rules match a call of coll by (gc3_rules.h's bytes column; coll_gc3_max_bytes): seg_bytes, the
 * bytes of its largest segment (a v-call: of any rank's), times the segments of its larger buffer. The component,
 * gc3c and gc3_info all count a call with it. */
uint64_t gc3_coll_call_bytes(gc3_coll_t coll, int ngpus, uint64_t seg_bytes);
/* A call with per-rank counts (MPI's v-collectives; gc3_call_t.segs): where each segment of a rank's
 * buffers starts and how many elements it holds, as a table of words: word 0 the index of the output's
 * first pair, then a pair {first element, elements} per segment of the input, then per segment of the
 * output (gc3_coll_segments; a buffer of one segment: its one pair). Segments may be out of rank order,
 * with gaps, and empty; elements outside them are never touched. The table's words for coll on ngpus
 * ranks (0 for custom collectives, which have none): */
size_t gc3_coll_segs_words(gc3_coll_t coll, int ngpus);
/* Pair s of buffer buf (input or output) of such a table: its first element and its elements. */
static inline const uint64_t *gc3_coll_segs_pair(const uint64_t *segs, gc3_buf_t buf, int s)
{
    return segs + 1 + 2 * ((buf == GC3_BUF_OUTPUT ? segs[0] : 0) + (uint64_t)s);
}
/* Chunks of a segment of coll with nchunksperloop chunks on ngpus ranks (0 when they do not divide). */
int          gc3_coll_segment_chunks(gc3_coll_t coll, int nchunksperloop, int ngpus);
/* The collective a name stands for: gc3's own names, and the spellings of MSCCL, RCCL, msccl-tools
 * and MPI ("reducescatter", "reduce-scatter", "reduce_scatter_block"). Unknown names: custom,
 * GC3_ERR_UNSUPPORTED. Names are for reading and printing; code compares gc3_coll_t. */
gc3_status_t gc3_coll_from_name(const char *name, gc3_coll_t *coll_p);
/* The same for the tools' questions about MPI calls: the v-forms too (v_name: "alltoallv" is alltoall, whose plans
 * run it with per-rank counts; *v_p 1 then, else 0). Not for rules, which name the collectives of the plans. */
gc3_status_t gc3_coll_from_call_name(const char *name, gc3_coll_t *coll_p, int *v_p);
/* The MPI names of the collectives gc3 runs (every one but custom), "allreduce, alltoall, ...", into
 * buf (cut to len): what messages list as the accepted names, from the table. */
void         gc3_coll_mpi_names(char *buf, size_t len);
gc3_status_t gc3_proto_from_name(const char *name, gc3_proto_t *proto_p);

/* Attributes the model does not know; kept so that a file round-trips. */
typedef struct { char *name; char *value; } gc3_ir_attr_t;
typedef struct { int count; gc3_ir_attr_t *attrs; } gc3_ir_extra_t;

typedef struct {
    int             s;        /* index within the thread block (must equal its position) */
    gc3_step_type_t type;
    gc3_buf_t       srcbuf;
    int             srcoff;   /* chunk index, -1 when unused */
    gc3_buf_t       dstbuf;
    int             dstoff;
    int             cnt;      /* number of consecutive chunks */
    int             depid;    /* thread block this step waits for, -1 none */
    int             deps;     /* step index in depid */
    int             hasdep;   /* 1 when another block depends on this step */
    int             line;     /* source line (0 when built in memory) */
    gc3_ir_extra_t  extra;
} gc3_ir_step_t;

typedef struct {
    int            id;
    int            send;      /* peer rank this block sends to, -1 none */
    int            recv;      /* peer rank this block receives from, -1 none */
    int            chan;
    int            nsteps;
    gc3_ir_step_t *steps;
    int            line;
    gc3_ir_extra_t extra;
} gc3_ir_tb_t;

typedef struct {
    int            id;
    int            i_chunks, o_chunks, s_chunks;
    int            ntbs;
    gc3_ir_tb_t   *tbs;
    int            line;
    gc3_ir_extra_t extra;
} gc3_ir_gpu_t;

struct gc3_postcond; /* gc3_verify.h */

typedef struct gc3_ir_program {
    char          *name;
    gc3_coll_t     coll;
    char          *coll_name;     /* as written (custom collectives keep their name) */
    gc3_proto_t    proto;
    int            nchannels;
    int            nchunksperloop;
    int            ngpus;
    int            inplace;
    int            outofplace;
    int            root;          /* rooted collectives (bcast, reduce): the root it was compiled for, in
                                   * [0, ngpus); -1 for the others. In the file: <algo root="R"> (gc3's
                                   * extension: MSCCL files carry no root) */
    uint64_t       min_bytes;
    uint64_t       max_bytes;     /* 0 = no upper bound */
    uint64_t       fifo_cap;      /* runtime: the most FIFO memory a plan of it may take on a rank, when
                                   * lower than the executor's fifo_bytes (its ranks agree on it to fit
                                   * their memory budget); 0: the executor's. Not in the file. */
    int            no_zc;         /* runtime: its plans copy every message through the FIFOs, whatever the
                                   * executor's zero_copy (a rule's zero_copy=off). Not in the file; in
                                   * gc3_ir_hash when set (the ranks agree on it) */
    int            zc_pull;       /* runtime: its plans' zero-copy never pushes (a rule's zero_copy=pull),
                                   * whatever the executor's zc_pull. Not in the file; in gc3_ir_hash when
                                   * set */
    /* In the file, MSCCL's in-place form: the buffer that lives inside the other (allreduce,
     * alltoall, reduce_scatter: the output; allgather: the input) is given with 0 chunks and the
     * steps name the one that holds both, as msccl-tools writes in-place programs. The model always
     * has both buffers at their full size (the reader fills in the one the file leaves at 0), and
     * the writer writes this form back (gc3_ir_inplace_alias is the mapping). */
    int            msccl_inplace;
    /* attributes of <algo> gc3 reads but does not need: checked against the program (a
     * difference is a warning), written back when the file had them (0 / NULL: absent) */
    int            nthreadblocks; /* thread blocks of the widest rank */
    int            maxcount;      /* the largest cnt of a step */
    char          *redop;         /* redop= or op=: the reduction the program was written for; gc3
                                     runs it with the call's operator (a program moves and combines
                                     chunks, whatever the operator) */
    /* custom collectives: the postcondition the program carries (<postcondition> in the file, an
     * element MSCCL ignores), NULL when none; gc3_verify uses it when no other is given */
    struct gc3_postcond *post;
    gc3_ir_gpu_t  *gpus;          /* ngpus entries, gpus[r].id == r */
    char          *source;        /* file name for diagnostics, or NULL */
    gc3_ir_extra_t extra;
} gc3_ir_program_t;

/* Limits the reader enforces (absurd sizes are errors, not allocations). */
#define GC3_IR_MAX_GPUS      65536
#define GC3_IR_MAX_CHUNKS    (1 << 24)
#define GC3_IR_MAX_TBS       4096
#define GC3_IR_MAX_STEPS     (1 << 20)
#define GC3_IR_MAX_CHANNELS  1024

/* FIFO slots per connection by default: what the compiler schedules for (no connection ever has more
 * messages in flight, so a program runs with this many or more), what the executor and coll/gc3 give
 * each connection. 4 slots matched the bandwidth of 8 of the same size, at half the memory, on 2 x H100
 * (NVLink) and 1 x H100 (doc/measurements/fifo-pool-slots-2xh100.txt). The verifier's default stays
 * 8 (MSCCL's depth): a file read with 8 is verified again by a plan given fewer. */
#define GC3_FIFO_SLOTS_DEFAULT 4

/* ---- construction and lifetime ---- */
gc3_status_t gc3_ir_program_create(const char *name, gc3_coll_t coll, int ngpus,
                                   int nchunksperloop, gc3_ir_program_t **program_p);
void         gc3_ir_program_destroy(gc3_ir_program_t *program);
/* A hash of what the program does (names, collective, protocol, channels, chunks, buffers, thread
 * blocks, steps and their dependencies; not where it was read from): ranks compare it before they
 * run a plan together. */
uint64_t     gc3_ir_hash(const gc3_ir_program_t *program);
/* A deep copy (gc3_ir_equal to the original). */
gc3_status_t gc3_ir_program_clone(const gc3_ir_program_t *program, gc3_ir_program_t **program_p);
/* The thread blocks of the program's widest rank. */
int          gc3_ir_widest_rank(const gc3_ir_program_t *program);
/* Append a thread block to rank `rank`; returns a pointer valid until the next append. */
gc3_status_t gc3_ir_add_tb(gc3_ir_program_t *program, int rank, int send, int recv, int chan,
                           gc3_ir_tb_t **tb_p);
gc3_status_t gc3_ir_add_step(gc3_ir_tb_t *tb, gc3_step_type_t type,
                             gc3_buf_t srcbuf, int srcoff, gc3_buf_t dstbuf, int dstoff, int cnt,
                             int depid, int deps, gc3_ir_step_t **step_p);
/* Set hasdep on every step some other step depends on (and clear it elsewhere). */
void         gc3_ir_update_hasdep(gc3_ir_program_t *program);
/* Deep structural equality (extras and the carried postcondition included). Returns 1 when equal. */
int          gc3_ir_equal(const gc3_ir_program_t *a, const gc3_ir_program_t *b);

/* ---- in-place calls ----
 * An in-place call has one buffer per rank, and one of the program's buffers lives inside the
 * other: allreduce, alltoall and custom collectives: output chunk c is input chunk c; allgather:
 * input chunk k is output chunk rank*i_chunks + k (this rank's slice of the output);
 * reduce_scatter: output chunk k is input chunk rank*o_chunks + k. Returns 1 and the chunk it is
 * when (buf, chunk) of `rank` is such an alias (in range), else 0. The one place of this mapping:
 * the verifier, the reference executor, the MSCCL form of the reader and writer and
 * gc3_ir_copy_first use it; the runtime places its buffer pointers the same way. */
int          gc3_ir_inplace_alias(gc3_coll_t coll, int rank, int i_chunks, int o_chunks, gc3_buf_t buf, int chunk,
                                  gc3_buf_t *home_buf_p, int *home_chunk_p);
/* The out-of-place form of an in-place program, for out-of-place calls: every rank first copies its
 * input (the send buffer, read-only) to where the in-place program expects it (the output, or
 * scratch where the output does not cover it: reduce_scatter), its thread blocks sharing the copy
 * and waiting for each other (nop steps), then runs the program with every in-place chunk renamed
 * accordingly. The copy is part of the program, so the verifier checks it, both backends run it
 * and the cost model counts it. The result is out-of-place only (inplace 0). MSCCL and RCCL do not
 * use an in-place-only program for an out-of-place call; gc3 runs it after this copy. */
gc3_status_t gc3_ir_copy_first(const gc3_ir_program_t *program, gc3_ir_program_t **program_p);

/* ---- MSCCL XML I/O (libxml2) ----
 * Reading never returns a partly-filled program: on error *program_p is NULL and diag holds
 * "FILE:LINE: what is wrong". On success diag may hold warnings ("FILE:LINE: warning: ..."):
 * attributes gc3 does not know (kept, so the file round-trips, but not used), unknown elements
 * (ignored), and nthreadblocks/maxcount that disagree with the program. The writer writes every
 * step's srcbuf and dstbuf (MSCCL's readers need both; an unused one is written as i/o with offset
 * -1 and read back as none), and a program read in MSCCL's in-place form in that form. */
gc3_status_t gc3_ir_read_file(const char *path, gc3_diag_t *diag, gc3_ir_program_t **program_p);
gc3_status_t gc3_ir_read_memory(const char *data, size_t size, const char *name,
                                gc3_diag_t *diag, gc3_ir_program_t **program_p);
gc3_status_t gc3_ir_write_file(const gc3_ir_program_t *program, const char *path, gc3_diag_t *diag);
gc3_status_t gc3_ir_write_stream(const gc3_ir_program_t *program, FILE *out);
/* Release libxml2's global state (only at process exit; tools and tests). */
void         gc3_ir_xml_cleanup(void);

/* ---- elements of a collective ----
 * `count` is the MPI count of the call: per rank for allreduce, per peer for alltoall,
 * the send count for allgather and the receive count for reduce_scatter. The program's
 * chunk is total/nchunksperloop elements where total = count (allreduce),
 * count*ngpus (alltoall, allgather, reduce_scatter); custom: count. A total that does
 * not divide into chunks is GC3_ERR_UNSUPPORTED (callers take a remainder path or fall
 * back; nothing is truncated). */
gc3_status_t gc3_coll_chunk_elems(const gc3_ir_program_t *program, uint64_t count,
                                  uint64_t *chunk_elems_p);

/* ---- flat form: arrays a kernel can walk ----
 * One contiguous, pointer-free allocation (can be memcpy'd to a device): header, ranks,
 * thread blocks, steps. Thread blocks of rank r are tbs[ranks[r].tb_begin ...]. */
typedef struct {
    uint8_t type, srcbuf, dstbuf, hasdep; /* buffers: gc3_buf_t, GC3_BUF_NONE stored as 255 */
    int32_t srcoff, dstoff, cnt;
    int32_t dep_tb;   /* local thread block index on the same rank, -1 none */
    int32_t dep_step;
    int32_t fuse;     /* 0 from gc3_flat_create; gc3_flat_fuse: this step and the next `fuse` steps of
                       * its block run as one pass */
    int32_t zc;       /* 0 from gc3_flat_create; gc3_flat_zc_mark: GC3_FLAT_ZC_* bits */
    int32_t push_buf; /* a send marked for the push form (GC3_FLAT_ZC_PUSH_*): the receiving step's */
    int32_t push_off; /* destination, buffer (input or output) and first chunk; 0 otherwise */
} gc3_flat_step_t;

typedef struct {
    int32_t send, recv, chan, nsteps;
    int32_t step_begin; /* index into steps[] */
    int32_t rank;
} gc3_flat_tb_t;

typedef struct {
    int32_t i_chunks, o_chunks, s_chunks;
    int32_t ntbs, tb_begin; /* index into tbs[] */
} gc3_flat_rank_t;

typedef struct {
    uint32_t magic;          /* GC3_FLAT_MAGIC */
    int32_t  coll, proto;
    int32_t  nranks, nchunksperloop, nchannels;
    int32_t  inplace, outofplace;
    int32_t  root;           /* gc3_ir_program_t's: -1, or a rooted collective's root */
    int32_t  ntbs, nsteps;   /* totals over all ranks */
    uint64_t bytes;          /* size of the whole allocation */
    uint64_t ranks_off, tbs_off, steps_off; /* byte offsets from the header */
} gc3_flat_program_t;

#define GC3_FLAT_MAGIC 0x67633346u /* "gc3F" */
#define GC3_FLAT_BUF_NONE 255

gc3_status_t gc3_flat_create(const gc3_ir_program_t *program, gc3_flat_program_t **flat_p);
void         gc3_flat_destroy(gc3_flat_program_t *flat);
/* Mark, in the blocks of `rank`, the runs of local steps an executor may do in one pass: a cpy or
 * re, then re steps into the same chunks of the same buffer whose sources are scratch chunks apart
 * from those chunks, at most `max_srcs` operands in all; no step of a run but its last is waited
 * for by another block (so nobody sees the partial results), and a cpy's source is its destination
 * or apart from it. The run's first step gets fuse = the number of steps that follow it in the run.
 * One pass computes dst = x0 op x1 op ... in the order the steps would: the same result, elementwise.
 * Returns the number of runs marked. */
int          gc3_flat_fuse(gc3_flat_program_t *flat, int rank, int max_srcs);
/* For block `tb` of `rank`: the block of the peer on the other end of its sending (receiving)
 * connection (same channel), -1 when none. */
int          gc3_flat_peer_receiver(const gc3_flat_program_t *flat, int rank, int tb);
int          gc3_flat_peer_sender(const gc3_flat_program_t *flat, int rank, int tb);
/* Where a chunk of `buf` of `rank` lives in the rank's location space of i_chunks + o_chunks +
 * s_chunks chunks, with the collective's in-place aliasing applied when `inplace` (input and
 * output are then one buffer): -1 when out of range. */
int          gc3_flat_location(const gc3_flat_program_t *flat, int rank, int inplace, int buf, int chunk);
int          gc3_flat_nlocations(const gc3_flat_program_t *flat, int rank);

/* ---- zero-copy sends (doc/design/zero-copy.md) ----
 * A send of Simple may leave its data where it is, in the sender's input or output buffer, for the
 * receiver to read it there (the receiver has mapped the sender's buffer, a registered user buffer),
 * instead of copying it into the receiver's FIFO. gc3_flat_zc_mark decides, per send step of `rank`
 * and per kind of call (out of place, in place), whether the program allows it:
 *   - the data sent is in the input or output buffer (not scratch), its chunks contiguous (one
 *     segment), and its place at the sender is its final home for the time the receiver reads it:
 *   - every other step of the rank that writes any of its chunks (in-place aliasing applied)
 *     happens before the send, or after the receiving step (paths of program order, dependencies
 *     and messages: the receiver's read is over before the overwrite can start);
 * With home_rrs, an rrs step (receive, reduce, send the result, which has no place of its own) of an
 * input or output chunk whose result can be kept in the output chunk of the same index until its
 * receiver read it (every read of
 * that chunk at the rank happens before the step, or after a write that follows the receiving step;
 * every other write before the step or after the receiving step; one such later write exists, so the
 * output ends right) becomes rrcs into that chunk, in every kind of call the program supports; then
 * it is marked like the others (never where the rank may not write its output: a reduce's non-root,
 * gc3_coll_access). Programs of more than GC3_ZC_MAX_STEPS steps are not analysed (no
 * zero-copy sends). The same result on every rank for the same program. rank -1: every rank (one
 * analysis of the program's graph for all). Returns the number of send steps marked (for some kind of
 * call); stats (may be NULL) counts them over the ranks marked. */
/* A send is also marked for the push form (doc/design/zero-copy.md, "The push form": in zero-copy
 * mode the sender writes into the receiver's buffer) when its sender may write its chunks straight
 * into the destination of the receiving step at the send: that step copies (recv, rcs) or reduces into
 * (rrc, rrcs: the pushed chunks land where the result goes, and the step reduces them there with its
 * operand, which must not be that place) chunks of the input or output in one segment, and every other
 * step of the receiver that reads or writes them (in-place aliasing applied) happens before the send or after the receiving step; one that sends them
 * from where they are (where they may be left for their reader) has its reader before the send too.
 * Every rank's rrs steps are homed first (home_rrs), so a reduction's landing place is its home. Such
 * a send's push_buf and push_off name where the receiver takes the chunks. */
enum {
    GC3_FLAT_ZC_OOP      = 1, /* out-of-place calls may send this step's data in place */
    GC3_FLAT_ZC_IP       = 2, /* in-place calls may */
    GC3_FLAT_ZC_HOMED    = 4, /* an rrs made rrcs (its result kept in the output) */
    GC3_FLAT_ZC_PUSH_OOP = 8, /* out-of-place calls may push this step's data to its receiver */
    GC3_FLAT_ZC_PUSH_IP  = 16 /* in-place calls may */
};
#define GC3_ZC_MAX_STEPS 65536
typedef struct {
    int sends;             /* the rank's send steps */
    int oop, ip;           /* of them, marked for out-of-place and in-place calls */
    int homed;             /* rrs steps given a home */
    int push_oop, push_ip; /* sends marked for the push form, out of place and in place */
} gc3_zc_stats_t;
/* The receiving step of each send step (global step indices; -1: none, or not a send): the k-th send
 * of a connection is taken by the k-th receive of its peer block. match: nsteps ints. */
void         gc3_flat_match_sends(const gc3_flat_program_t *flat, int *match);
int          gc3_flat_zc_mark(gc3_flat_program_t *flat, int rank, int home_rrs, gc3_zc_stats_t *stats);
/* The chunks of buffer `buf` a step sends, as the chunk range [*off_p, *off_p + cnt) of that buffer:
 * the source of s, the destination of rcs and rrcs; 0 for other steps (rrs: nothing has a place). */
int          gc3_flat_sent_chunks(const gc3_flat_step_t *st, int *buf_p, int *off_p);

static inline const gc3_flat_rank_t *gc3_flat_ranks(const gc3_flat_program_t *f)
{ return (const gc3_flat_rank_t *)((const char *)f + f->ranks_off); }
static inline const gc3_flat_tb_t *gc3_flat_tbs(const gc3_flat_program_t *f)
{ return (const gc3_flat_tb_t *)((const char *)f + f->tbs_off); }
static inline const gc3_flat_step_t *gc3_flat_steps(const gc3_flat_program_t *f)
{ return (const gc3_flat_step_t *)((const char *)f + f->steps_off); }

#endif
