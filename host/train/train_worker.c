/* Training in a confined worker process; see train_worker.h.  The worker's
 * half (train_worker_main) trains and sends messages; the caller's half
 * (train_in_worker) checks them, shows progress and writes the files. */
#define _GNU_SOURCE
#include "train_worker.h"
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "backend.h"
#include "sim_reward.h"
#include "checkpoint.h"
#include "child.h"
#include "confine.h"
#include "levelio.h"
#include "reward_jit.h"
#include "util.h"
#include "worker.h"

#define TJOB_MAGIC 0x544a4f42u
/* How often the worker reports progress within an update. */
#define PROGRESS_EVERY_S 0.25

typedef struct {
    uint32_t magic;
    train_settings s;
    uint64_t src_len, ckpt_len, cubin_len; /* then the bytes of each, in this order */
} tjob;

/* Messages from the worker: a tag byte, then a fixed layout. */
enum { TM_PROGRESS = 'P', TM_METRICS = 'M', TM_CHECKPOINT = 'K', TM_FAULT = 'H', TM_CRASH = 'F', TM_SETUP = 'S',
       TM_DEVICE_ERROR = 'T', TM_NONFINITE = 'N' };
typedef struct {
    unsigned char tag, pad[3];
    int32_t done, total;
} progress_msg;
typedef struct {
    unsigned char tag, pad[7];
    ppo_metrics m;
} metrics_msg;
typedef struct {
    unsigned char tag, pad[3];
    int32_t cause;
    int64_t step;
} fault_msg;
typedef struct {
    unsigned char tag, code;
} code_msg;
/* The transition whose reward was not finite: this header, then the
 * previous and the current level (h * w tile ids each). */
typedef struct {
    unsigned char tag, pad[3];
    int32_t h, w;
    float value;
} nonfinite_msg;
/* What stopped the worker before training began (TM_SETUP codes). */
enum { SETUP_JOB = 1, SETUP_CONFINE, SETUP_COMPILE, SETUP_TRAINER };
#define DEVICE_TEXT_MAX 1000

/* ------------------------------------------------------------------ */
/* The worker                                                           */

static volatile int g_stop;

static void on_sigint(int sig)
{
    (void)sig;
    g_stop = 1;
}

static void send_code(int tag, int code)
{
    code_msg m = {(unsigned char)tag, (unsigned char)code};
    child_send_data(&m, sizeof m);
}

static void on_crash(int sig)
{
    /* the reward runs on every thread: the first to fault reports and ends
     * the process; the others wait for that (ending it themselves could cut
     * the report short) */
    static volatile int reported;
    if (__atomic_exchange_n(&reported, 1, __ATOMIC_SEQ_CST))
        for (;;) {
            struct timespec ts = {1, 0};
            nanosleep(&ts, NULL);
        }
    send_code(TM_CRASH, sig);
    _exit(3);
}

/* A device error, in the device trainer's words (that process runs no
 * reward code of its own: the reward runs on the device). */
static void send_device_error(const char *what, const char *detail)
{
    char m[DEVICE_TEXT_MAX + 1];
    m[0] = TM_DEVICE_ERROR;
    snprintf(m + 1, sizeof m - 1, "%s: %s", what, detail);
    child_send_data(m, strlen(m + 1) + 1);
}

typedef struct {
    const train_settings *s;
    int cuda;
    ppo_t cpu;
    reward_prog *prog;
    const pcg_cuda_api *api;
    pcg_cuda_ppo *dev;
    checkpoint_state st; /* the device trainer's host copy */
    double last_progress;
} trainer;

static void on_progress(void *ctx, int done, int total)
{
    trainer *t = ctx;
    double now = now_seconds();
    if (now - t->last_progress < PROGRESS_EVERY_S) return;
    t->last_progress = now;
    progress_msg m = {TM_PROGRESS, {0}, done, total};
    child_send_data(&m, sizeof m);
}

