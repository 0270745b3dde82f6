/* fast_base64.c's portable path, forced: with IAPV_NO_AVX2 in the environment the AVX2 bulk
 * decodes nothing (the Swift decoder then does all of it); without it, on a processor with AVX2,
 * it decodes whole 32-character steps. Built from the source by Tests/c/base64-fallback.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fast_base64.h"

int main(void) {
    const char *text = "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAxMjM0NTY3ODk=";
    uint8_t out[128];
    size_t done = fast_base64_decode((const uint8_t *)text, 64, out);
    printf("%zu\n", done);
    if (done == 64 && memcmp(out, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuv", 48) != 0) {
        fprintf(stderr, "base64_fallback: the AVX2 bulk decoded wrong bytes\n");
        return 1;
    }
    return 0;
}
