/* pcgrllm device: which backend --backend selects, the device it runs on, and
 * (with --bench) the device environment's steps/s for each thread mapping. */
#include "backend.h"
#include "commands.h"
#include "dungeon.h"
#include "nn.h"
#include "ppo.h"
#include "eval.h"
#include <math.h>
#include "reward_jit.h"
#include "worker.h"
#include "util.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The matmul modes, indexed by PCG_MATH_*. */
enum { N_MATH = 3 };
static const char *const math_names[N_MATH] = {"fp32", "tf32", "bf16"};

static void device_usage(FILE *f)
{
    fprintf(f,
            "usage: pcgrllm device [--backend cpu|cuda|auto] [--bench] [--envs N,N,...] [--mapping thread|warp|both]\n"
            "                      [--reward MODULE] [--seconds S] [--seed S] [--sgemm] [--train]\n"
            "                      [--compare-math SCENARIO [--steps N] [--seeds K]]\n"
            "  Prints the backend --backend selects and its device.  --bench measures device\n"
            "  environment steps/s with random actions (compact observation every step) for\n"
            "  each environment count and observation thread mapping; --reward adds a reward\n"
            "  module launched every step: a reward source (.c, compiled with NVRTC for the\n"
            "  device) or a cubin/fatbin/PTX image defining " PCG_REWARD_KERNEL ".\n"
            "  --sgemm measures the sgemm rate (fp32, TF32, bf16) at the shape of the paper\n"
            "  preset's conv 2 and at 4096^3.  --train measures the device trainer's\n"
            "  steps/s (rollout + update, paper PPO settings) for both presets at 600\n"
            "  (128-step rollouts) and 4096 environments (16-step rollouts) in each matmul mode,\n"
            "  with the projected time of 50M steps and the share of the sgemm rate.\n"
            "  --compare-math trains the paper preset (600 envs, human reward of the\n"
            "  scenario) with fp32, TF32 and bf16 matmuls for K seeds and compares the\n"
            "  fitness of the generated levels (defaults --steps 2000000 --seeds 2).\n"
            "  defaults: --backend auto --envs 600,4096,65536 --mapping both --seconds 0.5\n");
}

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
    nn_init(&nn, 1);
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
                rc = 1;
                break;
            }
            nn_init(&nn, cfg.seed);
            size_t mark = api->arena_mark();
            pcg_cuda_ppo *p = NULL;
            ppo_metrics m;
            memset(&m, 0, sizeof m);
            double t0 = now_seconds(), ret = NAN;
            if (api->blas_set_math(tf) ||
                !(p = api->ppo_init(&cfg, &nc, nn.off, nn.n_params, nn.params, cubin)))
                rc = 1;
            while (!rc && m.step < steps) {
                if (api->ppo_train_update(p, &m)) rc = 1;
                else if (m.episodes > 0) ret = m.episode_reward;
            }
            pcg_cuda_ppo_state st;
            memset(&st, 0, sizeof st);
            st.params = nn.params;
            if (!rc && api->ppo_get_state(p, &st)) rc = 1;
            if (rc) die_msg("device: --compare-math: %s", api->last_error());
            if (p) api->ppo_free(p);
            api->arena_release(mark);
            api->blas_set_math(PCG_MATH_FP32);
            double el = now_seconds() - t0;
            if (!rc) {
                enum { NLEV = 30 };
                unsigned char *maps = malloc((size_t)NLEV * cfg.map_h * cfg.map_w);
                level_t lv[NLEV];
                eval_summary_t es;
                if (!maps || ppo_play_episode(&nn, NLEV, cfg.map_h, cfg.map_w, cfg.variant, COMPARE_EVAL_SEED, 0, NULL,
                                              NULL, maps, NULL)) {
                    die_msg("device: out of memory generating levels");
                    rc = 1;
                } else {
                    for (int i = 0; i < NLEV; i++) {
                        lv[i].h = cfg.map_h;
                        lv[i].w = cfg.map_w;
                        lv[i].t = maps + (size_t)i * cfg.map_h * cfg.map_w;
                    }
                    eval_levels(sc, lv, NLEV, NULL, &es);
                    sum[tf] += es.fitness;
                    sq[tf] += es.fitness * es.fitness;
                    printf("%-5d %-5s %10lld %9.1f %12.3f %8.3f\n", seed, math_names[tf], (long long)m.step, el,
                           ret, es.fitness);
                    fflush(stdout);
                }
                free(maps);
            }
            nn_free(&nn);
        }
    if (!rc)
        for (int tf = 0; tf < N_MATH; tf++) {
            double mean = sum[tf] / seeds, var = seeds > 1 ? (sq[tf] - seeds * mean * mean) / (seeds - 1) : 0;
            printf("%-5s fitness %.3f +- %.3f over %d seeds\n", math_names[tf], mean, sqrt(var > 0 ? var : 0),
                   seeds);
        }
    free(cubin);
    return rc;
}

