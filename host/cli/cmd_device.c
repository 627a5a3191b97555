/* pcgrllm device: which backend --backend selects, the device it runs on, and
 * (with --bench) the device environment's steps/s for each thread mapping.
 * This file parses the flags; host/gpu/device_bench.c measures. */
#include "backend.h"
#include "commands.h"
#include "device_bench.h"
#include "eval.h"
#include "util.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void device_usage(FILE *f)
{
    fprintf(f,
            "usage: pcgrllm device [--backend cpu|cuda|auto] [--bench] [--envs N,N,...] [--mapping thread|warp|both]\n"
            "                      [--reward MODULE] [--seconds S] [--seed S] [--sgemm] [--train]\n"
            "                      [--compare-math SCENARIO [--steps N] [--seeds K]] [--libraries]\n"
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
            "  --libraries prints glibc's version and the file of each library the CUDA backend\n"
            "  would use here (driver, backend library, cuBLAS, NVRTC), or why there is none.\n"
            "  defaults: --backend auto --envs 600,4096,65536 --mapping both --seconds 0.5\n");
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

/* A flag with a value.  0, EXIT_USAGE after a bad one, -1 when c is not
 * one of them. */
static int value_flag(int c, device_bench_opts *o)
{
    long v;
    switch (c) {
    case 'n':
        if ((o->n_envs = parse_envs(optarg, o->envs, DEVICE_BENCH_MAX_ENVS)) <= 0) {
            die_msg("device: --envs wants a comma-separated list of counts, got '%s'", optarg);
            return EXIT_USAGE;
        }
        return 0;
    case 't':
        if (parse_double(optarg, 0.01, 600, &o->seconds)) {
            die_msg("device: --seconds wants a number of seconds, got '%s'", optarg);
            return EXIT_USAGE;
        }
        return 0;
    case 's':
        if (parse_u64(optarg, &o->seed)) {
            die_msg("device: --seed wants an unsigned integer, got '%s'", optarg);
            return EXIT_USAGE;
        }
        return 0;
    case 'C':
        if (parse_int(optarg, 1, eval_n_scenarios(), &v)) {
            die_msg("device: --compare-math wants a scenario 1..%d, got '%s'", eval_n_scenarios(), optarg);
            return EXIT_USAGE;
        }
        o->compare = (int)v;
        return 0;
    case 'S':
        if (parse_int(optarg, 1, 1000000000L, &o->compare_steps)) {
            die_msg("device: --steps wants a number of environment steps, got '%s'", optarg);
            return EXIT_USAGE;
        }
        return 0;
    case 'K':
        if (parse_int(optarg, 1, 100, &v)) {
            die_msg("device: --seeds wants 1..100, got '%s'", optarg);
            return EXIT_USAGE;
        }
        o->compare_seeds = (int)v;
        return 0;
    default: return -1;
    }
}

/* --mapping thread, warp or both into o->mappings.  0, or EXIT_USAGE. */
static int set_mappings(const char *name, device_bench_opts *o)
{
    o->n_map = 0;
    if (!strcmp(name, "thread") || !strcmp(name, "both")) o->mappings[o->n_map++] = PCG_OBS_THREAD;
    if (!strcmp(name, "warp") || !strcmp(name, "both")) o->mappings[o->n_map++] = PCG_OBS_WARP;
    if (!o->n_map) {
        die_msg("device: --mapping is thread, warp or both, got '%s'", name);
        return EXIT_USAGE;
    }
    return 0;
}

int cmd_device(int argc, char **argv)
{
    device_bench_opts o = {.backend = "auto", .compare_seeds = 2, .compare_steps = 2000000,
                           .envs = {600, 4096, 65536}, .n_envs = 3, .seconds = 0.5, .seed = 1};
    const char *mapping_name = "both";
    static const struct option opts[] = {{"backend", required_argument, 0, 'b'}, {"bench", no_argument, 0, 'B'},
                                         {"envs", required_argument, 0, 'n'},    {"mapping", required_argument, 0, 'm'},
                                         {"reward", required_argument, 0, 'r'},  {"seconds", required_argument, 0, 't'},
                                         {"seed", required_argument, 0, 's'},    {"help", no_argument, 0, 'h'},
                                         {"sgemm", no_argument, 0, 'g'},         {"train", no_argument, 0, 'T'},
                                         {"compare-math", required_argument, 0, 'C'},
                                         {"compare-tf32", required_argument, 0, 'C'},
                                         {"steps", required_argument, 0, 'S'},  {"seeds", required_argument, 0, 'K'},
                                         {"libraries", no_argument, 0, 'L'},    {0, 0, 0, 0}};
    optind = 1;
    int c, libraries = 0;
    while ((c = getopt_full(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'b': o.backend = optarg; break;
        case 'B': o.bench = 1; break;
        case 'm': mapping_name = optarg; break;
        case 'r': o.reward_path = optarg; break;
        case 'g': o.sgemm = 1; break;
        case 'T': o.train = 1; break;
        case 'L': libraries = 1; break;
        case 'h': device_usage(stdout); return 0;
        default: {
            int rc = value_flag(c, &o);
            if (rc < 0) return device_usage(stderr), EXIT_USAGE;
            if (rc) return rc;
        }
        }
    }
    if (set_mappings(mapping_name, &o)) return EXIT_USAGE;
    if (libraries) return device_libraries();
    return device_bench_run(&o);
}
