/* Evaluator throughput: levels scored per second, for each scenario, on
 * maps after one episode of random play. */
#include "bench.h"
#include "bench_util.h"
#include "env.h"
#include "eval.h"
#include "util.h"
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

/* n levels of the given variant after a full episode of random actions. */
static int random_levels(int n, int variant, env_t *e, level_t *levels)
{
    if (env_alloc(e, n, 16, 16, variant, 77)) return -1;
    int *act = malloc(sizeof(int) * (size_t)n);
    if (!act) return -1;
    for (int t = 0; t < e->cfg.episode_len - 1; t++) {
        env_random_actions(e, 78, (uint64_t)t, act);
        env_step(e, act);
    }
    free(act);
    for (int i = 0; i < n; i++) levels[i] = env_level(e, i);
    return 0;
}

static double eval_rate(const eval_scenario_t *s, const level_t *levels, int n, float *scores, double seconds,
                        double *fitness)
{
    long done = 0;
    double t0 = now_seconds(), el;
    do {
        *fitness = eval_score_batch(s, levels, n, scores);
        done += n;
        el = now_seconds() - t0;
    } while (el < seconds);
    return (double)done / el;
}

int bench_eval(int argc, char **argv)
{
    double seconds;
    int rc = bench_seconds_opts(argc, argv, "eval", &seconds);
    if (rc >= 0) return rc;
    enum { N = 4096 };
    level_t *levels = malloc(sizeof(level_t) * N);
    float *scores = malloc(sizeof(float) * N);
    env_t envs[2];
    if (!levels || !scores || random_levels(N, VARIANT_DUNGEON, &envs[0], levels)) {
        die_msg("bench eval: out of memory");
        return 1;
    }
    level_t *tlevels = malloc(sizeof(level_t) * N);
    if (!tlevels || random_levels(N, VARIANT_TREASURE, &envs[1], tlevels)) {
        die_msg("bench eval: out of memory");
        return 1;
    }
    int maxt = omp_get_max_threads();
    printf("\nlevels evaluated per second (%d random-play 16x16 levels per batch)\n", N);
    bench_print_machine(stdout);
    printf("%10s %14s %14s %10s\n", "scenario", "1 thread", "all threads", "fitness");
    for (int sc = 1; sc <= eval_n_scenarios(); sc++) {
        const eval_scenario_t *s = eval_scenario(sc);
        const level_t *lv = s->variant == VARIANT_TREASURE ? tlevels : levels;
        double fit = 0;
        omp_set_num_threads(1);
        double r1 = eval_rate(s, lv, N, scores, seconds, &fit);
        omp_set_num_threads(maxt);
        double rn = eval_rate(s, lv, N, scores, seconds, &fit);
        printf("%10d %14.0f %14.0f %10.4f\n", sc, r1, rn, fit);
    }
    env_free(&envs[0]);
    env_free(&envs[1]);
    free(levels);
    free(tlevels);
    free(scores);
    return 0;
}
