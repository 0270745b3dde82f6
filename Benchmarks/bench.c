/*
 * make bench: receipts (and JWS, and an App Store Server API page: `bench api`) per CPU-second
 * through the C ABI, side by side in one run with a plain
 * C loop that calls OpenSSL's PKCS7_verify with a prebuilt store (the reference).
 *
 * Each case runs in interleaved rounds; a round measures CPU time of the calling thread. The
 * figure reported is the median over rounds, and the ratio is the median of per-round ratios,
 * so machine noise cancels out. Heap use per call is counted by interposing malloc.
 */
#define _GNU_SOURCE
#include <sys/resource.h>
#include <iapverify.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/pkcs7.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- malloc interposition (counts every allocation in the process, library included) ---- */
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
static atomic_long alloc_calls, alloc_bytes;
void *malloc(size_t n) { atomic_fetch_add(&alloc_calls, 1); atomic_fetch_add(&alloc_bytes, (long)n); return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { atomic_fetch_add(&alloc_calls, 1); atomic_fetch_add(&alloc_bytes, (long)(a * b)); return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { atomic_fetch_add(&alloc_calls, 1); atomic_fetch_add(&alloc_bytes, (long)n); return __libc_realloc(p, n); }
int posix_memalign(void **out, size_t align, size_t n) {
    atomic_fetch_add(&alloc_calls, 1); atomic_fetch_add(&alloc_bytes, (long)n);
    *out = __libc_memalign(align, n);
    return *out ? 0 : 12;
}
void *aligned_alloc(size_t align, size_t n) { atomic_fetch_add(&alloc_calls, 1); atomic_fetch_add(&alloc_bytes, (long)n); return __libc_memalign(align, n); }

static double cpu_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}
static double wall_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static unsigned char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) { fprintf(stderr, "cannot open %s\n", path); exit(2); }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)n);
    *len = fread(buf, 1, (size_t)n, f);
    fclose(f);
    return buf;
}

typedef struct {
    const char *name;
    const char *file;
    const char *root_pem;      /* trust anchor for both paths */
    int64_t created_s;         /* receipt creation date: the reference store validates there */
    unsigned char *der;
    size_t len;
    iapv_verifier *v;
    X509_STORE *store;
} bench_case;

static int ours_once(bench_case *c) {
    iapv_result *r = NULL;
    if (iapv_verify_receipt(c->v, c->der, c->len, NULL, 0, 1893456000000LL, &r, NULL) != IAPV_OK) return 0;
    size_t n = 0;
    (void)iapv_result_json(r, &n);
    int ok = iapv_result_is_valid(r);
    iapv_result_free(r);
    return ok;
}

/* The reference: parse, verify signature and chain at the creation date, extract the content. */
static int reference_once(bench_case *c) {
    const unsigned char *p = c->der;
    PKCS7 *p7 = d2i_PKCS7(NULL, &p, (long)c->len);
    if (!p7) return 0;
    BIO *out = BIO_new(BIO_s_mem());
    int ok = PKCS7_verify(p7, NULL, c->store, NULL, out, 0) == 1;
    BIO_free(out);
    PKCS7_free(p7);
    ERR_clear_error();
    return ok;
}

typedef int (*verify_fn)(bench_case *);

