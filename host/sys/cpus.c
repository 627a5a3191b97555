#define _GNU_SOURCE
#include "cpus.h"
#include "util.h"
#include <math.h>
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The quota (CPUs) of the cgroup v2 this process is in, the tightest of it
 * and its ancestors; 0 when none is set or cgroups are not readable. */
static double cgroup_quota(void)
{
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (!f) return 0;
    char line[4096], path[4096] = "";
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "0::", 3)) {
            line[strcspn(line, "\n")] = 0;
            snprintf(path, sizeof path, "%s", line + 3);
        }
    fclose(f);
    double best = 0;
    for (;;) {
        char file[4200];
        snprintf(file, sizeof file, "/sys/fs/cgroup%s/cpu.max", path);
        FILE *q = fopen(file, "r");
        if (q) {
            char max[32] = "";
            double period = 0;
            if (fscanf(q, "%31s %lf", max, &period) == 2 && strcmp(max, "max") && period > 0) {
                double cpus = atof(max) / period;
                if (cpus > 0 && (best == 0 || cpus < best)) best = cpus;
            }
            fclose(q);
        }
        char *slash = strrchr(path, '/');
        if (!slash || !path[0]) break;
        *slash = 0; /* the parent; "" is the root */
    }
    return best;
}

/* Seconds of CPU this process has used, all its threads together. */
static double own_cpu_seconds(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)) return 0;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPUs not busy with other processes' work over sample_s seconds, from
 * /proc/stat's totals less this process's own CPU time: the libraries'
 * thread pools start up (and spin a while) during the sample, and they are
 * not a load that competes with the engine. */
static double idle_cpus(double sample_s)
{
    unsigned long long v0[10], v1[10];
    double own0 = 0, t0 = 0;
    for (int pass = 0; pass < 2; pass++) {
        FILE *f = fopen("/proc/stat", "r");
        if (!f) return -1;
        unsigned long long *v = pass ? v1 : v0;
        memset(v, 0, sizeof v0);
        int got = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                         &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]);
        fclose(f);
        if (got < 5) return -1;
        if (!pass) {
            own0 = own_cpu_seconds(), t0 = now_seconds();
            struct timespec ts = {(time_t)sample_s, (long)((sample_s - floor(sample_s)) * 1e9)};
            nanosleep(&ts, NULL);
        }
    }
    double wall = now_seconds() - t0, own = own_cpu_seconds() - own0;
    unsigned long long total = 0, idle = (v1[3] - v0[3]) + (v1[4] - v0[4]); /* idle + iowait */
    for (int i = 0; i < 8; i++) total += v1[i] - v0[i]; /* guest time is counted in user already */
    int online = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (total == 0 || online <= 0 || wall <= 0) return -1;
    double busy = (double)online * (double)(total - idle) / (double)total; /* CPUs busy, this process included */
    double others = busy - own / wall;
    if (others < 0) others = 0;
    return (double)online - others;
}

cpu_budget cpus_measure(double sample_s)
{
    cpu_budget b = {1, 0, -1, 1};
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) b.affinity = CPU_COUNT(&set);
    if (b.affinity < 1) b.affinity = 1;
    b.quota = cgroup_quota();
    double allowed = b.affinity;
    if (b.quota > 0 && b.quota < allowed) allowed = b.quota;
    if (sample_s > 0) b.idle = idle_cpus(sample_s);
    /* a CPU at least half idle counts: one busy elsewhere does not */
    double usable = b.idle >= 0 && b.idle < allowed ? floor(b.idle + 0.5) : allowed;
    b.threads = (int)floor(usable + 1e-9);
    if (b.threads < 1) b.threads = 1;
    return b;
}

static cpu_budget current;

cpu_budget cpus_apply_default(void)
{
    const char *env = getenv("OMP_NUM_THREADS");
    if (env && *env) {
        current = cpus_measure(0);
        current.threads = omp_get_max_threads();
        return current;
    }
    current = cpus_measure(0.05);
    omp_set_num_threads(current.threads);
    return current;
}

cpu_budget cpus_current(void)
{
    return current;
}

void cpus_describe(const cpu_budget *b, char *buf, int len)
{
    int n = snprintf(buf, (size_t)len, "%d thread%s (%d CPU%s allowed", b->threads, b->threads == 1 ? "" : "s",
                     b->affinity, b->affinity == 1 ? "" : "s");
    if (b->quota > 0 && n < len) n += snprintf(buf + n, (size_t)(len - n), ", cgroup quota %.2g", b->quota);
    if (b->idle >= 0 && n < len) n += snprintf(buf + n, (size_t)(len - n), ", %.1f idle", b->idle);
    if (n < len) snprintf(buf + n, (size_t)(len - n), ")");
}