/* The CPU trainer: compile, confine, build.  0, or a SETUP_* code. */
static int open_cpu(trainer *t, const char *src, const unsigned char *ckpt, size_t ckpt_len)
{
    /* OpenBLAS may have started its threads already: the filters go on
     * every thread */
    if (confine_seccomp(CONFINE_COMPILE, child_fd(), 1)) return SETUP_CONFINE;
    char err[700];
    t->prog = reward_compile_cpu(src, err, sizeof err);
    if (!t->prog) return SETUP_COMPILE;
    int rc;
    if (t->s->resume) {
        checkpoint_state st;
        rc = checkpoint_decode(&st, ckpt, ckpt_len, "checkpoint", err, sizeof err);
        if (rc == 0) rc = checkpoint_to_ppo(&t->cpu, &st, reward_prog_call, t->prog, err, sizeof err);
        checkpoint_state_free(&st);
    } else {
        rc = ppo_init(&t->cpu, &t->s->cfg, reward_prog_call, t->prog, err, sizeof err);
    }
    if (rc) return SETUP_TRAINER;
    /* the thread pool exists now (the environments were reset in
     * parallel): the reward's code is in place and no thread starts again */
    if (confine_seccomp(CONFINE_RUN, child_fd(), 1)) return SETUP_CONFINE;
    t->cpu.stop = &g_stop;
    t->cpu.progress = on_progress;
    t->cpu.progress_ctx = t;
    return 0;
}

/* The device state as pointers into st. */
static pcg_cuda_ppo_state device_view(checkpoint_state *st)
{
    pcg_cuda_ppo_state d = {st->params, st->adam_m, st->adam_v, st->adam_t, st->step, st->update,
                            st->maps,   st->frozen, st->steps,  st->rng_pos, st->returns};
    return d;
}

/* The device trainer with a compiled reward kernel.  0, or SETUP_TRAINER
 * after a TM_DEVICE_ERROR message. */
static int open_cuda(trainer *t, const char *src, const unsigned char *ckpt, size_t ckpt_len, const void *cubin)
{
    char why[600];
    t->cuda = 1;
    if (backend_select("cuda", why, sizeof why) != BACKEND_CUDA) return send_device_error("GPU", why), SETUP_TRAINER;
    t->api = backend_cuda();
    int rc = t->s->resume ? checkpoint_decode(&t->st, ckpt, ckpt_len, "checkpoint", why, sizeof why)
                          : checkpoint_state_alloc(&t->st, &t->s->cfg);
    if (rc) return send_device_error("checkpoint", t->s->resume ? why : "out of host memory"), SETUP_TRAINER;
    const ppo_config *cfg = &t->st.cfg;
    nn_config nc;
    nn_t nn;
    int n_actions = cfg->variant == VARIANT_TREASURE ? 7 : 6;
    if (nn_preset_config(cfg->preset, 2 * cfg->map_h - 1, 2 * cfg->map_w - 1, n_actions, &nc) || nn_alloc(&nn, &nc))
        return send_device_error("network", "cannot build it"), SETUP_TRAINER;
    nn_init(&nn, cfg->seed, cfg->conv_init);
    if (t->api->blas_set_math(t->s->math) ||
        !(t->dev = t->api->ppo_init(cfg, &nc, nn.off, nn.n_params, t->s->resume ? t->st.params : nn.params, cubin))) {
        nn_free(&nn);
        return send_device_error("GPU", t->api->last_error()), SETUP_TRAINER;
    }
    nn_free(&nn);
    if (t->s->resume) {
        pcg_cuda_ppo_state d = device_view(&t->st);
        if (t->api->ppo_set_state(t->dev, &d)) return send_device_error("GPU", t->api->last_error()), SETUP_TRAINER;
    } else {
        t->st.last_episode_reward = NAN;
    }
    /* the simulation runs the reward module's kernel as this source on
     * the CPU, confined from here on */
    if (sim_reward_confined(t->api, src, child_fd(), &t->prog, why, sizeof why))
        return send_device_error("reward", why), SETUP_TRAINER;
    return 0;
}

/* The levels of the first non-finite reward, for the caller to save. */
static void send_nonfinite(const env_t *e)
{
    size_t cells = (size_t)e->cells;
    unsigned char *m = malloc(sizeof(nonfinite_msg) + 2 * cells);
    if (!m) return;
    nonfinite_msg h = {TM_NONFINITE, {0}, e->cfg.h, e->cfg.w, e->nonfinite_value};
    memcpy(m, &h, sizeof h);
    memcpy(m + sizeof h, e->nonfinite_prev, cells);
    memcpy(m + sizeof h + cells, e->nonfinite_curr, cells);
    child_send_data(m, sizeof h + 2 * cells);
    free(m);
}

/* One rollout and update.  PPO_DONE, PPO_STOPPED, PPO_UNHEALTHY (after a
 * TM_FAULT message), or -3 after a TM_DEVICE_ERROR message. */
