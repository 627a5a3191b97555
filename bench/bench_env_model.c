/* pcgrllm bench env --backend cuda-sim: environment steps with each human
 * reward on one H200, by a model of their counted work -- a model, not a
 * measurement, and every modelled line says so.
 *
 * The reward kernel runs one thread per environment through the reward
 * API's searches, integer work the roofline of device_model.h does not
 * describe, so its work is counted here on the host: each reward is
 * compiled with the API's counting helpers (reward_jit/api_count.h) and
 * scores ENVS environments stepping with random actions for STEPS steps.
 * device_model_threads turns the counts into time: the slowest
 * environment's chain of dependent instructions (what a launch of few
 * threads waits for) and the integer rate of the whole device (what a
 * launch of many is held to).  The environment's own kernels are the
 * simulation library's counted work of one step (without a reward), priced
 * by the roofline, when the counting build is there. */
#include "api_count.h"
#include "backend.h"
#include "bench.h"
#include "bench_util.h"
#include "bench_work.h"
#include "device_model.h"
#include "env.h"
#include "reward_jit.h"
#include "util.h"
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MODEL_TAG "model, not a measurement"
#define ENVS 600 /* the paper's environments: also the slowest-of-a-launch sample */
#define STEPS 128 /* the paper's rollout */
#define ACTION_SEED 3

static const char *const reward_paths[] = {
    "rewards/human/scenario1.c", "rewards/human/scenario2.c", "rewards/human/scenario3.c",
    "rewards/human/scenario4.c", "rewards/engine/scenario1.c",
};
#define N_REWARDS (int)(sizeof reward_paths / sizeof reward_paths[0])
static const double model_envs[2] = {600, 65536};
static const double goal_steps_s[2] = {1e7, 1e8};

/* What the counting reward saw: totals over every call, and per step the
 * slowest call's instructions and loads. */
typedef struct {
    reward_prog *prog;
    search_work total;
    double step_max_ops, step_max_loads; /* the step under way */
    double chain_ops, chain_loads;       /* summed over steps */
    long calls;
} counted_reward;

static float counting_call(const level_t *prev, const level_t *curr, void *ctx)
{
    counted_reward *c = ctx;
    search_work_reset();
    search_work_levels(prev, curr); /* the kernel's kept searches */
    float r = reward_prog_call(prev, curr, c->prog);
    search_work_levels(NULL, NULL);
    search_work w;
    search_work_get(&w);
    c->total.calls += w.calls;
    for (int k = 0; k < BR_WORK_KINDS; k++) c->total.n[k] += w.n[k];
    double ops = search_work_ops(&w);
    if (ops > c->step_max_ops) c->step_max_ops = ops, c->step_max_loads = search_work_loads(&w);
    c->calls++;
    return r;
}

/* Counts the reward at path over ENVS x STEPS steps of random play, on
 * one thread (the counters are the process's).  0, or -1 with err. */
static int count_reward(const char *path, counted_reward *c, char *err, int errlen)
{
    long len;
    memset(c, 0, sizeof *c);
    char *src = read_file(path, REWARD_MAX_SOURCE, &len, err, errlen);
    if (!src) return -1;
    int nh = 0;
    const reward_helper *helpers = search_work_helpers(&nh);
    c->prog = reward_compile_cpu_helpers(src, helpers, nh, err, errlen);
    free(src);
    if (!c->prog) return -1;
    env_t e;
    int *act = malloc(sizeof(int) * ENVS), threads = omp_get_max_threads(), rc = -1;
    omp_set_num_threads(1);
    if (act && !env_alloc(&e, ENVS, PCG_DEFAULT_SIDE, PCG_DEFAULT_SIDE, VARIANT_DUNGEON, 1)) {
        env_set_reward(&e, counting_call, c);
        for (int t = 0; t < STEPS; t++) {
            c->step_max_ops = c->step_max_loads = 0;
            env_random_actions(&e, ACTION_SEED, (uint64_t)t, act);
            env_step(&e, act);
            c->chain_ops += c->step_max_ops, c->chain_loads += c->step_max_loads;
        }
        env_free(&e);
        rc = 0;
    } else {
        snprintf(err, (size_t)errlen, "out of memory");
    }
    omp_set_num_threads(threads);
    free(act);
    reward_prog_free(c->prog);
    c->prog = NULL;
    return rc;
}

/* The thread work of one environment step: the mean call's, and the
 * chain of a step's slowest call.  Its two levels are first read from L2
 * (the environment kernel wrote them), the rest of its loads hit L1. */
