/*
 * What a verifier costs to start, for Benchmarks/startup.py: built once against this build's
 * library and once against the baseline's (each binary has its own rpath), and run alternately,
 * a process per round, so both builds see the same machine state.
 *
 * usage: startup FIXTURES SECONDS
 * prints one line: first_call_us construction_us cold_us warm_us
 *   first_call_us    the process's first iapv_verifier_new + iapv_verify_jws (nothing cached yet)
 *   construction_us  iapv_verifier_new + iapv_verifier_free with the built-in roots
 *   cold_us          a new verifier per call: new + verify one signed transaction + free
 *   warm_us          one verifier reused: verify only
 * Times are CPU time of the calling thread, averaged over as many calls as fit in SECONDS.
 * With STARTUP_CALLS=N each loop runs exactly N calls instead (for callgrind, where time means little).
 */
#define _GNU_SOURCE
#include <iapverify.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static const char *cfg = "{\"bundle_id\":\"*\",\"environments\":[\"Sandbox\"]}";
static const int64_t now_ms = 1893456000000LL;
static char *token;
static long fixed_calls;

/* True while a loop that started at `start` with `n` calls done should go on. */
static int more(double start, long n, double secs) {
    return fixed_calls > 0 ? n < fixed_calls : cpu_now() - start < secs;
}
static size_t token_len;

static void verify_or_die(iapv_verifier *v) {
    iapv_result *res = NULL;
    if (iapv_verify_jws(v, (const uint8_t *)token, token_len, NULL, 0, now_ms, &res, NULL) != IAPV_OK
        || !iapv_result_is_valid(res)) {
        fprintf(stderr, "startup: the JWS did not verify\n");
        exit(1);
    }
    iapv_result_free(res);
}

static iapv_verifier *new_or_die(void) {
    iapv_verifier *v = NULL;
    iapv_error err = {0};
    if (iapv_verifier_new(cfg, strlen(cfg), &v, &err) != IAPV_OK) {
        fprintf(stderr, "startup: %s\n", err.message);
        exit(1);
    }
    return v;
}

int main(int argc, char **argv) {
    const char *fx = argc > 1 ? argv[1] : "Tests/IAPVerifyTests/Fixtures";
    double secs = argc > 2 ? atof(argv[2]) : 0.3;
    if (getenv("STARTUP_CALLS")) fixed_calls = atol(getenv("STARTUP_CALLS"));
    char path[512];
    snprintf(path, sizeof path, "%s/jws/transaction_autorenew_sandbox_2022-11.jws", fx);
    FILE *f = fopen(path, "rb");
    if (!f) { fprintf(stderr, "cannot open %s\n", path); return 2; }
    static char buf[16384];
    token_len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    while (token_len && (buf[token_len - 1] == '\n' || buf[token_len - 1] == '\r')) token_len--;
    token = buf;

    double start = cpu_now();
    iapv_verifier *first = new_or_die();
    verify_or_die(first);
    double first_call = cpu_now() - start;
    iapv_verifier_free(first);

    long n = 0;
    start = cpu_now();
    while (more(start, n, secs)) { iapv_verifier_free(new_or_die()); n++; }
    double construction = (cpu_now() - start) / (double)n;

    n = 0;
    start = cpu_now();
    while (more(start, n, secs)) {
        iapv_verifier *v = new_or_die();
        verify_or_die(v);
        iapv_verifier_free(v);
        n++;
    }
    double cold = (cpu_now() - start) / (double)n;

    iapv_verifier *v = new_or_die();
    n = 0;
    start = cpu_now();
    while (more(start, n, secs)) { verify_or_die(v); n++; }
    double warm = (cpu_now() - start) / (double)n;
    iapv_verifier_free(v);

    printf("%.2f %.2f %.2f %.2f\n", first_call * 1e6, construction * 1e6, cold * 1e6, warm * 1e6);
    return 0;
}