static int update(trainer *t, ppo_metrics *m)
{
    if (!t->cuda) {
        int rc = ppo_train_update(&t->cpu, m);
        if (rc == PPO_UNHEALTHY && t->cpu.fault == PPO_FAULT_REWARD && t->cpu.env.nonfinite) send_nonfinite(&t->cpu.env);
        if (rc == PPO_UNHEALTHY) {
            fault_msg f = {TM_FAULT, {0}, t->cpu.fault, t->cpu.fault_step};
            child_send_data(&f, sizeof f);
        }
        return rc;
    }
    if (t->api->ppo_train_update(t->dev, m)) return send_device_error("device trainer", t->api->last_error()), -3;
    if (m->episodes > 0) t->st.last_episode_reward = m->episode_reward;
    return PPO_DONE;
}

/* Send the trainer's state as checkpoint bytes.  0, or -1. */
static int send_checkpoint(trainer *t)
{
    checkpoint_state view;
    if (t->cuda) {
        pcg_cuda_ppo_state d = device_view(&t->st);
        if (t->api->ppo_get_state(t->dev, &d)) return send_device_error("device trainer", t->api->last_error()), -1;
        t->st.adam_t = d.adam_t;
        t->st.step = d.step;
        t->st.update = d.update;
        view = t->st;
    } else {
        view = checkpoint_view(&t->cpu);
    }
    unsigned char *buf;
    size_t len;
    if (checkpoint_encode(&view, &buf, &len)) return -1;
    /* the tag goes in the 8 bytes before the checkpoint: one message */
    unsigned char *msg = malloc(len + 8);
    if (!msg) {
        free(buf);
        return -1;
    }
    memset(msg, 0, 8);
    msg[0] = TM_CHECKPOINT;
    memcpy(msg + 8, buf, len);
    free(buf);
    int rc = child_send_data(msg, len + 8);
    free(msg);
    return rc;
}

static int64_t trainer_step(const trainer *t, const ppo_metrics *m)
{
    return t->cuda ? m->step : t->cpu.step;
}

static int train_loop(trainer *t)
{
    double last_save = now_seconds();
    int64_t step = t->cuda ? t->st.step : t->cpu.step;
    while (step < t->s->steps) {
        ppo_metrics m;
        int rc = update(t, &m);
        if (rc == PPO_STOPPED) return 130;
        if (rc != PPO_DONE) return 1;
        step = trainer_step(t, &m);
        metrics_msg mm;
        memset(&mm, 0, sizeof mm);
        mm.tag = TM_METRICS;
        mm.m = m;
        child_send_data(&mm, sizeof mm);
        /* every update, or every save_every seconds; always the last one */
        if (now_seconds() - last_save >= t->s->save_every || step >= t->s->steps || g_stop) {
            if (send_checkpoint(t)) return 1;
            last_save = now_seconds();
        }
        if (g_stop) return 130;
    }
    return 0;
}

int train_worker_main(const unsigned char *job, size_t job_len)
{
    tjob j;
    if (job_len < sizeof j) return 2;
    memcpy(&j, job, sizeof j);
    if (j.magic != TJOB_MAGIC || j.src_len + j.ckpt_len + j.cubin_len > job_len - sizeof j) {
        send_code(TM_SETUP, SETUP_JOB);
        return 1;
    }
    const unsigned char *p = job + sizeof j;
    char *src = malloc(j.src_len + 1);
    if (!src) return 1;
    memcpy(src, p, j.src_len);
    src[j.src_len] = 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    int crash[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGXCPU, SIGABRT};
    for (size_t i = 0; i < sizeof crash / sizeof crash[0]; i++) signal(crash[i], on_crash);
    nn_set_threads(j.s.threads);
    /* no core files, no file writes (the CUDA driver keeps its JIT cache
     * in files: not on a GPU) */
    if (!j.s.use_cuda) confine_limits(0, 0, 0);
    trainer t;
    memset(&t, 0, sizeof t);
    t.s = &j.s;
    int rc = j.s.use_cuda ? open_cuda(&t, src, p + j.src_len, j.ckpt_len, p + j.src_len + j.ckpt_len)
                          : open_cpu(&t, src, p + j.src_len, j.ckpt_len);
    if (rc) {
        send_code(TM_SETUP, rc);
        return 1;
    }
    return train_loop(&t);
}

/* ------------------------------------------------------------------ */
/* The caller                                                           */

