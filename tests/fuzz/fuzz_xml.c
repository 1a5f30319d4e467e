/* libFuzzer target: the MSCCL XML reader, and on what it accepts the writer (round trip
 * must be the identity) and the verifier (on programs small enough to simulate quickly). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "gc3_ir.h"
#include "gc3_verify.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int small_enough(const gc3_ir_program_t *p)
{
    long chunks = 0, steps = 0;
    if (p->ngpus > 16) {
        return 0;
    }
    for (int r = 0; r < p->ngpus; r++) {
        chunks += (long)p->gpus[r].i_chunks + p->gpus[r].o_chunks + p->gpus[r].s_chunks;
        for (int t = 0; t < p->gpus[r].ntbs; t++) {
            steps += p->gpus[r].tbs[t].nsteps;
            for (int s = 0; s < p->gpus[r].tbs[t].nsteps; s++) {
                if (p->gpus[r].tbs[t].steps[s].cnt > 64) {
                    return 0;
                }
            }
        }
    }
    return chunks <= 4096 && steps <= 4096;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gc3_ir_program_t *p = NULL, *q = NULL;
    gc3_diag_t        diag;
    char             *text = NULL;
    size_t            len  = 0;
    FILE             *mem;

    gc3_diag_init(&diag);
    if (gc3_ir_read_memory((const char *)data, size, "fuzz", &diag, &p) != GC3_OK) {
        if (p != NULL || diag.count == 0) {
            abort(); /* a failed read must leave no program and say why */
        }
        gc3_diag_cleanup(&diag);
        return 0;
    }
    mem = open_memstream(&text, &len);
    if (mem == NULL) {
        abort();
    }
    gc3_ir_write_stream(p, mem);
    fclose(mem);
    if (gc3_ir_read_memory(text, len, "fuzz-rewrite", &diag, &q) != GC3_OK || !gc3_ir_equal(p, q)) {
        fprintf(stderr, "round trip broke:\n%s\n", text);
        abort();
    }
    if (small_enough(p)) {
        gc3_verify_opts_t o;
        gc3_verify_opts_default(&o);
        o.nloops = 1;
        (void)gc3_verify(p, &o, &diag);
    } else {
        (void)gc3_verify_structure(p, &diag);
    }
    gc3_ir_program_destroy(q);
    gc3_ir_program_destroy(p);
    free(text);
    gc3_diag_cleanup(&diag);
    return 0;
}
