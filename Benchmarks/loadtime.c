/*
 * loadtime: what loading libiapverify costs a fresh process.
 *
 *   loadtime LIB RUNS        spawns RUNS fresh processes of itself and prints the medians
 *   loadtime --child LIB     one measurement: dlopen(RTLD_NOW) + iapv_verifier_new, wall time and
 *                            the VmRSS delta, plus the resident KiB of each newly mapped file
 *
 * The library's own share is the VmRSS gain less the shared libraries it needs (libcrypto,
 * libstdc++, libm, libgcc_s, Jansson, simdjson): what a host that has those mapped already gains.
 *
 * Links nothing but libc and libdl, so the library's own dependencies load inside the timing.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double wall(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static long vmrss_kb(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0) kb = atol(line + 6);
    if (f) fclose(f);
    return kb;
}

/* Resident KiB of the mappings of files whose name contains needle. */
static long mapped_rss_kb(const char *needle) {
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[1024];
    int in = 0;
    long kb = 0;
    while (f && fgets(line, sizeof line, f)) {
        if (strchr(line, '-') && strchr(line, '-') < strchr(line, ' ') && line[0] != ' ') {
            in = strstr(line, needle) != NULL;
        } else if (in && strncmp(line, "Rss:", 4) == 0) {
            kb += atol(line + 4);
        }
    }
    if (f) fclose(f);
    return kb;
}

typedef int32_t (*new_fn)(const char *, size_t, void **, void *);
typedef void (*free_fn)(void *);

static int child(const char *lib) {
    long rss0 = vmrss_kb();
    double t0 = wall();
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) { fprintf(stderr, "%s\n", dlerror()); return 1; }
    double t1 = wall();
    new_fn vnew = (new_fn)dlsym(h, "iapv_verifier_new");
    const char *cfg = "{\"bundle_id\":\"*\",\"environments\":[\"Production\",\"Sandbox\"]}";
    void *v = NULL;
    if (!vnew || vnew(cfg, strlen(cfg), &v, NULL) != 0) { fprintf(stderr, "iapv_verifier_new failed\n"); return 1; }
    double t2 = wall();
    long rss1 = vmrss_kb();
    long others = mapped_rss_kb("/libm.so") + mapped_rss_kb("libgcc_s") + mapped_rss_kb("libsimdjson");
    printf("%.1f %.1f %ld %ld %ld %ld %ld %ld\n", (t1 - t0) * 1e6, (t2 - t1) * 1e6, rss1 - rss0, mapped_rss_kb("libiapverify"),
           mapped_rss_kb("libcrypto"), mapped_rss_kb("libstdc++"), mapped_rss_kb("libjansson"), others);
    return 0;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double med(double *v, int n) { qsort(v, (size_t)n, sizeof *v, cmp); return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2; }

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "--child") == 0) return child(argv[2]);
    if (argc < 2) { fprintf(stderr, "usage: loadtime LIB [RUNS]\n"); return 2; }
    int runs = argc > 2 ? atoi(argv[2]) : 20;
    if (runs < 1 || runs > 200) runs = 20;
    double cols[9][200];
    char cmd[4096], line[512];
    for (int i = 0; i < runs; i++) {
        snprintf(cmd, sizeof cmd, "'%s' --child '%s'", argv[0], argv[1]);
        FILE *p = popen(cmd, "r");
        if (!p || !fgets(line, sizeof line, p)) { fprintf(stderr, "loadtime: child failed\n"); return 1; }
        pclose(p);
        if (sscanf(line, "%lf %lf %lf %lf %lf %lf %lf %lf", &cols[0][i], &cols[1][i], &cols[2][i], &cols[3][i], &cols[4][i],
                   &cols[5][i], &cols[6][i], &cols[7][i]) != 8) return 1;
        cols[8][i] = cols[2][i] - cols[4][i] - cols[5][i] - cols[6][i] - cols[7][i];  /* the library's own share */
    }
    double m[9];
    for (int c = 0; c < 9; c++) m[c] = med(cols[c], runs);
    printf("  load, median of %d fresh processes: dlopen %.2f ms + iapv_verifier_new %.2f ms = %.2f ms\n", runs, m[0] / 1000,
           m[1] / 1000, (m[0] + m[1]) / 1000);
    printf("  resident after load: VmRSS +%.1f MiB; of it, mapped files: libiapverify %.1f MiB, libcrypto %.1f MiB, "
           "libstdc++ %.1f MiB, libjansson %.2f MiB\n", m[2] / 1024, m[3] / 1024, m[4] / 1024, m[5] / 1024, m[6] / 1024);
    printf("  the library's own share: +%.1f MiB (VmRSS gain less the shared libraries it needs)\n", m[8] / 1024);
    return 0;
}
