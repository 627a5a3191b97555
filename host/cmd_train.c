/* pcgrllm train: PPO with a reward written against the reward API, on the
 * CPU (host/ppo.c) or on a GPU (the CUDA backend's device trainer, the
 * same settings, streams and checkpoint file).  The parent validates the
 * reward in the sandbox, then trains in a child process (host/child.h) so
 * that a reward that crashes or hangs on some level ends the child, not
 * the caller; a GPU reward kernel that never finishes stops the child's
 * heartbeat and the watchdog kills it.  The parent never initialises CUDA
 * itself (a CUDA context does not survive fork): the device is probed and
 * used only in children.  The child joins the caller's process group so
 * that Ctrl-C reaches it: it stops, and the last checkpoint stays in DIR. */
#include "backend.h"
#include "checkpoint.h"
#include "child.h"
#include "commands.h"
#include "ppo.h"
#include "reward_jit.h"
#include "util.h"
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void train_usage(FILE *f)
{
    fprintf(f,
            "usage: pcgrllm train --reward FILE --scenario N --steps S --out DIR [options]\n"
            "       pcgrllm train --resume --out DIR [--steps S]\n"
            "  Trains a PPO level generator with the reward in FILE (C, the reward API of docs/reward-api.md)\n"
            "  and writes DIR/checkpoint.bin (after every update), DIR/metrics.jsonl (one line per update),\n"
            "  DIR/reward.c and DIR/train.json.  Ctrl-C stops and keeps the last checkpoint.\n"
            "  --reward FILE       reward source (validated in the sandbox first)\n"
            "  --scenario N        1-2: dungeon variant, 3-4: treasure variant\n"
            "  --variant V         dungeon or treasure (instead of --scenario)\n"
            "  --steps S           total environment steps (all environments together)\n"
            "  --out DIR           run directory\n"
            "  --resume            continue the run in DIR up to --steps (settings from the checkpoint;\n"
            "                      other settings given with it are ignored)\n"
            "  --backend B         cpu (default), cuda (the device trainer on a GPU; PCGRLLM_GPU=k picks GPU k)\n"
            "                      or auto (cuda when a GPU is usable, else cpu).  A checkpoint resumes on\n"
            "                      either backend.\n"
            "  --matmul M          cuda: fp32 (default), tf32 or bf16 tensor-core matmuls\n"
            "  --save-every SEC    seconds between checkpoints (default: every update on cpu, 30 on cuda;\n"
            "                      the last update is always saved)\n"
            "  --watchdog SEC      end the training if it shows no progress for SEC seconds (default 600)\n"
            "  --quiet             only the final line and errors\n"
            "  --envs E            parallel environments (default 600)\n"
            "  --preset P          network: paper (SPEC 4, default) or small (16/16 filters)\n"
            "  --seed K            seed of maps, actions, initialisation and shuffles (default 0)\n"
            "  --threads T         OpenMP threads, each running OpenBLAS single-threaded (default: all cores)\n"
            "  PPO settings (defaults are the paper's):\n"
            "  --lr X (1e-4)  --rollout N (128)  --epochs N (10)  --minibatches N (4)  --gamma X (0.99)\n"
            "  --gae-lambda X (0.95)  --clip X (0.2)  --ent-coef X (0.01)  --vf-coef X (0.5)\n"
            "  --max-grad-norm X (0.5)  --adam-eps X (1e-5)  --chunk N (256, samples per forward/backward)\n"
            "exit status: 0 done, 1 refused or failed, 2 usage error, 130 interrupted\n");
}

typedef struct {
    const char *out, *src;
    ppo_config cfg;
    int resume, threads, scenario, quiet;
    int64_t steps;
    const char *backend; /* as asked: cpu, cuda or auto */
    int use_cuda;        /* as resolved by the probe */
    int math;            /* PCG_MATH_* (CUDA only) */
    double save_every;   /* seconds between checkpoints; 0 = every update */
} train_job;

