/* pcgrllm check-reward: compile an untrusted reward with both backends,
 * validate it in the sandbox and print its self-alignment statistics, or
 * the one-line reason it is refused. */
#include "commands.h"
#include "env.h"
#include "reward_check.h"
#include "util.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check_usage(FILE *f)
{
    fprintf(f,
            "usage: pcgrllm check-reward [--scenario N | --variant dungeon|treasure] [--envs N] [--seed S]\n"
            "                            [--timeout SECONDS] [--backend cpu|cuda [--save-cubins DIR]] [--json] FILE\n"
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
            "  --save-cubins DIR  with --backend cuda: write each architecture's cubin as DIR/ARCH.cubin, a\n"
            "                   reward module for a GPU machine without NVRTC (pcgrllm device --reward)\n"
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

/* -1 to go on with the check, else the exit status. */
static int parse_check_flags(int argc, char **argv, reward_check_opts *o, int *json)
{
    static const struct option opts[] = {
        {"scenario", required_argument, 0, 'S'}, {"variant", required_argument, 0, 'v'},
        {"envs", required_argument, 0, 'n'},     {"seed", required_argument, 0, 's'},
        {"timeout", required_argument, 0, 't'},  {"backend", required_argument, 0, 'b'},
        {"json", no_argument, 0, 'j'},           {"help", no_argument, 0, 'h'},
        {"save-cubins", required_argument, 0, 'c'}, {0, 0, 0, 0}};
    long envs = 64, scenario = 0;
    int have_variant = 0, c;
    optind = 1;
    while ((c = getopt_full(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'S':
            if (parse_int(optarg, 1, 4, &scenario))
                return die_msg("check-reward: --scenario must be 1, 2, 3 or 4"), 2;
            break;
        case 'v':
            if (parse_variant(optarg, &o->variant))
                return die_msg("check-reward: --variant must be dungeon or treasure"), 2;
            have_variant = 1;
            break;
        case 'n':
            if (parse_int(optarg, 1, 65536, &envs))
                return die_msg("check-reward: --envs must be an integer in 1..65536"), 2;
            break;
        case 's':
            if (parse_u64(optarg, &o->seed)) return die_msg("check-reward: --seed must be a non-negative integer"), 2;
            break;
        case 't':
            if (parse_double(optarg, 0.1, 86400.0, &o->timeout_s))
                return die_msg("check-reward: --timeout must be a number of seconds in 0.1..86400"), 2;
            break;
        case 'b':
            if (!strcmp(optarg, "cpu")) o->cuda = 0;
            else if (!strcmp(optarg, "cuda")) o->cuda = 1;
            else return die_msg("check-reward: --backend must be cpu or cuda"), 2;
            break;
        case 'j': *json = 1; break;
        case 'c': o->cubin_dir = optarg; break;
        case 'h': check_usage(stdout); return 0;
        default: check_usage(stderr); return 2;
        }
    }
    o->envs = (int)envs;
    if (optind >= argc) {
        die_msg("check-reward: no reward file given (pcgrllm check-reward --help)");
        return 2;
    }
    if (optind + 1 < argc) return die_msg("check-reward: unexpected argument '%s'", argv[optind + 1]), 2;
    if (scenario && have_variant)
        return die_msg("check-reward: give --scenario or --variant, not both"), 2;
    if (o->cubin_dir && !o->cuda) return die_msg("check-reward: --save-cubins needs --backend cuda"), 2;
    if (scenario) o->variant = scenario >= 3 ? VARIANT_TREASURE : VARIANT_DUNGEON;
    return -1;
}

/* The "gpu" member of the JSON line of an accepted reward. */
static void print_json_gpu(const reward_check_opts *o, const reward_check_result *r)
{
    char buf[1024];
    if (!r->gpu_checked) {
        printf("null");
        return;
    }
    printf("{\"nvrtc\": \"%s\", \"archs\": [", reward_nvrtc_version());
    if (o->cuda)
        for (int a = 0; a < r->n_archs; a++)
            printf("%s{\"arch\": \"%s\", \"compile_s\": %.3f}", a ? ", " : "", r->archs[a], r->arch_s[a]);
    else printf("{\"arch\": \"sm_90\"}");
    printf("]");
    if (o->cuda && r->gpu.ran) {
        reward_stats_json(&r->gpu.stats, buf, sizeof buf);
        printf(", \"device\": ");
        json_string(stdout, r->gpu.device);
        printf(", \"device_arch\": \"%s\", \"device_stats\": %s, \"max_rel_diff_vs_cpu\": %.3g", r->gpu.arch, buf,
               r->gpu.max_diff);
    } else if (o->cuda) {
        printf(", \"device\": null, \"why\": ");
        json_string(stdout, r->gpu.why);
    }
    printf("}");
}

static void print_json(const char *path, const reward_check_opts *o, const reward_check_result *r,
                       const char *warning)
{
    char buf[1024];
    const char *vname = o->variant == VARIANT_TREASURE ? "treasure" : "dungeon";
    reward_stats_json(&r->stats, buf, sizeof buf);
    printf("{\"accepted\": true, \"file\": ");
    json_string(stdout, path);
    if (warning[0]) {
        printf(", \"warning\": ");
        json_string(stdout, warning);
    }
    printf(", \"variant\": \"%s\", \"envs\": %d, \"seed\": %llu, \"stats\": %s, \"cpu\": \"libtcc\", "
           "\"gpu\": ",
           vname, o->envs, (unsigned long long)o->seed, buf);
    print_json_gpu(o, r);
    printf(", \"check_s\": %.3f}\n", r->check_s);
}

static void print_text(const char *path, const reward_check_opts *o, const reward_check_result *r)
{
    char buf[1024];
    const char *vname = o->variant == VARIANT_TREASURE ? "treasure" : "dungeon";
    reward_stats_text(&r->stats, buf, sizeof buf);
    printf("accepted: %s (%s variant, %d environments, seed %llu)\n", path, vname, o->envs,
           (unsigned long long)o->seed);
    printf("statistics: %s\n", buf);
    printf("cpu: compiled with libtcc and validated in the sandbox (%.2f s)\n", r->check_s);
    if (!r->gpu_checked) {
        printf("gpu: not checked: %s\n", r->nv_why[0] ? r->nv_why : "NVRTC not available");
    } else if (o->cuda) {
        printf("gpu: compiled with NVRTC %s for", reward_nvrtc_version());
        for (int a = 0; a < r->n_archs; a++) printf(" %s (%.2f s)", r->archs[a], r->arch_s[a]);
        printf("\n");
        if (r->gpu.ran) {
            const reward_stats *g = &r->gpu.stats;
            printf("gpu: ran on %s (%s): mean %.6g, std %.6g, min %.6g, max %.6g, zero rewards %.1f%%, "
                   "%.3f us per environment step; largest relative difference from the CPU %.3g\n",
                   r->gpu.device, r->gpu.arch, g->mean, g->std, g->min, g->max, 100.0 * g->zero_share,
                   g->us_per_call, r->gpu.max_diff);
        } else {
            printf("gpu: NVRTC compile only, not run: %s\n", r->gpu.why);
        }
    } else {
        printf("gpu: compiles with NVRTC %s (sm_90)\n", reward_nvrtc_version());
    }
}

int cmd_check_reward(int argc, char **argv)
{
    reward_check_opts o = {VARIANT_DUNGEON, 64, 0, 60.0, 0, NULL};
    int json = 0;
    int rc = parse_check_flags(argc, argv, &o, &json);
    if (rc >= 0) return rc;
    const char *path = argv[optind];
    char err[1024];
    long len = 0;
    char *src = read_file(path, REWARD_MAX_SOURCE, &len, err, sizeof err);
    if (!src) return die_msg("check-reward: %s", err), 2;
    if ((long)strlen(src) != len) {
        free(src);
        return die_msg("check-reward: %s: contains a NUL byte; a reward is C source text", path), 2;
    }
    reward_check_result res, *r = &res;
    rc = reward_check(src, &o, r);
    free(src);
    if (rc == -2) {
        fprintf(stderr, "error: --backend cuda: %s\n", r->nv_why);
    } else if (rc) {
        if (json) {
            printf("{\"accepted\": false, \"file\": ");
            json_string(stdout, path);
            printf(", \"reason\": ");
            json_string(stdout, r->reason);
            printf("}\n");
        }
        fprintf(stderr, "error: %s\n", r->reason);
    } else {
        char warning[512];
        if (reward_stats_warning(&r->stats, warning, sizeof warning)) fprintf(stderr, "warning: %s\n", warning);
        if (json) print_json(path, &o, r, warning);
        else print_text(path, &o, r);
    }
    return rc ? 1 : 0;
}
