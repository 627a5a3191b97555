#define _GNU_SOURCE
#include "worker.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

#define WORKER_ARG "__worker"

/* The roles, set by the binary (the table lives with the roles' layers). */
static const worker_role *roles;
static int n_roles;

void worker_set_roles(const worker_role *table, int n)
{
    roles = table;
    n_roles = n;
}

static int role_index(const char *name)
{
    for (int i = 0; i < n_roles; i++)
        if (!strcmp(roles[i].name, name)) return i;
    return -1;
}

/* ---- the environment ---- */

/* What a worker may need: the CUDA driver and runtime, the thread pools,
 * library paths, locale and the engine's own device selection. */
static const char *const env_allowed[] = {
    "PATH", "HOME", "TMPDIR", "TZ", "LANG", "LC_ALL", "LC_CTYPE", "LC_NUMERIC", "TERM", "NO_COLOR",
    "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "CUDA_CACHE_PATH", "CUDA_CACHE_DISABLE",
    "CUDA_CACHE_MAXSIZE", "CUDA_MODULE_LOADING", "CUDA_LAUNCH_BLOCKING", "OMP_NUM_THREADS", "OMP_WAIT_POLICY",
    "OMP_PROC_BIND", "OMP_PLACES", "OMP_DYNAMIC", "GOMP_SPINCOUNT", "OPENBLAS_NUM_THREADS", "OPENBLAS_CORETYPE",
    "PCGRLLM_GPU", "PCGRLLM_CUDA_LIB", "PCGRLLM_NVRTC", "PCGRLLM_CUBLAS", "PCGRLLM_CUDA_LIB_PATH",
    "PCGRLLM_CUDA_GRAPHS", "PCGRLLM_CUDA_PASS_MOST",
    /* the simulation is loaded by the worker that trains or checks */
    "PCGRLLM_SIM_THREADS", "PCGRLLM_SIM_ORDER", "PCGRLLM_SIM_CONV", "PCGRLLM_SIM_SMS",
    /* a runtime preloaded into the engine, the same in its workers: the
     * simulation's sanitizer build needs one in the worker that loads it
     * (and the user who set it has it running in the engine already) */
    "LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS",
};

#define MAX_DENIED 8
static char denied[MAX_DENIED][128];
static int n_denied;
static char **env_built;

void worker_env_deny(const char *name)
{
    if (!name || !*name || n_denied == MAX_DENIED) return;
    snprintf(denied[n_denied++], sizeof denied[0], "%s", name);
}

static int env_keep(const char *entry)
{
    size_t n = strcspn(entry, "=");
    for (int i = 0; i < n_denied; i++)
        if (strlen(denied[i]) == n && !strncmp(entry, denied[i], n)) return 0;
    for (size_t i = 0; i < sizeof env_allowed / sizeof env_allowed[0]; i++)
        if (strlen(env_allowed[i]) == n && !strncmp(entry, env_allowed[i], n)) return 1;
    return 0;
}

char *const *worker_environment(void)
{
    /* built anew each time: tests and callers may change the environment */
    free(env_built);
    env_built = NULL;
    size_t n = 0;
    while (environ && environ[n]) n++;
    char **e = malloc((n + 1) * sizeof *e);
    if (!e) {
        static char *empty[1] = {NULL};
        return empty;
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (env_keep(environ[i])) e[m++] = environ[i];
    e[m] = NULL;
    env_built = e;
    return e;
}

void worker_scrub_environment(void)
{
    size_t n = 0;
    while (environ && environ[n]) n++;
    char **keep = calloc(n + 1, sizeof *keep);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (env_keep(environ[i])) {
            if (keep) keep[k++] = strdup(environ[i]);
            continue;
        }
        /* the bytes themselves, not only the entry: they stay in memory */
        char *eq = strchr(environ[i], '=');
        if (eq) memset(eq + 1, 0, strlen(eq + 1));
    }
    clearenv();
    for (size_t i = 0; keep && i < k; i++)
        if (keep[i]) putenv(keep[i]); /* putenv keeps the strings: not freed */
    free(keep);
}

/* ---- the caller's side ---- */

/* A sealed memory file holding the job; -1 with errno on failure. */
static int job_file(const void *job, size_t len)
{
    int fd = memfd_create("pcgrllm-job", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) return -1;
    const char *p = job;
    for (size_t left = len; left > 0;) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            close(fd);
            return -1;
        }
        p += w;
        left -= (size_t)w;
    }
    if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL)) {
        close(fd);
        return -1;
    }
    return fd;
}