static double run_for(verify_fn fn, bench_case *c, double seconds, long *count) {
    double start = cpu_now();
    long n = 0;
    while (cpu_now() - start < seconds) {
        for (int i = 0; i < 16; i++) {
            if (!fn(c)) { fprintf(stderr, "%s: verification failed\n", c->name); exit(1); }
        }
        n += 16;
    }
    *count = n;
    return (cpu_now() - start) / (double)n;   /* seconds of CPU per receipt */
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double median(double *v, int n) { qsort(v, (size_t)n, sizeof *v, cmp_double); return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2; }

typedef struct { bench_case *c; verify_fn fn; double seconds; long done; } thread_arg;
static void *thread_main(void *p) {
    thread_arg *a = p;
    double start = wall_now();
    long n = 0;
    while (wall_now() - start < a->seconds) { a->fn(a->c); n++; }
    a->done = n;
    return NULL;
}
static double throughput(bench_case *c, verify_fn fn, int threads, double seconds) {
    pthread_t t[8];
    thread_arg a[8];
    double start = wall_now();
    for (int i = 0; i < threads; i++) { a[i] = (thread_arg){c, fn, seconds, 0}; pthread_create(&t[i], NULL, thread_main, &a[i]); }
    long total = 0;
    for (int i = 0; i < threads; i++) { pthread_join(t[i], NULL); total += a[i].done; }
    return (double)total / (wall_now() - start);
}

static X509_STORE *make_store(const char *pem, int64_t at) {
    X509_STORE *s = X509_STORE_new();
    BIO *b = BIO_new_file(pem, "r");
    X509 *x = PEM_read_bio_X509(b, NULL, NULL, NULL);
    BIO_free(b);
    X509_STORE_add_cert(s, x);
    X509_free(x);
    X509_VERIFY_PARAM_set_time(X509_STORE_get0_param(s), (time_t)at);
    X509_STORE_set_purpose(s, X509_PURPOSE_ANY);
    return s;
}

static char *config_for(const char *root_pem, int fake) {
    static char buf[8192];
    if (!fake) { snprintf(buf, sizeof buf, "{\"bundle_id\":\"*\",\"environments\":[\"Production\",\"Sandbox\"]}"); return buf; }
    size_t n = 0;
    unsigned char *pem = read_file(root_pem, &n);
    char esc[4096];
    size_t j = 0;
    for (size_t i = 0; i < n && j + 3 < sizeof esc; i++) {
        if (pem[i] == '\n') { esc[j++] = '\\'; esc[j++] = 'n'; } else esc[j++] = (char)pem[i];
    }
    esc[j] = 0;
    free(pem);
    snprintf(buf, sizeof buf, "{\"bundle_id\":\"*\",\"trust\":{\"include_apple_roots\":false,\"roots_pem\":[\"%s\"]}}", esc);
    return buf;
}

/* `bench json SECONDS FILE...`: CPU microseconds per iapv_interpret_response call, one line per file. */
static int json_mode(int argc, char **argv) {
    double secs = atof(argv[2]);
    const char *cfg = "{\"bundle_id\":\"com.example.bench\",\"environments\":[\"Production\",\"Sandbox\"]}";
    iapv_verifier *v = NULL;
    iapv_error err;
    if (iapv_verifier_new(cfg, strlen(cfg), &v, &err) != IAPV_OK) { fprintf(stderr, "%s\n", err.message); return 1; }
    for (int i = 3; i < argc; i++) {
        size_t len = 0;
        unsigned char *body = read_file(argv[i], &len);
        double start = cpu_now();
        long n = 0;
        while (cpu_now() - start < secs) {
            iapv_result *r = NULL;
            if (iapv_interpret_response(v, body, len, NULL, 0, 1700000000000LL, &r, &err) != IAPV_OK || !iapv_result_is_valid(r)) {
                fprintf(stderr, "%s: not valid: %s\n", argv[i], r ? iapv_result_json(r, NULL) : err.message);
                return 1;
            }
            iapv_result_free(r);
            n++;
        }
        printf("%s %.3f\n", argv[i], (cpu_now() - start) / (double)n * 1e6);
        free(body);
    }
    iapv_verifier_free(v);
    return 0;
}

/* `bench jws-call SECONDS TOKEN CONFIG NOW_MS`: CPU microseconds per iapv_verify_jws call on one
   token with one verifier, the result freed unread: what the Python binding's figure is set against. */
static int jws_call_mode(char **argv) {
    double secs = atof(argv[2]);
    size_t len = 0, cfg_len = 0;
    unsigned char *token = read_file(argv[3], &len);
    unsigned char *cfg = read_file(argv[4], &cfg_len);
    long long now = atoll(argv[5]);
    while (len > 0 && (token[len - 1] == '\n' || token[len - 1] == '\r' || token[len - 1] == ' ')) len--;
    iapv_verifier *v = NULL;
    iapv_error err;
    if (iapv_verifier_new((const char *)cfg, cfg_len, &v, &err) != IAPV_OK) { fprintf(stderr, "%s\n", err.message); return 1; }
    double start = cpu_now();
    long n = 0;
    while (cpu_now() - start < secs) {
        iapv_result *r = NULL;
        if (iapv_verify_jws(v, token, len, NULL, 0, now, &r, &err) != IAPV_OK || !iapv_result_is_valid(r)) {
            fprintf(stderr, "%s: not valid: %s\n", argv[3], r ? iapv_result_json(r, NULL) : err.message);
            return 1;
        }
        iapv_result_free(r);
        n++;
    }
    printf("%.3f\n", (cpu_now() - start) / (double)n * 1e6);
    iapv_verifier_free(v);
    free(token);
    free(cfg);
    return 0;
}

/* ---- JWS: the reference is plain OpenSSL doing the same work per token ------------------------ */

static size_t b64url_decode(const char *in, size_t n, unsigned char *out) {
    char *tmp = malloc(n + 4);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) tmp[m++] = in[i] == '-' ? '+' : in[i] == '_' ? '/' : in[i];
    while (m % 4) tmp[m++] = '=';
    int len = EVP_DecodeBlock(out, (unsigned char *)tmp, (int)m);
    size_t pad = 0;
    for (size_t i = m; i > 0 && tmp[i - 1] == '='; i--) pad++;
    free(tmp);
    return len < 0 ? 0 : (size_t)len - pad;
}

