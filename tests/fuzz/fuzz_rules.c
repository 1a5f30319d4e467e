/* libFuzzer target: the rules parser; whatever it accepts must match without crashing. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "gc3_rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char        *text = malloc(size + 1);
    gc3_rules_t *R    = NULL;
    gc3_diag_t   diag;

    if (text == NULL) {
        return 0;
    }
    memcpy(text, data, size);
    text[size] = '\0';
    gc3_diag_init(&diag);
    if (gc3_rules_parse(text, "fuzz", &diag, &R) == GC3_OK) {
        for (int c = 0; c < GC3_COLL_CUSTOM; c++) {
            for (uint64_t b = 0; b < (1ull << 40); b = b * 7 + 1) {
                (void)gc3_rules_match(R, (gc3_coll_t)c, (int)(b % 5) + 1, 4, (gc3_link_t)(b % 3), b);
            }
        }
        gc3_rules_destroy(R);
    } else if (R != NULL || diag.count == 0) {
        abort(); /* a failed parse must leave nothing and say why */
    }
    gc3_diag_cleanup(&diag);
    free(text);
    return 0;
}
