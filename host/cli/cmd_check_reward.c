/* pcgrllm check-reward: compile an untrusted reward with both backends,
 * validate it in the sandbox and print its self-alignment statistics, or
 * the one-line reason it is refused. */
#include "backend.h"
#include "child.h"
#include "commands.h"
#include "env.h"
#include "reward_gpu.h"
#include "reward_jit.h"
#include "util.h"
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check_usage(FILE *f)
{
    fprintf(f,
            "usage: pcgrllm check-reward [--scenario N | --variant dungeon|treasure] [--envs N] [--seed S]\n"
            "                            [--timeout SECONDS] [--backend cpu|cuda] [--json] FILE\n"
            "  Compiles the reward in FILE (C, the reward API of docs/reward-api.md), runs it in a sandbox\n"
            "  on one episode of random play on every environment and prints its statistics.\n"
            "  --scenario N     1-2 use the dungeon variant, 3-4 the treasure variant\n"
            "  --variant V      dungeon (default) or treasure\n"
            "  --envs N         environments of random play (default 64)\n"
            "  --seed S         seed of the maps and the random actions (default 0)\n"
            "  --timeout T      wall-clock limit of the sandbox in seconds (default 60)\n"
            "  --backend cpu    libtcc in the sandbox, plus an NVRTC compile when NVRTC is installed (default)\n"
            "  --backend cuda   also compile with NVRTC for sm_75, sm_86, sm_89 and sm_90 (needs NVRTC) and,\n"
            "                   on a machine with a CUDA device and libpcgrllm_cuda.so, run one episode on the\n"
            "                   device beside the CPU and compare every reward\n"
            "  --json           print one JSON object on stdout\n"
            "  A check that runs long says so on stderr every 5 s; a call that has not returned after 2 s\n"
            "  (or half the timeout) is refused.\n"
            "exit status: 0 accepted (warning: TEXT on stderr when the reward is the same on every step),\n"
            "             1 refused (error: REASON on stderr), 2 usage error\n");
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c == '\n') fputs("\\n", f);
        else if (c == '\t') fputs("\\t", f);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