typedef struct { const char *token; size_t len; X509_STORE *store; } jws_ref;

static int jws_reference_once(jws_ref *j) {
    const char *dot1 = memchr(j->token, '.', j->len), *dot2 = dot1 ? memchr(dot1 + 1, '.', j->len - (size_t)(dot1 + 1 - j->token)) : NULL;
    if (!dot2) return 0;
    unsigned char header[8192], sig[128], der[4096];
    size_t hlen = b64url_decode(j->token, (size_t)(dot1 - j->token), header);
    size_t slen = b64url_decode(dot2 + 1, j->len - (size_t)(dot2 + 1 - j->token), sig);
    json_t *h = json_loadb((const char *)header, hlen, 0, NULL);
    json_t *x5c = json_object_get(h, "x5c");
    STACK_OF(X509) *untrusted = sk_X509_new_null();
    X509 *leaf = NULL;
    for (size_t i = 0; i < json_array_size(x5c); i++) {
        const char *b = json_string_value(json_array_get(x5c, i));
        int n = EVP_DecodeBlock(der, (const unsigned char *)b, (int)strlen(b));
        const unsigned char *p = der;
        X509 *x = d2i_X509(NULL, &p, n);
        if (i == 0) leaf = x; else sk_X509_push(untrusted, x);
    }
    X509_STORE_CTX *ctx = X509_STORE_CTX_new();
    X509_STORE_CTX_init(ctx, j->store, leaf, untrusted);
    int ok = X509_verify_cert(ctx) == 1;
    X509_STORE_CTX_free(ctx);
    if (ok && slen == 64) {
        ECDSA_SIG *es = ECDSA_SIG_new();
        ECDSA_SIG_set0(es, BN_bin2bn(sig, 32, NULL), BN_bin2bn(sig + 32, 32, NULL));
        unsigned char *dsig = NULL;
        int dlen = i2d_ECDSA_SIG(es, &dsig);
        EVP_MD_CTX *md = EVP_MD_CTX_new();
        ok = EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, X509_get0_pubkey(leaf)) == 1 &&
             EVP_DigestVerify(md, dsig, (size_t)dlen, (const unsigned char *)j->token, (size_t)(dot2 - j->token)) == 1;
        EVP_MD_CTX_free(md);
        OPENSSL_free(dsig);
        ECDSA_SIG_free(es);
    }
    X509_free(leaf);
    sk_X509_pop_free(untrusted, X509_free);
    json_decref(h);
    ERR_clear_error();
    return ok;
}