typedef struct {
    const train_settings *s;
    const char *out;
    char ckpt_path[4096], metrics_path[4096];
    FILE *mf;
    int tty;
    int64_t start_step, step, update, saved_step;
    double t0, last_draw, ep_reward;
    int64_t update_steps;
    size_t ckpt_max;
    /* liveness the worker cannot fake for long: progress within an update
     * only counts while it increases, and every update must end within a
     * deadline set from the updates seen so far */
    int last_done;
    double update_started, longest_update, deadline;
    int setup_code, crash_sig, device_error;
    char stop_text[DEVICE_TEXT_MAX + 1];
    char nonfinite[1200]; /* ": compute_reward returned NaN for the levels saved as ...", or "" */
} driver;

static void fmt_eta(char *buf, size_t n, double s)
{
    if (!(s >= 0) || s > 1e7) snprintf(buf, n, "--:--");
    else if (s >= 3600) snprintf(buf, n, "%d:%02d:%02d", (int)(s / 3600), (int)(s / 60) % 60, (int)s % 60);
    else snprintf(buf, n, "%02d:%02d", (int)(s / 60), (int)s % 60);
}

static void fmt_reward(char *buf, size_t n, double r, const char *fmt)
{
    if (isnan(r)) snprintf(buf, n, "n/a");
    else snprintf(buf, n, fmt, r);
}

/* The caller's copy of the progress (run shows it), once a second. */
static void report(driver *d, double frac, double entropy)
{
    static double last;
    double now = now_seconds();
    if (!d->s->report || now - last < 1.0) return;
    last = now;
    double el = now - d->t0, done = (double)(d->step - d->start_step) + frac * (double)d->update_steps;
    double sps = el > 0 ? done / el : 0, left = (double)(d->s->steps - d->step) - frac * (double)d->update_steps;
    train_report r = {'T', {0}, d->step + (int64_t)(frac * d->update_steps), d->s->steps, sps, d->ep_reward, entropy,
                      sps > 0 ? left / sps : -1};
    child_send_data(&r, sizeof r);
}

static void draw(driver *d, double frac)
{
    double now = now_seconds(), el = now - d->t0;
    double done = (double)(d->step - d->start_step) + frac * (double)d->update_steps;
    double sps = el > 0 ? done / el : 0;
    double left = (double)(d->s->steps - d->step) - frac * (double)d->update_steps;
    char eta[32], rew[32];
    fmt_eta(eta, sizeof eta, sps > 0 ? left / sps : -1);
    fmt_reward(rew, sizeof rew, d->ep_reward, "%.3f");
    printf("\r\033[Kstep %lld/%lld (%.1f%%)  %.0f steps/s  mean episode reward %s  ETA %s",
           (long long)(d->step + (int64_t)(frac * d->update_steps)), (long long)d->s->steps,
           100.0 * (d->step + frac * d->update_steps) / (double)d->s->steps, sps, rew, eta);
    fflush(stdout);
    d->last_draw = now;
}

static void json_num(FILE *f, const char *key, double v)
{
    if (isfinite(v)) fprintf(f, ",\"%s\":%.6g", key, v);
    else fprintf(f, ",\"%s\":null", key);
}

static void write_metrics(FILE *mf, const ppo_metrics *m)
{
    fprintf(mf, "{\"update\":%lld,\"step\":%lld", (long long)m->update, (long long)m->step);
    json_num(mf, "episode_reward", m->episode_reward);
    json_num(mf, "episodes", m->episodes);
    json_num(mf, "step_reward", m->step_reward);
    json_num(mf, "loss", m->loss);
    json_num(mf, "policy_loss", m->policy_loss);
    json_num(mf, "value_loss", m->value_loss);
    json_num(mf, "entropy", m->entropy);
    json_num(mf, "approx_kl", m->approx_kl);
    json_num(mf, "clip_frac", m->clip_frac);
    json_num(mf, "grad_norm", m->grad_norm);
    json_num(mf, "steps_per_s", m->sps);
    json_num(mf, "t_rollout", m->t_rollout);
    json_num(mf, "t_env", m->t_env);
    json_num(mf, "t_update", m->t_update);
    fprintf(mf, "}\n");
    fflush(mf);
}

/* "training stopped at update U (step S): WHY; the last good checkpoint ..." */
static int stop_unhealthy(driver *d, int64_t update, int64_t step, const char *why, char *out, int outlen)
{
    if (d->saved_step > 0)
        snprintf(out, (size_t)outlen, "training stopped at update %lld (step %lld): %s; the last good checkpoint "
                 "(step %lld) is in %s", (long long)update, (long long)step, why, (long long)d->saved_step, d->out);
    else
        snprintf(out, (size_t)outlen, "training stopped at update %lld (step %lld): %s; no checkpoint was written",
                 (long long)update, (long long)step, why);
    return 1;
}