static const char *const math_names[] = {"fp32", "tf32", "bf16"};

static volatile int g_stop;

static void on_sigint(int sig)
{
    (void)sig;
    if (g_stop) _exit(130); /* a second Ctrl-C: stop now, the checkpoint on disk stays */
    g_stop = 1;
}

typedef struct {
    int tty;
    int64_t start_step, target, step;
    double t0, last_draw, last_beat;
    double ep_reward;
    int64_t update_steps;
} progress_state;

static void fmt_eta(char *buf, size_t n, double s)
{
    if (!(s >= 0) || s > 1e7) snprintf(buf, n, "--:--");
    else if (s >= 3600) snprintf(buf, n, "%d:%02d:%02d", (int)(s / 3600), (int)(s / 60) % 60, (int)s % 60);
    else snprintf(buf, n, "%02d:%02d", (int)(s / 60), (int)s % 60);
}

static void draw(progress_state *ps, double frac)
{
    double now = now_seconds(), el = now - ps->t0;
    double done = (double)(ps->step - ps->start_step) + frac * (double)ps->update_steps;
    double sps = el > 0 ? done / el : 0;
    double left = (double)(ps->target - ps->step) - frac * (double)ps->update_steps;
    char eta[32], rew[32];
    fmt_eta(eta, sizeof eta, sps > 0 ? left / sps : -1);
    if (isnan(ps->ep_reward)) snprintf(rew, sizeof rew, "n/a");
    else snprintf(rew, sizeof rew, "%.3f", ps->ep_reward);
    printf("\r\033[Kstep %lld/%lld (%.1f%%)  %.0f steps/s  mean episode reward %s  ETA %s",
           (long long)(ps->step + (int64_t)(frac * ps->update_steps)), (long long)ps->target,
           100.0 * (ps->step + frac * ps->update_steps) / (double)ps->target, sps, rew, eta);
    fflush(stdout);
    ps->last_draw = now;
}

static void on_progress(void *ctx, int done, int total)
{
    progress_state *ps = ctx;
    double now = now_seconds();
    if (now - ps->last_beat > 1.0) {
        child_heartbeat();
        ps->last_beat = now;
    }
    if (ps->tty && now - ps->last_draw > 0.25) draw(ps, (double)done / total);
}

/* Keep the metrics lines of updates the checkpoint has (a run stopped
 * between the two writes would otherwise repeat or skip one). */
static void trim_metrics(const char *path, int64_t updates)
{
    long len;
    char err[256];
    char *buf = read_file(path, 1l << 30, &len, err, sizeof err);
    if (!buf) return;
    FILE *f = fopen(path, "w");
    if (f) {
        for (char *line = buf; *line;) {
            char *nl = strchr(line, '\n');
            if (!nl) break; /* a cut line is dropped */
            long long u;
            if (sscanf(line, "{\"update\":%lld", &u) == 1 && u <= updates) fwrite(line, 1, (size_t)(nl - line + 1), f);
            line = nl + 1;
        }
        fclose(f);
    }
    free(buf);
}

static void json_num(FILE *f, const char *key, double v)
{
    if (isfinite(v)) fprintf(f, ",\"%s\":%.6g", key, v);
    else fprintf(f, ",\"%s\":null", key);
}

/* One trainer on either backend.  The CUDA trainer keeps its state on the
 * device; st is the host copy a checkpoint is written from. */
typedef struct {
    int cuda;
    ppo_config cfg;
    int64_t step, update;
    double last_episode_reward;
    ppo_t cpu;
    reward_prog *prog;
    const pcg_cuda_api *api;
    pcg_cuda_ppo *dev;
    checkpoint_state st;
    char *cubin;
} trainer;