typedef struct {
    const char *exe;
    char *argv[6];
    char jobfd[16], pipefd[16];
    int job;
    char *const *envp;
} exec_job;

/* Decimal digits of v into buf (no stdio: this runs between fork and exec). */
static void put_decimal(char *buf, int v)
{
    char tmp[16];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v > 0 && n < 15);
    for (int i = 0; i < n; i++) buf[i] = tmp[n - 1 - i];
    buf[n] = 0;
}

static int exec_worker(void *arg)
{
    exec_job *x = arg;
    put_decimal(x->pipefd, child_fd());
    child_exec(x->exe, x->argv, x->envp, x->job, 1);
    child_fail("cannot start the worker process (exec of the pcgrllm binary failed)");
    return 127;
}

/* Start exe's role with job descriptor fd (kept open across the exec)
 * and watch it (child_run_ex). */
static int start_worker(const char *exe, const char *role, int fd, const child_opts *o, void **blob,
                        size_t *blob_len, char *reason, int reason_len)
{
    /* argv and the environment are built here: after fork only exec runs */
    exec_job x;
    memset(&x, 0, sizeof x);
    x.exe = exe;
    snprintf(x.jobfd, sizeof x.jobfd, "%d", fd);
    x.job = fd;
    char *argv[] = {"pcgrllm", WORKER_ARG, (char *)role, x.jobfd, x.pipefd, NULL};
    memcpy(x.argv, argv, sizeof argv);
    x.envp = worker_environment();
    return child_run_ex(exec_worker, &x, o, blob, blob_len, reason, reason_len);
}

int worker_run(const char *role, const void *job, size_t job_len, const child_opts *opts, void **blob,
               size_t *blob_len, char *reason, int reason_len)
{
    int r = role_index(role);
    if (r < 0) {
        snprintf(reason, (size_t)reason_len, "internal error: no worker role '%s'", role);
        return -1;
    }
    int fd = job_file(job, job_len);
    if (fd < 0) {
        snprintf(reason, (size_t)reason_len, "cannot hand the job to a worker: %s", strerror(errno));
        return -1;
    }
    child_opts o;
    memset(&o, 0, sizeof o);
    if (opts) o = *opts;
    if (roles[r].untrusted) o.untrusted = 1;
    int rc = start_worker("/proc/self/exe", roles[r].name, fd, &o, blob, blob_len, reason, reason_len);
    close(fd);
    return rc;
}

int worker_run_shared(const char *exe, const char *role, int region_fd, const child_opts *opts, char *reason,
                      int reason_len)
{
    child_opts o;
    memset(&o, 0, sizeof o);
    if (opts) o = *opts;
    o.untrusted = 1;
    return start_worker(exe, role, region_fd, &o, NULL, NULL, reason, reason_len);
}

/* ---- the worker's side ---- */

static int parse_fd(const char *s, int want_type)
{
    char *end;
    long v = strtol(s, &end, 10);
    struct stat st;
    if (*s == 0 || *end || v < 3 || v > 1 << 20 || fstat((int)v, &st) || (st.st_mode & S_IFMT) != (mode_t)want_type)
        return -1;
    return (int)v;
}

int worker_dispatch(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], WORKER_ARG)) return -1;
    int r = argc == 5 ? role_index(argv[2]) : -1;
    int job = r >= 0 ? parse_fd(argv[3], S_IFREG) : -1;
    int pipe_fd = job >= 0 ? parse_fd(argv[4], S_IFIFO) : -1;
    if (pipe_fd < 0) {
        fprintf(stderr, "pcgrllm: %s is the engine's own way of starting its workers, not a command\n", WORKER_ARG);
        return 2;
    }
    child_attach(pipe_fd);
    struct stat st;
    if (fstat(job, &st)) return 1;
    size_t len = (size_t)st.st_size;
    /* a shared role's region is written by both sides; every other job is
     * sealed and read-only */
    int prot = roles[r].shared ? PROT_READ | PROT_WRITE : PROT_READ;
    unsigned char *data = NULL;
    if (len > 0) {
        void *m = mmap(NULL, len, prot, MAP_SHARED, job, 0);
        if (m == MAP_FAILED) return 1;
        data = m;
    }
    close(job);
    if (roles[r].shared) return roles[r].shared(data, len);
    if (!roles[r].fn) return 1;
    return roles[r].fn(data, len);
}