/* The numbers of one update, checked before anything is written. */
static const char *metrics_problem(const driver *d, const ppo_metrics *m)
{
    if (m->update != d->update + 1 || m->step != d->step + d->update_steps)
        return "the trainer reported its updates out of order";
    if (!isfinite(m->step_reward) || isinf(m->episode_reward)) return ppo_fault_text(PPO_FAULT_REWARD);
    if (!isfinite(m->loss) || !isfinite(m->policy_loss) || !isfinite(m->value_loss) || !isfinite(m->entropy))
        return ppo_fault_text(PPO_FAULT_LOSS);
    if (!isfinite(m->grad_norm)) return ppo_fault_text(PPO_FAULT_GRADIENT);
    return NULL;
}

static void print_update(driver *d, const ppo_metrics *m)
{
    if (d->tty) {
        draw(d, 0);
    } else if (!d->s->quiet) {
        char eta[32], rew[32];
        double el = now_seconds() - d->t0, sps = (double)(d->step - d->start_step) / el;
        fmt_eta(eta, sizeof eta, (double)(d->s->steps - d->step) / sps);
        fmt_reward(rew, sizeof rew, d->ep_reward, "%.4g");
        printf("update %lld  step %lld/%lld  %.0f steps/s  mean episode reward %s  entropy %.3f  approx_kl %.4f  "
               "ETA %s\n",
               (long long)m->update, (long long)d->step, (long long)d->s->steps, m->sps, rew, m->entropy,
               m->approx_kl, eta);
        fflush(stdout);
    }
}

/* Each update must end within max(10 x watchdog, 10 x the longest so far)
 * (the first: 10 x watchdog), whatever the worker sends meanwhile. */
static void set_deadline(driver *d)
{
    double now = now_seconds();
    if (d->update_started > 0 && now - d->update_started > d->longest_update) d->longest_update = now - d->update_started;
    double budget = 10 * (d->s->watchdog > d->longest_update ? d->s->watchdog : d->longest_update);
    d->update_started = now;
    d->deadline = now + budget;
    d->last_done = 0;
}

static int on_tick(void *ctx, char *why, int whylen)
{
    driver *d = ctx;
    if (d->deadline <= 0 || now_seconds() < d->deadline) return 0;
    snprintf(why, (size_t)whylen,
             "training stopped at update %lld (step %lld): the update did not end within %.0f s (a reward that "
             "never returns?); the last checkpoint (step %lld) is in %s",
             (long long)d->update + 1, (long long)d->step, d->deadline - d->update_started, (long long)d->saved_step,
             d->out);
    return 1;
}

static int on_metrics(driver *d, const unsigned char *data, size_t len, char *why, int whylen)
{
    metrics_msg mm;
    if (len != sizeof mm) return snprintf(why, (size_t)whylen, "the trainer sent a malformed message"), 1;
    memcpy(&mm, data, sizeof mm);
    const char *problem = metrics_problem(d, &mm.m);
    if (problem) return stop_unhealthy(d, mm.m.update, mm.m.step, problem, why, whylen);
    d->update = mm.m.update;
    d->step = mm.m.step;
    if (mm.m.episodes > 0) d->ep_reward = mm.m.episode_reward;
    write_metrics(d->mf, &mm.m);
    print_update(d, &mm.m);
    report(d, 0, mm.m.entropy);
    set_deadline(d);
    return CHILD_DATA_PROGRESS;
}

/* Both configs come from ppo_config_default or the checkpoint decoder,
 * which clear the whole struct first, and it has no padding. */
static int same_config(const ppo_config *a, const ppo_config *b) { return !memcmp(a, b, sizeof *a); }

static int on_checkpoint(driver *d, const unsigned char *data, size_t len, char *why, int whylen)
{
    checkpoint_state st;
    char err[700];
    if (len < 8 || checkpoint_decode(&st, data + 8, len - 8, "the checkpoint the trainer sent", err, sizeof err))
        return stop_unhealthy(d, d->update, d->step, len < 8 ? "the trainer sent a malformed message" : err, why,
                              whylen);
    int ok = same_config(&st.cfg, &d->s->cfg) && st.step == d->step && st.update == d->update;
    checkpoint_state_free(&st);
    if (!ok) return stop_unhealthy(d, d->update, d->step, "the trainer sent a checkpoint of another state", why, whylen);
    if (write_file_atomic(d->ckpt_path, data + 8, len - 8))
        return snprintf(why, (size_t)whylen, "%s: cannot write the checkpoint: %s", d->ckpt_path, strerror(errno)), 1;
    d->saved_step = d->step;
    return CHILD_DATA_PROGRESS;
}

