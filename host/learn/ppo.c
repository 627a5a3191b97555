#include "ppo.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dungeon.h"
#include "philox.h"
#include "ppo_gae.h"
#include "ppo_streams.h"
#include "util.h"

/* The trainer's streams (actions, shuffles) are in ppo_streams.h; the env
 * uses subsequences 0 (maps) and 1 (random actions). */

const ppo_detail ppo_details[PPO_N_DETAILS] = {
    [PPO_DETAIL_OBS_CENTRE] = {"obs-centre", "obs_centre", {"last", "next"}},
    [PPO_DETAIL_TERMINAL_REWARD] = {"terminal-reward", "terminal_reward", {"env", "designed"}},
    [PPO_DETAIL_FINAL_LEVEL] = {"final-level", "final_level", {"edits767", "edits768"}},
    [PPO_DETAIL_CONV_INIT] = {"conv-init", "conv_init", {"lecun", "orthogonal"}},
};

static int *detail_field(ppo_config *c, int k)
{
    switch (k) {
    case PPO_DETAIL_OBS_CENTRE: return &c->rules.obs_centre;
    case PPO_DETAIL_TERMINAL_REWARD: return &c->rules.terminal_reward;
    case PPO_DETAIL_FINAL_LEVEL: return &c->rules.final_level;
    default: return &c->conv_init;
    }
}

int ppo_detail_get(const ppo_config *c, int k) { return *detail_field((ppo_config *)c, k); }
void ppo_detail_set(ppo_config *c, int k, int v) { *detail_field(c, k) = v; }

int ppo_detail_parse(int k, const char *name)
{
    for (int v = 0; v < 2; v++)
        if (!strcmp(ppo_details[k].names[v], name)) return v;
    return -1;
}

void ppo_config_default(ppo_config *c)
{
    memset(c, 0, sizeof *c);
    c->map_h = c->map_w = PCG_DEFAULT_SIDE;
    c->variant = VARIANT_DUNGEON;
    c->n_envs = 600;
    snprintf(c->preset, sizeof c->preset, "paper");
    c->n_steps = 128;
    c->n_epochs = 10;
    c->n_minibatches = 4;
    c->lr = 1e-4f;
    c->adam_b1 = 0.9f;
    c->adam_b2 = 0.999f;
    c->adam_eps = 1e-5f;
    c->gamma = 0.99f;
    c->gae_lambda = 0.95f;
    c->clip_eps = 0.2f;
    c->ent_coef = 0.01f;
    c->vf_coef = 0.5f;
    c->max_grad_norm = 0.5f;
    c->chunk = 256;
    c->seed = 0;
}

const char *ppo_config_check(const ppo_config *c)
{
    nn_config nc;
    if (c->map_h < 5 || c->map_w < 5 || c->map_h > PCG_MAX_SIDE || c->map_w > PCG_MAX_SIDE)
        return "map size must be in 5..64";
    if (c->variant != VARIANT_DUNGEON && c->variant != VARIANT_TREASURE) return "unknown variant";
    if (c->n_envs < 1 || c->n_envs > 1000000) return "envs must be in 1..1000000";
    if (nn_preset_config(c->preset, 2 * c->map_h - 1, 2 * c->map_w - 1, 6, &nc)) return "preset must be " NN_PRESETS;
    if (c->n_steps < 1 || c->n_steps > 100000) return "rollout length must be in 1..100000";
    if (c->n_epochs < 1 || c->n_epochs > 1000) return "epochs must be in 1..1000";
    if (c->n_minibatches < 1 || (int64_t)c->n_steps * c->n_envs % c->n_minibatches)
        return "minibatches must divide rollout length x envs";
    if (!(c->lr > 0 && c->lr < 1)) return "learning rate must be in (0, 1)";
    if (!(c->adam_b1 >= 0 && c->adam_b1 < 1 && c->adam_b2 >= 0 && c->adam_b2 < 1 && c->adam_eps > 0))
        return "Adam betas must be in [0, 1) and eps > 0";
    if (!(c->gamma >= 0 && c->gamma <= 1 && c->gae_lambda >= 0 && c->gae_lambda <= 1))
        return "gamma and GAE lambda must be in [0, 1]";
    if (!(c->clip_eps > 0 && c->clip_eps < 1)) return "clip must be in (0, 1)";
    if (!(c->ent_coef >= 0 && c->vf_coef >= 0 && c->max_grad_norm > 0))
        return "coefficients must be >= 0 and max grad norm > 0";
    if (c->chunk < 1 || c->chunk > 65536) return "chunk must be in 1..65536";
    for (int k = 0; k < PPO_N_DETAILS; k++)
        if (ppo_detail_get(c, k) != 0 && ppo_detail_get(c, k) != 1) return "unknown environment or initialisation detail";
    return NULL;
}

