/* pcgrllm bench train: PPO training throughput on the CPU for the three
 * network presets at 64 and 600 environments, the model's FLOPs per step, the
 * achieved GFLOP/s against this machine's measured sgemm rate, and where
 * the time goes (policy forward in the rollout, environment, reward,
 * update).
 *
 * A full update at 600 environments with the paper preset takes minutes on
 * a small CPU, so each row measures a short rollout and one epoch of
 * minibatch steps on it and scales both to the paper's settings (rollout
 * 128, 10 epochs, 4 minibatches): time per rollout step and per trained
 * sample are what the full run repeats. */
#include <cblas.h>
#include <getopt.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"
#include "nn.h"
#include "ppo.h"
#include "reward_jit.h"
#include "util.h"

/* Best-of-3 sgemm GFLOP/s for an m x k by k x n product. */
static double sgemm_rate(int m, int n, int k)
{
    float *a = malloc(sizeof(float) * (size_t)m * k), *b = malloc(sizeof(float) * (size_t)k * n),
          *c = malloc(sizeof(float) * (size_t)m * n);
    if (!a || !b || !c) {
        free(a), free(b), free(c);
        return NAN;
    }
    for (size_t i = 0; i < (size_t)m * k; i++) a[i] = (float)(i % 13) * 0.01f;
    for (size_t i = 0; i < (size_t)k * n; i++) b[i] = (float)(i % 7) * 0.01f;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1, a, k, b, n, 0, c, n);
    double best = 1e30;
    for (int r = 0; r < 3; r++) {
        double t0 = now_seconds();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1, a, k, b, n, 0, c, n);
        double t = now_seconds() - t0;
        if (t < best) best = t;
    }
    free(a), free(b), free(c);
    return 2.0 * m * n * k / best / 1e9;
}

static float wall_delta(const level_t *prev, const level_t *curr, void *ctx)
{
    (void)ctx;
    return (float)(lv_count(curr, TILE_WALL) - lv_count(prev, TILE_WALL));
}

/* Multiply-adds of one training sample's backward pass: every layer's
 * weight gradient, and input gradients except for the two layers that
 * read the observation. */
static double bwd_macs(const nn_config *c, double fwd, double nz)
{
    double first = (double)c->h1 * c->w1 * c->k * c->k * c->in_ch * c->c1 +
                   (double)c->critic_view_h * c->critic_view_w * c->in_ch * c->critic_hidden;
    if (nz > 0) { /* executed: the gathers' weight gradients cost what their forward does */
        nn_config t = *c;
        double g = nn_macs_executed(&t, nz) - (nn_macs_dense(&t) - first);
        return fwd + (fwd - g);
    }
    return fwd + (fwd - first);
}

/* Mean non-zero one-hot entries per crop cell over a batch of observations. */
static double nonzero_per_cell(const env_t *e)
{
    double nz = 0;
    size_t n = (size_t)e->n * e->obs_size;
    for (size_t i = 0; i < n; i++) nz += 1 + ((e->obs[i] & OBS_FROZEN_BIT) != 0);
    return nz / (double)n;
}

/* Seconds of one env_step of cfg's environments without a reward (best
 * of two rounds of cfg->n_steps steps); NAN when they cannot be built. */
static double step_seconds_without_reward(const ppo_config *cfg)
{
    env_t e;
    double t_noreward = NAN;
    if (env_alloc(&e, cfg->n_envs, cfg->map_h, cfg->map_w, cfg->variant, 1)) return NAN;
    int *act = malloc(sizeof(int) * (size_t)cfg->n_envs);
    if (act) {
        for (int i = 0; i < cfg->n_envs; i++) act[i] = i % e.cfg.n_actions;
        for (int round = 0; round < 2; round++) {
            double t0 = now_seconds();
            for (int t = 0; t < cfg->n_steps; t++) env_step(&e, act);
            double tn = (now_seconds() - t0) / cfg->n_steps;
            t_noreward = isnan(t_noreward) ? tn : fmin(t_noreward, tn);
        }
        free(act);
    }
    env_free(&e);
    return t_noreward;
}

/* The table's row of one preset at n_envs environments, measured on a
 * rollout of n_steps and one epoch on it; best is the sgemm rate to
 * compare with. */
