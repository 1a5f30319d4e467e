/* gc3c: what the command line's files share (gc3c.c: usage, main; gc3c_options.c: the options several commands take;
 * a file per command: gc3c_verify.c, gc3c_run.c, gc3c_show.c, gc3c_gen.c (gen, list), gc3c_simulate.c). */
#ifndef GC3C_H
#define GC3C_H

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "gc3_cost.h"
#include "gc3_refexec.h"
#include "gc3_rules.h"
#include "gc3_runtime.h"
#include "gc3_verify.h"
#include "gc3_algorithms.h"

#define GC3C_MAX_SIM         8    /* algorithms compared in one simulate run */
#define GC3C_MAX_PARAMS      64   /* --param options of one simulate run */
#define GC3C_MAX_RULES       16   /* --rule lines of one simulate run */
#define GC3C_RUN_CHUNK_ELEMS 1024 /* run's default count: elements per chunk (several: offsets inside a chunk count) */

/* Each command's usage (gc3c COMMAND --help; NULL: every command's) */
void gc3c_usage(FILE *out, const char *cmd);
/* Options: an integer in [lo, hi]; "64", "4K", "1M", "2G"; MIN:MAX; whether option i has its argument
 * (said when not). 1 when good. */
int parse_int(const char *s, long lo, long hi, long *v);
int parse_size(const char *s, uint64_t *v);
int parse_size_range(char *arg, uint64_t *lo, uint64_t *hi);
int need_arg(int i, int argc, const char *opt);
/* A program file read and checked (NULL: said why); its postcondition file (--post), 1 when good. */
gc3_ir_program_t *gc3c_load(const char *path);
int               gc3c_load_post(const char *post, const gc3_ir_program_t *p, gc3_postcond_t **pc_p);
/* The generators' options, shared by gen and simulate --algo (gc3c_options.c). */
void print_algo_list(FILE *out);
int  check_root_option(const char *cmd, const char *algo);
int  parse_gen_option(int argc, char **argv, int *i, gc3_algo_params_t *ap, int *nodes_given);

/* The commands: 0 done, 1 failed, 2 usage. */
int cmd_verify(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_simulate(int argc, char **argv);

#endif
