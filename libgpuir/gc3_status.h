/* gc3 / libgpuir: status codes and diagnostics.
 *
 * Every libgpuir function returns a gc3_status_t; human-readable detail goes into an
 * optional gc3_diag_t (a list of messages, each naming file/line or rank/block/step).
 * Nothing in libgpuir includes an Open MPI header. */
#ifndef GC3_STATUS_H
#define GC3_STATUS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum {
    GC3_IN_PROGRESS       = 1, /* not an error: a nonblocking operation is still under way */
    GC3_OK                = 0,
    GC3_ERR_INVALID_PARAM = -1, /* caller passed something unusable */
    GC3_ERR_NO_MEMORY     = -2,
    GC3_ERR_IO            = -3, /* file could not be read or written */
    GC3_ERR_PARSE         = -4, /* malformed input (XML, rules, postcondition table) */
    GC3_ERR_VERIFY        = -5, /* program breaks a structural or semantic rule */
    GC3_ERR_DEADLOCK      = -6, /* program can block forever */
    GC3_ERR_UNSUPPORTED   = -7, /* valid request this build/program cannot serve */
    GC3_ERR_TIMEOUT       = -8,
    GC3_ERR_MISMATCH      = -9, /* results differ from the expected ones */
    GC3_ERR_IN_USE        = -10 /* a place this process maps already (CUDA IPC: "already mapped") */
} gc3_status_t;

const char *gc3_status_string(gc3_status_t status);

#define GC3_STR_(x) #x
#define GC3_STR(x)  GC3_STR_(x) /* a macro's value as a string literal (help texts of defaults) */

/* A growing list of diagnostic lines. At most max_msgs are kept (default 64); further
 * ones are counted in `dropped`. A NULL gc3_diag_t* is accepted everywhere and discards. */
typedef struct gc3_diag {
    char **msgs;
    int    count;
    int    capacity;
    int    max_msgs;
    int    dropped;
} gc3_diag_t;

/* A message is kept whole, whatever its length (paths included). */
void gc3_diag_init(gc3_diag_t *diag);
void gc3_diag_cleanup(gc3_diag_t *diag);
void gc3_diag_add(gc3_diag_t *diag, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gc3_diag_vadd(gc3_diag_t *diag, const char *fmt, va_list ap);
/* Total number of diagnostics reported (kept + dropped). */
int  gc3_diag_total(const gc3_diag_t *diag);
void gc3_diag_print(const gc3_diag_t *diag, FILE *out, const char *prefix);
/* Does any kept message contain `needle`? (used by tests and tools) */
int  gc3_diag_contains(const gc3_diag_t *diag, const char *needle);

/* Text of any length, for messages (none is cut): a new string formatted as printf does, or NULL
 * when out of memory; the caller frees it. */
char *gc3_strdup_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *gc3_strdup_vprintf(const char *fmt, va_list ap);
/* Append printf text to *s (NULL, or a string of these functions: reallocated). GC3_OK, or
 * GC3_ERR_NO_MEMORY with *s as it was. */
gc3_status_t gc3_str_appendf(char **s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* printf into a buffer of len bytes for text of a known bound (numbers, names of a fixed set): if
 * it does not fit after all, its end is replaced by GC3_CUT_MARK, so that a cut message says so.
 * Returns the length of the whole text, as snprintf. */
#define GC3_CUT_MARK "...[cut]"
int gc3_snprintf_cut(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int gc3_vsnprintf_cut(char *buf, size_t len, const char *fmt, va_list ap);

/* Sizes as people write them: "4096", "64K", "1M", "2G" (binary units, optional trailing B).
 * Returns 1 when the whole text is one; "inf" is not a size here. */
int  gc3_parse_bytes(const char *text, unsigned long long *bytes_p);
/* The reverse, compactly: 65536 -> "64K", ULLONG_MAX -> "inf". */
void gc3_format_bytes(unsigned long long bytes, char *buf, size_t len);

/* FNV-1a over `len` bytes, continuing from `h` (start from GC3_FNV1A_START): the hashes ranks
 * compare (plans, settings, a call's signature). */
#define GC3_FNV1A_START 14695981039346656037ull
uint64_t gc3_fnv1a(uint64_t h, const void *data, size_t len);

#endif