static thread_work per_step(const counted_reward *c)
{
    search_work t = c->total;
    thread_work w = {0, 0, 0, 2};
    if (c->calls) w.ops_mean = search_work_ops(&t) / (double)c->calls;
    w.ops_chain = c->chain_ops / STEPS;
    w.loads_chain = c->chain_loads / STEPS;
    return w;
}

static void print_counts(const counted_reward *c, int n)
{
    printf("\nthe reward API's work per environment step, counted on this machine: %d environments x %d steps of "
           "random actions (seed %d), each call's searches kept per level as the device's kernel keeps them\n",
           ENVS, STEPS, ACTION_SEED);
    printf("%-27s %6s %6s %5s %8s %6s %6s %6s %6s %6s %6s %9s %9s\n", "reward", "calls", "loads", "split",
           "compares", "rounds", "words", "scans", "kept", "trans", "planes", "int ops", "slowest");
    for (int i = 0; i < n; i++) {
        double k = c[i].calls ? 1.0 / (double)c[i].calls : 0;
        const search_work *t = &c[i].total;
        printf("%-27s %6.1f %6.1f %5.1f %8.1f %6.1f %6.1f %6.1f %6.1f %6.1f %6.1f %9.0f %9.0f\n", reward_paths[i],
               k * (double)t->calls, k * (double)t->n[BR_WORK_LOADS], k * (double)t->n[BR_WORK_SPLIT_LOADS],
               k * (double)t->n[BR_WORK_COMPARES], k * (double)t->n[BR_WORK_ROUNDS],
               k * (double)t->n[BR_WORK_STEP_WORDS], k * (double)t->n[BR_WORK_SCAN_WORDS],
               k * (double)t->n[BR_WORK_KEPT_WORDS], k * (double)t->n[BR_WORK_TRANSPOSES],
               k * (double)t->n[BR_WORK_PLANE_WORDS], per_step(&c[i]).ops_mean, per_step(&c[i]).ops_chain);
    }
    printf("(calls: helper calls; loads: 8-byte tile reads as one word; split: tile reads in pieces (short, or\n"
           " off a multiple of 8); compares: byte-wise tile tests; rounds: frontier\n"
           " expansions; words: words those rounds visit; scans: frontier words tested against a target; kept:\n"
           " distance-plane words of the kept searches written or read; trans: eight cells' ids turned into\n"
           " tile-plane bits; planes: words of a tile's cells read off the planes; int ops:\n"
           " 32-bit integer instructions estimated from those counts (reward_jit/api_count.c), mean and the\n"
           " slowest environment of a step, averaged over the steps)\n");
}

/* Seconds of one environment step of envs environments without a reward
 * by the simulation's counters (one step counted after the reset), or -1
 * with why. */
static double env_kernels_s(const pcg_cuda_api *api, int envs, uint64_t *launches, char *why, size_t len)
{
    pcg_cuda_env *e = api->env_alloc(envs, PCG_DEFAULT_SIDE, PCG_DEFAULT_SIDE, VARIANT_DUNGEON, 1, PCG_OBS_THREAD);
    if (!e) return snprintf(why, len, "%s", api->last_error()), -1;
    work_set one = {0};
    double s = -1;
    api->work_reset();
    if (api->env_step_random(e, ACTION_SEED, 0, 1) || work_set_take(&one, api, 1)) {
        snprintf(why, len, "%s", api->last_error());
    } else {
        int n = 0;
        pcg_cuda_work *w = work_set_counters(&one, &n);
        if (w) s = device_model_total(&device_model_h200, w, n, PCG_MATH_FP32, launches);
        else snprintf(why, len, "out of memory");
        free(w);
    }
    work_set_free(&one);
    api->env_free(e);
    return s;
}