static void remove_nonfinite(const char *out)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/nonfinite_prev.txt", out);
    path_unlink(path);
    snprintf(path, sizeof path, "%s/nonfinite_curr.txt", out);
    path_unlink(path);
}

/* DIR/nonfinite_WHICH.txt (WHICH: prev or curr) with a comment saying what it is. */
static int save_level(const driver *d, const char *which, const unsigned char *tiles, const char *value)
{
    char path[4200], note[200];
    snprintf(path, sizeof path, "%s/nonfinite_%s.txt", d->out, which);
    snprintf(note, sizeof note, "%s of the transition for which compute_reward(prev, curr) returned %s in training "
             "(update %lld)", which, value, (long long)d->update + 1);
    level_t l = {d->s->cfg.map_h, d->s->cfg.map_w, (unsigned char *)tiles};
    return level_write(path, &l, note);
}

/* The worker's copy of the transition whose reward was not finite: plain
 * tile ids of this run's size, saved beside the checkpoint once. */
static int on_nonfinite(driver *d, const unsigned char *data, size_t len, char *why, int whylen)
{
    nonfinite_msg h;
    if (len < sizeof h) return snprintf(why, (size_t)whylen, "the trainer sent a malformed message"), 1;
    memcpy(&h, data, sizeof h);
    size_t cells = (size_t)d->s->cfg.map_h * d->s->cfg.map_w;
    int ok = h.h == d->s->cfg.map_h && h.w == d->s->cfg.map_w && len == sizeof h + 2 * cells && !d->nonfinite[0];
    for (size_t k = 0; ok && k < 2 * cells; k++) ok = data[sizeof h + k] < N_TILES;
    if (!ok) return snprintf(why, (size_t)whylen, "the trainer sent a malformed message"), 1;
    char value[8];
    snprintf(value, sizeof value, "%s", isnan(h.value) ? "NaN" : h.value > 0 ? "inf" : "-inf");
    const unsigned char *tiles = data + sizeof h;
    if (save_level(d, "prev", tiles, value) || save_level(d, "curr", tiles + cells, value))
        snprintf(d->nonfinite, sizeof d->nonfinite, ": compute_reward returned %s (its levels could not be saved in "
                 "%.1000s)", value, d->out);
    else
        snprintf(d->nonfinite, sizeof d->nonfinite, ": compute_reward returned %s for the levels saved as "
                 "%.1000s/nonfinite_prev.txt and nonfinite_curr.txt", value, d->out);
    return CHILD_DATA_OK;
}

static int on_message(void *ctx, const unsigned char *data, size_t len, char *why, int whylen)
{
    driver *d = ctx;
    if (len < 2) return snprintf(why, (size_t)whylen, "the trainer sent a malformed message"), 1;
    switch (data[0]) {
    case TM_PROGRESS: {
        progress_msg m;
        if (len != sizeof m) break;
        memcpy(&m, data, sizeof m);
        int total = d->s->cfg.n_steps + d->s->cfg.n_epochs * d->s->cfg.n_minibatches;
        if (m.total != total || m.done <= d->last_done || m.done > total) return CHILD_DATA_OK;
        d->last_done = m.done;
        if (d->tty) draw(d, (double)m.done / m.total);
        report(d, (double)m.done / m.total, NAN);
        return CHILD_DATA_PROGRESS;
    }
    case TM_METRICS: return on_metrics(d, data, len, why, whylen);
    case TM_CHECKPOINT: return on_checkpoint(d, data, len, why, whylen);
    case TM_FAULT: {
        fault_msg f;
        if (len != sizeof f) break;
        memcpy(&f, data, sizeof f);
        int cause = f.cause > 0 && f.cause < PPO_N_FAULTS ? f.cause : 0;
        char text[1400];
        if (cause == PPO_FAULT_REWARD && d->nonfinite[0]) snprintf(text, sizeof text, "a reward is not finite%s", d->nonfinite);
        else snprintf(text, sizeof text, "%s", ppo_fault_text(cause));
        return stop_unhealthy(d, d->update + 1, f.step, text, why, whylen);
    }
    case TM_NONFINITE: return on_nonfinite(d, data, len, why, whylen);
    case TM_CRASH: d->crash_sig = data[1]; return 0;
    case TM_SETUP: d->setup_code = data[1]; return 0;
    case TM_DEVICE_ERROR:
        if (!d->s->use_cuda || len > DEVICE_TEXT_MAX + 1) break;
        snprintf(d->stop_text, sizeof d->stop_text, "%.*s", (int)len - 1, (const char *)data + 1);
        for (char *c = d->stop_text; *c; c++)
            if (*c < 0x20 || *c > 0x7e) *c = '?';
        d->device_error = 1;
        return 0;
    }
    return snprintf(why, (size_t)whylen, "the trainer sent a malformed message"), 1;
}

