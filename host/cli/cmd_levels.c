/* pcgrllm levels: starting maps, or maps after an episode of random play. */
#include "commands.h"
#include "env.h"
#include "levelio.h"
#include "util.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void levels_usage(FILE *f)
{
    fprintf(f,
            "usage: pcgrllm levels --n N --seed S [--variant dungeon|treasure] [--policy start|random]\n"
            "                      [--size H] --out DIR\n"
            "  Writes N level files DIR/level_000.txt ... from environments 0..N-1 of seed S.\n"
            "  --policy start   the starting maps (default)\n"
            "  --policy random  the maps after one full episode (3 scans) of uniformly random actions\n"
            "  --size H         map side (default 16)\n");
}

int cmd_levels(int argc, char **argv)
{
    static const struct option opts[] = {{"n", required_argument, 0, 'n'},      {"seed", required_argument, 0, 's'},
                                         {"variant", required_argument, 0, 'v'}, {"policy", required_argument, 0, 'p'},
                                         {"out", required_argument, 0, 'o'},     {"size", required_argument, 0, 'z'},
                                         {"help", no_argument, 0, 'h'},          {0, 0, 0, 0}};
    long n = -1, size = PCG_DEFAULT_SIDE;
    uint64_t seed = 0;
    int have_seed = 0, variant = VARIANT_DUNGEON, random_play = 0;
    const char *out = NULL;
    int c;
    optind = 1;
    while ((c = getopt_full(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'n':
            if (parse_int(optarg, 1, 1000000, &n)) return die_msg("levels: --n must be an integer in 1..1000000"), 2;
            break;
        case 's':
            if (parse_u64(optarg, &seed)) return die_msg("levels: --seed must be a non-negative integer"), 2;
            have_seed = 1;
            break;
        case 'v':
            if (parse_variant(optarg, &variant)) return die_msg("levels: --variant must be dungeon or treasure"), 2;
            break;
        case 'p':
            if (!strcmp(optarg, "random")) random_play = 1;
            else if (!strcmp(optarg, "start")) random_play = 0;
            else return die_msg("levels: --policy must be start or random"), 2;
            break;
        case 'z':
            if (parse_int(optarg, 5, PCG_MAX_SIDE, &size))
                return die_msg("levels: --size must be an integer in 5..%d", PCG_MAX_SIDE), 2;
            break;
        case 'o': out = optarg; break;
        case 'h': levels_usage(stdout); return 0;
        default: levels_usage(stderr); return 2;
        }
    }
    if (optind < argc) return die_msg("levels: unexpected argument '%s'", argv[optind]), 2;
    if (n < 0 || !have_seed || !out) {
        die_msg("levels: --n, --seed and --out are required (pcgrllm levels --help)");
        return 2;
    }
    if (make_dirs(out)) return die_msg("levels: cannot create directory %s", out), 1;
    env_t e;
    if (env_alloc(&e, (int)n, (int)size, (int)size, variant, seed)) return die_msg("levels: out of memory"), 1;
    if (random_play) {
        int *act = malloc(sizeof(int) * (size_t)n);
        if (!act) return env_free(&e), die_msg("levels: out of memory"), 1;
        /* stop one step before the auto-reset so the final maps are kept */
        for (int t = 0; t < e.cfg.episode_len - 1; t++) {
            env_random_actions(&e, seed, (uint64_t)t, act);
            env_step(&e, act);
        }
        /* the last step, applied without reset */
        env_random_actions(&e, seed, (uint64_t)e.cfg.episode_len - 1, act);
        for (int i = 0; i < n; i++) {
            size_t off = (size_t)i * e.cells;
            dungeon_apply(&e.cfg, e.cfg.episode_len - 1, act[i], e.maps + off, e.frozen + off,
                          e.pad + (size_t)i * e.cfg.pad_h * e.cfg.pad_w);
        }
        free(act);
    }
    char path[4096], comment[256];
    for (int i = 0; i < n; i++) {
        level_t l = env_level(&e, i);
        snprintf(path, sizeof path, "%s/level_%03d.txt", out, i);
        snprintf(comment, sizeof comment, "%s seed %llu env %d, %s", variant ? "treasure" : "dungeon",
                 (unsigned long long)seed, i, random_play ? "after one episode of random play" : "starting map");
        if (level_write(path, &l, comment)) {
            env_free(&e);
            return die_msg("levels: %s", write_error()), 1;
        }
    }
    printf("wrote %ld level%s to %s\n", n, n == 1 ? "" : "s", out);
    env_free(&e);
    return 0;
}