void ppo_free(ppo_t *p)
{
    nn_free(&p->nn);
    nn_acts_free(&p->acts);
    env_free(&p->env);
    free(p->adam_m);
    free(p->adam_v);
    free(p->obs);
    free(p->actions);
    free(p->logp);
    free(p->values);
    free(p->rewards);
    free(p->adv);
    free(p->ret);
    free(p->dones);
    free(p->perm);
    free(p->mb_obs);
    free(p->mb_act);
    free(p->mb_logp);
    free(p->mb_adv);
    free(p->mb_val);
    free(p->mb_ret);
    memset(p, 0, sizeof *p);
}

int ppo_init(ppo_t *p, const ppo_config *cfg, reward_fn reward, void *ctx, char *err, int errlen)
{
    memset(p, 0, sizeof *p);
    const char *why = ppo_config_check(cfg);
    if (why) {
        snprintf(err, (size_t)errlen, "invalid training settings: %s", why);
        return -1;
    }
    p->cfg = *cfg;
    p->last_episode_reward = NAN;
    if (env_alloc(&p->env, cfg->n_envs, cfg->map_h, cfg->map_w, cfg->variant, cfg->seed)) goto oom;
    env_set_reward(&p->env, reward, ctx);
    env_set_rules(&p->env, &cfg->rules);
    nn_config nc;
    nn_preset_config(cfg->preset, p->env.cfg.crop_h, p->env.cfg.crop_w, p->env.cfg.n_actions, &nc);
    if (nn_alloc(&p->nn, &nc)) goto oom;
    nn_init(&p->nn, cfg->seed, cfg->conv_init);
    int cap = cfg->chunk;
    if (nn_acts_alloc(&p->acts, &nc, cap)) goto oom;
    size_t N = (size_t)cfg->n_steps * cfg->n_envs, os = (size_t)p->env.obs_size;
    p->adam_m = calloc(p->nn.n_params, sizeof(float));
    p->adam_v = calloc(p->nn.n_params, sizeof(float));
    p->obs = malloc(N * os);
    p->actions = malloc(N * sizeof(int));
    p->logp = malloc(N * sizeof(float));
    p->values = malloc(N * sizeof(float));
    p->rewards = malloc(N * sizeof(float));
    p->adv = malloc(N * sizeof(float));
    p->ret = malloc(N * sizeof(float));
    p->dones = malloc(N);
    p->perm = malloc(N * sizeof(uint32_t));
    p->mb_obs = malloc((size_t)cap * os);
    p->mb_act = malloc((size_t)cap * sizeof(int));
    p->mb_logp = malloc((size_t)cap * sizeof(float));
    p->mb_adv = malloc((size_t)cap * sizeof(float));
    p->mb_val = malloc((size_t)cap * sizeof(float));
    p->mb_ret = malloc((size_t)cap * sizeof(float));
    if (!p->adam_m || !p->adam_v || !p->obs || !p->actions || !p->logp || !p->values || !p->rewards || !p->adv ||
        !p->ret || !p->dones || !p->perm || !p->mb_obs || !p->mb_act || !p->mb_logp || !p->mb_adv || !p->mb_val ||
        !p->mb_ret)
        goto oom;
    return 0;
oom:
    ppo_free(p);
    snprintf(err, (size_t)errlen, "out of memory for %d environments", cfg->n_envs);
    return -1;
}

float ppo_action_draw(uint64_t seed, int e, uint64_t n)
{
    return ppo_stream_draw(seed, e, n);
}

int ppo_sample(const float *logits, int A, float u, float *logp)
{
    return ppo_stream_sample(logits, A, u, logp);
}

void ppo_gae(int T, int E, const float *rewards, const float *values, const unsigned char *dones,
             const float *last_value, float gamma, float lambda, float *adv, float *ret)
{
    for (int e = 0; e < E; e++) ppo_gae_env(T, E, e, rewards, values, dones, last_value, gamma, lambda, adv, ret);
}