static int trainer_open_cpu(trainer *t, const train_job *j, const char *path, char *err, int errlen)
{
    t->prog = reward_compile_cpu(j->src, err, errlen);
    if (!t->prog) return -1;
    int rc = j->resume ? checkpoint_load(&t->cpu, path, reward_prog_call, t->prog, err, errlen)
                       : ppo_init(&t->cpu, &j->cfg, reward_prog_call, t->prog, err, errlen);
    if (rc) {
        reward_prog_free(t->prog);
        t->prog = NULL;
        return -1;
    }
    t->cfg = t->cpu.cfg;
    t->step = t->cpu.step;
    t->update = t->cpu.update;
    t->last_episode_reward = t->cpu.last_episode_reward;
    return 0;
}

/* The device state as pointers into st. */
static pcg_cuda_ppo_state device_view(checkpoint_state *st)
{
    pcg_cuda_ppo_state d = {st->params, st->adam_m, st->adam_v, st->adam_t, st->step, st->update,
                            st->maps,   st->frozen, st->steps,  st->rng_pos, st->returns};
    return d;
}

static int trainer_open_cuda(trainer *t, const train_job *j, const char *path, char *err, int errlen)
{
    char why[600];
    t->cuda = 1;
    if (backend_select("cuda", why, sizeof why) != BACKEND_CUDA) {
        snprintf(err, (size_t)errlen, "%s", why);
        return -1;
    }
    t->api = backend_cuda();
    const char *gpu = getenv("PCGRLLM_GPU");
    int dev = gpu && *gpu ? atoi(gpu) : 0; /* checked by backend_select */
    pcg_cuda_device_info info;
    if (t->api->device_info(dev, &info)) {
        snprintf(err, (size_t)errlen, "GPU %d: %s", dev, t->api->last_error());
        return -1;
    }
    if (j->resume) {
        if (checkpoint_read(&t->st, path, err, errlen)) return -1;
    } else if (checkpoint_state_alloc(&t->st, &j->cfg)) {
        snprintf(err, (size_t)errlen, "out of host memory");
        return -1;
    }
    t->cfg = t->st.cfg;
    /* the reward for this GPU's architecture, sized for these levels */
    char arch[16];
    size_t cubin_len = 0;
    snprintf(arch, sizeof arch, "sm_%d%d", info.major, info.minor);
    int side = t->cfg.map_h > t->cfg.map_w ? t->cfg.map_h : t->cfg.map_w;
    int rc = reward_compile_nvrtc_ex(j->src, arch, side < 5 ? 5 : side, &t->cubin, &cubin_len, why, sizeof why);
    if (rc) {
        snprintf(err, (size_t)errlen, "%s %s", rc == -2 ? "NVRTC is needed for the CUDA trainer:" : "NVRTC refused the reward:",
                 why);
        return -1;
    }
    nn_config nc;
    nn_t nn;
    int n_actions = t->cfg.variant == VARIANT_TREASURE ? 7 : 6;
    if (nn_preset_config(t->cfg.preset, 2 * t->cfg.map_h - 1, 2 * t->cfg.map_w - 1, n_actions, &nc) ||
        nn_alloc(&nn, &nc)) {
        snprintf(err, (size_t)errlen, "cannot build the %s network", t->cfg.preset);
        return -1;
    }
    nn_init(&nn, t->cfg.seed);
    if (t->api->blas_set_math(j->math) ||
        !(t->dev = t->api->ppo_init(&t->cfg, &nc, nn.off, nn.n_params, j->resume ? t->st.params : nn.params,
                                    t->cubin))) {
        snprintf(err, (size_t)errlen, "GPU %d: %s", dev, t->api->last_error());
        nn_free(&nn);
        return -1;
    }
    nn_free(&nn);
    if (j->resume) {
        pcg_cuda_ppo_state d = device_view(&t->st);
        if (t->api->ppo_set_state(t->dev, &d)) {
            snprintf(err, (size_t)errlen, "GPU %d: %s", dev, t->api->last_error());
            return -1;
        }
    }
    t->step = t->st.step;
    t->update = t->st.update;
    t->last_episode_reward = j->resume ? t->st.last_episode_reward : NAN;
    if (!j->quiet)
        printf("device: GPU %d, %s (%s), %s matmuls\n", dev, info.name, arch, math_names[j->math]);
    return 0;
}

