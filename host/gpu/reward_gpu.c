#include "reward_gpu.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "backend.h"
#include "child.h"
#include "confine.h"
#include "env.h"
#include "util.h"
#include "worker.h"
#include "sim_reward.h"

#define GJOB_MAGIC 0x474a4f42u

typedef struct {
    uint32_t magic;
    int32_t variant, n;
    uint64_t seed;
    double timeout_s;
} gjob; /* then the source */

/* Messages of the worker: a tag byte, then a fixed layout or text. */
enum { GM_DEVICE = 'I', GM_STEP = 'R', GM_NO_DEVICE = 'N', GM_ERROR = 'E' };
typedef struct {
    unsigned char tag, pad[7];
    double seconds; /* device time of this step, its kernels included */
    float rewards[]; /* n */
} step_msg;
typedef struct {
    unsigned char tag;
    char name[256], arch[16];
} device_msg;
#define TEXT_MAX 1400

/* ---- the worker (no reward code runs on this host: it runs on the device) ---- */

static int send_text(int tag, const char *fmt, const char *a, const char *b)
{
    char m[TEXT_MAX + 2];
    m[0] = (char)tag;
    snprintf(m + 1, sizeof m - 1, fmt, a, b ? b : "");
    child_send_data(m, strlen(m + 1) + 1);
    return tag == GM_NO_DEVICE ? 0 : 1;
}

static int run_episode(const gjob *j, const pcg_cuda_api *api, pcg_cuda_env *ge)
{
    int steps = 3 * PCG_DEFAULT_SIDE * PCG_DEFAULT_SIDE;
    size_t len = sizeof(step_msg) + sizeof(float) * (size_t)j->n;
    step_msg *m = malloc(len);
    if (!m) return send_text(GM_ERROR, "out of memory%s%s", "", NULL);
    memset(m, 0, sizeof *m);
    m->tag = GM_STEP;
    for (int t = 0; t < steps; t++) {
        double t0 = now_seconds();
        if (api->env_step_random(ge, j->seed, (uint64_t)t, 1) || api->sync_timeout(j->timeout_s))
            return free(m), send_text(GM_ERROR, "on the GPU: %s%s", api->last_error(), NULL);
        m->seconds = now_seconds() - t0;
        pcg_cuda_env_host h;
        memset(&h, 0, sizeof h);
        h.rewards = m->rewards;
        if (api->env_copy(ge, &h)) return free(m), send_text(GM_ERROR, "GPU: %s%s", api->last_error(), NULL);
        child_send_data(m, len);
    }
    free(m);
    return 0;
}

/* The simulation calls the reward on this thread inside each step, where
 * sync_timeout cannot stop it: a reward that never returns would last the
 * caller's whole timeout (2T + 180 s).  So, as the CPU validation does, the
 * reward calls get T seconds of CPU from here (SIGXCPU past them). */
static void sim_cpu_budget(double timeout_s)
{
    struct rusage u;
    double used = 0;
    if (getrusage(RUSAGE_SELF, &u) == 0)
        used = (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
    confine_limits(used + timeout_s, 0, 0);
}

int reward_worker_gpu_rewards(const unsigned char *job, size_t job_len)
{
    gjob j;
    if (job_len < sizeof j) return 2;
    memcpy(&j, job, sizeof j);
    if (j.magic != GJOB_MAGIC || j.n < 1 || j.n > 65536) return 2;
    char *src = malloc(job_len - sizeof j + 1);
    if (!src) return 1;
    memcpy(src, job + sizeof j, job_len - sizeof j);
    src[job_len - sizeof j] = 0;
    char err[600];
    /* the library (the simulation's too), and the GPU PCGRLLM_GPU names */
    if (backend_select("cuda", err, sizeof err) != BACKEND_CUDA) return send_text(GM_NO_DEVICE, "%s%s", err, NULL);
    const pcg_cuda_api *api = backend_cuda();
    pcg_cuda_device_info info;
    if (api->device_info(backend_gpu(), &info)) return send_text(GM_ERROR, "GPU: %s%s", api->last_error(), NULL);
    device_msg d;
    memset(&d, 0, sizeof d);
    d.tag = GM_DEVICE;
    snprintf(d.name, sizeof d.name, "%s", info.name);
    snprintf(d.arch, sizeof d.arch, "sm_%d%d", info.major, info.minor);
    child_send_data(&d, sizeof d);
    char *cubin = NULL;
    size_t len = 0;
    if (reward_compile_nvrtc(src, d.arch, &cubin, &len, err, sizeof err))
        return send_text(GM_ERROR, "the GPU compiler (NVRTC, %s) refuses it: %s", d.arch, err);
    pcg_cuda_env *ge = api->env_alloc(j.n, PCG_DEFAULT_SIDE, PCG_DEFAULT_SIDE, j.variant, j.seed, PCG_OBS_THREAD);
    reward_prog *host_prog; /* the simulation's stand-in for the kernel, kept to the end */
    if (ge && api->simulated) sim_cpu_budget(j.timeout_s);
    if (ge && sim_reward_confined(api, src, child_fd(), &host_prog, err, sizeof err))
        return send_text(GM_ERROR, "the simulation's host reward: %s%s", err, NULL);
    /* the check compares the reward itself with the CPU's values on every
     * step, the last included: no step's reward is replaced */
    env_rules every_step = {OBS_CENTRE_LAST, TERMINAL_REWARD_DESIGNED, FINAL_LEVEL_767};
    if (!ge || api->env_set_rules(ge, &every_step) || api->env_set_reward(ge, cubin))
        return send_text(GM_ERROR, "GPU: %s%s", api->last_error(), NULL);
    return run_episode(&j, api, ge);
}

/* ---- the caller ---- */

typedef struct {
    reward_gpu_result *r;
    const float *cpu;
    int n, steps, t;
    reward_acc acc;
    int failed;
    char fail[600];
} gcollect;

static void clean(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e) *s = '?';
}