/* Forward the policy on n observations in chunks; logits/values out. */
static void forward_all(ppo_t *p, const unsigned char *obs, int n, float *logits, float *values)
{
    int A = p->nn.cfg.n_actions, cap = p->acts.cap;
    size_t os = (size_t)p->env.obs_size;
    for (int i = 0; i < n; i += cap) {
        int B = n - i < cap ? n - i : cap;
        nn_forward(&p->nn, &p->acts, obs + (size_t)i * os, B);
        if (logits) memcpy(logits + (size_t)i * A, p->acts.logits, sizeof(float) * (size_t)B * A);
        memcpy(values + i, p->acts.value, sizeof(float) * (size_t)B);
    }
}

const char *ppo_fault_text(int fault)
{
    switch (fault) {
    case PPO_FAULT_REWARD: return "a reward is not finite (NaN or infinite)";
    case PPO_FAULT_RETURNS:
        return "the returns are not finite (the rewards are too large to add up; keep them within a few hundred)";
    case PPO_FAULT_LOSS: return "the loss is not finite";
    case PPO_FAULT_GRADIENT: return "the gradients are not finite";
    case PPO_FAULT_WEIGHTS: return "the network weights are not finite";
    default: return "training is unhealthy";
    }
}

static int all_finite(const float *a, size_t n)
{
    int ok = 1;
    for (size_t i = 0; i < n; i++) ok &= isfinite(a[i]) != 0;
    return ok;
}

static int fault(ppo_t *p, int why, int64_t step)
{
    p->fault = why;
    p->fault_step = step;
    return PPO_UNHEALTHY;
}

int ppo_rollout(ppo_t *p, ppo_metrics *m)
{
    int T = p->cfg.n_steps, E = p->cfg.n_envs, A = p->nn.cfg.n_actions;
    size_t os = (size_t)p->env.obs_size;
    float *logits = malloc(sizeof(float) * (size_t)E * A);
    float *last = malloc(sizeof(float) * (size_t)E);
    if (!logits || !last) {
        fprintf(stderr, "pcgrllm: out of memory in the rollout\n");
        exit(1);
    }
    double t0 = now_seconds(), t_env = 0, t_fwd = 0, reward_sum = 0;
    env_log_clear(&p->env);
    env_nonfinite_clear(&p->env);
    for (int t = 0; t < T; t++) {
        if (p->stop && *p->stop) {
            free(logits);
            free(last);
            return PPO_STOPPED;
        }
        size_t base = (size_t)t * E;
        memcpy(p->obs + base * os, p->env.obs, (size_t)E * os);
        double ta = now_seconds();
        forward_all(p, p->env.obs, E, logits, p->values + base);
        t_fwd += now_seconds() - ta;
        uint64_t n = (uint64_t)p->step / (uint64_t)E + (uint64_t)t; /* per-env action index */
#pragma omp parallel for schedule(static)
        for (int e = 0; e < E; e++)
            p->actions[base + e] = ppo_sample(logits + (size_t)e * A, A, ppo_action_draw(p->cfg.seed, e, n),
                                              p->logp + base + e);
        ta = now_seconds();
        env_step(&p->env, p->actions + base);
        t_env += now_seconds() - ta;
        if (!all_finite(p->env.rewards, (size_t)E)) {
            free(logits);
            free(last);
            return fault(p, PPO_FAULT_REWARD, p->step + (int64_t)(t + 1) * E);
        }
        memcpy(p->rewards + base, p->env.rewards, sizeof(float) * (size_t)E);
        memcpy(p->dones + base, p->env.dones, (size_t)E);
        for (int e = 0; e < E; e++) reward_sum += p->env.rewards[e];
        if (p->progress) p->progress(p->progress_ctx, t + 1, T + p->cfg.n_epochs * p->cfg.n_minibatches);
    }
    double ta = now_seconds();
    forward_all(p, p->env.obs, E, NULL, last);
    t_fwd += now_seconds() - ta;
    ppo_gae(T, E, p->rewards, p->values, p->dones, last, p->cfg.gamma, p->cfg.gae_lambda, p->adv, p->ret);
    free(logits);
    free(last);
    if (!all_finite(p->adv, (size_t)T * E) || !all_finite(p->ret, (size_t)T * E))
        return fault(p, PPO_FAULT_RETURNS, p->step + (int64_t)T * E);
    p->step += (int64_t)T * E;
    m->step = p->step;
    m->episodes = p->env.log.episodes;
    m->episode_reward = p->env.log.episodes > 0 ? p->env.log.episode_return / p->env.log.episodes : NAN;
    if (p->env.log.episodes > 0) p->last_episode_reward = m->episode_reward;
    m->step_reward = reward_sum / ((double)T * E);
    m->t_env = t_env;
    m->t_forward = t_fwd;
    m->t_rollout = now_seconds() - t0;
    return PPO_DONE;
}