/* One rollout and update.  0 done, 1 stopped by Ctrl-C (CPU: the network
 * is then mid-update), -1 failed (err). */
static int trainer_update(trainer *t, ppo_metrics *m, char *err, int errlen)
{
    if (!t->cuda) {
        if (ppo_train_update(&t->cpu, m)) return 1;
        t->step = t->cpu.step;
        t->update = t->cpu.update;
        t->last_episode_reward = t->cpu.last_episode_reward;
        return 0;
    }
    if (t->api->ppo_train_update(t->dev, m)) {
        snprintf(err, (size_t)errlen, "device trainer: %s", t->api->last_error());
        return -1;
    }
    t->step = m->step;
    t->update = m->update;
    if (m->episodes > 0) t->last_episode_reward = m->episode_reward;
    return 0;
}

static int trainer_save(trainer *t, const char *path, char *err, int errlen)
{
    if (!t->cuda) return checkpoint_save(&t->cpu, path, err, errlen);
    pcg_cuda_ppo_state d = device_view(&t->st);
    if (t->api->ppo_get_state(t->dev, &d)) {
        snprintf(err, (size_t)errlen, "device trainer: %s", t->api->last_error());
        return -1;
    }
    t->st.adam_t = d.adam_t;
    t->st.step = d.step;
    t->st.update = d.update;
    t->st.last_episode_reward = t->last_episode_reward;
    return checkpoint_write(&t->st, path, err, errlen);
}