int cmd_check_reward(int argc, char **argv)
{
    static const struct option opts[] = {
        {"scenario", required_argument, 0, 'S'}, {"variant", required_argument, 0, 'v'},
        {"envs", required_argument, 0, 'n'},     {"seed", required_argument, 0, 's'},
        {"timeout", required_argument, 0, 't'},  {"backend", required_argument, 0, 'b'},
        {"json", no_argument, 0, 'j'},           {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    long envs = 64, scenario = 0;
    uint64_t seed = 0;
    double timeout = 60.0;
    int variant = VARIANT_DUNGEON, have_variant = 0, json = 0, cuda = 0;
    int c;
    optind = 1;
    while ((c = getopt_full(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'S':
            if (parse_int(optarg, 1, 4, &scenario))
                return die_msg("check-reward: --scenario must be 1, 2, 3 or 4"), 2;
            break;
        case 'v':
            if (parse_variant(optarg, &variant))
                return die_msg("check-reward: --variant must be dungeon or treasure"), 2;
            have_variant = 1;
            break;
        case 'n':
            if (parse_int(optarg, 1, 65536, &envs))
                return die_msg("check-reward: --envs must be an integer in 1..65536"), 2;
            break;
        case 's':
            if (parse_u64(optarg, &seed)) return die_msg("check-reward: --seed must be a non-negative integer"), 2;
            break;
        case 't':
            if (parse_double(optarg, 0.1, 86400.0, &timeout))
                return die_msg("check-reward: --timeout must be a number of seconds in 0.1..86400"), 2;
            break;
        case 'b':
            if (!strcmp(optarg, "cpu")) cuda = 0;
            else if (!strcmp(optarg, "cuda")) cuda = 1;
            else return die_msg("check-reward: --backend must be cpu or cuda"), 2;
            break;
        case 'j': json = 1; break;
        case 'h': check_usage(stdout); return 0;
        default: check_usage(stderr); return 2;
        }
    }
    if (optind >= argc) {
        die_msg("check-reward: no reward file given (pcgrllm check-reward --help)");
        return 2;
    }
    if (optind + 1 < argc) return die_msg("check-reward: unexpected argument '%s'", argv[optind + 1]), 2;
    if (scenario && have_variant)
        return die_msg("check-reward: give --scenario or --variant, not both"), 2;
    if (scenario) variant = scenario >= 3 ? VARIANT_TREASURE : VARIANT_DUNGEON;
    const char *path = argv[optind];
    char err[1024];
    long len = 0;
    char *src = read_file(path, REWARD_MAX_SOURCE, &len, err, sizeof err);
    if (!src) return die_msg("check-reward: %s", err), 2;
    if ((long)strlen(src) != len) {
        free(src);
        return die_msg("check-reward: %s: contains a NUL byte; a reward is C source text", path), 2;
    }

    char nv_why[300] = "";
    int have_nvrtc = reward_nvrtc_available(nv_why, sizeof nv_why);
    if (cuda && !have_nvrtc) {
        free(src);
        fprintf(stderr, "error: --backend cuda: %s\n", nv_why);
        return 1;
    }
    reward_stats st;
    int gpu_checked = 0;
    char reason[1536];
    double t0 = now_seconds();
    /* --backend cuda compares the device's rewards with these */
    int steps = 3 * PCG_DEFAULT_SIDE * PCG_DEFAULT_SIDE;
    float *cpu_values = cuda ? malloc(sizeof(float) * (size_t)envs * steps) : NULL;
    int rc;
    if (cuda && !cpu_values) {
        snprintf(reason, sizeof reason, "out of memory for %ld environments", envs);
        rc = -1;
    } else if (cuda) {
        rc = reward_validate_values(src, variant, (int)envs, seed, timeout, &st, cpu_values, reason, sizeof reason);
        gpu_checked = 1;
    } else {
        rc = reward_validate_both(src, variant, (int)envs, seed, timeout, 1, &st, &gpu_checked, reason,
                                  sizeof reason);
    }
    double t_check = now_seconds() - t0;
    /* --backend cuda: every GPU architecture the engine builds for */
    static const char *archs[] = REWARD_GPU_ARCHS;
    int n_archs = (int)(sizeof archs / sizeof archs[0]);
    double arch_s[8] = {0};
    if (rc == 0 && cuda) {
        for (int a = 0; a < n_archs && rc == 0; a++) {
            double ta = now_seconds();
            int r = reward_compile_nvrtc(src, archs[a], NULL, NULL, err, sizeof err);
            arch_s[a] = now_seconds() - ta;
            if (r) {
                snprintf(reason, sizeof reason, "the GPU compiler (NVRTC, %s) refuses it: %s", archs[a], err);
                rc = -1;
            }
        }
    }
    reward_gpu_result gres;
    memset(&gres, 0, sizeof gres);
    if (rc == 0 && cuda) {
        rc = reward_gpu_check(src, variant, (int)envs, seed, timeout, cpu_values, &gres, reason, sizeof reason);
        if (rc == 0 && gres.ran && gres.max_diff > REWARD_GPU_TOLERANCE) {
            snprintf(reason, sizeof reason,
                     "the GPU and CPU rewards differ (relative difference %.3g at step %ld, tolerance %g)",
                     gres.max_diff, gres.diff_step, REWARD_GPU_TOLERANCE);
            rc = -1;
        }
    }
    free(cpu_values);
    free(src);
    const char *vname = variant == VARIANT_TREASURE ? "treasure" : "dungeon";
    if (rc) {
        if (json) {
            printf("{\"accepted\": false, \"file\": ");
            json_string(stdout, path);
            printf(", \"reason\": ");
            json_string(stdout, reason);
            printf("}\n");
        }
        fprintf(stderr, "error: %s\n", reason);
        return 1;
    }
    char buf[1024], warning[512];
    if (reward_stats_warning(&st, warning, sizeof warning)) fprintf(stderr, "warning: %s\n", warning);
    if (json) {
        reward_stats_json(&st, buf, sizeof buf);
        printf("{\"accepted\": true, \"file\": ");
        json_string(stdout, path);
        if (warning[0]) {
            printf(", \"warning\": ");
            json_string(stdout, warning);
        }
        printf(", \"variant\": \"%s\", \"envs\": %ld, \"seed\": %llu, \"stats\": %s, \"cpu\": \"libtcc\", "
               "\"gpu\": ",
               vname, envs, (unsigned long long)seed, buf);
        if (gpu_checked) {
            printf("{\"nvrtc\": \"%s\", \"archs\": [", reward_nvrtc_version());
            if (cuda)
                for (int a = 0; a < n_archs; a++)
                    printf("%s{\"arch\": \"%s\", \"compile_s\": %.3f}", a ? ", " : "", archs[a], arch_s[a]);
            else printf("{\"arch\": \"sm_90\"}");
            printf("]");
            if (cuda && gres.ran) {
                reward_stats_json(&gres.stats, buf, sizeof buf);
                printf(", \"device\": ");
                json_string(stdout, gres.device);
                printf(", \"device_arch\": \"%s\", \"device_stats\": %s, \"max_rel_diff_vs_cpu\": %.3g", gres.arch, buf,
                       gres.max_diff);
            } else if (cuda) {
                printf(", \"device\": null, \"why\": ");
                json_string(stdout, gres.why);
            }
            printf("}");
        } else {
            printf("null");
        }
        printf(", \"check_s\": %.3f}\n", t_check);
        return 0;
    }
    reward_stats_text(&st, buf, sizeof buf);
    printf("accepted: %s (%s variant, %ld environments, seed %llu)\n", path, vname, envs,
           (unsigned long long)seed);
    printf("statistics: %s\n", buf);
    printf("cpu: compiled with libtcc and validated in the sandbox (%.2f s)\n", t_check);
    if (!gpu_checked) {
        printf("gpu: not checked: %s\n", nv_why[0] ? nv_why : "NVRTC not available");
    } else if (cuda) {
        printf("gpu: compiled with NVRTC %s for", reward_nvrtc_version());
        for (int a = 0; a < n_archs; a++) printf(" %s (%.2f s)", archs[a], arch_s[a]);
        printf("\n");
        if (gres.ran) {
            const reward_stats *g = &gres.stats;
            printf("gpu: ran on %s (%s): mean %.6g, std %.6g, min %.6g, max %.6g, zero rewards %.1f%%, "
                   "%.3f us per environment step; largest relative difference from the CPU %.3g\n",
                   gres.device, gres.arch, g->mean, g->std, g->min, g->max, 100.0 * g->zero_share, g->us_per_call,
                   gres.max_diff);
        } else {
            printf("gpu: NVRTC compile only, not run: %s\n", gres.why);
        }
    } else {
        printf("gpu: compiles with NVRTC %s (sm_90)\n", reward_nvrtc_version());
    }
    return 0;
}
