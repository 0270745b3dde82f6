/*
 * floor_bench: iapv_verify_receipt against the engineered C floor (floor.c) and the PKCS7_verify
 * reference loop of bench.c, on real receipts with 0, 1, 9, 22 and 187 in-app purchases.
 *
 *   floor_bench FIXTURES_DIR ROUNDS SECONDS_PER_CELL
 *
 * Every side gets the receipt as base64 (as hosts get it). Before timing, the floor's answers
 * (bundle id, purchase count, active products) must match the library's result JSON. Cells run
 * in interleaved rounds (library, floor, reference per size per round), CPU time of the calling
 * thread; a figure is the median over rounds, a ratio the median of per-round ratios.
 */
#define _GNU_SOURCE
#include "floor.h"

#include <iapverify.h>
#include <jansson.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/pkcs7.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static unsigned char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) { fprintf(stderr, "cannot open %s\n", path); exit(2); }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)n + 1);
    *len = fread(buf, 1, (size_t)n, f);
    fclose(f);
    return buf;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double median(const double *v, int n) {
    double t[64];
    memcpy(t, v, (size_t)n * sizeof *t);
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

typedef struct {
    int target;
    char file[256];
    int in_app;                /* from expected-receipts.json */
    char *b64; size_t b64_len;
    int64_t now_ms;
    iapv_verifier *v;
    X509_STORE *store;         /* the reference's store, at the creation date */
    fl_ctx *floor;
    fl_receipt fr;
} sized_case;

/* (a) the library: warm chain cache, strict config, the result JSON fetched. */
static int lib_once(sized_case *c) {
    iapv_result *r = NULL;
    if (iapv_verify_receipt(c->v, (const uint8_t *)c->b64, c->b64_len, NULL, 0, c->now_ms, &r, NULL) != IAPV_OK) return 0;
    size_t n = 0;
    const char *json = iapv_result_json(r, &n);
    int ok = json && n > 0 && iapv_result_is_valid(r);
    iapv_result_free(r);
    return ok;
}

/* (b) the floor. */
static int floor_once(sized_case *c) {
    return fl_verify_receipt(c->floor, c->b64, c->b64_len, c->now_ms, &c->fr) == FL_OK;
}

/* (b') the floor, then the contract's per-purchase output: the `in_app` array as the library
 * writes it (fl_write_in_app). */
static int floor_writer_once(sized_case *c) {
    return fl_verify_receipt(c->floor, c->b64, c->b64_len, c->now_ms, &c->fr) == FL_OK && fl_write_in_app(&c->fr) > 0;
}

/* The library's `in_app` array, found in its result by bracket depth (outside strings). */
static int in_app_span(const char *json, const char **start, size_t *len) {
    const char *p = strstr(json, "\"in_app\":[");
    if (!p) return 0;
    p += strlen("\"in_app\":");
    int depth = 0, in_string = 0;
    for (const char *q = p; *q; q++) {
        if (in_string) { if (*q == '\\') q++; else if (*q == '"') in_string = 0; continue; }
        if (*q == '"') in_string = 1;
        else if (*q == '[' || *q == '{') depth++;
        else if ((*q == ']' || *q == '}') && --depth == 0) { *start = p; *len = (size_t)(q - p + 1); return 1; }
    }
    return 0;
}

/* (c) bench.c's reference loop (d2i_PKCS7 + PKCS7_verify with a prebuilt store at the creation
 * date), after the same base64 decode the other two do. */
static int ref_once(sized_case *c) {
    static unsigned char der[1 << 20];
    int n = EVP_DecodeBlock(der, (const unsigned char *)c->b64, (int)c->b64_len);
    if (n <= 0) return 0;
    const unsigned char *p = der;
    PKCS7 *p7 = d2i_PKCS7(NULL, &p, n);   /* the trailing pad bytes are ignored */
    if (!p7) return 0;
    BIO *out = BIO_new(BIO_s_mem());
    int ok = PKCS7_verify(p7, NULL, c->store, NULL, out, 0) == 1;
    BIO_free(out);
    PKCS7_free(p7);
    ERR_clear_error();
    return ok;
}

typedef int (*fn_t)(sized_case *);

static double cell(fn_t fn, sized_case *c, double secs) {
    double start = cpu_now(), now;
    long n = 0;
    do {
        for (int i = 0; i < 8; i++)
            if (!fn(c)) { fprintf(stderr, "%s: a timed call failed\n", c->file); exit(1); }
        n += 8;
    } while ((now = cpu_now()) - start < secs);
    return (now - start) / (double)n;   /* CPU seconds per call */
}

static int str_eq(fl_str s, const char *z) { return z && strlen(z) == s.n && memcmp(s.p, z, s.n) == 0; }

static int cmp_cstr(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The floor's answers against the library's result, before anything is timed. */
static int check(sized_case *c, const char *lib_json) {
    json_t *doc = json_loads(lib_json, 0, NULL);
    json_t *rec = json_object_get(doc, "receipt");
    const char *bundle = json_string_value(json_object_get(rec, "bundle_id"));
    size_t lib_n = json_array_size(json_object_get(rec, "in_app"));
    char *lib_active[512], *fl_active[512];
    size_t nla = 0, nfa = 0;
    json_t *e;
    size_t i;
    json_array_foreach(json_object_get(doc, "entitlements"), i, e) {
        if (json_is_true(json_object_get(e, "active")) && nla < 512)
            lib_active[nla++] = strdup(json_string_value(json_object_get(e, "product_id")));
    }
    int rc = fl_verify_receipt(c->floor, c->b64, c->b64_len, c->now_ms, &c->fr);
    if (rc != FL_OK) { fprintf(stderr, "%s: floor says %s\n", c->file, fl_error_name(rc)); return 0; }
    for (size_t k = 0; k < c->fr.n_products; k++)
        if (c->fr.products[k].active && nfa < 512)
            fl_active[nfa++] = strndup((const char *)c->fr.products[k].product_id.p, c->fr.products[k].product_id.n);
    qsort(lib_active, nla, sizeof *lib_active, cmp_cstr);
    qsort(fl_active, nfa, sizeof *fl_active, cmp_cstr);
    int ok = str_eq(c->fr.bundle_id, bundle) && lib_n == c->fr.n_iap && (int)lib_n == c->in_app && nla == nfa;
    /* The floor's writer must produce the library's `in_app` bytes exactly. */
    const char *span = NULL;
    size_t span_len = 0, written = fl_write_in_app(&c->fr);
    if (!in_app_span(lib_json, &span, &span_len) || span_len != written || memcmp(span, c->fr.out, written) != 0) {
        if (getenv("FLOOR_DEBUG")) {
            fprintf(stderr, "library: %.*s\nfloor:   %.*s\n", (int)(span_len < 1500 ? span_len : 1500), span ? span : "",
                    (int)(written < 1500 ? written : 1500), (const char *)c->fr.out);
        }
        fprintf(stderr, "%s: the floor's in_app (%zu bytes) differs from the library's (%zu bytes)\n", c->file, written, span_len);
        ok = 0;
    }
    for (size_t k = 0; ok && k < nla; k++) ok = strcmp(lib_active[k], fl_active[k]) == 0;
    printf("  check %-60s bundle %s, purchases %zu/%zu, active %zu/%zu: %s\n", c->file, bundle ? bundle : "?",
           lib_n, c->fr.n_iap, nla, nfa, ok ? "match" : "MISMATCH");
    if (!ok) {
        for (size_t k = 0; k < nla; k++) fprintf(stderr, "    library active: %s\n", lib_active[k]);
        for (size_t k = 0; k < nfa; k++) fprintf(stderr, "    floor active:   %s\n", fl_active[k]);
    }
    for (size_t k = 0; k < nla; k++) free(lib_active[k]);
    for (size_t k = 0; k < nfa; k++) free(fl_active[k]);
    json_decref(doc);
    return ok;
}

int main(int argc, char **argv) {
    const char *fx = argc > 1 ? argv[1] : "Tests/IAPVerifyTests/Fixtures";
    int rounds = argc > 2 ? atoi(argv[2]) : 3;
    double secs = argc > 3 ? atof(argv[3]) : 0.25;
    if (rounds < 1) rounds = 1;
    if (rounds > 64) rounds = 64;
    char path[1024];

    /* One receipt per size: the exact in_app count, else the closest (first in file order). */
    snprintf(path, sizeof path, "%s/expected-receipts.json", fx);
    json_error_t jerr;
    json_t *expected = json_object_get(json_load_file(path, 0, &jerr), "receipts");
    if (!expected) { fprintf(stderr, "%s: %s\n", path, jerr.text); return 2; }
    static const int targets[] = {0, 1, 9, 22, 187};
    enum { N = 5 };
    sized_case cases[N];
    memset(cases, 0, sizeof cases);
    for (int k = 0; k < N; k++) {
        const char *name;
        json_t *val;
        int best = -1;
        json_object_foreach(expected, name, val) {
            if (strncmp(name, "xcode_", 6) == 0) continue;   /* Apple-signed receipts only */
            int n = (int)json_integer_value(json_object_get(val, "in_app_count"));
            if (best < 0 || abs(n - targets[k]) < abs(best - targets[k])) {
                best = n;
                snprintf(cases[k].file, sizeof cases[k].file, "%s", name);
            }
        }
        cases[k].target = targets[k];
        cases[k].in_app = best;
    }

    const char *roots[] = {"AppleIncRootCertificate.pem", "AppleRootCA-G2.pem", "AppleRootCA-G3.pem"};
    char rootpaths[3][1024];
    const char *rp[3];
    for (int i = 0; i < 3; i++) { snprintf(rootpaths[i], sizeof rootpaths[i], "%s/certs/%s", fx, roots[i]); rp[i] = rootpaths[i]; }
    fl_ctx floor;
    if (fl_ctx_init(&floor, rp, 3) != 0) { fprintf(stderr, "floor: cannot load the roots\n"); return 2; }

    printf("\nthe engineered C floor (Benchmarks/floor.c) vs iapv_verify_receipt vs PKCS7_verify, base64 input\n");
    const char *any = "{\"bundle_id\":\"*\",\"environments\":[\"Production\",\"Sandbox\"]}";
    iapv_verifier *probe = NULL;
    if (iapv_verifier_new(any, strlen(any), &probe, NULL) != IAPV_OK) return 1;
    for (int k = 0; k < N; k++) {
        sized_case *c = &cases[k];
        size_t der_len = 0;
        snprintf(path, sizeof path, "%s/receipts/%s", fx, c->file);
        unsigned char *der = slurp(path, &der_len);
        c->b64 = malloc(der_len / 3 * 4 + 8);
        c->b64_len = (size_t)EVP_EncodeBlock((unsigned char *)c->b64, der, (int)der_len);
        free(der);
        printf("  %3d purchases: %s (%zu in_app records, %zu bytes of base64)\n", c->target, c->file, (size_t)c->in_app, c->b64_len);
        /* The receipt's bundle id, environment and creation date, from a permissive verifier. */
        iapv_result *r = NULL;
        if (iapv_verify_receipt(probe, (const uint8_t *)c->b64, c->b64_len, NULL, 0, 1893456000000LL, &r, NULL) != IAPV_OK) return 1;
        json_t *doc = json_loads(iapv_result_json(r, NULL), 0, NULL);
        json_t *rec = json_object_get(doc, "receipt");
        const char *bundle = json_string_value(json_object_get(rec, "bundle_id"));
        const char *env = json_string_value(json_object_get(rec, "environment"));
        int64_t created = json_integer_value(json_object_get(rec, "creation_date_ms"));
        if (!bundle || !env) { fprintf(stderr, "%s: %s\n", c->file, iapv_result_json(r, NULL)); return 1; }
        /* now: one hour after the receipt was made, so subscriptions current then are active. */
        c->now_ms = created + 3600 * 1000;
        char cfg[1024];
        snprintf(cfg, sizeof cfg, "{\"bundle_id\":\"%s\",\"environments\":[\"%s\"]}", bundle, env);
        iapv_error err;
        if (iapv_verifier_new(cfg, strlen(cfg), &c->v, &err) != IAPV_OK) { fprintf(stderr, "%s\n", err.message); return 1; }
        c->store = X509_STORE_new();
        for (int i = 0; i < 3; i++) {
            FILE *f = fopen(rp[i], "r");
            X509 *x = PEM_read_X509(f, NULL, NULL, NULL);
            fclose(f);
            X509_STORE_add_cert(c->store, x);
            X509_free(x);
        }
        X509_VERIFY_PARAM_set_time(X509_STORE_get0_param(c->store), (time_t)(created / 1000));
        X509_STORE_set_purpose(c->store, X509_PURPOSE_ANY);
        c->floor = &floor;
        json_decref(doc);
        iapv_result_free(r);
    }
    iapv_verifier_free(probe);

    /* The answers must agree before timing (this also warms every chain cache). */
    int agree = 1;
    for (int k = 0; k < N; k++) {
        sized_case *c = &cases[k];
        iapv_result *r = NULL;
        if (iapv_verify_receipt(c->v, (const uint8_t *)c->b64, c->b64_len, NULL, 0, c->now_ms, &r, NULL) != IAPV_OK ||
            !iapv_result_is_valid(r)) {
            fprintf(stderr, "%s: the library does not accept it: %s\n", c->file, r ? iapv_result_json(r, NULL) : "");
            return 1;
        }
        agree &= check(c, iapv_result_json(r, NULL));
        iapv_result_free(r);
        if (!ref_once(c)) { fprintf(stderr, "%s: PKCS7_verify does not accept it\n", c->file); return 1; }
    }
    if (!agree) { fprintf(stderr, "the floor and the library disagree\n"); return 1; }
    unsigned long misses = floor.chain_verifications;

    double lib[N][64], flo[N][64], flw[N][64], ref[N][64], r_lf[N][64], r_lr[N][64], r_lw[N][64];
    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < N; k++) {
            sized_case *c = &cases[k];
            lib[k][r] = cell(lib_once, c, secs);
            flo[k][r] = cell(floor_once, c, secs);
            flw[k][r] = cell(floor_writer_once, c, secs);
            ref[k][r] = cell(ref_once, c, secs);
            r_lf[k][r] = lib[k][r] / flo[k][r];
            r_lw[k][r] = lib[k][r] / flw[k][r];
            r_lr[k][r] = lib[k][r] / ref[k][r];
        }
    }
    if (floor.chain_verifications != misses) { fprintf(stderr, "floor: the chain cache missed while timing\n"); return 1; }

    printf("\n%d interleaved rounds of %.2f s CPU per cell, 1 thread, median; time ratios (library time / other time)\n", rounds, secs);
    printf("%9s %12s %12s %14s %10s %10s %12s %12s %12s\n", "purchases", "library /s", "floor /s", "PKCS7_verify /s",
           "lib/floor", "lib/PKCS7", "library us", "floor us", "PKCS7 us");
    double lm[N], fm[N];
    for (int k = 0; k < N; k++) {
        lm[k] = median(lib[k], rounds);
        fm[k] = median(flo[k], rounds);
        double rm = median(ref[k], rounds);
        printf("%9d %12.0f %12.0f %14.0f %9.2fx %9.2fx %12.1f %12.1f %12.1f\n", cases[k].in_app, 1 / lm[k], 1 / fm[k], 1 / rm,
               median(r_lf[k], rounds), median(r_lr[k], rounds), lm[k] * 1e6, fm[k] * 1e6, rm * 1e6);
    }
    double dn = (double)(cases[4].in_app - cases[3].in_app);
    double ls = (lm[4] - lm[3]) / dn * 1e6, fs = (fm[4] - fm[3]) / dn * 1e6;
    printf("marginal cost of one purchase (slope %d -> %d purchases): library %.3f us, floor %.3f us, library/floor %.1fx\n",
           cases[3].in_app, cases[4].in_app, ls, fs, ls / fs);
    /* The floor plus the `in_app` array the contract makes every implementation write. */
    double wm[N];
    printf("\nthe floor + the in_app array the result must carry (fl_write_in_app, byte-identical to the library's):\n");
    printf("%9s %16s %16s %18s %18s\n", "purchases", "floor+writer us", "lib/(floor+w)", "PKCS7/(floor+w)", "PKCS7/library");
    for (int k = 0; k < N; k++) {
        wm[k] = median(flw[k], rounds);
        printf("%9d %16.1f %15.2fx %17.2fx %17.2fx\n", cases[k].in_app, wm[k] * 1e6, median(r_lw[k], rounds),
               median(ref[k], rounds) / wm[k], median(ref[k], rounds) / lm[k]);
    }
    double ws = (wm[4] - wm[3]) / dn * 1e6;
    printf("marginal cost of one purchase with its in_app member: floor+writer %.3f us, library/(floor+writer) %.1fx\n", ws, ls / ws);
    printf("fixed cost (0 purchases): library %.1f us, floor %.1f us\n", lm[0] * 1e6, fm[0] * 1e6);

    for (int k = 0; k < N; k++) {
        iapv_verifier_free(cases[k].v);
        X509_STORE_free(cases[k].store);
        fl_receipt_free(&cases[k].fr);
        free(cases[k].b64);
    }
    fl_ctx_free(&floor);
    return 0;
}