/* Why the worker ended without finishing (its own messages first). */
static void explain_failure(const driver *d, const char *how, char *err, int errlen)
{
    static const char *const setup[] = {"", "the training job was malformed",
                                        "the training process could not confine itself",
                                        "the reward did not compile in the training process",
                                        "the trainer could not be built from these settings or this checkpoint"};
    if (d->device_error) snprintf(err, (size_t)errlen, "%s", d->stop_text);
    else if (d->setup_code > 0 && d->setup_code <= SETUP_TRAINER) snprintf(err, (size_t)errlen, "%s", setup[d->setup_code]);
    else if (d->crash_sig == SIGSYS)
        snprintf(err, (size_t)errlen, "the reward made a forbidden system call during training (stopped at step %lld)",
                 (long long)d->step);
    else if (d->crash_sig > 0 && d->crash_sig < 65)
        snprintf(err, (size_t)errlen, "crashed with %s at step %lld (the reward faulted on a level that random play "
                 "never produced?)", child_signal_name(d->crash_sig), (long long)d->step);
    else snprintf(err, (size_t)errlen, "%s", how);
}

/* Job bytes: header, source, checkpoint (resume), cubin (cuda). */
static unsigned char *build_job(const train_settings *s, const char *src, const unsigned char *ckpt, size_t ckpt_len,
                                const void *cubin, size_t cubin_len, size_t *job_len)
{
    tjob j;
    memset(&j, 0, sizeof j);
    j.magic = TJOB_MAGIC;
    j.s = *s;
    j.src_len = strlen(src);
    j.ckpt_len = ckpt_len;
    j.cubin_len = cubin_len;
    *job_len = sizeof j + j.src_len + ckpt_len + cubin_len;
    unsigned char *job = malloc(*job_len);
    if (!job) return NULL;
    memcpy(job, &j, sizeof j);
    memcpy(job + sizeof j, src, j.src_len);
    if (ckpt_len) memcpy(job + sizeof j + j.src_len, ckpt, ckpt_len);
    if (cubin_len) memcpy(job + sizeof j + j.src_len + ckpt_len, cubin, cubin_len);
    return job;
}

/* Keep the metrics lines of updates the checkpoint has (a run stopped
 * between the two writes would otherwise repeat or skip one). */
static void trim_metrics(const char *path, int64_t updates)
{
    long len;
    char err[256];
    char *buf = read_file(path, 1l << 30, &len, err, sizeof err);
    if (!buf) return;
    char *out = malloc((size_t)len + 1);
    size_t n = 0;
    for (char *line = buf; out && *line;) {
        char *nl = strchr(line, '\n');
        if (!nl) break; /* a cut line is dropped */
        long long u;
        if (sscanf(line, "{\"update\":%lld", &u) == 1 && u <= updates) {
            memcpy(out + n, line, (size_t)(nl - line + 1));
            n += (size_t)(nl - line + 1);
        }
        line = nl + 1;
    }
    if (out) write_file_atomic(path, out, n);
    free(out);
    free(buf);
}

/* metrics.jsonl for appending; it must be a regular file (or new). */
static FILE *open_metrics(const char *path)
{
    char err[64];
    int fd = open_append_fd(path, err, sizeof err);
    return fd < 0 ? NULL : fdopen(fd, "a");
}

/* The resumed run's checkpoint, read and checked here; its counters go
 * into d.  NULL with err on failure. */
static unsigned char *read_resume(driver *d, size_t *len, char *err, int errlen)
{
    size_t n = 0;
    unsigned char *raw = checkpoint_file_bytes(d->ckpt_path, &n, err, errlen);
    checkpoint_state st;
    if (!raw || checkpoint_decode(&st, raw, n, d->ckpt_path, err, errlen)) {
        free(raw);
        return NULL;
    }
    d->step = d->saved_step = st.step;
    d->update = st.update;
    d->ep_reward = st.last_episode_reward;
    checkpoint_state_free(&st);
    *len = n;
    return raw;
}

