/* pcgrllm bench [all|env|eval|reward|train|confine|harness] [--backend cpu|cuda|auto]:
 * throughput tables.  The CPU backend (default) prints the tables of
 * bench/; the CUDA backend prints the device's environment and training
 * tables instead, measured by `pcgrllm device` (host/gpu/device_bench.c:
 * device env steps/s, sgemm rate, device trainer steps/s), while eval and reward
 * measure work that runs on the host with every backend and stay the CPU's.
 * train --backend cuda-sim is the work model of bench/bench_model.c, env
 * --backend cuda-sim that of environment steps with a reward
 * (bench/bench_env_model.c). */
#include "backend.h"
#include "bench.h"
#include "commands.h"
#include "reward_jit.h"
#include "util.h"
#include <stdio.h>
#include <string.h>

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *help;
} benches[] = {
    {"env", bench_env, "environment steps/s, random actions, observation written every step"},
    {"eval", bench_eval, "levels scored per second by the evaluator"},
    {"reward", bench_reward, "reward calls/s: libtcc vs gcc -O2, libtcc and NVRTC compile times"},
    {"train", bench_train, "PPO training steps/s for both presets at 64 and 600 envs, GFLOP/s vs sgemm"},
    {"confine", bench_confine, "training steps/s in process without a sandbox vs in the confined worker"},
    {"harness", bench_harness, "the execution harness: perfect matches per mode on the fixed two-leg targets"},
};
#define N_BENCH (int)(sizeof benches / sizeof benches[0])
#define MAX_ARGS 64

/* Options of `pcgrllm device` that the device tables take from bench's
 * command line (each with a value); the rest are the CPU tables'. */
static const char *const device_opts[] = {"--seconds", "--envs", "--mapping", "--reward", "--seed"};

/* The device tables for the selected benchmarks: env -> device --bench,
 * train -> device --sgemm --train (the sgemm rate is the train table's
 * reference), in one call so that the arena is sized for the trainer. */
static int device_tables(int env, int train, int argc, char **argv, int first)
{
    char *sub[MAX_ARGS + 8];
    int n = 0;
    sub[n++] = "device";
    sub[n++] = "--backend";
    sub[n++] = "cuda";
    if (env) sub[n++] = "--bench";
    if (train) {
        sub[n++] = "--sgemm";
        sub[n++] = "--train";
    }
    for (int k = first; k < argc && n < MAX_ARGS + 6; k++) {
        if (!strcmp(argv[k], "--help") || !strcmp(argv[k], "-h")) {
            sub[n++] = argv[k];
            continue;
        }
        for (size_t o = 0; o < sizeof device_opts / sizeof device_opts[0]; o++) {
            size_t len = strlen(device_opts[o]);
            if (strncmp(argv[k], device_opts[o], len)) continue;
            if (argv[k][len] == '=') {
                sub[n++] = argv[k];
            } else if (!argv[k][len] && k + 1 < argc) {
                sub[n++] = argv[k];
                sub[n++] = argv[++k];
            }
            break;
        }
    }
    sub[n] = NULL;
    return cmd_device(n, sub);
}

/* --backend NAME (or --backend=NAME) anywhere after the command taken out
 * of argv; the rest goes to the benchmarks as before.  -1 to go on, else
 * the exit status. */
static int take_backend_flag(int argc, char **argv, char **args, int *nargs, const char **backend_arg)
{
    *nargs = 0;
    for (int k = 0; k < argc; k++) {
        if (k > 0 && !strcmp(argv[k], "--backend")) {
            if (k + 1 >= argc) {
                die_msg("bench: --backend wants cpu, cuda or auto");
                return 2;
            }
            *backend_arg = argv[++k];
        } else if (k > 0 && !strncmp(argv[k], "--backend=", 10)) {
            *backend_arg = argv[k] + 10;
        } else if (*nargs < MAX_ARGS - 1) {
            args[(*nargs)++] = argv[k];
        } else {
            die_msg("bench: too many arguments");
            return 2;
        }
    }
    args[*nargs] = NULL;
    return -1;
}

static void bench_usage(void)
{
    printf("usage: pcgrllm bench [all");
    for (int i = 0; i < N_BENCH; i++) printf("|%s", benches[i].name);
    printf("] [--backend cpu|cuda|auto] [options]\n");
    for (int i = 0; i < N_BENCH; i++) printf("  %-6s %s\n", benches[i].name, benches[i].help);
    printf("  --backend cpu (default) measures the CPU.  cuda (an error without a usable device), or auto\n"
           "  with one, prints the device's tables instead: env is `pcgrllm device --bench` (device env\n"
           "  steps/s), train is `pcgrllm device --sgemm --train` (sgemm rate, device trainer steps/s);\n"
           "  they take device's --seconds, --envs, --mapping, --reward and --seed.  eval and reward run\n"
           "  on the host with every backend and print their CPU tables.  auto without a device measures\n"
           "  the CPU.  train --backend cuda-sim counts the device trainer's work in the simulation\n"
           "  library and models one H200's time for it (a model, not a measurement; docs/cuda.md); env\n"
           "  --backend cuda-sim counts each human reward's search work per environment step and models\n"
           "  one H200's steps/s at 600 and 65,536 environments against the goal (1e7, 1e8);\n"
           "  --backend cuda-sim without a benchmark prints every CPU table but train's, then both models.\n");
    printf("  pcgrllm bench NAME --help shows a benchmark's options.\n");
}