static int parse_envs(const char *s, int *out, int max)
{
    int k = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        long v;
        if (k >= max || parse_int(tok, 1, 1 << 24, &v)) return -1;
        out[k++] = (int)v;
    }
    return k;
}

int cmd_device(int argc, char **argv)
{
    const char *backend = "auto", *reward_path = NULL, *mapping_name = "both";
    int bench = 0, sgemm = 0, train = 0, compare = 0, compare_seeds = 2, envs[16] = {600, 4096, 65536}, n_envs = 3;
    double seconds = 0.5;
    uint64_t seed = 1;
    long compare_steps = 2000000;
    static const struct option opts[] = {{"backend", required_argument, 0, 'b'}, {"bench", no_argument, 0, 'B'},
                                         {"envs", required_argument, 0, 'n'},    {"mapping", required_argument, 0, 'm'},
                                         {"reward", required_argument, 0, 'r'},  {"seconds", required_argument, 0, 't'},
                                         {"seed", required_argument, 0, 's'},    {"help", no_argument, 0, 'h'},
                                         {"sgemm", no_argument, 0, 'g'},         {"train", no_argument, 0, 'T'},
                                         {"compare-math", required_argument, 0, 'C'},
                                         {"compare-tf32", required_argument, 0, 'C'},
                                         {"steps", required_argument, 0, 'S'},  {"seeds", required_argument, 0, 'K'},
                                         {0, 0, 0, 0}};
    optind = 1;
    int c;
    while ((c = getopt_full(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'b': backend = optarg; break;
        case 'B': bench = 1; break;
        case 'n':
            if ((n_envs = parse_envs(optarg, envs, 16)) <= 0) {
                die_msg("device: --envs wants a comma-separated list of counts, got '%s'", optarg);
                return EXIT_USAGE;
            }
            break;
        case 'm': mapping_name = optarg; break;
        case 'r': reward_path = optarg; break;
        case 't':
            if (parse_double(optarg, 0.01, 600, &seconds)) {
                die_msg("device: --seconds wants a number of seconds, got '%s'", optarg);
                return EXIT_USAGE;
            }
            break;
        case 's':
            if (parse_u64(optarg, &seed)) {
                die_msg("device: --seed wants an unsigned integer, got '%s'", optarg);
                return EXIT_USAGE;
            }
            break;
        case 'g': sgemm = 1; break;
        case 'T': train = 1; break;
        case 'C': {
            long v;
            if (parse_int(optarg, 1, eval_n_scenarios(), &v)) {
                die_msg("device: --compare-math wants a scenario 1..%d, got '%s'", eval_n_scenarios(), optarg);
                return EXIT_USAGE;
            }
            compare = (int)v;
            break;
        }
        case 'S':
            if (parse_int(optarg, 1, 1000000000L, &compare_steps)) {
                die_msg("device: --steps wants a number of environment steps, got '%s'", optarg);
                return EXIT_USAGE;
            }
            break;
        case 'K': {
            long v;
            if (parse_int(optarg, 1, 100, &v)) {
                die_msg("device: --seeds wants 1..100, got '%s'", optarg);
                return EXIT_USAGE;
            }
            compare_seeds = (int)v;
            break;
        }
        case 'h': device_usage(stdout); return 0;
        default: device_usage(stderr); return EXIT_USAGE;
        }
    }
    int mappings[2], n_map = 0;
    if (!strcmp(mapping_name, "thread") || !strcmp(mapping_name, "both")) mappings[n_map++] = PCG_OBS_THREAD;
    if (!strcmp(mapping_name, "warp") || !strcmp(mapping_name, "both")) mappings[n_map++] = PCG_OBS_WARP;
    if (!n_map) {
        die_msg("device: --mapping is thread, warp or both, got '%s'", mapping_name);
        return EXIT_USAGE;
    }

    char err[600];
    int b = backend_select(backend, err, sizeof err);
    if (b < 0) {
        die_msg("device: %s", err);
        return 1;
    }
    printf("backend: %s\n", backend_name(b));
    if (b == BACKEND_CPU) {
        char why[300];
        if (backend_cuda_devices(why, sizeof why) <= 0) printf("cuda: not used: %s\n", why);
        if (bench || sgemm || train || compare) {
            die_msg("device: no CUDA device, nothing to measure (the CPU environment: pcgrllm bench env)");
            return 1;
        }
        return 0;
    }
    const pcg_cuda_api *api = backend_cuda();
    pcg_cuda_device_info info;
    if (api->device_info(backend_gpu(), &info)) {
        die_msg("device: %s", api->last_error());
        return 1;
    }
    printf("device: GPU %d, %s, compute capability %d.%d, %d SMs, %.1f GiB\n", backend_gpu(), info.name, info.major,
           info.minor, info.sm_count, (double)info.total_mem / (1 << 30));
    printf("driver: CUDA %d.%d, runtime %d.%d, library %s\n", info.driver_version / 1000,
           info.driver_version % 1000 / 10, info.runtime_version / 1000, info.runtime_version % 1000 / 10,
           backend_cuda_path());
    /* the trainer needs more than the default arena: take most of the GPU */
    if ((train || compare) && api->arena_reserve(info.free_mem / 10 * 7)) {
        die_msg("device: %s", api->last_error());
        return 1;
    }
    double conv2_rate[N_MATH] = {0};
    if (sgemm || train) {
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
                printf("%-22s %-6s %12.0f\n", name, math_names[tf], r);
                fflush(stdout);
            }
    }
    if (compare && compare_math(api, &info, compare, compare_steps, compare_seeds, 600)) return 1;
    if (!bench && !train) return 0;

    void *reward = NULL;
    if (reward_path) {
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
            snprintf(arch, sizeof arch, "sm_%d%d", info.major, info.minor);
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
        reward = data;
    }
    if (train) {
        const char *label_t = reward_path ? (strrchr(reward_path, '/') ? strrchr(reward_path, '/') + 1 : reward_path)
                                          : "none";
        printf("\n%-7s %-6s %-6s %-6s %-14s %12s %10s %10s %8s\n", "preset", "envs", "steps", "math", "reward",
               "train st/s", "50M (min)", "GFLOP/s", "of sgemm");
        const char *presets[2] = {"paper", "small"};
        int cfgs[2][2] = {{600, 128}, {4096, 16}};
        for (int pi = 0; pi < 2; pi++)
            for (int ci = 0; ci < 2; ci++)
                for (int tf = 0; tf < N_MATH; tf++) {
                    double fps = 0;
                    double r = train_rate(api, presets[pi], cfgs[ci][0], cfgs[ci][1], tf, reward, seconds, &fps, err,
                                          sizeof err);
                    if (r < 0) {
                        die_msg("device: training %s at %d envs: %s", presets[pi], cfgs[ci][0], err);
                        free(reward);
                        return 1;
                    }
                    double gf = r * fps / 1e9;
                    printf("%-7s %-6d %-6d %-6s %-14.14s %12.0f %10.1f %10.0f %7.0f%%\n", presets[pi], cfgs[ci][0],
                           cfgs[ci][1], math_names[tf], label_t, r, 50e6 / r / 60, gf,
                           conv2_rate[tf] > 0 ? 100 * gf / conv2_rate[tf] : 0);
                    fflush(stdout);
                }
    }
    if (!bench) {
        free(reward);
        return 0;
    }
    const char *label = "none";
    if (reward_path) label = strrchr(reward_path, '/') ? strrchr(reward_path, '/') + 1 : reward_path;
    printf("\n%-8s %-8s %-22s %16s\n", "envs", "mapping", "reward", "env steps/s");
    int rc = 0;
    for (int i = 0; i < n_envs; i++)
        for (int m = 0; m < n_map; m++) {
            double r = device_rate(api, envs[i], mappings[m], reward, seed, seconds, err, sizeof err);
            const char *mname = mappings[m] == PCG_OBS_WARP ? "warp" : "thread";
            if (r < 0) {
                printf("%-8d %-8s %-22.22s %16s\n", envs[i], mname, label, "failed");
                die_msg("device: %s", err);
                rc = 1;
                continue;
            }
            printf("%-8d %-8s %-22.22s %16.0f\n", envs[i], mname, label, r);
            fflush(stdout);
        }
    free(reward);
    return rc;
}
