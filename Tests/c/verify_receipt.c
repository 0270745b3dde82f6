/* A C program built against the *installed* library through pkg-config: verifies a receipt
 * file and prints the verdict. Usage: verify_receipt CONFIG_JSON RECEIPT_FILE NOW_MS */
#include <iapverify.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: %s CONFIG_JSON RECEIPT NOW_MS\n", argv[0]); return 2; }
    if (iapv_abi_version() != IAPV_ABI_VERSION) { fprintf(stderr, "ABI mismatch\n"); return 2; }
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
    iapv_status s = iapv_verify_receipt(v, receipt, len, NULL, 0, strtoll(argv[3], NULL, 10), &r, &err);
    free(receipt);
    if (s != IAPV_OK) {
        fprintf(stderr, "%s: %s\n", iapv_status_name(s), err.message);
        iapv_verifier_free(v);
        return 2;
    }
    size_t json_len = 0;
    const char *json = iapv_result_json(r, &json_len);
    printf("verdict=%s valid=%d json_bytes=%zu json_prefix=%.20s\n", iapv_result_verdict(r), iapv_result_is_valid(r),
           json_len, json);
    int rc = iapv_result_is_valid(r) ? 0 : 1;
    iapv_result_free(r);
    iapv_verifier_free(v);
    return rc;
}
