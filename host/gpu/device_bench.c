/* The measurements of `pcgrllm device` (device_bench.h): the device's
 * description, the sgemm rate, the device trainer's and the device
 * environment's steps/s, and the matmul modes compared on learning. */
#include "device_bench.h"
#include "backend.h"
#include "dungeon.h"
#include "eval.h"
#include "nn.h"
#include "ppo.h"
#include "reward_jit.h"
#include "util.h"
#include "worker.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The matmul modes, indexed by PCG_MATH_*. */
enum { N_MATH = 3 };

/* Wait for the device; a reward kernel still running after a minute ends
 * the process at once (its teardown kills the kernel; a normal exit would
 * wait for it). */
static int device_wait(const pcg_cuda_api *api)
{
    if (api->sync_timeout(60) == 0) return 0;
    if (strstr(api->last_error(), "still running")) {
        fflush(stdout);
        die_msg("device: %s", api->last_error());
        _exit(1);
    }
    return -1;
}

/* Steps/s of n environments; -1 and a message on failure. */
static double device_rate(const pcg_cuda_api *api, int n, int mapping, const void *reward, uint64_t seed,
                          double seconds, char *err, int errlen)
{
    size_t mark = api->arena_mark();
    pcg_cuda_env *e = api->env_alloc(n, PCG_DEFAULT_SIDE, PCG_DEFAULT_SIDE, VARIANT_DUNGEON, seed, mapping);
    if (!e) {
        snprintf(err, (size_t)errlen, "%s", api->last_error());
        return -1;
    }
    double rate = -1;
    uint64_t t = 0;
    if (reward && api->env_set_reward(e, reward)) goto out;
    if (api->env_step_random(e, seed, t, 32) || device_wait(api)) goto out; /* warm-up */
    t += 32;
    {
        long steps = 0, chunk = 64;
        double t0 = now_seconds(), el = 0;
        while (el < seconds) {
            if (api->env_step_random(e, seed, t, (int)chunk) || device_wait(api)) goto out;
            t += (uint64_t)chunk;
            steps += chunk;
            el = now_seconds() - t0;
            if (chunk < 4096 && el < seconds / 4) chunk *= 2;
        }
        rate = (double)steps * n / el;
    }
out:
    if (rate < 0) snprintf(err, (size_t)errlen, "%s", api->last_error());
    api->env_free(e);
    api->arena_release(mark);
    return rate;
}

/* GFLOP/s of sgemm_nn at m x n x k in matmul mode math (PCG_MATH_*); -1 on
 * failure. */
static double sgemm_rate(const pcg_cuda_api *api, int m, int n, int k, int math, double seconds, char *err, int errlen)
{
    size_t mark = api->arena_mark(), sz[3] = {(size_t)m * k, (size_t)k * n, (size_t)m * n};
    float *buf[3];
    double rate = -1;
    enum { CHUNK = 1 << 20 };
    float *host = malloc(CHUNK * sizeof(float));
    if (!host) {
        snprintf(err, (size_t)errlen, "out of host memory");
        return -1;
    }
    for (int i = 0; i < CHUNK; i++) host[i] = (float)((i * 2654435761u) >> 8) * (1.0f / 16777216.0f) - 0.5f;
    for (int b = 0; b < 3; b++) {
        buf[b] = api->arena_alloc(sz[b] * sizeof(float));
        if (!buf[b]) goto out;
        for (size_t o = 0; o < sz[b]; o += CHUNK)
            if (api->copy_to_device(buf[b] + o, host, (sz[b] - o < CHUNK ? sz[b] - o : CHUNK) * sizeof(float)))
                goto out;
    }
    if (api->blas_set_math(math) || api->sgemm_nn(m, n, k, 1, buf[0], buf[1], 0, buf[2]) || api->sync())
        goto out;
    {
        long calls = 0, chunk = 1;
        double t0 = now_seconds(), el = 0;
        while (el < seconds) {
            for (long c = 0; c < chunk; c++)
                if (api->sgemm_nn(m, n, k, 1, buf[0], buf[1], 0, buf[2])) goto out;
            if (api->sync()) goto out;
            calls += chunk;
            el = now_seconds() - t0;
            if (chunk < 1024 && el < seconds / 4) chunk *= 2;
        }
        rate = 2.0 * m * n * k * calls / el / 1e9;
    }
out:
    if (rate < 0) snprintf(err, (size_t)errlen, "%s", api->last_error());
    api->blas_set_math(PCG_MATH_FP32);
    api->arena_release(mark);
    free(host);
    return rate;
}