static int finish(driver *d, int rc, const char *how, volatile int *stop, char *err, int errlen)
{
    if (d->tty) printf("\n");
    fclose(d->mf);
    int interrupted = (stop && *stop) || !strcmp(how, "exited with status 130");
    if (rc == 0 && d->saved_step >= d->s->steps) {
        printf("trained %lld steps; checkpoint %s\n", (long long)d->saved_step, d->ckpt_path);
        return 0;
    }
    if (interrupted && d->saved_step > 0) {
        printf("interrupted: the checkpoint at step %lld is in %s; continue with pcgrllm train --resume --out %s "
               "--steps %lld\n",
               (long long)d->saved_step, d->ckpt_path, d->out, (long long)d->s->steps);
        return 130;
    }
    if (interrupted) {
        printf("interrupted before the first checkpoint; nothing to resume in %s\n", d->out);
        return 130;
    }
    if (rc == 0) snprintf(err, (size_t)errlen, "training ended without its final checkpoint");
    else explain_failure(d, how, err, errlen);
    return 1;
}

int train_in_worker(const train_settings *s, const char *src, const void *cubin, size_t cubin_len, const char *out,
                    volatile int *stop, char *err, int errlen)
{
    driver d;
    memset(&d, 0, sizeof d);
    d.s = s;
    d.out = out;
    snprintf(d.ckpt_path, sizeof d.ckpt_path, "%s/%s", out, CHECKPOINT_FILE);
    snprintf(d.metrics_path, sizeof d.metrics_path, "%s/metrics.jsonl", out);
    d.ep_reward = NAN;
    unsigned char *ckpt = NULL;
    size_t ckpt_len = 0;
    if (s->resume && !(ckpt = read_resume(&d, &ckpt_len, err, errlen))) return 1;
    if (s->resume) trim_metrics(d.metrics_path, d.update);
    else path_unlink(d.metrics_path);
    remove_nonfinite(out); /* they would describe an earlier run's failure */
    d.mf = open_metrics(d.metrics_path);
    size_t job_len = 0;
    train_settings ts0 = *s;
    if (ts0.threads <= 0) ts0.threads = omp_get_max_threads(); /* this process's choice (host/sys/cpus.h) */
    unsigned char *job = d.mf ? build_job(&ts0, src, ckpt, ckpt_len, cubin, cubin_len, &job_len) : NULL;
    free(ckpt);
    if (!job) {
        snprintf(err, (size_t)errlen, "cannot write %s (it must be a regular file): %s", d.metrics_path,
                 strerror(errno));
        if (d.mf) fclose(d.mf);
        return 1;
    }
    d.start_step = d.step;
    d.t0 = now_seconds();
    d.tty = !s->quiet && stdout_is_tty();
    d.update_steps = (int64_t)s->cfg.n_steps * s->cfg.n_envs;
    size_t np = checkpoint_param_count(&s->cfg), n = (size_t)s->cfg.n_envs, cells = n * s->cfg.map_h * s->cfg.map_w;
    d.ckpt_max = 8 + 4096 + 12 * np + 2 * cells + 16 * n;
    if (!d.tty && !s->quiet)
        printf("training: %s preset, %d envs, %lld of %lld steps done, %lld steps per update, %s backend\n",
               s->cfg.preset, s->cfg.n_envs, (long long)d.step, (long long)s->steps, (long long)d.update_steps,
               s->use_cuda ? "cuda" : "cpu");
    int64_t extra = (d.update_steps - (s->steps - d.step) % d.update_steps) % d.update_steps;
    if (extra && !s->quiet) /* PPO trains whole updates: say so rather than overshoot silently */
        printf("note: %lld steps is not a whole number of updates of %lld (%d steps x %d envs); training %lld steps\n",
               (long long)s->steps, (long long)d.update_steps, s->cfg.n_steps, s->cfg.n_envs,
               (long long)(s->steps + extra));
    fflush(stdout);
    child_opts o = {.idle_timeout_s = s->watchdog, .on_data = on_message, .on_tick = on_tick, .data_ctx = &d,
                    .max_frame = d.ckpt_max, .interrupt = stop, .interrupt_grace_s = 60};
    set_deadline(&d);
    char how[800];
    int rc = worker_run("train", job, job_len, &o, NULL, NULL, how, sizeof how);
    free(job);
    return finish(&d, rc, how, stop, err, errlen);
}