static int jws_mode(const char *fx, int rounds, double secs) {
    char path[512];
    snprintf(path, sizeof path, "%s/jws/transaction_autorenew_sandbox_2022-11.jws", fx);
    size_t len = 0;
    char *token = (char *)read_file(path, &len);
    while (len && (token[len - 1] == '\n' || token[len - 1] == '\r')) len--;
    snprintf(path, sizeof path, "%s/certs/AppleRootCA-G3.pem", fx);
    jws_ref ref = {token, len, make_store(path, 1667561039)};
    const char *cfg = "{\"bundle_id\":\"*\",\"environments\":[\"Sandbox\"]}";
    enum { COLD = 40 };
    double warm[64], cold[64], refs[64], ratio[64];
    for (int r = 0; r < rounds && r < 64; r++) {
        iapv_verifier *v = NULL;
        iapv_verifier_new(cfg, strlen(cfg), &v, NULL);
        double start = cpu_now();
        long n = 0;
        while (cpu_now() - start < secs) {
            iapv_result *res = NULL;
            iapv_verify_jws(v, (const uint8_t *)token, len, NULL, 0, 1893456000000LL, &res, NULL);
            if (!iapv_result_is_valid(res)) { fprintf(stderr, "jws not valid\n"); return 1; }
            iapv_result_free(res);
            n++;
        }
        warm[r] = (cpu_now() - start) / (double)n;
        iapv_verifier_free(v);
        /* Cold: a fresh verifier (built outside the timing) for every call, so every call validates the chain. */
        iapv_verifier *vs[COLD];
        for (int i = 0; i < COLD; i++) iapv_verifier_new(cfg, strlen(cfg), &vs[i], NULL);
        start = cpu_now();
        for (int i = 0; i < COLD; i++) {
            iapv_result *res = NULL;
            iapv_verify_jws(vs[i], (const uint8_t *)token, len, NULL, 0, 1893456000000LL, &res, NULL);
            iapv_result_free(res);
        }
        cold[r] = (cpu_now() - start) / COLD;
        for (int i = 0; i < COLD; i++) iapv_verifier_free(vs[i]);
        start = cpu_now();
        n = 0;
        while (cpu_now() - start < secs) {
            if (!jws_reference_once(&ref)) { fprintf(stderr, "reference jws failed\n"); return 1; }
            n++;
        }
        refs[r] = (cpu_now() - start) / (double)n;
        ratio[r] = refs[r] / warm[r];
    }
    double cold_ratio = median(refs, rounds) / median(cold, rounds);
    printf("\nStoreKit 2 JWS (real ES256 transaction, chain to Apple Root CA - G3), %d rounds:\n", rounds);
    printf("  iapverify warm cache  %8.0f/s\n  iapverify cold cache  %8.0f/s\n  OpenSSL chain+verify  %8.0f/s\n",
           1.0 / median(warm, rounds), 1.0 / median(cold, rounds), 1.0 / median(refs, rounds));
    printf("  warm / reference %.1fx, cold / reference %.2fx\n", median(ratio, rounds), cold_ratio);
    X509_STORE_free(ref.store);
    free(token);
    return 0;
}

/* ---- App Store Server API: a transaction_history page of 20 signed transactions ------------- */

/* The reference for one page: parse the body with Jansson, then for each signed transaction do what
 * a careful host does by hand: validate the x5c chain with X509_verify_cert against the fake root,
 * check the ES256 signature (r||s converted to DER) with EVP_DigestVerify, decode and parse the
 * payload with Jansson and check its app and environment. */
static int api_reference_once(const unsigned char *body, size_t len, X509_STORE *store) {
    json_t *doc = json_loadb((const char *)body, len, 0, NULL);
    json_t *items = json_object_get(doc, "signedTransactions");
    int ok = json_is_array(items) && json_is_boolean(json_object_get(doc, "hasMore"));
    unsigned char *payload = malloc(len + 4);
    for (size_t i = 0; ok && i < json_array_size(items); i++) {
        const char *token = json_string_value(json_array_get(items, i));
        if (!token) { ok = 0; break; }
        jws_ref ref = {token, strlen(token), store};
        if (!jws_reference_once(&ref)) { ok = 0; break; }
        const char *dot1 = strchr(token, '.'), *dot2 = strchr(dot1 + 1, '.');
        size_t plen = b64url_decode(dot1 + 1, (size_t)(dot2 - dot1 - 1), payload);
        json_t *t = json_loadb((const char *)payload, plen, 0, NULL);
        const char *bundle = json_string_value(json_object_get(t, "bundleId"));
        const char *env = json_string_value(json_object_get(t, "environment"));
        ok = bundle && env && strcmp(bundle, "com.example.fake") == 0 && strcmp(env, "Production") == 0 &&
             json_string_value(json_object_get(t, "transactionId")) && json_string_value(json_object_get(t, "productId")) &&
             json_is_integer(json_object_get(t, "purchaseDate"));
        json_decref(t);
    }
    free(payload);
    json_decref(doc);
    return ok;
}

