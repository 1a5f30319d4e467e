/* gc3 / libgpuir: the verifier.
 *
 * Three checks, each diagnostic naming rank, thread block and step:
 *  - structure: ids, peers, buffer bounds, one sender and one receiver block per
 *    (peer, channel) connection, dependencies, send/receive pairs matching in order and size;
 *  - semantics: symbolic execution of all ranks; every output chunk must hold exactly the
 *    collective's postcondition (each contribution once), no uninitialised reads, and (for
 *    programs up to race_max_tbs thread blocks) no two unordered accesses to one chunk where
 *    one is a write (vector clocks over sends, receives and dependencies);
 *  - deadlock freedom: all blocks run against FIFOs of `slots` slots per connection for
 *    `nloops` iterations; if none can move, the wait-for cycle is reported.
 * Blocks are deterministic and FIFOs single-producer single-consumer, so whether a program
 * deadlocks does not depend on the schedule: one simulation decides it. */
#ifndef GC3_VERIFY_H
#define GC3_VERIFY_H

#include "gc3_ir.h"

/* Postcondition: for each (rank, output chunk) the exact multiset of input chunks
 * (src rank, src chunk) whose reduction it must hold (one entry = a copy), or "don't care". */
typedef struct gc3_postcond {
    int       nranks;
    int      *o_chunks;   /* per rank */
    int      *cell_begin; /* per rank: index of its first cell */
    int      *ids_begin;  /* per cell (+1 sentinel): index into ids */
    uint8_t  *dontcare;   /* per cell */
    uint32_t *ids;        /* src_rank * in_stride + src_chunk, sorted per cell */
    int       in_stride;
    int       ncells;
} gc3_postcond_t;

/* The postcondition of the program: its collective's (built in), or for a custom collective the one
 * the program carries (program->post, read from its file); a custom collective without one is an
 * error naming the file (give one with gc3c's --post). */
gc3_status_t gc3_postcond_builtin(const gc3_ir_program_t *program, gc3_diag_t *diag,
                                  gc3_postcond_t **postcond_p);
/* Read an explicit table. Format (one output chunk per line, '#' comments):
 *     RANK OCHUNK : SRCRANK.SRCCHUNK [SRCRANK.SRCCHUNK ...]     (several = a reduction)
 *     RANK OCHUNK : *                                            (don't care)
 * Output chunks not listed are "don't care". */
gc3_status_t gc3_postcond_read_file(const char *path, const gc3_ir_program_t *program,
                                    gc3_diag_t *diag, gc3_postcond_t **postcond_p);
/* A table the readers fill (the text form, <postcondition>): cells[r][c] = NULL for every output
 * chunk (don't care until listed), lists malloc'd by the caller; gc3_postcond_cells_free frees the
 * table and its lists. */
gc3_status_t gc3_postcond_cells_alloc(const gc3_ir_program_t *program, uint32_t ****cells_p);
void         gc3_postcond_cells_free(const gc3_ir_program_t *program, uint32_t ***cells);
/* Build from an in-memory table: cells[r][c] = list of ids terminated by UINT32_MAX,
 * or NULL for don't care. */
gc3_status_t gc3_postcond_create(const gc3_ir_program_t *program, const uint32_t *const *const *cells,
                                 gc3_postcond_t **postcond_p);
void         gc3_postcond_destroy(gc3_postcond_t *postcond);
/* 1 when both say the same of every output chunk */
int          gc3_postcond_equal(const gc3_postcond_t *a, const gc3_postcond_t *b);
/* A deep copy. */
gc3_status_t gc3_postcond_copy(const gc3_postcond_t *postcond, gc3_postcond_t **copy_p);

typedef struct {
    int slots;          /* FIFO slots per connection (default 8) */
    int nloops;         /* loop iterations simulated (default 2) */
    int check_races;    /* default 1 */
    int race_max_tbs;   /* race check only when total thread blocks <= this (default 2048) */
    const gc3_postcond_t *postcond; /* required for custom collectives; overrides the built-in */
} gc3_verify_opts_t;

void gc3_verify_opts_default(gc3_verify_opts_t *opts);

/* Structure only (works on the tree, diagnostics carry file line numbers). */
gc3_status_t gc3_verify_structure(const gc3_ir_program_t *program, gc3_diag_t *diag);
/* Structure, then semantics and deadlock freedom in every declared mode (in-place and/or
 * out-of-place). GC3_OK only when everything holds. opts may be NULL (defaults). */
gc3_status_t gc3_verify(const gc3_ir_program_t *program, const gc3_verify_opts_t *opts,
                        gc3_diag_t *diag);

#endif