static void train_row(const char *preset, int n_envs, int n_steps, reward_prog *prog, double best)
{
    char err[1024];
    ppo_config cfg;
    ppo_config_default(&cfg);
    snprintf(cfg.preset, sizeof cfg.preset, "%s", preset);
    cfg.n_envs = n_envs;
    cfg.n_steps = n_steps;
    cfg.n_epochs = 1;
    cfg.n_minibatches = 2;
    ppo_t p;
    if (ppo_init(&p, &cfg, prog ? reward_prog_call : wall_delta, prog, err, sizeof err)) {
        die_msg("bench train: %s", err);
        return;
    }
    /* best of two rounds: the machine may be shared */
    double per_step_fwd = 1e30, per_step_env = 1e30, per_step_other = 1e30, per_sample_upd = 1e30;
    double nz = nonzero_per_cell(&p.env);
    for (int round = 0; round < 2; round++) {
        ppo_metrics m;
        memset(&m, 0, sizeof m);
        ppo_rollout(&p, &m);
        ppo_update(&p, &m);
        per_step_fwd = fmin(per_step_fwd, m.t_forward / cfg.n_steps);
        per_step_env = fmin(per_step_env, m.t_env / cfg.n_steps);
        per_step_other = fmin(per_step_other, (m.t_rollout - m.t_forward - m.t_env) / cfg.n_steps);
        per_sample_upd = fmin(per_sample_upd, m.t_update / ((double)cfg.n_steps * cfg.n_envs));
    }
    /* the reward's share of env_step: the same steps without it */
    double t_noreward = step_seconds_without_reward(&cfg);
    /* full update: 128 rollout steps, then 10 epochs over 128 x envs samples */
    double T = 128, E = cfg.n_envs, epochs = 10;
    double t_roll = T * (per_step_fwd + per_step_env + per_step_other);
    double t_upd = epochs * T * E * per_sample_upd;
    double sps = T * E / (t_roll + t_upd);
    const nn_config *nc = &p.nn.cfg;
    double fd = nn_macs_dense(nc), fx = nn_macs_executed(nc, nz);
    double flops_step = 2 * (fd + epochs * (fd + bwd_macs(nc, fd, 0)));
    double flops_exec = 2 * (fx + epochs * (fx + bwd_macs(nc, fx, nz)));
    double gf = flops_step * sps / 1e9, gx = flops_exec * sps / 1e9;
    double rew_ms = isnan(t_noreward) ? NAN : fmax(0, per_step_env - t_noreward) * 1e3;
    printf("%-6s %5d %9.0f %8.2f %8.2f %8.2f %8.1f %8.3f %9.1f %8.1f %6.0f%% %6.0f%%\n", preset, cfg.n_envs, sps,
           per_step_fwd * 1e3, per_step_env * 1e3, rew_ms, t_upd / T * 1e3, flops_step / 1e9, gf, gx, 100 * gf / best,
           100 * gx / best);
    fflush(stdout);
    ppo_free(&p);
}

int bench_train(int argc, char **argv)
{
    static const struct option opts[] = {{"threads", required_argument, 0, 't'}, {"quick", no_argument, 0, 'q'},
                                         {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
    long threads = 0;
    int quick = 0, c;
    optind = 1;
    while ((c = getopt_full(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 't':
            if (parse_int(optarg, 1, 1024, &threads)) return die_msg("bench train: --threads must be in 1..1024"), 2;
            break;
        case 'q': quick = 1; break;
        case 'h':
            printf("usage: pcgrllm bench train [--threads T] [--quick]\n"
                   "  PPO training steps/s (rollout + update, scaled to rollout 128 x 10 epochs) for the tiny, small\n"
                   "  and paper presets at 64 and 600 environments; FLOPs per step; GFLOP/s against sgemm.\n"
                   "  --quick  64 environments only\n");
            return 0;
        default: return 2;
        }
    }
    nn_set_threads((int)threads);
    /* the reward: the engine's reward of scenario 1 when run from the
     * source tree, else a wall count */
    char err[1024];
    long len;
    reward_prog *prog = NULL;
    const char *reward_name = "wall count (native C)";
    char *src = read_file("rewards/engine/scenario1.c", REWARD_MAX_SOURCE, &len, err, sizeof err);
    if (src) {
        prog = reward_compile_cpu(src, err, sizeof err);
        if (prog) reward_name = "rewards/engine/scenario1.c (libtcc)";
        free(src);
    }
    /* the machine's rate: OpenBLAS on all the threads; the network itself
     * runs OpenBLAS single-threaded inside its OpenMP regions */
    openblas_set_num_threads(omp_get_max_threads());
    double peak = sgemm_rate(1024, 1024, 1024);
    double conv2 = sgemm_rate(64 * 64, 64, 3136);
    openblas_set_num_threads(1);
    double peak1 = sgemm_rate(1024, 1024, 1024);
    /* on a shared machine two threads can measure below one: compare with
     * the best rate seen */
    double best = fmax(peak, peak1);
    printf("training throughput (CPU, %s reward; rollout 128, 10 epochs x 4 minibatches; see docs/training.md)\n",
           reward_name);
    printf("sgemm (OpenBLAS, %d threads): %.1f GFLOP/s at 1024^3, %.1f GFLOP/s at conv2's shape (4096 x 3136 x 64); "
           "one thread %.1f GFLOP/s\n",
           omp_get_max_threads(), peak, conv2, peak1);
    printf("%-6s %5s %9s %8s %8s %8s %8s %8s %9s %8s %7s %7s\n", "preset", "envs", "steps/s", "fwd_ms", "env_ms",
           "rew_ms", "upd_ms", "GF/step", "GFLOP/s", "exec_GF", "%sgemm", "%exec");
    const char *presets[3] = {"tiny", "small", "paper"};
    int envs[2] = {64, 600};
    for (int pi = 0; pi < 3; pi++)
        for (int ei = 0; ei < (quick ? 1 : 2); ei++) {
            /* a short rollout, one epoch on it */
            int n_steps = pi == 2 && ei == 1 ? 8 : ei == 1 ? 16 : 32;
            train_row(presets[pi], envs[ei], n_steps, prog, best);
        }
    printf("fwd/env/rew/upd_ms: per rollout step of all envs (policy forward, env step incl. reward, reward alone,\n"
           "update time per rollout step); GF/step: model GFLOP per environment step (one-hot layers counted as\n"
           "dense products); GFLOP/s and %%sgemm: that rate against the best sgemm rate at 1024^3; exec_GF and\n"
           "%%exec: the multiply-adds actually executed (one-hot layers as gathers)\n");
    if (prog) reward_prog_free(prog);
    return 0;
}