static int api_ours_once(iapv_verifier *v, const unsigned char *body, size_t len) {
    static const char opts[] = "{\"endpoint\":\"transaction_history\",\"environment\":\"production\",\"http_status\":200}";
    iapv_result *r = NULL;
    if (iapv_interpret_api_response(v, body, len, opts, sizeof opts - 1, 1893456000000LL, &r, NULL) != IAPV_OK) return 0;
    size_t n = 0;
    (void)iapv_result_json(r, &n);
    int ok = iapv_result_is_valid(r) && n > 0;
    iapv_result_free(r);
    return ok;
}

/* `bench api PAGE VERIFIER_JSON ROOT_PEM ROUNDS SECONDS`: pages per CPU-second, interleaved rounds. */
static int api_mode(const char *page, const char *config, const char *root, int rounds, double secs) {
    size_t len = 0, clen = 0;
    unsigned char *body = read_file(page, &len);
    char *cfg = (char *)read_file(config, &clen);
    iapv_verifier *v = NULL;
    iapv_error err;
    if (iapv_verifier_new(cfg, clen, &v, &err) != IAPV_OK) { fprintf(stderr, "%s: %s\n", config, err.message); return 1; }
    X509_STORE *store = make_store(root, 1893456000);
    json_t *doc = json_loadb((const char *)body, len, 0, NULL);
    size_t items = json_array_size(json_object_get(doc, "signedTransactions"));
    json_decref(doc);
    /* Warms the chain cache, and both sides must accept the page before anything is timed. */
    if (!api_ours_once(v, body, len)) { fprintf(stderr, "api: iapverify does not accept %s\n", page); return 1; }
    if (!api_reference_once(body, len, store)) { fprintf(stderr, "api: the reference loop does not accept %s\n", page); return 1; }
    double ours[64], ref[64], ratio[64];
    for (int r = 0; r < rounds && r < 64; r++) {
        double start = cpu_now();
        long n = 0;
        while (cpu_now() - start < secs) {
            if (!api_ours_once(v, body, len)) { fprintf(stderr, "api: not valid\n"); return 1; }
            n++;
        }
        ours[r] = (cpu_now() - start) / (double)n;
        start = cpu_now();
        n = 0;
        while (cpu_now() - start < secs) {
            if (!api_reference_once(body, len, store)) { fprintf(stderr, "api: reference failed\n"); return 1; }
            n++;
        }
        ref[r] = (cpu_now() - start) / (double)n;
        ratio[r] = ref[r] / ours[r];
    }
    double o = median(ours, rounds), f = median(ref, rounds);
    printf("\nApp Store Server API transaction_history page, %zu signed transactions (fake PKI, %zu KB), %d rounds:\n",
           items, len / 1024, rounds);
    printf("  iapv_interpret_api_response (warm cache) %8.0f pages/s %9.0f transactions/s\n", 1.0 / o, (double)items / o);
    printf("  OpenSSL chain+ES256 + Jansson loop       %8.0f pages/s %9.0f transactions/s\n", 1.0 / f, (double)items / f);
    printf("  iapverify / loop %.1fx (goal >= 5x)\n", median(ratio, rounds));
    X509_STORE_free(store);
    iapv_verifier_free(v);
    free(body);
    free(cfg);
    return 0;
}

/* One call that must answer (any verdict): the forged receipt's verdict is never valid. */
static int answers_once(bench_case *c) {
    iapv_result *r = NULL;
    if (iapv_verify_receipt(c->v, c->der, c->len, NULL, 0, 1893456000000LL, &r, NULL) != IAPV_OK) return 0;
    size_t n = 0;
    (void)iapv_result_json(r, &n);
    iapv_result_free(r);
    return 1;
}

