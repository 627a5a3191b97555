/* pcgrllm generate: the level generation of docs/method.md#evaluation.  n
 * environments are reset from a fixed evaluation seed (the same starting
 * maps every time), the trained policy samples its actions for one full
 * episode (host/gpu/policy_play.c, on the CPU or the device), and the level
 * it leaves (after 767 of the 768 edits by default, as the reference code
 * keeps it; or after all of them) is written as a level file and a PNG
 * (host/io/level_set.c).  This file parses the flags
 * and calls them. */
#include "backend.h"
#include "checkpoint.h"
#include "commands.h"
#include "dirguard.h"
#include "level_set.h"
#include "policy_play.h"
#include "ppo.h"
#include "util.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void generate_usage(FILE *f)
{
    fprintf(f,
            "usage: pcgrllm generate --policy DIR --out DIR2 [--n 30] [--seed S] [--action-seed A] [--threads T]\n"
            "                        [--backend cpu|cuda|auto] [--final-level edits767|edits768]\n"
            "  Runs the policy of DIR/checkpoint.bin (pcgrllm train) for one episode on N environments and\n"
            "  writes the final levels as DIR2/level_000.txt ... with DIR2/level_000.png ... and DIR2/levels.png\n"
            "  (all in one grid).  Score them with pcgrllm eval.\n"
            "  --n N            levels (default 30)\n"
            "  --seed S         seed of the starting maps (default %llu, the fixed evaluation seed)\n"
            "  --action-seed A  seed of the sampled actions (default 0)\n"
            "  --threads T      OpenMP threads (default: all cores)\n"
            "  --backend B      cpu, cuda (the episode on the GPU; an error without one) or auto (default:\n"
            "                   cuda when a device is usable, else cpu, as train chooses)\n"
            "  --final-level L  edits767 (the map after 767 of the 768 edits, as the reference code keeps\n"
            "                   it) or edits768 (after every edit); default: what the policy was trained with\n",
            (unsigned long long)PPO_EVAL_SEED);
}

typedef struct {
    const char *policy, *out, *backend;
    long n, threads;
    uint64_t seed, action_seed;
    int final_level; /* FINAL_LEVEL_*, or -1: the checkpoint's */
    /* what the comment line of each level file says about where it came from */
    const ppo_config *cfg;
    int64_t step;
} generate_job;

/* -1 to go on, else the exit status. */
static int parse_generate_flags(int argc, char **argv, generate_job *g)
{
    static const struct option opts[] = {{"policy", required_argument, 0, 'p'}, {"n", required_argument, 0, 'n'},
                                         {"seed", required_argument, 0, 's'},   {"action-seed", required_argument, 0, 'a'},
                                         {"out", required_argument, 0, 'o'},    {"threads", required_argument, 0, 't'},
                                         {"backend", required_argument, 0, 'b'}, {"help", no_argument, 0, 'h'},
                                         {"final-level", required_argument, 0, 'f'}, {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = getopt_full(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'p': g->policy = optarg; break;
        case 'o': g->out = optarg; break;
        case 'b': g->backend = optarg; break;
        case 'n':
            if (parse_int(optarg, 1, 100000, &g->n)) return die_msg("generate: --n must be an integer in 1..100000"), 2;
            break;
        case 's':
            if (parse_u64(optarg, &g->seed)) return die_msg("generate: --seed must be a non-negative integer"), 2;
            break;
        case 'a':
            if (parse_u64(optarg, &g->action_seed))
                return die_msg("generate: --action-seed must be a non-negative integer"), 2;
            break;
        case 't':
            if (parse_int(optarg, 1, 1024, &g->threads))
                return die_msg("generate: --threads must be an integer in 1..1024"), 2;
            break;
        case 'f':
            if ((g->final_level = ppo_detail_parse(PPO_DETAIL_FINAL_LEVEL, optarg)) < 0)
                return die_msg("generate: --final-level must be edits767 or edits768"), 2;
            break;
        case 'h': generate_usage(stdout); return 0;
        default: generate_usage(stderr); return 2;
        }
    }
    if (optind < argc) return die_msg("generate: unexpected argument '%s'", argv[optind]), 2;
    if (!g->policy || !g->out) return die_msg("generate: --policy and --out are required (pcgrllm generate --help)"), 2;
    return -1;
}

static void level_comment(void *ctx, int i, char *buf, int len)
{
    const generate_job *g = ctx;
    int edits = 3 * g->cfg->map_h * g->cfg->map_w, kept = g->cfg->rules.final_level == FINAL_LEVEL_768 ? edits : edits - 1;
    snprintf(buf, (size_t)len, "%s, policy %s (%s preset, %lld training steps), map seed %llu env %d, "
             "action seed %llu, the map after %d of %d edits",
             g->cfg->variant == VARIANT_TREASURE ? "treasure" : "dungeon", g->policy, g->cfg->preset,
             (long long)g->step, (unsigned long long)g->seed, i, (unsigned long long)g->action_seed, kept, edits);
}

int cmd_generate(int argc, char **argv)
{
    generate_job g = {.backend = "auto", .n = 30, .seed = PPO_EVAL_SEED, .final_level = -1};
    int rc = parse_generate_flags(argc, argv, &g);
    if (rc >= 0) return rc;
    char path[4096], err[1024];
    int backend = backend_select(g.backend, err, sizeof err);
    if (backend < 0) return die_msg("generate: %s", err), strncmp(err, "unknown backend", 15) ? 1 : 2;
    nn_set_threads((int)g.threads);
    if (dirguard_command_dir("generate", g.policy, "policy directory", 1) ||
        dirguard_command_dir("generate", g.out, "level directory", 0))
        return 1;
    snprintf(path, sizeof path, "%s/%s", g.policy, CHECKPOINT_FILE);
    ppo_config cfg;
    nn_t nn;
    if (checkpoint_load_policy(path, &cfg, &nn, &g.step, err, sizeof err)) return die_msg("generate: %s", err), 1;
    g.cfg = &cfg;
    if (g.final_level >= 0) cfg.rules.final_level = g.final_level;
    size_t cells = (size_t)cfg.map_h * cfg.map_w;
    unsigned char *maps = malloc(cells * (size_t)g.n);
    level_t *levels = malloc(sizeof(level_t) * (size_t)g.n);
    if (!maps || !levels) {
        free(maps), free(levels), nn_free(&nn);
        return die_msg("generate: out of memory"), 1;
    }
    rc = policy_play_episode(backend, &nn, &cfg, (int)g.n, g.seed, g.action_seed, maps, err, sizeof err);
    nn_free(&nn);
    if (rc) {
        free(maps), free(levels);
        return die_msg("generate: %s", err), 1;
    }
    if (make_dirs(g.out) || dirguard_command_dir("generate", g.out, "level directory", 0)) {
        free(maps), free(levels);
        return die_msg("generate: cannot create directory %s", g.out), 1;
    }
    for (int i = 0; i < g.n; i++) levels[i] = (level_t){cfg.map_h, cfg.map_w, maps + (size_t)i * cells};
    rc = level_set_write(g.out, levels, (int)g.n, level_comment, &g, path, sizeof path) ? 1 : 0;
    if (rc) die_msg("generate: cannot write %s", path);
    else
        printf("wrote %ld level%s and renders to %s (generated on the %s backend)\n", g.n, g.n == 1 ? "" : "s", g.out,
               backend_name(backend));
    free(maps), free(levels);
    return rc;
}