/* Fisher-Yates permutation of 0..N-1 from one Philox subsequence. */
static void adam_step(ppo_t *p)
{
    const ppo_config *c = &p->cfg;
    p->adam_t++;
    double bc1 = 1.0 - pow(c->adam_b1, (double)p->adam_t), bc2 = 1.0 - pow(c->adam_b2, (double)p->adam_t);
    float lr = c->lr, b1 = c->adam_b1, b2 = c->adam_b2, eps = c->adam_eps;
    float s1 = (float)(1.0 / bc1), s2 = (float)(1.0 / bc2);
    float *w = p->nn.params, *g = p->nn.grads, *m = p->adam_m, *v = p->adam_v;
    size_t n = p->nn.n_params;
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) {
        m[i] = b1 * m[i] + (1 - b1) * g[i];
        v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
        w[i] -= lr * (m[i] * s1) / (sqrtf(v[i] * s2) + eps);
    }
}

/* Global norm of the gradients; scales them to max_norm if above (not
 * when the norm is not finite: the caller stops then). */
static double clip_grad_norm(nn_t *nn, double max_norm)
{
    /* parts summed in a fixed order: the same bits whatever the thread count */
    enum { PARTS = 64 };
    double part[PARTS], ss = 0;
    size_t n = nn->n_params;
    float *g = nn->grads;
#pragma omp parallel for schedule(static)
    for (int k = 0; k < PARTS; k++) {
        double s = 0;
        for (size_t i = n * (size_t)k / PARTS; i < n * (size_t)(k + 1) / PARTS; i++) s += (double)g[i] * g[i];
        part[k] = s;
    }
    for (int k = 0; k < PARTS; k++) ss += part[k];
    double norm = sqrt(ss);
    if (isfinite(norm) && norm > max_norm) {
        float s = (float)(max_norm / norm);
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < n; i++) g[i] *= s;
    }
    return norm;
}

int ppo_update(ppo_t *p, ppo_metrics *m)
{
    const ppo_config *c = &p->cfg;
    size_t N = (size_t)c->n_steps * c->n_envs, S = N / (size_t)c->n_minibatches, os = (size_t)p->env.obs_size;
    int A = p->nn.cfg.n_actions, cap = p->acts.cap;
    double t0 = now_seconds();
    nn_loss_stats st = {0};
    double loss = 0, gnorm = 0;
    int n_mb = 0;
    for (int ep = 0; ep < c->n_epochs; ep++) {
        ppo_stream_shuffle(p->perm, N, c->seed,
                           PPO_STREAM_SHUFFLE + (uint64_t)p->update * (uint64_t)c->n_epochs + (uint64_t)ep);
        for (int mb = 0; mb < c->n_minibatches; mb++) {
            if (p->stop && *p->stop) return PPO_STOPPED;
            const uint32_t *idx = p->perm + (size_t)mb * S;
            double mean = 0, var = 0;
            for (size_t i = 0; i < S; i++) mean += p->adv[idx[i]];
            mean /= (double)S;
            for (size_t i = 0; i < S; i++) var += (p->adv[idx[i]] - mean) * (p->adv[idx[i]] - mean);
            double inv_std = 1.0 / (sqrt(var / (double)S) + 1e-8);
            nn_zero_grad(&p->nn);
            for (size_t i0 = 0; i0 < S; i0 += (size_t)cap) {
                int B = (int)(S - i0 < (size_t)cap ? S - i0 : (size_t)cap);
                for (int b = 0; b < B; b++) {
                    uint32_t j = idx[i0 + (size_t)b];
                    memcpy(p->mb_obs + (size_t)b * os, p->obs + (size_t)j * os, os);
                    p->mb_act[b] = p->actions[j];
                    p->mb_logp[b] = p->logp[j];
                    p->mb_adv[b] = (float)((p->adv[j] - mean) * inv_std);
                    p->mb_val[b] = p->values[j];
                    p->mb_ret[b] = p->ret[j];
                }
                nn_forward(&p->nn, &p->acts, p->mb_obs, B);
                double l = nn_ppo_loss(&p->acts, B, A, p->mb_act, p->mb_logp, p->mb_adv, p->mb_val, p->mb_ret,
                                       c->clip_eps, c->vf_coef, c->ent_coef, 1.0 / (double)S, &st);
                if (!isfinite(l)) return fault(p, PPO_FAULT_LOSS, p->step);
                loss += l;
                nn_backward(&p->nn, &p->acts, p->mb_obs, B);
            }
            double norm = clip_grad_norm(&p->nn, c->max_grad_norm);
            if (!isfinite(norm)) return fault(p, PPO_FAULT_GRADIENT, p->step);
            gnorm += norm;
            adam_step(p);
            n_mb++;
            if (p->progress) p->progress(p->progress_ctx, c->n_steps + n_mb, c->n_steps + c->n_epochs * c->n_minibatches);
        }
    }
    double samples = (double)N * c->n_epochs;
    m->policy_loss = st.policy / samples;
    m->value_loss = st.value / samples;
    m->entropy = st.entropy / samples;
    m->approx_kl = st.approx_kl / samples;
    m->clip_frac = st.clipped / samples;
    m->loss = loss / n_mb;
    m->grad_norm = gnorm / n_mb;
    m->t_update = now_seconds() - t0;
    if (!all_finite(p->nn.params, p->nn.n_params)) return fault(p, PPO_FAULT_WEIGHTS, p->step);
    p->update++;
    m->update = p->update;
    return 0;
}

