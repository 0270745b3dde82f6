/*
 * One C driver for the hardening runs, through the public C ABI only:
 *   driver leak N            N calls of each entry point (valid, invalid and error paths)
 *   driver soak N            N receipt verifications; prints resident-set growth after warm-up
 *   driver stress THREADS N  THREADS threads x N mixed calls on one verifier; every result must
 *                            equal the single-threaded one (compared by hash)
 * Run from the repository root (it reads the test fixtures).
 */
#define _GNU_SOURCE
#include <iapverify.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FX "Tests/IAPVerifyTests/Fixtures/"

typedef struct { const char *kind; unsigned char *data; size_t len; const char *options; } input;

static unsigned char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) { fprintf(stderr, "cannot read %s\n", path); exit(2); }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)n + 1);
    *len = fread(buf, 1, (size_t)n, f);
    fclose(f);
    return buf;
}

static input inputs[32];
static int ninputs;

static void add_file(const char *kind, const char *path, const char *options) {
    input *in = &inputs[ninputs++];
    in->kind = kind;
    in->data = read_file(path, &in->len);
    in->options = options;
}

static void add_text(const char *kind, const char *text, const char *options) {
    input *in = &inputs[ninputs++];
    in->kind = kind;
    in->len = strlen(text);
    in->data = malloc(in->len + 1);
    memcpy(in->data, text, in->len + 1);
    in->options = options;
}

static void load_inputs(void) {
    add_file("receipt", FX "receipts/production_2025-04-18_com.dashedspace.analytics_sha256.der", NULL);
    add_file("receipt", FX "receipts/sandbox_2020-07-22_com.revenuecat.sampleapp.der", "{\"delivered_transaction_ids\":[\"1000000692879214\"]}");
    add_file("receipt", FX "receipts/production_2015-09-16_com.mustafadur.Kargotakip.der", NULL);
    add_file("receipt", FX "xcode/xcode_2023-10-19_backyardbirds_with_transaction.der", NULL);
    add_file("receipt", FX "fakepki/tampered_payload.der", NULL);
    add_file("receipt", FX "hostile/r_truncated_10.der", NULL);
    add_file("receipt", FX "hostile/r_base64_good.txt", NULL);
    add_text("receipt", "garbage", NULL);
    add_text("receipt", "x", "{\"colour\":1}");                       /* IAPV_E_INVALID_ARGUMENT */
    add_file("response", FX "verifyreceipt/revenuecat_sandbox_status0_2020-07-22_paired.json", "{\"endpoint\":\"sandbox\"}");
    add_file("response", FX "verifyreceipt/alexalok_Invalid_Receipt_Is_From_Test_Environment.json", NULL);
    add_file("response", FX "verifyreceipt/venice_ios6style_status21006_expired.json", NULL);
    add_file("response", FX "hostile/j_deep_objects.json", NULL);
    add_text("response", "{\"status\":21005}", "{\"attempt\":3}");
    add_file("entitlements", FX "hostile/e_good.json", "{\"orders\":[{\"order_id\":\"o\",\"product_id\":\"p\",\"created_ms\":500}]}");
    add_file("entitlements", FX "hostile/e_shape_3.json", NULL);
}

static const char *CONFIG =
    "{\"bundle_id\":\"*\",\"environments\":[\"Production\",\"Sandbox\"],"
    "\"products\":{\"p\":{\"type\":\"auto_renewable\",\"group\":\"g\"}}}";

static unsigned long long fnv(const char *s, size_t n) {
    unsigned long long h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) { h ^= (unsigned char)s[i]; h *= 1099511628211ULL; }
    return h;
}

/* Runs one input; returns a hash of the whole answer (status + verdict + JSON). */
static unsigned long long call(const iapv_verifier *v, const input *in) {
    iapv_result *r = NULL;
    iapv_error err;
    size_t olen = in->options ? strlen(in->options) : 0;
    iapv_status s;
    if (strcmp(in->kind, "receipt") == 0)
        s = iapv_verify_receipt(v, in->data, in->len, in->options, olen, 1893456000000LL, &r, &err);
    else if (strcmp(in->kind, "response") == 0)
        s = iapv_interpret_response(v, in->data, in->len, in->options, olen, 1595440000000LL, &r, &err);
    else
        s = iapv_compute_entitlements(v, in->data, in->len, in->options, olen, 3000, &r, &err);
    if (s != IAPV_OK) return fnv(err.message, strlen(err.message)) ^ (unsigned long long)(s + 100);
    size_t n = 0;
    const char *json = iapv_result_json(r, &n);
    unsigned long long h = fnv(json, n) ^ fnv(iapv_result_verdict(r), strlen(iapv_result_verdict(r)));
    iapv_result_free(r);
    return h;
}

static long rss_kib(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0) kib = strtol(line + 6, NULL, 10);
    if (f) fclose(f);
    return kib;
}

static iapv_verifier *make_verifier(void) {
    iapv_verifier *v = NULL;
    iapv_error err;
    if (iapv_verifier_new(CONFIG, strlen(CONFIG), &v, &err) != IAPV_OK) { fprintf(stderr, "%s\n", err.message); exit(2); }
    return v;
}

