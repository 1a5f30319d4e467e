/* gc3 / libgpuir: status strings and the diagnostics list. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "gc3_status.h"

const char *gc3_status_string(gc3_status_t status)
{
    switch (status) {
    case GC3_IN_PROGRESS:       return "in progress";
    case GC3_OK:                return "success";
    case GC3_ERR_INVALID_PARAM: return "invalid parameter";
    case GC3_ERR_NO_MEMORY:     return "out of memory";
    case GC3_ERR_IO:            return "input/output error";
    case GC3_ERR_PARSE:         return "malformed input";
    case GC3_ERR_VERIFY:        return "verification failed";
    case GC3_ERR_DEADLOCK:      return "deadlock";
    case GC3_ERR_UNSUPPORTED:   return "unsupported";
    case GC3_ERR_TIMEOUT:       return "timeout";
    case GC3_ERR_MISMATCH:      return "results mismatch";
    case GC3_ERR_IN_USE:
        return "already mapped";
    }
    return "unknown status";
}

void gc3_diag_init(gc3_diag_t *diag)
{
    memset(diag, 0, sizeof(*diag));
    diag->max_msgs = 64;
}

void gc3_diag_cleanup(gc3_diag_t *diag)
{
    if (diag == NULL) {
        return;
    }
    for (int i = 0; i < diag->count; i++) {
        free(diag->msgs[i]);
    }
    free(diag->msgs);
    gc3_diag_init(diag);
}

void gc3_diag_vadd(gc3_diag_t *diag, const char *fmt, va_list ap)
{
    char *msg;

    if (diag == NULL) {
        return;
    }
    if (diag->count >= diag->max_msgs) {
        diag->dropped++;
        return;
    }
    if (diag->count == diag->capacity) {
        int    ncap = diag->capacity ? diag->capacity * 2 : 8;
        char **n    = realloc(diag->msgs, (size_t)ncap * sizeof(*n));
        if (n == NULL) {
            diag->dropped++;
            return;
        }
        diag->msgs     = n;
        diag->capacity = ncap;
    }
    if ((msg = gc3_strdup_vprintf(fmt, ap)) == NULL) {
        diag->dropped++;
        return;
    }
    diag->msgs[diag->count++] = msg;
}

void gc3_diag_add(gc3_diag_t *diag, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    gc3_diag_vadd(diag, fmt, ap);
    va_end(ap);
}

char *gc3_strdup_vprintf(const char *fmt, va_list ap)
{
    va_list ap2;
    char   *s;
    int     n;

    va_copy(ap2, ap);
    n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0 || (s = malloc((size_t)n + 1)) == NULL) {
        return NULL;
    }
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

char *gc3_strdup_printf(const char *fmt, ...)
{
    va_list ap;
    char   *s;

    va_start(ap, fmt);
    s = gc3_strdup_vprintf(fmt, ap);
    va_end(ap);
    return s;
}

gc3_status_t gc3_str_appendf(char **s, const char *fmt, ...)
{
    va_list ap;
    char   *more, *n;
    size_t  have = *s != NULL ? strlen(*s) : 0, add;

    va_start(ap, fmt);
    more = gc3_strdup_vprintf(fmt, ap);
    va_end(ap);
    if (more == NULL) {
        return GC3_ERR_NO_MEMORY;
    }
    add = strlen(more);
    if ((n = realloc(*s, have + add + 1)) == NULL) {
        free(more);
        return GC3_ERR_NO_MEMORY;
    }
    memcpy(n + have, more, add + 1);
    free(more);
    *s = n;
    return GC3_OK;
}

int gc3_vsnprintf_cut(char *buf, size_t len, const char *fmt, va_list ap)
{
    int n = vsnprintf(buf, len, fmt, ap);

    if (n >= 0 && (size_t)n >= len && len > 0) {
        const size_t mark = sizeof(GC3_CUT_MARK) - 1;
        if (len > mark) {
            memcpy(buf + len - 1 - mark, GC3_CUT_MARK, mark + 1);
        }
    }
    return n;
}

int gc3_snprintf_cut(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    int     n;

    va_start(ap, fmt);
    n = gc3_vsnprintf_cut(buf, len, fmt, ap);
    va_end(ap);
    return n;
}

int gc3_diag_total(const gc3_diag_t *diag)
{
    return diag ? diag->count + diag->dropped : 0;
}

void gc3_diag_print(const gc3_diag_t *diag, FILE *out, const char *prefix)
{
    if (diag == NULL) {
        return;
    }
    for (int i = 0; i < diag->count; i++) {
        fprintf(out, "%s%s\n", prefix ? prefix : "", diag->msgs[i]);
    }
    if (diag->dropped) {
        fprintf(out, "%s... and %d more\n", prefix ? prefix : "", diag->dropped);
    }
}

int gc3_diag_contains(const gc3_diag_t *diag, const char *needle)
{
    if (diag == NULL) {
        return 0;
    }
    for (int i = 0; i < diag->count; i++) {
        if (strstr(diag->msgs[i], needle) != NULL) {
            return 1;
        }
    }
    return 0;
}

int gc3_parse_bytes(const char *text, unsigned long long *bytes_p)
{
    char              *end;
    unsigned long long x;
    int                shift = 0;

    if (text == NULL || !isdigit((unsigned char)text[0])) {
        return 0;
    }
    errno = 0;
    x     = strtoull(text, &end, 10);
    if (errno != 0 || end == text) {
        return 0;
    }
    switch (*end) {
    case 'K': case 'k': shift = 10; end++; break;
    case 'M': case 'm': shift = 20; end++; break;
    case 'G': case 'g': shift = 30; end++; break;
    default: break;
    }
    if (*end == 'B') {
        end++;
    }
    if (*end != '\0' || (shift && x > (ULLONG_MAX >> shift))) {
        return 0;
    }
    *bytes_p = x << shift;
    return 1;
}

void gc3_format_bytes(unsigned long long b, char *buf, size_t len)
{
    if (b == ULLONG_MAX) {
        snprintf(buf, len, "inf");
    } else if (b >= (1ull << 30) && b % (1ull << 30) == 0) {
        snprintf(buf, len, "%lluG", b >> 30);
    } else if (b >= (1ull << 20) && b % (1ull << 20) == 0) {
        snprintf(buf, len, "%lluM", b >> 20);
    } else if (b >= 1024 && b % 1024 == 0) {
        snprintf(buf, len, "%lluK", b >> 10);
    } else {
        snprintf(buf, len, "%llu", b);
    }
}

uint64_t gc3_fnv1a(uint64_t h, const void *data, size_t len)
{
    const unsigned char *c = data;
    for (size_t i = 0; i < len; i++) {
        h = (h ^ c[i]) * 1099511628211ull;
    }
    return h;
}
