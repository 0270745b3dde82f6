/* An allocation failure is IAPV_E_NO_MEMORY, not an abort (Include/iapverify.h).
 *
 * This program's malloc and realloc stand in for libc's: the library calls them through the
 * dynamic linker, so while `armed` they refuse what the test says. The result JSON is the largest
 * block a call asks for and the only one grown with realloc, so refusing large mallocs, or any
 * realloc, fails the JSON writer while the rest of the call gets its memory. The call must return
 * IAPV_E_NO_MEMORY with no result and the process must go on: the same call answers afterwards.
 * Run from the repository root (Tests/c/run.sh). */
#include <iapverify.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

extern void *__libc_malloc(size_t n);
extern void *__libc_realloc(void *p, size_t n);

static int armed;
static size_t refuse_malloc_from;   /* 0: malloc is never refused */
static int refuse_realloc;
static unsigned refused;

void *malloc(size_t n) {
    if (armed && refuse_malloc_from && n >= refuse_malloc_from) { refused++; return NULL; }
    return __libc_malloc(n);
}

void *realloc(void *p, size_t n) {
    if (armed && refuse_realloc) { refused++; return NULL; }
    return __libc_realloc(p, n);
}

static unsigned char input[1 << 20];

static size_t read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) { fprintf(stderr, "no_memory: cannot open %s\n", path); return 0; }
    size_t n = fread(input, 1, sizeof input, f);
    fclose(f);
    return n;
}

enum call { RECEIPT, ENTITLEMENTS };

static iapv_status run(const iapv_verifier *v, enum call c, size_t len, iapv_result **r, iapv_error *err) {
    const int64_t now_ms = 1893456000000;   /* 2030-01-01 */
    return c == RECEIPT ? iapv_verify_receipt(v, input, len, NULL, 0, now_ms, r, err)
                        : iapv_compute_entitlements(v, input, len, NULL, 0, now_ms, r, err);
}

/* One case: the call unarmed, armed (it must fail cleanly), and unarmed again (the same answer). */
static int check(const char *name, const iapv_verifier *v, enum call c, const char *path, int by_malloc) {
    size_t len = read_file(path);
    if (len == 0) return 1;
    iapv_error err;
    iapv_result *r = NULL;
    if (run(v, c, len, &r, &err) != IAPV_OK) { fprintf(stderr, "no_memory: %s: %s\n", name, err.message); return 1; }
    size_t json_len = 0;
    iapv_result_json(r, &json_len);
    iapv_result_free(r);

    /* Every request at least as large as the answer: only the writer's block is that large. */
    refuse_malloc_from = by_malloc ? json_len : 0;
    refuse_realloc = !by_malloc;
    refused = 0;
    r = (iapv_result *)&err;   /* must be set to NULL */
    armed = 1;
    iapv_status s = run(v, c, len, &r, &err);
    armed = 0;
    if (refused == 0) { fprintf(stderr, "no_memory: %s: no allocation was refused; the case tests nothing\n", name); return 1; }
    if (s != IAPV_E_NO_MEMORY || err.code != IAPV_E_NO_MEMORY || r != NULL || !strstr(err.message, "out of memory")) {
        fprintf(stderr, "no_memory: %s: status %s, result %p, message \"%s\"; want IAPV_E_NO_MEMORY and no result\n",
                name, iapv_status_name(s), (void *)r, s == IAPV_OK ? "" : err.message);
        return 1;
    }

    size_t again_len = 0;
    if (run(v, c, len, &r, &err) != IAPV_OK) { fprintf(stderr, "no_memory: %s: afterwards: %s\n", name, err.message); return 1; }
    iapv_result_json(r, &again_len);
    iapv_result_free(r);
    if (again_len != json_len) { fprintf(stderr, "no_memory: %s: afterwards %zu bytes, before %zu\n", name, again_len, json_len); return 1; }
    printf("ok   %s: %u allocation(s) refused, IAPV_E_NO_MEMORY: %s\n", name, refused, err.message);
    return 0;
}

int main(void) {
    const char *config = "{\"bundle_id\":\"*\",\"environments\":[\"Production\",\"Sandbox\"]}";
    iapv_error err;
    iapv_verifier *v = NULL;
    if (iapv_verifier_new(config, strlen(config), &v, &err) != IAPV_OK) { fprintf(stderr, "no_memory: %s\n", err.message); return 1; }
    const char *fx = "Tests/IAPVerifyTests/Fixtures/receipts/";
    char big[256], grows[256];
    snprintf(big, sizeof big, "%ssandbox_2020-05-06_com.nutcall.alert_187iap.der", fx);
    snprintf(grows, sizeof grows, "%ssandbox_2015-08-31_com.silverlogic.Kidtrol_22iap.der", fx);
    int failures = 0;
    failures += check("a receipt's result block (malloc)", v, RECEIPT, big, 1);
    failures += check("a receipt's result growing (realloc)", v, RECEIPT, grows, 0);
    failures += check("entitlements' result growing (realloc)", v, ENTITLEMENTS, "docs/examples/entitlement-input.json", 0);
    iapv_verifier_free(v);
    if (failures) return 1;
    puts("no_memory: OK");
    return 0;
}