/* Training steps/s of the device trainer (rollout + update, paper PPO
 * settings except the rollout length); -1 on failure.  *flops_per_step is
 * what one environment step costs in matmul/gather work (forward in the
 * rollout, forward + backward in each epoch). */
static double train_rate(const pcg_cuda_api *api, const char *preset, int envs, int steps, int math,
                         const void *reward, double seconds, double *flops_per_step, char *err, int errlen)
{
    ppo_config cfg;
    ppo_config_default(&cfg);
    cfg.n_envs = envs;
    cfg.n_steps = steps;
    snprintf(cfg.preset, sizeof cfg.preset, "%s", preset);
    nn_config nc;
    nn_t nn;
    if (nn_preset_config(preset, 2 * cfg.map_h - 1, 2 * cfg.map_w - 1, 6, &nc) || nn_alloc(&nn, &nc)) {
        snprintf(err, (size_t)errlen, "cannot build the %s network", preset);
        return -1;
    }
    nn_init(&nn, 1, cfg.conv_init);
    *flops_per_step = 2.0 * nn_macs_executed(&nc, 1.0) * (1 + 3.0 * cfg.n_epochs);
    double rate = -1;
    size_t mark = api->arena_mark();
    pcg_cuda_ppo *p = NULL;
    ppo_metrics m;
    if (api->blas_set_math(math)) goto out;
    p = api->ppo_init(&cfg, &nc, nn.off, nn.n_params, nn.params, reward);
    if (!p || api->ppo_train_update(p, &m)) goto out; /* warm-up */
    {
        double t0 = now_seconds(), el = 0;
        long done = 0;
        do {
            if (api->ppo_train_update(p, &m)) goto out;
            done += (long)steps * envs;
            el = now_seconds() - t0;
        } while (el < seconds);
        rate = (double)done / el;
    }
out:
    if (rate < 0) snprintf(err, (size_t)errlen, "%s", api->last_error());
    if (p) api->ppo_free(p);
    api->blas_set_math(PCG_MATH_FP32);
    api->arena_release(mark);
    nn_free(&nn);
    return rate;
}

/* The evaluation seed of generation (the same 30 starting maps each time). */
#ifdef PPO_EVAL_SEED
#define COMPARE_EVAL_SEED PPO_EVAL_SEED
#else
#define COMPARE_EVAL_SEED 20250101ull
#endif

/* The paper preset trained on the device with the reward kernel cubin in
 * matmul mode math, from seed cfg->seed, for at least steps steps; nn is
 * the initialised network and receives the trained one.  *ret: the last
 * mean episode return.  0, or 1 after the message. */
static int train_on_device(const pcg_cuda_api *api, const void *cubin, const ppo_config *cfg, const nn_config *nc,
                           nn_t *nn, int math, long steps, ppo_metrics *m, double *ret)
{
    size_t mark = api->arena_mark();
    pcg_cuda_ppo *p = NULL;
    int rc = 0;
    memset(m, 0, sizeof *m);
    *ret = NAN;
    if (api->blas_set_math(math) || !(p = api->ppo_init(cfg, nc, nn->off, nn->n_params, nn->params, cubin))) rc = 1;
    while (!rc && m->step < steps) {
        if (api->ppo_train_update(p, m)) rc = 1;
        else if (m->episodes > 0) *ret = m->episode_reward;
    }
    pcg_cuda_ppo_state st;
    memset(&st, 0, sizeof st);
    st.params = nn->params;
    if (!rc && api->ppo_get_state(p, &st)) rc = 1;
    if (rc) die_msg("device: --compare-math: %s", api->last_error());
    if (p) api->ppo_free(p);
    api->arena_release(mark);
    api->blas_set_math(PCG_MATH_FP32);
    return rc;
}

/* The fitness of 30 levels the policy generates on the CPU from the
 * evaluation seed.  0, or 1 after the message. */