/* N calls of each entry point, cycling through that entry point's inputs. */
static int leak(long n) {
    iapv_verifier *v = make_verifier();
    const char *kinds[] = {"receipt", "response", "entitlements"};
    for (int e = 0; e < 3; e++) {
        long done = 0;
        while (done < n)
            for (int i = 0; i < ninputs && done < n; i++)
                if (strcmp(inputs[i].kind, kinds[e]) == 0) { call(v, &inputs[i]); done++; }
    }
    /* Error paths and handle churn. */
    iapv_result *r = NULL;
    iapv_error err;
    for (long k = 0; k < n; k++) {
        iapv_verify_receipt(NULL, NULL, 0, NULL, 0, 0, &r, &err);
        iapv_verify_receipt(v, NULL, 5, NULL, 0, 0, &r, &err);
        iapv_verifier *rejected = NULL;
        iapv_verifier_new("{\"colour\":1}", 12, &rejected, &err);
    }
    for (long k = 0; k < n / 50 + 1; k++) iapv_verifier_free(make_verifier());
    /* App Store Server API: signer churn, tokens, requests (good and refused), answers. */
    size_t signer_len;
    char *signer_config = (char *)read_file("Tests/shared/fakeapple/signer.json", &signer_len);
    const char *call_ok = "{\"endpoint\":\"transaction_history\",\"transaction_id\":\"2001\",\"query\":{\"productType\":[\"CONSUMABLE\"]}}";
    const char *call_bad = "{\"endpoint\":\"transaction_info\",\"transaction_id\":\"../x\"}";
    const char *answer_options = "{\"endpoint\":\"transaction_info\",\"http_status\":429,\"retry_after\":\"x\",\"attempt\":2}";
    const char *answer = "{\"errorCode\":4290000,\"errorMessage\":\"Rate limit exceeded.\"}";
    for (long k = 0; k < n; k++) {
        iapv_signer *s = NULL;
        if (iapv_signer_new(signer_config, signer_len, &s, &err) != IAPV_OK) { fprintf(stderr, "%s\n", err.message); exit(2); }
        if (iapv_api_token(s, 1767225600000, &r, &err) == IAPV_OK) iapv_result_free(r);
        if (iapv_api_request(s, call_ok, strlen(call_ok), 1767225600000, &r, &err) == IAPV_OK) iapv_result_free(r);
        iapv_api_request(s, call_bad, strlen(call_bad), 1767225600000, &r, &err);
        iapv_api_request(NULL, call_ok, strlen(call_ok), 0, &r, &err);
        iapv_signer_free(s);
        iapv_signer *rejected = NULL;
        iapv_signer_new("{\"key_id\":1}", 12, &rejected, &err);
        if (iapv_interpret_api_response(v, (const uint8_t *)answer, strlen(answer), answer_options, strlen(answer_options),
                                        1767225600000, &r, &err) == IAPV_OK) iapv_result_free(r);
    }
    free(signer_config);
    iapv_verifier_free(v);
    printf("leak: %ld calls of each entry point (over %d inputs), %ld of each error path, %ld verifiers, %ld signers\n",
           n, ninputs, n, n / 50 + 1, n);
    return 0;
}

static int soak(long n) {
    iapv_verifier *v = make_verifier();
    long step = n / 10, base = 0;
    for (long k = 1; k <= n; k++) {
        call(v, &inputs[k % 3]);
        if (k % step == 0) {
            long now = rss_kib();
            if (k == step) base = now;
            printf("soak: %8ld calls  rss %6ld KiB  (+%ld KiB since warm-up)\n", k, now, now - base);
            fflush(stdout);
        }
    }
    long growth = rss_kib() - base;
    iapv_verifier_free(v);
    printf("soak: %ld receipt verifications, RSS growth after warm-up: %ld KiB (limit 1024)\n", n, growth);
    return growth <= 1024 ? 0 : 1;
}

typedef struct { const iapv_verifier *v; long n; int seed; long mismatches; const unsigned long long *expected; } worker;

static void *work(void *p) {
    worker *w = p;
    for (long k = 0; k < w->n; k++) {
        int i = (int)((k * 7 + w->seed) % ninputs);
        if (call(w->v, &inputs[i]) != w->expected[i]) w->mismatches++;
    }
    return NULL;
}

static int stress(int threads, long n) {
    iapv_verifier *v = make_verifier();
    unsigned long long expected[32];
    for (int i = 0; i < ninputs; i++) expected[i] = call(v, &inputs[i]);
    pthread_t t[64];
    worker w[64];
    for (int i = 0; i < threads; i++) {
        w[i] = (worker){v, n, i * 3, 0, expected};
        pthread_create(&t[i], NULL, work, &w[i]);
    }
    long bad = 0;
    for (int i = 0; i < threads; i++) { pthread_join(t[i], NULL); bad += w[i].mismatches; }
    iapv_verifier_free(v);
    printf("stress: %d threads x %ld mixed calls on one verifier: %ld results differed from a single thread\n", threads, n, bad);
    return bad == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: driver leak N | soak N | stress THREADS N\n"); return 2; }
    load_inputs();
    int rc;
    if (strcmp(argv[1], "leak") == 0) rc = leak(atol(argv[2]));
    else if (strcmp(argv[1], "soak") == 0) rc = soak(atol(argv[2]));
    else if (strcmp(argv[1], "stress") == 0 && argc > 3) rc = stress(atoi(argv[2]), atol(argv[3]));
    else { fprintf(stderr, "unknown mode\n"); return 2; }
    for (int i = 0; i < ninputs; i++) free(inputs[i].data);
    return rc;
}
