/*
 * Verify a receipt file with libiapverify and print its entitlements.
 *
 *   cc verify_receipt.c $(pkg-config --cflags --libs iapverify jansson) -o verify_receipt
 *   ./verify_receipt '{"bundle_id":"com.example.app"}' receipt.der [NOW_MS]
 *
 * Exit code: 0 valid, 1 any other verdict, 2 a call that could not answer.
 */
#define _POSIX_C_SOURCE 200809L
#include <iapverify.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static unsigned char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc(n > 0 ? (size_t)n : 1);
    *len = buf ? fread(buf, 1, (size_t)n, f) : 0;
    fclose(f);
    return buf;
}

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: %s CONFIG_JSON RECEIPT [NOW_MS]\n", argv[0]); return 2; }
    if (iapv_abi_version() != IAPV_ABI_VERSION) { fprintf(stderr, "libiapverify ABI mismatch\n"); return 2; }

    iapv_error err;
    iapv_verifier *v = NULL;
    if (iapv_verifier_new(argv[1], strlen(argv[1]), &v, &err) != IAPV_OK) {
        fprintf(stderr, "%s: %s\n", iapv_status_name(err.code), err.message);
        return 2;
    }
    size_t len = 0;
    unsigned char *receipt = read_file(argv[2], &len);
    if (!receipt) { fprintf(stderr, "cannot read %s\n", argv[2]); iapv_verifier_free(v); return 2; }

    iapv_result *r = NULL;
    int64_t now = argc > 3 ? strtoll(argv[3], NULL, 10) : now_ms();
    iapv_status s = iapv_verify_receipt(v, receipt, len, NULL, 0, now, &r, &err);
    free(receipt);
    if (s != IAPV_OK) {
        fprintf(stderr, "%s: %s\n", iapv_status_name(s), err.message);
        iapv_verifier_free(v);
        return 2;
    }
    size_t json_len = 0;
    const char *json = iapv_result_json(r, &json_len);   /* borrowed until iapv_result_free */
    json_error_t jerr;
    json_t *doc = json_loadb(json, json_len, 0, &jerr);
    printf("verdict=%s valid=%d reason=%s\n", iapv_result_verdict(r), iapv_result_is_valid(r),
           json_string_value(json_object_get(doc, "reason")));
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(doc, "entitlements"), i, e) {
        printf("  %s active=%s state=%s\n", json_string_value(json_object_get(e, "id")),
               json_is_true(json_object_get(e, "active")) ? "true" : "false",
               json_string_value(json_object_get(e, "state")));
    }
    json_decref(doc);
    int rc = iapv_result_is_valid(r) ? 0 : 1;
    iapv_result_free(r);
    iapv_verifier_free(v);
    return rc;
}