static int policy_fitness(const nn_t *nn, const ppo_config *cfg, const eval_scenario_t *sc, double *fitness)
{
    enum { NLEV = 30 };
    unsigned char *maps = malloc((size_t)NLEV * cfg->map_h * cfg->map_w);
    level_t lv[NLEV];
    eval_summary_t es;
    int rc = 0;
    if (!maps || ppo_play_episode(nn, NLEV, cfg->map_h, cfg->map_w, cfg->variant, COMPARE_EVAL_SEED, 0, &cfg->rules,
                                  NULL, NULL, maps, NULL)) {
        die_msg("device: out of memory generating levels");
        rc = 1;
    } else {
        for (int i = 0; i < NLEV; i++) {
            lv[i].h = cfg->map_h;
            lv[i].w = cfg->map_w;
            lv[i].t = maps + (size_t)i * cfg->map_h * cfg->map_w;
        }
        eval_levels(sc, lv, NLEV, NULL, &es);
        *fitness = es.fitness;
    }
    free(maps);
    return rc;
}

/* One row of compare_math: seed and matmul mode math.  0, or 1 after the
 * message. */
static int compare_one(const pcg_cuda_api *api, const void *cubin, const eval_scenario_t *sc, int seed, int math,
                       int envs, long steps, double *fitness)
{
    ppo_config cfg;
    ppo_config_default(&cfg);
    cfg.n_envs = envs;
    cfg.variant = sc->variant;
    cfg.seed = (uint64_t)seed;
    nn_config nc;
    nn_t nn;
    int n_actions = sc->variant == VARIANT_TREASURE ? 7 : 6;
    if (nn_preset_config("paper", 2 * cfg.map_h - 1, 2 * cfg.map_w - 1, n_actions, &nc) || nn_alloc(&nn, &nc)) {
        die_msg("device: cannot build the paper network");
        return 1;
    }
    nn_init(&nn, cfg.seed, cfg.conv_init);
    ppo_metrics m;
    double t0 = now_seconds(), ret;
    int rc = train_on_device(api, cubin, &cfg, &nc, &nn, math, steps, &m, &ret);
    double el = now_seconds() - t0;
    if (!rc) rc = policy_fitness(&nn, &cfg, sc, fitness);
    if (!rc) {
        printf("%-5d %-5s %10lld %9.1f %12.3f %8.3f\n", seed, backend_math_name(math), (long long)m.step, el, ret,
               *fitness);
        fflush(stdout);
    }
    nn_free(&nn);
    return rc;
}

/* Learning with fp32, TF32 and bf16 matmuls: the paper preset trained on the
 * device with the human reward of a scenario for `steps` steps per seed,
 * then 30 levels generated on the CPU from the evaluation seed and scored.
 * Prints one row per run and the mean and spread per math mode. */
static int compare_math(const pcg_cuda_api *api, const pcg_cuda_device_info *info, int scenario, long steps,
                        int seeds, int envs)
{
    const eval_scenario_t *sc = eval_scenario(scenario);
    char path[64], err[600], arch[16];
    snprintf(path, sizeof path, "rewards/human/scenario%d.c", scenario);
    long len = 0;
    char *src = read_file(path, 1 << 20, &len, err, sizeof err), *cubin = NULL;
    size_t cubin_len = 0;
    snprintf(arch, sizeof arch, "sm_%d%d", info->major, info->minor);
    if (!src || reward_compile_nvrtc(src, arch, &cubin, &cubin_len, err, sizeof err)) {
        die_msg("device: --compare-math: %s: %s", path, err);
        free(src);
        return 1;
    }
    free(src);
    printf("\nlearning, paper preset, %d envs, %ld steps, human reward of scenario %d, fitness of 30 levels\n", envs,
           steps, scenario);
    printf("%-5s %-5s %10s %9s %12s %8s\n", "seed", "math", "steps", "time (s)", "ep. return", "fitness");
    double sum[N_MATH] = {0}, sq[N_MATH] = {0};
    int rc = 0;
    for (int seed = 1; seed <= seeds && !rc; seed++)
        for (int tf = 0; tf < N_MATH && !rc; tf++) {
            double fitness = 0;
            rc = compare_one(api, cubin, sc, seed, tf, envs, steps, &fitness);
            sum[tf] += fitness;
            sq[tf] += fitness * fitness;
        }
    if (!rc)
        for (int tf = 0; tf < N_MATH; tf++) {
            double mean = sum[tf] / seeds, var = seeds > 1 ? (sq[tf] - seeds * mean * mean) / (seeds - 1) : 0;
            printf("%-5s fitness %.3f +- %.3f over %d seeds\n", backend_math_name(tf), mean,
                   sqrt(var > 0 ? var : 0), seeds);
        }
    free(cubin);
    return rc;
}

