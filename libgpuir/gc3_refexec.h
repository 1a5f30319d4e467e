/* gc3 / libgpuir: reference executor.
 *
 * Runs an IR program on real host data for all ranks in one process, with the same
 * scheduling engine as the verifier (FIFOs of `slots` slots, dependencies), so it is the
 * oracle for the runtime's tests: whatever the interpreter computes must equal this. */
#ifndef GC3_REFEXEC_H
#define GC3_REFEXEC_H

#include "gc3_ir.h"
#include "gc3_dtype.h"
#include "gc3_verify.h"

typedef struct {
    gc3_dtype_t dtype;
    gc3_op_t    op;
    uint64_t    chunk_elems; /* elements per chunk (see gc3_coll_chunk_elems) */
    int         inplace;     /* 1: outputs[] hold the input data at the in-place positions */
    int         slots;       /* FIFO slots per connection (0 = 8) */
    /* 1: run the program as the runtime does with zero-copy sends (gc3_flat_zc_mark, with rrs steps
     * given a home): a marked send leaves its data in place and its receiver reads it when it
     * receives; receives run as late as the program lets them (every other runnable step first), and
     * a marked send whose data changed before its receiver read it fails the run (GC3_ERR_VERIFY,
     * "zero-copy hazard ..."). A send marked for the push form writes its chunks into its receiver's
     * destination at once and the receiving step moves nothing; a step of that rank touching them
     * before the receiving step ran fails the run alike. The outputs must equal the copying run's.
     * 2: the same with every send of input or output chunks left in place, marked or not; 3: every send
     * whose receiver copies into its input or output pushed, marked or not (tests: the checks can
     * fail). These checks follow one schedule (receives last): a hazard another order would show may
     * pass, and a pulled chunk overwritten with the same value is not seen; the marking itself reasons
     * on every order (gc3_flat_zc_mark). */
    int         zero_copy;
} gc3_refexec_args_t;

/* inputs[r]: i_chunks*chunk_elems elements (ignored when inplace); outputs[r]:
 * o_chunks*chunk_elems elements. */
gc3_status_t gc3_refexec_run(const gc3_ir_program_t *program, const gc3_refexec_args_t *args,
                             void *const *inputs, void *const *outputs, gc3_diag_t *diag);

/* Expected outputs straight from a postcondition table: expected[r][c] = reduction of the
 * listed input chunks (cells marked don't care are left as they are). inputs as above
 * (for in-place runs pass the pre-call contents). */
gc3_status_t gc3_refexec_expected(const gc3_ir_program_t *program, const gc3_postcond_t *postcond,
                                  const gc3_refexec_args_t *args, void *const *inputs,
                                  void *const *expected);

/* Fill n elements with values whose reductions are exact in every dtype (small integers;
 * 1..2 for prod), deterministic in seed. */
void gc3_refexec_fill(gc3_dtype_t dtype, gc3_op_t op, void *buf, size_t n, uint64_t seed);
/* Compare n elements; on the first difference report "what: element I: got X, expected Y"
 * into diag and return GC3_ERR_MISMATCH. */
gc3_status_t gc3_refexec_compare(gc3_dtype_t dtype, const void *got, const void *expected, size_t n,
                                 const char *what, gc3_diag_t *diag);

#endif