int ppo_train_update(ppo_t *p, ppo_metrics *m)
{
    memset(m, 0, sizeof *m);
    p->fault = PPO_FAULT_NONE;
    int rc = ppo_rollout(p, m);
    if (rc == PPO_DONE) rc = ppo_update(p, m);
    if (rc != PPO_DONE) return rc;
    m->sps = (double)p->cfg.n_steps * p->cfg.n_envs / (m->t_rollout + m->t_update);
    return PPO_DONE;
}

/* The policy's (or uniformly random) actions of step t for every env. */
static void play_actions(const nn_t *nn, nn_acts *a, env_t *e, uint64_t action_seed, int t, float *logits, int *act)
{
    int n = e->n, A = e->cfg.n_actions;
    if (!nn) {
        env_random_actions(e, action_seed, (uint64_t)t, act);
        return;
    }
    size_t os = (size_t)e->obs_size;
    for (int i = 0; i < n; i += a->cap) {
        int B = n - i < a->cap ? n - i : a->cap;
        nn_forward(nn, a, e->obs + (size_t)i * os, B);
        memcpy(logits + (size_t)i * A, a->logits, sizeof(float) * (size_t)B * A);
    }
    for (int i = 0; i < n; i++) {
        float lp;
        act[i] = ppo_sample(logits + (size_t)i * A, A, ppo_action_draw(action_seed, i, (uint64_t)t), &lp);
    }
}

int ppo_play_episode(const nn_t *nn, int n, int h, int w, int variant, uint64_t seed, uint64_t action_seed,
                     const env_rules *rules, reward_fn reward, void *ctx, unsigned char *final_maps, float *returns)
{
    env_t e;
    if (env_alloc(&e, n, h, w, variant, seed)) return -1;
    if (rules) env_set_rules(&e, rules);
    env_set_reward(&e, reward, ctx);
    int A = e.cfg.n_actions, cap = n < 256 ? n : 256;
    nn_acts a;
    int *act = malloc(sizeof(int) * (size_t)n);
    float *logits = malloc(sizeof(float) * (size_t)n * A);
    if (!act || !logits || (nn && nn_acts_alloc(&a, &nn->cfg, cap))) {
        free(act), free(logits), env_free(&e);
        return -1;
    }
    int T = e.cfg.episode_len;
    for (int t = 0; t < T - 1; t++) {
        play_actions(nn, &a, &e, action_seed, t, logits, act);
        env_step(&e, act);
    }
    if (e.cfg.rules.final_level == FINAL_LEVEL_768) {
        /* the last step's edit alone: its finish would reset the finished
         * maps (as cuda/play.cu's last kernel) */
        play_actions(nn, &a, &e, action_seed, T - 1, logits, act);
        memcpy(e.b.actions, act, sizeof(int) * (size_t)n);
        for (int i = 0; i < n; i++) {
            size_t off = (size_t)i * e.cells;
            int given = reward && batch_reward_given(&e.b, i);
            batch_edit(&e.b, i, 0, 0, 0, given);
            if (given) {
                level_t prev = {h, w, e.b.prev + off}, curr = {h, w, e.maps + off};
                e.returns[i] += reward(&prev, &curr, ctx);
            }
        }
    }
    if (final_maps) memcpy(final_maps, e.maps, (size_t)n * e.cells);
    if (returns) memcpy(returns, e.returns, sizeof(float) * (size_t)n);
    if (nn) nn_acts_free(&a);
    free(act), free(logits);
    env_free(&e);
    return 0;
}