/* The device and its driver, as two lines.  0, or 1 after the message. */
static int describe_device(const pcg_cuda_api *api, pcg_cuda_device_info *info)
{
    if (api->device_info(backend_gpu(), info)) {
        die_msg("device: %s", api->last_error());
        return 1;
    }
    printf("device: GPU %d, %s, compute capability %d.%d, %d SMs, %.1f GiB\n", backend_gpu(), info->name, info->major,
           info->minor, info->sm_count, (double)info->total_mem / (1 << 30));
    printf("driver: CUDA %d.%d, runtime %d.%d, library %s\n", info->driver_version / 1000,
           info->driver_version % 1000 / 10, info->runtime_version / 1000, info->runtime_version % 1000 / 10,
           backend_cuda_path());
    printf("sgemm: %s\n", api->blas_in_use());
    return 0;
}

/* The sgemm table; conv2_rate[mode] receives the rate at conv 2's shape
 * (the train table's reference).  0, or 1 after the message. */
static int sgemm_table(const pcg_cuda_api *api, double seconds, double conv2_rate[N_MATH])
{
    char err[600];
    /* conv 2 of the paper preset on 256 observations: rows x filters x k*k*c1 */
    int shapes[2][3] = {{256 * 64, 64, 7 * 7 * 64}, {4096, 4096, 4096}};
    printf("\n%-22s %-6s %12s\n", "sgemm m x n x k", "math", "GFLOP/s");
    for (int sh = 0; sh < 2; sh++)
        for (int tf = 0; tf < N_MATH; tf++) {
            char name[40];
            snprintf(name, sizeof name, "%dx%dx%d", shapes[sh][0], shapes[sh][1], shapes[sh][2]);
            double r = sgemm_rate(api, shapes[sh][0], shapes[sh][1], shapes[sh][2], tf, seconds, err, sizeof err);
            if (r < 0) {
                die_msg("device: sgemm: %s", err);
                return 1;
            }
            if (sh == 0) conv2_rate[tf] = r;
            printf("%-22s %-6s %12.0f\n", name, backend_math_name(tf), r);
            fflush(stdout);
        }
    return 0;
}

/* --reward: a module image as it is, or a source validated on the CPU and
 * compiled with NVRTC for this device.  0 with *reward (malloc'd), or 1
 * after the message. */
static int load_reward(const char *reward_path, const pcg_cuda_device_info *info, void **reward)
{
    char err[600];
    long len = 0;
    char *data = read_file(reward_path, 64L << 20, &len, err, sizeof err);
    if (!data) {
        die_msg("device: --reward: %s", err);
        return 1;
    }
    /* this process launches the reward kernel: nothing worth stealing
     * stays in it, and a source must pass the CPU validation first */
    worker_scrub_environment();
    size_t pl = strlen(reward_path);
    if (pl > 2 && !strcmp(reward_path + pl - 2, ".c")) {
        char arch[16], *cubin = NULL;
        size_t cubin_len = 0;
        snprintf(arch, sizeof arch, "sm_%d%d", info->major, info->minor);
        reward_stats vs;
        if (reward_validate(data, VARIANT_DUNGEON, 16, 0, 60, &vs, err, sizeof err)) {
            free(data);
            die_msg("device: --reward %s: refused by the sandbox: %s", reward_path, err);
            return 1;
        }
        int rc = reward_compile_nvrtc(data, arch, &cubin, &cubin_len, err, sizeof err);
        free(data);
        if (rc) {
            die_msg("device: --reward %s: %s", reward_path, err);
            return 1;
        }
        data = cubin;
    }
    *reward = data;
    return 0;
}

/* The reward column of the tables: the module's file name, or none. */
static const char *reward_label(const char *reward_path)
{
    if (!reward_path) return "none";
    return strrchr(reward_path, '/') ? strrchr(reward_path, '/') + 1 : reward_path;
}

