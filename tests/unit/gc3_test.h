/* gc3 unit tests: minimal checking macros. Each test program prints one line per failed
 * check and a summary "N passed, M failed"; it exits non-zero when anything failed. */
#ifndef GC3_TEST_H
#define GC3_TEST_H

#include <stdio.h>
#include <stdlib.h>

static int gc3_test_passed, gc3_test_failed;

#define CHECK(cond, ...)                                                              \
    do {                                                                              \
        if (cond) {                                                                   \
            gc3_test_passed++;                                                        \
        } else {                                                                      \
            gc3_test_failed++;                                                        \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                             \
            fputc('\n', stderr);                                                      \
        }                                                                             \
    } while (0)

#define CHECK_OK(expr)                                                                    \
    do {                                                                                  \
        gc3_status_t _s = (expr);                                                         \
        CHECK(_s == GC3_OK, "%s returned %s", #expr, gc3_status_string(_s));             \
    } while (0)

static inline int gc3_test_summary(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, gc3_test_passed, gc3_test_failed);
    return gc3_test_failed ? 1 : 0;
}

/* A whole file as a NUL-terminated string (*len: its bytes), or NULL. */
static inline char *gc3_test_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long  n;

    if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        if (f != NULL) {
            fclose(f);
        }
        return NULL;
    }
    buf = malloc((size_t)n + 1);
    if (buf != NULL && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf != NULL) {
        buf[n] = '\0';
        *len   = (size_t)n;
    }
    return buf;
}

#ifndef GC3_SOURCE_DIR
#error "GC3_SOURCE_DIR must be defined (the build passes it)"
#endif
#define GC3_CORPUS GC3_SOURCE_DIR "/tests/corpus"

#endif
