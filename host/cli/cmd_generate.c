/* pcgrllm generate: the level generation of docs/method.md#evaluation.  n environments are
 * reset from a fixed evaluation seed (the same starting maps every time),
 * the trained policy samples its actions for one full episode, and the
 * level at the end of the episode (the last edit applied, no reset) is
 * written as a level file and a PNG.  The episode runs on the CPU
 * (ppo_play_episode) or on the device (the CUDA backend's play_episode:
 * the same maps, draws and rules; a sampled action can differ only where a
 * float difference in the logits moves it across a sampling boundary). */
#include "backend.h"
#include "checkpoint.h"
#include "commands.h"
#include "levelio.h"
#include "ppo.h"
#include "render.h"
#include "util.h"
#include "dirguard.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void generate_usage(FILE *f)
{
    fprintf(f,
            "usage: pcgrllm generate --policy DIR --out DIR2 [--n 30] [--seed S] [--action-seed A] [--threads T]\n"
            "                        [--backend cpu|cuda|auto]\n"
            "  Runs the policy of DIR/checkpoint.bin (pcgrllm train) for one episode on N environments and\n"
            "  writes the final levels as DIR2/level_000.txt ... with DIR2/level_000.png ... and DIR2/levels.png\n"
            "  (all in one grid).  Score them with pcgrllm eval.\n"
            "  --n N            levels (default 30)\n"
            "  --seed S         seed of the starting maps (default %llu, the fixed evaluation seed)\n"
            "  --action-seed A  seed of the sampled actions (default 0)\n"
            "  --threads T      OpenMP threads (default: all cores)\n"
            "  --backend B      cpu, cuda (the episode on the GPU; an error without one) or auto (default:\n"
            "                   cuda when a device is usable, else cpu, as train chooses)\n",
            (unsigned long long)PPO_EVAL_SEED);
}

int cmd_generate(int argc, char **argv)
{
    static const struct option opts[] = {{"policy", required_argument, 0, 'p'}, {"n", required_argument, 0, 'n'},
                                         {"seed", required_argument, 0, 's'},   {"action-seed", required_argument, 0, 'a'},
                                         {"out", required_argument, 0, 'o'},    {"threads", required_argument, 0, 't'},
                                         {"backend", required_argument, 0, 'b'}, {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *policy = NULL, *out = NULL, *backend_arg = "auto";
    long n = 30, threads = 0;
    uint64_t seed = PPO_EVAL_SEED, action_seed = 0;
    int c;
    optind = 1;
    while ((c = getopt_full(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'p': policy = optarg; break;
        case 'o': out = optarg; break;
        case 'b': backend_arg = optarg; break;
        case 'n':
            if (parse_int(optarg, 1, 100000, &n)) return die_msg("generate: --n must be an integer in 1..100000"), 2;
            break;
        case 's':
            if (parse_u64(optarg, &seed)) return die_msg("generate: --seed must be a non-negative integer"), 2;
            break;
        case 'a':
            if (parse_u64(optarg, &action_seed))
                return die_msg("generate: --action-seed must be a non-negative integer"), 2;
            break;
        case 't':
            if (parse_int(optarg, 1, 1024, &threads))
                return die_msg("generate: --threads must be an integer in 1..1024"), 2;
            break;
        case 'h': generate_usage(stdout); return 0;
        default: generate_usage(stderr); return 2;
        }
    }
    if (optind < argc) return die_msg("generate: unexpected argument '%s'", argv[optind]), 2;
    if (!policy || !out) return die_msg("generate: --policy and --out are required (pcgrllm generate --help)"), 2;
    char path[4096], err[1024];
    int backend = backend_select(backend_arg, err, sizeof err);
    if (backend < 0) return die_msg("generate: %s", err), strncmp(err, "unknown backend", 15) ? 1 : 2;
    nn_set_threads((int)threads);
    if (dirguard_command_dir("generate", policy, "policy directory", 1) ||
        dirguard_command_dir("generate", out, "level directory", 0))
        return 1;
    snprintf(path, sizeof path, "%s/%s", policy, CHECKPOINT_FILE);
    ppo_config cfg;
    nn_t nn;
    int64_t step;
    if (checkpoint_load_policy(path, &cfg, &nn, &step, err, sizeof err)) return die_msg("generate: %s", err), 1;
    size_t cells = (size_t)cfg.map_h * cfg.map_w;
    unsigned char *maps = malloc(cells * (size_t)n);
    level_t *levels = malloc(sizeof(level_t) * (size_t)n);
    if (!maps || !levels) {
        free(maps), free(levels), nn_free(&nn);
        return die_msg("generate: out of memory"), 1;
    }
    if (backend == BACKEND_CUDA) {
        const pcg_cuda_api *api = backend_cuda();
        if (api->play_episode(&nn.cfg, nn.off, nn.n_params, nn.params, (int)n, cfg.map_h, cfg.map_w, cfg.variant, seed,
                              action_seed, maps)) {
            free(maps), free(levels), nn_free(&nn);
            return die_msg("generate: cuda: %s", api->last_error()), 1;
        }
    } else if (ppo_play_episode(&nn, (int)n, cfg.map_h, cfg.map_w, cfg.variant, seed, action_seed, NULL, NULL, maps,
                                NULL)) {
        free(maps), free(levels), nn_free(&nn);
        return die_msg("generate: out of memory"), 1;
    }
    nn_free(&nn);
    if (make_dirs(out) || dirguard_command_dir("generate", out, "level directory", 0)) {
        free(maps), free(levels);
        return die_msg("generate: cannot create directory %s", out), 1;
    }
    char comment[512];
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        levels[i] = (level_t){cfg.map_h, cfg.map_w, maps + (size_t)i * cells};
        snprintf(comment, sizeof comment, "%s, policy %s (%s preset, %lld training steps), map seed %llu env %d, "
                 "action seed %llu",
                 cfg.variant == VARIANT_TREASURE ? "treasure" : "dungeon", policy, cfg.preset, (long long)step,
                 (unsigned long long)seed, i, (unsigned long long)action_seed);
        snprintf(path, sizeof path, "%s/level_%03d.txt", out, i);
        if (level_write(path, &levels[i], comment)) die_msg("generate: cannot write %s", path), rc = 1;
        snprintf(path, sizeof path, "%s/level_%03d.png", out, i);
        if (!rc && level_render_png(&levels[i], path, 24)) die_msg("generate: cannot write %s", path), rc = 1;
    }
    snprintf(path, sizeof path, "%s/levels.png", out);
    if (!rc && levels_render_grid_png(levels, (int)n, n < 6 ? (int)n : 6, NULL, path, 12))
        die_msg("generate: cannot write %s", path), rc = 1;
    if (!rc)
        printf("wrote %ld level%s and renders to %s (generated on the %s backend)\n", n, n == 1 ? "" : "s", out,
               backend_name(backend));
    free(maps), free(levels);
    return rc;
}