/* The device trainer's table.  0, or 1 after the message. */
static int train_table(const pcg_cuda_api *api, const device_bench_opts *o, const void *reward,
                       const double conv2_rate[N_MATH])
{
    char err[600];
    const char *label_t = reward_label(o->reward_path);
    printf("\n%-7s %-6s %-6s %-6s %-14s %12s %10s %10s %8s\n", "preset", "envs", "steps", "math", "reward",
           "train st/s", "50M (min)", "GFLOP/s", "of sgemm");
    const char *presets[2] = {"paper", "small"};
    int cfgs[2][2] = {{600, 128}, {4096, 16}};
    for (int pi = 0; pi < 2; pi++)
        for (int ci = 0; ci < 2; ci++)
            for (int tf = 0; tf < N_MATH; tf++) {
                double fps = 0;
                double r = train_rate(api, presets[pi], cfgs[ci][0], cfgs[ci][1], tf, reward, o->seconds, &fps, err,
                                      sizeof err);
                if (r < 0) {
                    die_msg("device: training %s at %d envs: %s", presets[pi], cfgs[ci][0], err);
                    return 1;
                }
                double gf = r * fps / 1e9;
                printf("%-7s %-6d %-6d %-6s %-14.14s %12.0f %10.1f %10.0f %7.0f%%\n", presets[pi], cfgs[ci][0],
                       cfgs[ci][1], backend_math_name(tf), label_t, r, 50e6 / r / 60, gf,
                       conv2_rate[tf] > 0 ? 100 * gf / conv2_rate[tf] : 0);
                fflush(stdout);
            }
    return 0;
}

/* The device environment's table; a failed cell says so and the rest
 * still run.  0, or 1 when a cell failed. */
static int env_table(const pcg_cuda_api *api, const device_bench_opts *o, const void *reward)
{
    char err[600];
    const char *label = reward_label(o->reward_path);
    printf("\n%-8s %-8s %-22s %16s\n", "envs", "mapping", "reward", "env steps/s");
    int rc = 0;
    for (int i = 0; i < o->n_envs; i++)
        for (int m = 0; m < o->n_map; m++) {
            double r = device_rate(api, o->envs[i], o->mappings[m], reward, o->seed, o->seconds, err, sizeof err);
            const char *mname = o->mappings[m] == PCG_OBS_WARP ? "warp" : "thread";
            if (r < 0) {
                printf("%-8d %-8s %-22.22s %16s\n", o->envs[i], mname, label, "failed");
                die_msg("device: %s", err);
                rc = 1;
                continue;
            }
            printf("%-8d %-8s %-22.22s %16.0f\n", o->envs[i], mname, label, r);
            fflush(stdout);
        }
    return rc;
}

/* The tables on the CUDA backend, in order: sgemm, the comparison of the
 * matmul modes, the trainer, the environment. */
static int cuda_tables(const device_bench_opts *o)
{
    const pcg_cuda_api *api = backend_cuda();
    pcg_cuda_device_info info;
    if (describe_device(api, &info)) return 1;
    /* the trainer needs more than the default arena: take most of the GPU */
    if ((o->train || o->compare) && api->arena_reserve(info.free_mem / 10 * 7)) {
        die_msg("device: %s", api->last_error());
        return 1;
    }
    double conv2_rate[N_MATH] = {0};
    if ((o->sgemm || o->train) && sgemm_table(api, o->seconds, conv2_rate)) return 1;
    if (o->compare && compare_math(api, &info, o->compare, o->compare_steps, o->compare_seeds, 600)) return 1;
    if (!o->bench && !o->train) return 0;
    void *reward = NULL;
    if (o->reward_path && load_reward(o->reward_path, &info, &reward)) return 1;
    int rc = o->train ? train_table(api, o, reward, conv2_rate) : 0;
    if (!rc && o->bench) rc = env_table(api, o, reward);
    free(reward);
    return rc;
}

int device_bench_run(const device_bench_opts *o)
{
    char err[600];
    int b = backend_select(o->backend, err, sizeof err);
    if (b < 0) {
        die_msg("device: %s", err);
        return 1;
    }
    printf("backend: %s\n", backend_name(b));
    if (b == BACKEND_CPU) {
        char why[300];
        if (backend_cuda_devices(why, sizeof why) <= 0) printf("cuda: not used: %s\n", why);
        if (o->bench || o->sgemm || o->train || o->compare) {
            die_msg("device: no CUDA device, nothing to measure (the CPU environment: pcgrllm bench env)");
            return 1;
        }
        return 0;
    }
    return cuda_tables(o);
}