static void trainer_close(trainer *t)
{
    if (t->cuda) {
        if (t->dev) t->api->ppo_free(t->dev);
        checkpoint_state_free(&t->st);
        free(t->cubin);
    } else if (t->prog) {
        ppo_free(&t->cpu);
        reward_prog_free(t->prog);
    }
    memset(t, 0, sizeof *t);
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

static int train_child(void *arg)
{
    train_job *j = arg;
    /* join the caller's process group: a terminal's Ctrl-C reaches us too */
    setpgid(0, getpgid(getppid()));
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    nn_set_threads(j->threads);
    char err[1024], path[4096], mpath[4096];
    snprintf(path, sizeof path, "%s/%s", j->out, CHECKPOINT_FILE);
    snprintf(mpath, sizeof mpath, "%s/metrics.jsonl", j->out);
    trainer t;
    memset(&t, 0, sizeof t);
    if (j->use_cuda ? trainer_open_cuda(&t, j, path, err, sizeof err) : trainer_open_cpu(&t, j, path, err, sizeof err)) {
        child_fail(err);
        trainer_close(&t);
        return 1;
    }
    if (j->resume) trim_metrics(mpath, t.update);
    else remove(mpath);
    FILE *mf = fopen(mpath, "a");
    if (!mf) {
        snprintf(err, sizeof err, "cannot write metrics.jsonl in the run directory: %s", strerror(errno));
        child_fail(err);
        trainer_close(&t);
        return 1;
    }
    progress_state ps = {!j->quiet && stdout_is_tty(), t.step, j->steps, t.step, now_seconds(), 0, 0,
                         t.last_episode_reward, (int64_t)t.cfg.n_steps * t.cfg.n_envs};
    if (!t.cuda) {
        t.cpu.stop = &g_stop;
        t.cpu.progress = on_progress;
        t.cpu.progress_ctx = &ps;
    }
    if (!ps.tty && !j->quiet)
        printf("training: %s preset, %d envs, %lld of %lld steps done, %lld steps per update, %s backend\n",
               t.cfg.preset, t.cfg.n_envs, (long long)t.step, (long long)j->steps, (long long)ps.update_steps,
               t.cuda ? "cuda" : "cpu");
    int rc = 0;
    int64_t saved_step = j->resume ? t.step : 0;
    double last_save = now_seconds();
    while (t.step < j->steps) {
        ppo_metrics m;
        int u = trainer_update(&t, &m, err, sizeof err);
        if (u) {
            if (u < 0) child_fail(err);
            rc = u > 0 ? 130 : 1;
            break;
        }
        ps.step = t.step;
        ps.ep_reward = t.last_episode_reward;
        write_metrics(mf, &m);
        /* every update, or every save_every seconds; always the last one */
        if (now_seconds() - last_save >= j->save_every || t.step >= j->steps || g_stop) {
            if (trainer_save(&t, path, err, sizeof err)) {
                child_fail(err);
                rc = 1;
                break;
            }
            saved_step = t.step;
            last_save = now_seconds();
        }
        child_heartbeat();
        if (ps.tty) {
            draw(&ps, 0);
        } else if (!j->quiet) {
            char eta[32];
            double el = now_seconds() - ps.t0, sps = (double)(t.step - ps.start_step) / el;
            fmt_eta(eta, sizeof eta, (double)(j->steps - t.step) / sps);
            char rew[32];
            if (isnan(t.last_episode_reward)) snprintf(rew, sizeof rew, "n/a");
            else snprintf(rew, sizeof rew, "%.4g", t.last_episode_reward);
            printf("update %lld  step %lld/%lld  %.0f steps/s  mean episode reward %s  entropy %.3f  "
                   "approx_kl %.4f  ETA %s\n",
                   (long long)m.update, (long long)t.step, (long long)j->steps, m.sps, rew, m.entropy, m.approx_kl,
                   eta);
            fflush(stdout);
        }
        if (g_stop) {
            rc = 130;
            break;
        }
    }
    if (ps.tty) printf("\n");
    fclose(mf);
    if (rc == 130 && saved_step > 0)
        printf("interrupted: the checkpoint at step %lld is in %s; continue with "
               "pcgrllm train --resume --out %s --steps %lld\n",
               (long long)saved_step, path, j->out, (long long)j->steps);
    else if (rc == 130)
        printf("interrupted before the first checkpoint; nothing to resume in %s\n", j->out);
    else if (rc == 0)
        printf("trained %lld steps; checkpoint %s\n", (long long)t.step, path);
    fflush(stdout);
    trainer_close(&t);
    return rc;
}

static int validate_child(void *arg)
{
    const train_job *j = arg;
    reward_stats st;
    char reason[1024];
    if (reward_validate(j->src, j->cfg.variant, 64, j->cfg.seed, 60.0, &st, reason, sizeof reason)) {
        child_fail(reason);
        return 1;
    }
    return 0;
}

/* Resolves --backend in a child process, so that this process never
 * initialises CUDA (the training child is forked from it). */
static int probe_child(void *arg)
{
    char err[600];
    int b = backend_select((const char *)arg, err, sizeof err);
    if (b < 0) {
        child_fail(err);
        return 1;
    }
    child_send(&b, sizeof b);
    return 0;
}

static int write_train_json(const train_job *j, const char *reward_path)
{
    char buf[2048], path[4096];
    const ppo_config *c = &j->cfg;
    int n = snprintf(buf, sizeof buf,
                     "{\"scenario\":%d,\"variant\":\"%s\",\"preset\":\"%s\",\"envs\":%d,\"seed\":%llu,"
                     "\"steps\":%lld,\"rollout\":%d,\"epochs\":%d,\"minibatches\":%d,\"lr\":%g,\"gamma\":%g,"
                     "\"gae_lambda\":%g,\"clip\":%g,\"ent_coef\":%g,\"vf_coef\":%g,\"max_grad_norm\":%g,"
                     "\"adam_eps\":%g,\"backend\":\"%s\",\"matmul\":\"%s\",\"reward\":\"reward.c\"}\n",
                     j->scenario, c->variant == VARIANT_TREASURE ? "treasure" : "dungeon", c->preset, c->n_envs,
                     (unsigned long long)c->seed, (long long)j->steps, c->n_steps, c->n_epochs, c->n_minibatches,
                     (double)c->lr, (double)c->gamma, (double)c->gae_lambda, (double)c->clip_eps,
                     (double)c->ent_coef, (double)c->vf_coef, (double)c->max_grad_norm, (double)c->adam_eps,
                     j->use_cuda ? "cuda" : "cpu", j->use_cuda ? math_names[j->math] : "fp32");
    (void)reward_path;
    snprintf(path, sizeof path, "%s/train.json", j->out);
    return write_file_atomic(path, buf, (size_t)n);
}

int cmd_train(int argc, char **argv)
{
    enum {
        O_LR = 256, O_ROLLOUT, O_EPOCHS, O_MB, O_GAMMA, O_LAMBDA, O_CLIP, O_ENT, O_VF, O_GN, O_EPS, O_CHUNK, O_MATH,
        O_SAVE, O_WATCHDOG
    };
    static const struct option opts[] = {
        {"reward", required_argument, 0, 'r'},     {"scenario", required_argument, 0, 'S'},
        {"steps", required_argument, 0, 'n'},      {"envs", required_argument, 0, 'e'},
        {"preset", required_argument, 0, 'p'},     {"seed", required_argument, 0, 's'},
        {"threads", required_argument, 0, 't'},    {"out", required_argument, 0, 'o'},
        {"resume", no_argument, 0, 'R'},           {"help", no_argument, 0, 'h'},
        {"variant", required_argument, 0, 'v'},    {"backend", required_argument, 0, 'b'},
        {"quiet", no_argument, 0, 'q'},
        {"lr", required_argument, 0, O_LR},        {"rollout", required_argument, 0, O_ROLLOUT},
        {"epochs", required_argument, 0, O_EPOCHS}, {"minibatches", required_argument, 0, O_MB},
        {"gamma", required_argument, 0, O_GAMMA},  {"gae-lambda", required_argument, 0, O_LAMBDA},
        {"clip", required_argument, 0, O_CLIP},    {"ent-coef", required_argument, 0, O_ENT},
        {"vf-coef", required_argument, 0, O_VF},   {"max-grad-norm", required_argument, 0, O_GN},
        {"adam-eps", required_argument, 0, O_EPS}, {"chunk", required_argument, 0, O_CHUNK},
        {"matmul", required_argument, 0, O_MATH},  {"save-every", required_argument, 0, O_SAVE},
        {"watchdog", required_argument, 0, O_WATCHDOG},
        {0, 0, 0, 0}};
    train_job j;
    memset(&j, 0, sizeof j);
    ppo_config_default(&j.cfg);
    j.backend = "cpu";
    j.save_every = -1;
    double watchdog = 600;
    const char *reward_path = NULL;
    long v;
    double d;
    int c, settings = 0; /* flags that change the config (refused with --resume) */
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c != 'n' && c != 'o' && c != 'R' && c != 'h' && c != 't' && c != 'r' && c != 'q' && c != 'b' &&
            c != O_MATH && c != O_SAVE && c != O_WATCHDOG)
            settings++;
        switch (c) {
        case 'r': reward_path = optarg; break;
        case 'S':
            if (parse_int(optarg, 1, 4, &v)) return die_msg("train: --scenario must be 1, 2, 3 or 4"), 2;
            j.scenario = (int)v;
            j.cfg.variant = v >= 3 ? VARIANT_TREASURE : VARIANT_DUNGEON;
            break;
        case 'v':
            if (parse_variant(optarg, &j.cfg.variant)) return die_msg("train: --variant must be dungeon or treasure"), 2;
            if (!j.scenario) j.scenario = j.cfg.variant == VARIANT_TREASURE ? 3 : 1;
            break;
        case 'b':
            if (strcmp(optarg, "cpu") && strcmp(optarg, "cuda") && strcmp(optarg, "auto"))
                return die_msg("train: --backend must be cpu, cuda or auto"), 2;
            j.backend = optarg;
            break;
        case O_MATH:
            for (j.math = 0; j.math < 3 && strcmp(optarg, math_names[j.math]); j.math++) continue;
            if (j.math == 3) return die_msg("train: --matmul must be fp32, tf32 or bf16"), 2;
            break;
        case O_SAVE:
            if (parse_double(optarg, 0, 1e7, &j.save_every))
                return die_msg("train: --save-every must be a number of seconds (0: every update)"), 2;
            break;
        case O_WATCHDOG:
            if (parse_double(optarg, 1, 1e7, &watchdog))
                return die_msg("train: --watchdog must be a number of seconds (at least 1)"), 2;
            break;
        case 'q': j.quiet = 1; break;
        case 'n':
            if (parse_int(optarg, 1, (long)4e12, &v)) return die_msg("train: --steps must be a positive integer"), 2;
            j.steps = v;
            break;
        case 'e':
            if (parse_int(optarg, 1, 100000, &v)) return die_msg("train: --envs must be an integer in 1..100000"), 2;
            j.cfg.n_envs = (int)v;
            break;
        case 'p':
            if (strcmp(optarg, "paper") && strcmp(optarg, "small"))
                return die_msg("train: --preset must be paper or small"), 2;
            snprintf(j.cfg.preset, sizeof j.cfg.preset, "%s", optarg);
            break;
        case 's':
            if (parse_u64(optarg, &j.cfg.seed)) return die_msg("train: --seed must be a non-negative integer"), 2;
            break;
        case 't':
            if (parse_int(optarg, 1, 1024, &v)) return die_msg("train: --threads must be an integer in 1..1024"), 2;
            j.threads = (int)v;
            break;
        case 'o': j.out = optarg; break;
        case 'R': j.resume = 1; break;
        case 'h': train_usage(stdout); return 0;
#define FLOAT_FLAG(code, name, lo, hi, field)                                                                 \
    case code:                                                                                                \
        if (parse_double(optarg, lo, hi, &d)) return die_msg("train: --" name " must be a number in " #lo ".." #hi), 2; \
        j.cfg.field = (float)d;                                                                               \
        break;
#define INT_FLAG(code, name, lo, hi, field)                                                                   \
    case code:                                                                                                \
        if (parse_int(optarg, lo, hi, &v)) return die_msg("train: --" name " must be an integer in " #lo ".." #hi), 2; \
        j.cfg.field = (int)v;                                                                                 \
        break;
        FLOAT_FLAG(O_LR, "lr", 1e-8, 1.0, lr)
        FLOAT_FLAG(O_GAMMA, "gamma", 0.0, 1.0, gamma)
        FLOAT_FLAG(O_LAMBDA, "gae-lambda", 0.0, 1.0, gae_lambda)
        FLOAT_FLAG(O_CLIP, "clip", 0.001, 0.999, clip_eps)
        FLOAT_FLAG(O_ENT, "ent-coef", 0.0, 100.0, ent_coef)
        FLOAT_FLAG(O_VF, "vf-coef", 0.0, 100.0, vf_coef)
        FLOAT_FLAG(O_GN, "max-grad-norm", 1e-6, 1e6, max_grad_norm)
        FLOAT_FLAG(O_EPS, "adam-eps", 1e-12, 1.0, adam_eps)
        INT_FLAG(O_ROLLOUT, "rollout", 1, 100000, n_steps)
        INT_FLAG(O_EPOCHS, "epochs", 1, 1000, n_epochs)
        INT_FLAG(O_MB, "minibatches", 1, 100000, n_minibatches)
        INT_FLAG(O_CHUNK, "chunk", 1, 65536, chunk)
#undef FLOAT_FLAG
#undef INT_FLAG
        default: train_usage(stderr); return 2;
        }
    }
    if (optind < argc) return die_msg("train: unexpected argument '%s'", argv[optind]), 2;
    if (!j.out) return die_msg("train: --out DIR is required (pcgrllm train --help)"), 2;
    if (j.math && !strcmp(j.backend, "cpu"))
        return die_msg("train: --matmul %s needs the CUDA trainer (--backend cuda or auto); the CPU computes in fp32",
                       math_names[j.math]),
               2;
    char err[1024], path[4096];
    char *src = NULL;
    long len;
    if (j.resume) {
        (void)settings; /* the checkpoint's settings win */
        ppo_config stored;
        nn_t nn;
        int64_t step;
        snprintf(path, sizeof path, "%s/%s", j.out, CHECKPOINT_FILE);
        if (checkpoint_load_policy(path, &stored, &nn, &step, err, sizeof err))
            return die_msg("train: cannot resume: %s", err), 1;
        nn_free(&nn);
        j.cfg = stored;
        snprintf(path, sizeof path, "%s/reward.c", j.out);
        src = read_file(reward_path ? reward_path : path, REWARD_MAX_SOURCE, &len, err, sizeof err);
        if (!src) return die_msg("train: %s", err), 1;
        if (reward_path) {
            char *kept = read_file(path, REWARD_MAX_SOURCE, &len, err, sizeof err);
            int same = kept && !strcmp(kept, src);
            free(kept);
            if (!same) {
                free(src);
                return die_msg("train: --reward differs from %s, the reward this run was trained with", path), 2;
            }
        }
        if (!j.steps) j.steps = step; /* nothing more unless asked */
        if (j.steps <= step) {
            printf("the checkpoint already has %lld steps (asked for %lld); nothing to do\n", (long long)step,
                   (long long)j.steps);
            free(src);
            return 0;
        }
    } else {
        if (!reward_path || !j.scenario || !j.steps)
            return die_msg("train: --reward, --scenario, --steps and --out are required (pcgrllm train --help)"), 2;
        const char *why = ppo_config_check(&j.cfg);
        if (why) return die_msg("train: %s", why), 2;
        src = read_file(reward_path, REWARD_MAX_SOURCE, &len, err, sizeof err);
        if (!src) return die_msg("train: %s", err), 1;
    }
    /* the backend next (a missing GPU is reported before anything else runs) */
    char err2[700];
    if (strcmp(j.backend, "cpu")) {
        void *blob = NULL;
        size_t blob_len = 0;
        child_opts po = {120.0, 0, 0};
        if (child_run_ex(probe_child, (void *)j.backend, &po, &blob, &blob_len, err2, sizeof err2)) {
            free(blob);
            free(src);
            return die_msg("train: %s", err2), 1;
        }
        j.use_cuda = blob && blob_len == sizeof(int) && *(int *)blob == BACKEND_CUDA;
        free(blob);
        if (!j.use_cuda && j.math)
            fprintf(stderr, "train: no usable GPU, training on the CPU in fp32 (--matmul %s ignored)\n",
                    math_names[j.math]);
    }
    if (j.save_every < 0) j.save_every = j.use_cuda ? 30 : 0;
    /* the sandbox first: a refused reward never reaches training.  It runs
     * in a child of its own: the validation sets up environments with
     * OpenMP, and libgomp's threads would not survive the fork of the
     * training child if they had started here. */
    j.src = src;
    if (child_run(validate_child, &j, 120.0, err, sizeof err)) {
        free(src);
        return die_msg("train: reward refused: %s", err), 1;
    }
    if (make_dirs(j.out)) {
        free(src);
        return die_msg("train: cannot create directory %s", j.out), 1;
    }
    if (!j.resume) {
        snprintf(path, sizeof path, "%s/reward.c", j.out);
        if (write_file_atomic(path, src, strlen(src)) || write_train_json(&j, reward_path)) {
            free(src);
            return die_msg("train: cannot write into %s", j.out), 1;
        }
    }
    j.src = src;
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    child_opts co = {0, watchdog, 0};
    int rc = child_run_ex(train_child, &j, &co, NULL, NULL, err, sizeof err);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    free(src);
    if (rc == 0) return 0;
    if (g_stop || strstr(err, "status 130")) return 130;
    die_msg("train: training failed: %s (the last checkpoint, if any, is in %s)", err, j.out);
    return 1;
}