/* `bench forged GENUINE FORGED ROUNDS SECONDS`: a forged receipt (the genuine chain, a payload of
 * 100,000 purchases, a signature that no longer holds) against the genuine one, interleaved. */
static int forged_mode(const char *genuine, const char *forged, int rounds, double secs) {
    bench_case g = {"genuine", genuine, NULL, 0, 0, 0, 0, 0}, f = {"forged", forged, NULL, 0, 0, 0, 0, 0};
    g.der = read_file(genuine, &g.len);
    f.der = read_file(forged, &f.len);
    const char *cfg = "{\"bundle_id\":\"*\",\"environments\":[\"Production\",\"Sandbox\"]}";
    if (iapv_verifier_new(cfg, strlen(cfg), &g.v, NULL) != IAPV_OK) return 1;
    f.v = g.v;
    if (!ours_once(&g) || ours_once(&f)) { fprintf(stderr, "forged: expected genuine valid, forged not\n"); return 1; }
    struct rusage before, after;
    getrusage(RUSAGE_SELF, &before);
    double gt[64], ft[64], ratio[64];
    long n;
    for (int r = 0; r < rounds && r < 64; r++) {
        gt[r] = run_for(answers_once, &g, secs, &n);
        ft[r] = run_for(answers_once, &f, secs, &n);
        ratio[r] = ft[r] / gt[r];
    }
    getrusage(RUSAGE_SELF, &after);
    size_t glen = 0, flen = 0;
    iapv_result *r1 = NULL, *r2 = NULL;
    iapv_verify_receipt(g.v, g.der, g.len, NULL, 0, 1893456000000LL, &r1, NULL);
    iapv_verify_receipt(f.v, f.der, f.len, NULL, 0, 1893456000000LL, &r2, NULL);
    (void)iapv_result_json(r1, &glen);
    (void)iapv_result_json(r2, &flen);
    printf("\nforged receipt (the 187-purchase receipt's chain, 100,000 forged purchases, %zu KB), %d rounds:\n", f.len / 1024, rounds);
    printf("  genuine %8.0f us/call, result %6zu bytes\n  forged  %8.0f us/call, result %6zu bytes (%s)\n",
           median(gt, rounds) * 1e6, glen, median(ft, rounds) * 1e6, flen, iapv_result_verdict(r2));
    printf("  forged / genuine CPU %.2fx; max RSS %ld MB -> %ld MB over the run\n", median(ratio, rounds),
           before.ru_maxrss / 1024, after.ru_maxrss / 1024);
    iapv_result_free(r1);
    iapv_result_free(r2);
    iapv_verifier_free(g.v);
    free(g.der);
    free(f.der);
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 2 && strcmp(argv[1], "json") == 0) return json_mode(argc, argv);
    if (argc > 5 && strcmp(argv[1], "jws-call") == 0) return jws_call_mode(argv);
    if (argc > 3 && strcmp(argv[1], "forged") == 0)
        return forged_mode(argv[2], argv[3], argc > 4 ? atoi(argv[4]) : 5, argc > 5 ? atof(argv[5]) : 0.4);
    if (argc > 4 && strcmp(argv[1], "api") == 0)
        return api_mode(argv[2], argv[3], argv[4], argc > 5 ? atoi(argv[5]) : 5, argc > 6 ? atof(argv[6]) : 0.4);
    if (argc > 1 && strcmp(argv[1], "jws") == 0)
        return jws_mode(argc > 2 ? argv[2] : "Tests/IAPVerifyTests/Fixtures", argc > 3 ? atoi(argv[3]) : 5, argc > 4 ? atof(argv[4]) : 0.4);
    const char *fx = argc > 1 ? argv[1] : "Tests/IAPVerifyTests/Fixtures";
    int rounds = argc > 2 ? atoi(argv[2]) : 5;
    double secs = argc > 3 ? atof(argv[3]) : 0.4;
    char p1[512], p2[512], p3[512], p4[512], apple[512], fake[512];
    snprintf(p1, sizeof p1, "%s/receipts/production_2025-04-18_com.dashedspace.analytics_sha256.der", fx);
    snprintf(p2, sizeof p2, "%s/receipts/production_2015-09-16_com.mustafadur.Kargotakip.der", fx);
    snprintf(p3, sizeof p3, "%s/receipts/sandbox_2020-05-06_com.nutcall.alert_187iap.der", fx);
    snprintf(p4, sizeof p4, "%s/fakepki/valid_ecdsa_sha256.der", fx);
    snprintf(apple, sizeof apple, "%s/certs/AppleIncRootCertificate.pem", fx);
    snprintf(fake, sizeof fake, "%s/fakepki/root.pem", fx);
    bench_case cases[] = {
        {"real RSA sha256, 1 in-app (5.3 KB)", p1, apple, 1744938138, 0, 0, 0, 0},
        {"real RSA sha1, 0 in-app (4.8 KB)", p2, apple, 1442432904, 0, 0, 0, 0},
        {"real RSA sha1, 187 in-app (79 KB)", p3, apple, 1588789729, 0, 0, 0, 0},
        {"synthetic ECDSA P-256 leaf, 2 in-app", p4, fake, 1705312800, 0, 0, 0, 0},
    };
    int ncases = (int)(sizeof cases / sizeof cases[0]);
    for (int i = 0; i < ncases; i++) {
        bench_case *c = &cases[i];
        c->der = read_file(c->file, &c->len);
        iapv_error err;
        const char *cfg = config_for(c->root_pem, c->root_pem == fake);
        if (iapv_verifier_new(cfg, strlen(cfg), &c->v, &err) != IAPV_OK) { fprintf(stderr, "config: %s\n", err.message); return 1; }
        c->store = make_store(c->root_pem, c->created_s);
        if (!ours_once(c) || !reference_once(c)) { fprintf(stderr, "%s does not verify\n", c->name); return 1; }
    }

    printf("iapverify %s, OpenSSL %s; %d interleaved rounds of %.1f s CPU per case (1 thread)\n\n",
           iapv_version_string(), OpenSSL_version(OPENSSL_VERSION), rounds, secs);
    printf("%-38s %14s %14s %9s %14s\n", "input", "iapverify /s", "PKCS7_verify /s", "ratio", "heap per call");
    for (int i = 0; i < ncases; i++) {
        bench_case *c = &cases[i];
        double ours[64], ref[64], ratio[64];
        long n;
        for (int r = 0; r < rounds && r < 64; r++) {
            ours[r] = run_for(ours_once, c, secs, &n);
            ref[r] = run_for(reference_once, c, secs, &n);
            ratio[r] = ref[r] / ours[r];
        }
        long calls0 = atomic_load(&alloc_calls), bytes0 = atomic_load(&alloc_bytes);
        for (int k = 0; k < 1000; k++) ours_once(c);
        long calls = (atomic_load(&alloc_calls) - calls0) / 1000, bytes = (atomic_load(&alloc_bytes) - bytes0) / 1000;
        printf("%-38s %14.0f %14.0f %8.1fx %6ld allocs %4ld KB\n", c->name, 1.0 / median(ours, rounds),
               1.0 / median(ref, rounds), median(ratio, rounds), calls, (bytes + 512) / 1024);
    }
    printf("\nthreads (wall receipts/s, real RSA 1 in-app):\n");
    double one = throughput(&cases[0], ours_once, 1, 1.0), two = throughput(&cases[0], ours_once, 2, 1.0);
    double rone = throughput(&cases[0], reference_once, 1, 1.0), rtwo = throughput(&cases[0], reference_once, 2, 1.0);
    printf("  iapverify:    1 thread %8.0f/s   2 threads %8.0f/s   scaling %.2fx\n", one, two, two / one);
    printf("  PKCS7_verify: 1 thread %8.0f/s   2 threads %8.0f/s   scaling %.2fx\n", rone, rtwo, rtwo / rone);
    for (int i = 0; i < ncases; i++) { iapv_verifier_free(cases[i].v); X509_STORE_free(cases[i].store); free(cases[i].der); }
    return 0;
}