static int on_step(gcollect *c, const unsigned char *data, size_t len, char *why, int whylen)
{
    if (len != sizeof(step_msg) + sizeof(float) * (size_t)c->n || c->t >= c->steps)
        return snprintf(why, (size_t)whylen, "the GPU check sent a malformed message"), 1;
    const float *g = (const float *)(data + sizeof(step_msg));
    double seconds;
    memcpy(&seconds, data + 8, sizeof seconds);
    for (int i = 0; i < c->n; i++) {
        float v;
        memcpy(&v, g + i, sizeof v);
        if (!isfinite(v))
            return snprintf(why, (size_t)whylen, "returned %g on the GPU at step %d", (double)v, c->t), 1;
        double cv = c->cpu[(size_t)i * c->steps + c->t];
        double d = fabs((double)v - cv) / (1.0 + fabs(cv));
        if (d > c->r->max_diff) {
            c->r->max_diff = d;
            c->r->diff_step = c->t;
        }
        reward_acc_add(&c->acc, v);
    }
    if (isfinite(seconds) && seconds >= 0) c->acc.seconds += seconds;
    c->t++;
    return 0;
}

static int on_gpu(void *ctx, const unsigned char *data, size_t len, char *why, int whylen)
{
    gcollect *c = ctx;
    if (len < 1) return snprintf(why, (size_t)whylen, "the GPU check sent a malformed message"), 1;
    if (data[0] == GM_STEP) return on_step(c, data, len, why, whylen);
    if (data[0] == GM_DEVICE && len == sizeof(device_msg)) {
        const device_msg *d = (const device_msg *)data;
        snprintf(c->r->device, sizeof c->r->device, "%.255s", d->name);
        snprintf(c->r->arch, sizeof c->r->arch, "%.15s", d->arch);
        clean(c->r->device), clean(c->r->arch);
        return 0;
    }
    if ((data[0] == GM_NO_DEVICE || data[0] == GM_ERROR) && len <= TEXT_MAX + 1) {
        char *dst = data[0] == GM_NO_DEVICE ? c->r->why : c->fail;
        size_t cap = data[0] == GM_NO_DEVICE ? sizeof c->r->why : sizeof c->fail;
        snprintf(dst, cap, "%.*s", (int)len - 1, (const char *)data + 1);
        clean(dst);
        c->failed |= data[0] == GM_ERROR;
        return 0;
    }
    return snprintf(why, (size_t)whylen, "the GPU check sent a malformed message"), 1;
}

int reward_gpu_check(const char *src, int variant, int n, uint64_t seed, double timeout_s, const float *cpu,
                     reward_gpu_result *r, char *reason, int reason_len)
{
    memset(r, 0, sizeof *r);
    size_t n_src = strlen(src);
    unsigned char *job = malloc(sizeof(gjob) + n_src);
    if (!job) return snprintf(reason, (size_t)reason_len, "out of memory"), -1;
    gjob j = {GJOB_MAGIC, variant, n, seed, timeout_s};
    memcpy(job, &j, sizeof j);
    memcpy(job + sizeof j, src, n_src);
    gcollect c;
    memset(&c, 0, sizeof c);
    c.r = r;
    c.cpu = cpu;
    c.n = n;
    c.steps = 3 * PCG_DEFAULT_SIDE * PCG_DEFAULT_SIDE;
    reward_acc_init(&c.acc);
    child_opts o = {.timeout_s = timeout_s * 2 + 180, .on_data = on_gpu, .data_ctx = &c,
                    .max_frame = sizeof(step_msg) + sizeof(float) * (size_t)n + 4096};
    char why[800];
    int rc = worker_run("gpu-rewards", job, sizeof j + n_src, &o, NULL, NULL, why, sizeof why);
    free(job);
    if (c.failed) return snprintf(reason, (size_t)reason_len, "%s", c.fail), -1;
    if (r->why[0] && c.t == 0) return 0; /* no device: the caller says so */
    if (rc) return snprintf(reason, (size_t)reason_len, "the GPU check %s", why), -1;
    if (c.t != c.steps)
        return snprintf(reason, (size_t)reason_len, "the GPU check stopped after %d of %d steps", c.t, c.steps), -1;
    reward_acc_finish(&c.acc, &r->stats);
    r->stats.us_per_call = c.acc.seconds * 1e6 / ((double)c.steps * n); /* per environment step */
    r->ran = 1;
    return 0;
}
