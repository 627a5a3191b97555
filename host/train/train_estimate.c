#include "train_estimate.h"
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "util.h"

/* The stand-in reward: a wall count, the kind of work a reward does. */
static float walls_changed(const level_t *prev, const level_t *curr, void *ctx)
{
    (void)ctx;
    return (float)(lv_count(curr, TILE_WALL) - lv_count(prev, TILE_WALL));
}

double train_estimate_sps(const ppo_config *cfg, double reward_us)
{
    ppo_config w = *cfg;
    /* a few rollout steps and one epoch of two minibatches: enough to time
     * each part, scaled below to the job's own lengths */
    w.n_steps = cfg->n_envs >= 256 ? 4 : 8;
    w.n_epochs = 1;
    w.n_minibatches = 2;
    ppo_t p;
    char err[300];
    if (ppo_init(&p, &w, walls_changed, NULL, err, sizeof err)) return -1;
    double per_step = 1e30, per_sample = 1e30;
    for (int round = 0; round < 2; round++) { /* the first round warms caches and threads */
        ppo_metrics m;
        memset(&m, 0, sizeof m);
        if (ppo_rollout(&p, &m) || ppo_update(&p, &m)) break;
        per_step = fmin(per_step, m.t_rollout / w.n_steps);
        per_sample = fmin(per_sample, m.t_update / ((double)w.n_steps * w.n_envs));
    }
    ppo_free(&p);
    if (per_step >= 1e30) return -1;
    double T = cfg->n_steps, E = cfg->n_envs;
    double rollout = T * (per_step + E * reward_us * 1e-6);
    double update = cfg->n_epochs * T * E * per_sample;
    return T * E / (rollout + update);
}

void train_format_duration(double s, char *buf, int len)
{
    if (!(s >= 0)) snprintf(buf, (size_t)len, "an unknown time");
    else if (s < 60) snprintf(buf, (size_t)len, "%.0f s", s);
    else if (s < 3600) snprintf(buf, (size_t)len, "%d min %02d s", (int)(s / 60), (int)s % 60);
    else if (s < 2 * 86400) snprintf(buf, (size_t)len, "%.1f h", s / 3600);
    else snprintf(buf, (size_t)len, "%.1f days", s / 86400);
}

int train_confirm_long_job(const char *what, double seconds, const char *advice)
{
    char d[64];
    train_format_duration(seconds, d, sizeof d);
    char q[1024];
    snprintf(q, sizeof q, "%s: this job would take about %s on the CPU (%s). Run it anyway?", what, d, advice);
    int yes = ask_yes_no(q);
    if (yes < 0)
        fprintf(stderr,
                "pcgrllm: %s: this job would take about %s on the CPU; %s; or pass --yes to run it anyway\n", what, d,
                advice);
    return yes > 0;
}
