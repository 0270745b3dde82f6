/*
 * make bench: receipts per CPU-second through the C ABI, side by side in one run with a plain
 * C loop that calls OpenSSL's PKCS7_verify with a prebuilt store (the reference).
 *
 * Each case runs in interleaved rounds; a round measures CPU time of the calling thread. The
 * figure reported is the median over rounds, and the ratio is the median of per-round ratios,
 * so machine noise cancels out. Heap use per call is counted by interposing malloc.
 */
#define _GNU_SOURCE
#include <iapverify.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/pkcs7.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
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

int main(int argc, char **argv) {
    if (argc > 2 && strcmp(argv[1], "json") == 0) return json_mode(argc, argv);
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