/* *backend: the one --backend names (the CPU without it), its line printed
 * unless the device tables print their own.  -1 to go on, else the exit
 * status. */
static int bench_backend(const char *backend_arg, const int *selected, int *backend)
{
    *backend = BACKEND_CPU;
    if (!backend_arg) return -1;
    char err[600];
    *backend = backend_select(backend_arg, err, sizeof err);
    if (*backend < 0) {
        die_msg("bench: %s", err);
        return strncmp(err, "unknown backend", 15) ? 1 : 2;
    }
    /* the device tables print their own backend and device lines */
    int device_call = 0;
    for (int i = 0; i < N_BENCH; i++)
        device_call |= *backend == BACKEND_CUDA && selected[i] &&
                       (benches[i].fn == bench_env || benches[i].fn == bench_train);
    if (!device_call) printf("backend: %s\n", backend_name(*backend));
    fflush(stdout);
    return -1;
}

/* bench train --backend cuda-sim: the model alone, with its options;
 * bench --backend cuda-sim: the CPU tables but train's, then both models (the
 * benchmarks' defaults: each takes options of its own). */
static int bench_with_model(const char *what, int argc, char **argv)
{
    if (!strcmp(what, "env")) return bench_env_model(argc, argv);
    if (strcmp(what, "train") && strcmp(what, "all")) {
        die_msg("bench: --backend cuda-sim models the trainer and the environment steps only: pcgrllm bench train "
                "--backend cuda-sim, pcgrllm bench env --backend cuda-sim, or pcgrllm bench --backend cuda-sim for "
                "the CPU tables and both models");
        return 2;
    }
    if (!strcmp(what, "train")) return bench_train_model(argc, argv);
    if (argc > 1) {
        die_msg("bench: --backend cuda-sim without a benchmark takes no options (%s); pcgrllm bench train "
                "--backend cuda-sim --help lists the model's",
                argv[1]);
        return 2;
    }
    if (!bench_model_ready()) return 1;
    int rc = 0;
    printf("backend: cpu, then the device trainer by the simulation's counts (model, not a measurement)\n");
    for (int i = 0; i < N_BENCH; i++) {
        if (benches[i].fn == bench_train) continue;
        char *sub[] = {(char *)benches[i].name, NULL};
        fflush(stdout);
        rc |= benches[i].fn(1, sub);
    }
    printf("\nenv: environment steps with each human reward on one H200 by the simulation's counts (model, not a "
           "measurement)\n");
    fflush(stdout);
    char *env[] = {(char *)"env", NULL};
    rc |= bench_env_model(1, env);
    printf("\ntrain: the device trainer on one H200 by the simulation's work counts (model, not a measurement)\n");
    fflush(stdout);
    char *sub[] = {(char *)"train", NULL};
    return rc | bench_train_model(1, sub);
}

int cmd_bench(int argc, char **argv)
{
    char *args[MAX_ARGS];
    int nargs = 0;
    const char *backend_arg = NULL;
    int rc = take_backend_flag(argc, argv, args, &nargs, &backend_arg);
    if (rc >= 0) return rc;
    argc = nargs;
    argv = args;
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) return bench_usage(), 0;
    const char *what = argc > 1 && argv[1][0] != '-' ? argv[1] : "all";
    int shift = argc > 1 && argv[1][0] != '-' ? 1 : 0;
    int selected[N_BENCH], found = 0;
    for (int i = 0; i < N_BENCH; i++) found += selected[i] = !strcmp(what, "all") || !strcmp(what, benches[i].name);
    if (!found) {
        die_msg("bench: unknown benchmark '%s' (pcgrllm bench --help)", what);
        return 2;
    }
    /* the simulation's counters and the device model: the trainer's, alone
     * or after every CPU table but train's */
    if (backend_arg && !strcmp(backend_arg, "cuda-sim")) return bench_with_model(what, argc - shift, argv + shift);
    int backend;
    if ((rc = bench_backend(backend_arg, selected, &backend)) >= 0) return rc;
    rc = 0;
    if (backend == BACKEND_CUDA) {
        int env = 0, train = 0;
        for (int i = 0; i < N_BENCH; i++) {
            if (!selected[i]) continue;
            if (benches[i].fn == bench_env) env = 1, selected[i] = 0;
            if (benches[i].fn == bench_train) train = 1, selected[i] = 0;
        }
        if (env || train) rc |= device_tables(env, train, argc, argv, 1 + shift);
    }
    for (int i = 0; i < N_BENCH; i++) {
        if (!selected[i]) continue;
        if (backend == BACKEND_CUDA) {
            printf("\n%s: host work with every backend, measured on the CPU\n", benches[i].name);
            fflush(stdout);
        }
        char *sub[MAX_ARGS];
        int n = 0;
        sub[n++] = (char *)benches[i].name;
        for (int k = 1 + shift; k < argc && n < MAX_ARGS - 1; k++) sub[n++] = argv[k];
        sub[n] = NULL;
        rc |= benches[i].fn(n, sub);
    }
    return rc;
}
