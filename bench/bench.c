/* pcgrllm bench [env|eval|all]: throughput tables. */
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
};
#define N_BENCH (int)(sizeof benches / sizeof benches[0])

int cmd_bench(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("usage: pcgrllm bench [all");
        for (int i = 0; i < N_BENCH; i++) printf("|%s", benches[i].name);
        printf("] [options]\n");
        for (int i = 0; i < N_BENCH; i++) printf("  %-6s %s\n", benches[i].name, benches[i].help);
        printf("  pcgrllm bench NAME --help shows a benchmark's options.\n");
        return 0;
    }
    const char *what = argc > 1 && argv[1][0] != '-' ? argv[1] : "all";
    int shift = argc > 1 && argv[1][0] != '-' ? 1 : 0;
    int rc = 0, found = 0;
    for (int i = 0; i < N_BENCH; i++) {
        if (strcmp(what, "all") && strcmp(what, benches[i].name)) continue;
        found = 1;
        char *sub[64];
        int n = 0;
        sub[n++] = (char *)benches[i].name;
        for (int k = 1 + shift; k < argc && n < 63; k++) sub[n++] = argv[k];
        sub[n] = NULL;
        rc |= benches[i].fn(n, sub);
    }
    if (!found) {
        die_msg("bench: unknown benchmark '%s' (pcgrllm bench --help)", what);
        return 2;
    }
    return rc;
}