static void print_model(const counted_reward *c, int n, const double env_s[2])
{
    const device_model *m = &device_model_h200;
    printf("\nmodelled environment steps/s on %s, one reward launch per step (%s)\n", m->device, MODEL_TAG);
    printf("%-27s %6s %10s %11s %11s %9s %10s %12s\n", "reward", "envs", "env (us)", "latency(us)", "through(us)",
           "launch", "step (us)", "steps/s");
    double rate[N_REWARDS][2];
    for (int i = 0; i < n; i++) {
        thread_work w = per_step(&c[i]);
        for (int k = 0; k < 2; k++) {
            thread_time t = device_model_threads(m, &w, model_envs[k]);
            double step = t.seconds + (env_s[k] >= 0 ? env_s[k] : 0);
            rate[i][k] = model_envs[k] / step;
            char env_col[32];
            if (env_s[k] >= 0) snprintf(env_col, sizeof env_col, "%.1f", env_s[k] * 1e6);
            else snprintf(env_col, sizeof env_col, "-");
            printf("%-27s %6.0f %10s %11.2f %11.2f %9.1f %10.2f %12.3g  (%s)\n", k ? "" : reward_paths[i],
                   model_envs[k], env_col, t.latency_s * 1e6, t.throughput_s * 1e6, t.launch_s * 1e6, step * 1e6,
                   rate[i][k], MODEL_TAG);
        }
    }
    printf("(step = env kernels + max(latency, throughput) + the reward's launch; latency: the slowest environment's\n"
           " dependent chain at %.0f cycles an instruction, %.0f an L1 load, %.0f for each of its two levels' first\n"
           " read, at %.2f GHz; throughput: envs x mean instructions / (%d SMs x %d INT32 lanes x clock x %.2f))\n",
           m->int_dep_cycles, m->l1_cycles, m->l2_cycles, m->clock_hz / 1e9, m->sms, m->int32_lanes_per_sm,
           m->int_share);
    int counted = env_s[0] >= 0 && env_s[1] >= 0;
    printf("goal: env + a human reward >= 1e7 steps/s at 600 environments and >= 1e8 at 65,536 (%s)\n", MODEL_TAG);
    for (int i = 0; i < n; i++) {
        if (!counted) {
            printf("  %-27s not judged (the env kernels were not counted)\n", reward_paths[i]);
            continue;
        }
        int met0 = rate[i][0] >= goal_steps_s[0], met1 = rate[i][1] >= goal_steps_s[1];
        printf("  %-27s %s: 600 %s (%.3g), 65,536 %s (%.3g)\n", reward_paths[i], met0 && met1 ? "met" : "not met",
               met0 ? "met" : "not met", rate[i][0], met1 ? "met" : "not met", rate[i][1]);
    }
}

static int env_model_usage(void)
{
    printf("usage: pcgrllm bench env --backend cuda-sim\n"
           "  Environment steps with each human reward (and the engine's scenario 1) on one H200 by a model --\n"
           "  a model, not a measurement (docs/cuda.md): the reward API's search work is counted on this\n"
           "  machine over %d environments x %d steps of random play, the environment kernels' work by the\n"
           "  simulation library's counting build (make cuda-sim COUNT=1; without it the rows leave them out),\n"
           "  and both are priced for 600 and 65,536 environments against the goal of 1e7 and 1e8 steps/s.\n"
           "  It takes no options.\n",
           ENVS, STEPS);
    return 0;
}

int bench_env_model(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) return env_model_usage();
    if (argc > 1) {
        die_msg("bench env --backend cuda-sim takes no options (%s); pcgrllm bench env --backend cuda-sim --help", argv[1]);
        return 2;
    }
    char why[1200] = "";
    const pcg_cuda_api *api = bench_counting_api(why, sizeof why);
    double env_s[2] = {-1, -1};
    uint64_t launches = 0;
    for (int k = 0; k < 2 && api; k++)
        if ((env_s[k] = env_kernels_s(api, (int)model_envs[k], &launches, why, sizeof why)) < 0) break;
    printf("environment steps with a reward on %s (dungeon 16x16; %s)\n", device_model_h200.device, MODEL_TAG);
    bench_print_machine(stdout);
    if (env_s[0] >= 0 && env_s[1] >= 0)
        printf("env kernels: one step without a reward counted by %s (launches: %llu), priced by the roofline: %.1f "
               "us at 600, %.1f us at 65,536 environments (%s)\n",
               backend_cuda_path(), (unsigned long long)launches, env_s[0] * 1e6, env_s[1] * 1e6, MODEL_TAG);
    else
        printf("env kernels: not counted (%s)\n", why);
    counted_reward c[N_REWARDS];
    char err[1024];
    for (int i = 0; i < N_REWARDS; i++)
        if (count_reward(reward_paths[i], &c[i], err, sizeof err))
            return die_msg("bench env --backend cuda-sim: %s: %s (run from the source tree)", reward_paths[i], err), 1;
    print_counts(c, N_REWARDS);
    print_model(c, N_REWARDS, env_s);
    return 0;
}
