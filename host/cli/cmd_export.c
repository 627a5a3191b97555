/* pcgrllm export --minecraft: levels as a Minecraft datapack and structure
 * files (docs/minecraft.md).  This file parses flags and gathers levels;
 * minecraft.c builds, mcblocks.c reads the block mapping. */
#include "commands.h"
#include "graph.h"
#include "levelio.h"
#include "minecraft.h"
#include "target.h"
#include "util.h"
#include "dirguard.h"
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NAME_MAX_LEN 64

typedef struct {
    int n, cap;
    char (*names)[NAME_MAX_LEN];
    level_t *levels;
    int have_target;          /* a run directory gave its target */
    eval_scenario_t target;
} export_set;

static void export_usage(FILE *f)
{
    fprintf(f,
            "usage: pcgrllm export --minecraft --out DIR [--scale K] [--blocks FILE] [--name NS]\n"
            "                      [--scenario N | --target JSON] [--node ID] [--force] LEVEL|DIR|RUN...\n"
            "  Turns levels into Minecraft Java Edition 1.21.1 files in DIR: NS.zip, a datapack\n"
            "  with one structure and one function per level, and NAME.nbt, each structure alone\n"
            "  (for a structure block).  In the game: put NS.zip in the world's datapacks folder,\n"
            "  /reload, then /function NS:NAME builds the level beside you (docs/minecraft.md).\n"
            "  LEVEL a level file; DIR its *.txt files; RUN a run directory (the best node's levels,\n"
            "  or --node ID's, named nodeNNN_level_KKK; its target is used for the route check).\n"
            "  --scale K     each tile becomes K x K blocks (1..%d, default %d)\n"
            "  --blocks FILE the tile -> block mapping (default: minecraft/blocks.txt beside the binary)\n"
            "  --name NS     the datapack's name and namespace (default pcgrllm)\n"
            "  --scenario N, --target JSON  whose routes must stay walkable after scaling (default:\n"
            "                a run's target, else every built-in scenario)\n"
            "  --force       write even when scaling blocks a route (each one is still reported)\n"
            "Exit codes: 0 written; 1 an unreadable input or a failed write; 2 usage; 3 refused:\n"
            "scaling would block a route the evaluator walks (one line per level).\n",
            MC_SCALE_MAX, MC_DEFAULT_SCALE);
}

static int add_level(export_set *s, const char *prefix, const char *path, char *err, int errlen)
{
    if (s->n == s->cap) {
        int cap = s->cap ? s->cap * 2 : 32;
        void *nn = realloc(s->names, sizeof *s->names * (size_t)cap), *nl = nn ? realloc(s->levels, sizeof *s->levels * (size_t)cap) : NULL;
        if (nn) s->names = nn;
        if (nl) s->levels = nl;
        if (!nn || !nl) return snprintf(err, (size_t)errlen, "export: out of memory"), -1;
        s->cap = cap;
    }
    unsigned char tiles[PCG_MAX_CELLS];
    level_t l;
    if (level_read(path, &l, tiles, err, errlen)) return -1;
    level_t *dst = &s->levels[s->n];
    *dst = l;
    if (!(dst->t = malloc((size_t)(l.h * l.w)))) return snprintf(err, (size_t)errlen, "export: out of memory"), -1;
    memcpy(dst->t, tiles, (size_t)(l.h * l.w));
    /* the file's base name without .txt, as a resource name, made unique */
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    char stem[NAME_MAX_LEN], name[NAME_MAX_LEN];
    snprintf(stem, sizeof stem, "%s%.*s", prefix, (int)(strlen(base) > 4 && !strcmp(base + strlen(base) - 4, ".txt") ? strlen(base) - 4 : strlen(base)), base);
    mc_resource_name(stem, name, sizeof name - 12);
    snprintf(s->names[s->n], NAME_MAX_LEN, "%s", name);
    for (int k = 2, clash = 1; clash; k++) {
        clash = 0;
        for (int i = 0; i < s->n && !clash; i++) clash = !strcmp(s->names[i], s->names[s->n]);
        if (clash) snprintf(s->names[s->n], NAME_MAX_LEN, "%.50s_%d", name, k);
    }
    s->n++;
    return 0;
}

/* A run directory: the levels of node `node` (-1: the best) and the run's
 * target.  0, or -1 with err. */
static int add_run(export_set *s, const char *dir, int node, char *err, int errlen)
{
    char path[PATH_MAX + 64], why[PATH_MAX + 256];
    thought_graph g;
    snprintf(path, sizeof path, "%s/graph.json", dir);
    if (graph_load(path, &g, why, sizeof why)) return snprintf(err, (size_t)errlen, "export: %s", why), -1;
    int id = node >= 0 ? node : graph_best(&g), n_nodes = g.n;
    graph_free(&g);
    if (id < 0) return snprintf(err, (size_t)errlen, "export: %s has no finished node with levels; pick one with --node", dir), -1;
    if (id >= n_nodes) return snprintf(err, (size_t)errlen, "export: %s has no node %d (it has %d)", dir, id, n_nodes), -1;
    snprintf(path, sizeof path, "%s/target.json", dir);
    long len;
    char *text = read_file(path, 1L << 20, &len, why, sizeof why);
    target_t t;
    if (text && target_from_json(text, &t, why, sizeof why) == STORY_OK) {
        target_to_scenario(&t, "", &s->target);
        s->have_target = 1;
    }
    free(text);
    snprintf(path, sizeof path, "%s/nodes/%03d/levels", dir, id);
    char *args[1] = {path}, prefix[16];
    int n;
    char **files = level_paths(args, 1, &n, why, sizeof why);
    if (!files) return snprintf(err, (size_t)errlen, "export: node %d of %s: %s", id, dir, why), -1;
    snprintf(prefix, sizeof prefix, "node%03d_", id);
    int rc = 0;
    for (int i = 0; i < n; i++) {
        if (!rc) rc = add_level(s, prefix, files[i], err, errlen);
        free(files[i]);
    }
    free(files);
    return rc;
}

static int gather(export_set *s, char **args, int n_args, int node, char *err, int errlen)
{
    for (int i = 0; i < n_args; i++) {
        char probe[PATH_MAX + 16];
        snprintf(probe, sizeof probe, "%s/graph.json", args[i]);
        if (path_present(probe)) {
            char why[3200];
            if (dirguard_add(args[i], "run directory", 1, why, sizeof why))
                return snprintf(err, (size_t)errlen, "export: %.3000s", why), -1;
            if (add_run(s, args[i], node, err, errlen)) return -1;
            continue;
        }
        int n;
        char why[PATH_MAX + 128];
        char **files = level_paths(args + i, 1, &n, why, sizeof why);
        if (!files) return snprintf(err, (size_t)errlen, "export: %s", why), -1;
        int rc = 0;
        for (int k = 0; k < n; k++) {
            if (!rc) rc = add_level(s, "", files[k], err, errlen);
            free(files[k]);
        }
        free(files);
        if (rc) return -1;
    }
    return 0;
}

/* One line per level whose routes scaling would block; the count. */
static int check_all(const export_set *s, const eval_scenario_t *const *sc, int n_sc, const mc_blocks *b, int scale,
                     int force)
{
    int blocked = 0;
    for (int i = 0; i < s->n; i++) {
        char why[1024];
        int rc = mc_check_routes(&s->levels[i], sc, n_sc, b, scale, why, sizeof why);
        if (rc == 0) continue;
        if (rc < 0) return die_msg("export: %s: %s", s->names[i], why), -1;
        die_msg("export: %s%s: %s", force ? "warning: " : "", s->names[i], why);
        blocked++;
    }
    return blocked;
}

/* DIR/NS.zip and DIR/NAME.nbt.  0, or -1 after one line. */
static int write_outputs(const export_set *s, const char *dir, const char *ns, const mc_blocks *b, int scale)
{
    char path[PATH_MAX], err[PATH_MAX + 256];
    if (make_dirs(dir)) return die_msg("export: cannot create the directory %s", dir), -1;
    for (int i = 0; i < s->n; i++) {
        unsigned char *nbt;
        size_t len;
        if (mc_structure(&s->levels[i], b, scale, &nbt, &len, err, sizeof err))
            return die_msg("export: %s: %s", s->names[i], err), -1;
        snprintf(path, sizeof path, "%s/%s.nbt", dir, s->names[i]);
        int rc = write_file_atomic_msg(path, nbt, len, err, sizeof err);
        free(nbt);
        if (rc) return die_msg("export: %s", err), -1;
    }
    mc_level *lv = malloc(sizeof *lv * (size_t)s->n);
    if (!lv) return die_msg("export: out of memory"), -1;
    for (int i = 0; i < s->n; i++) lv[i] = (mc_level){s->names[i], &s->levels[i]};
    unsigned char *zip;
    size_t len;
    int rc = mc_datapack(ns, lv, s->n, b, scale, &zip, &len, err, sizeof err);
    free(lv);
    if (rc) return die_msg("export: %s", err), -1;
    snprintf(path, sizeof path, "%s/%s.zip", dir, ns);
    rc = write_file_atomic_msg(path, zip, len, err, sizeof err);
    free(zip);
    if (rc) return die_msg("export: %s", err), -1;
    return 0;
}

static int export_run(char **args, int n_args, const char *out, const char *blocks_path, const char *ns, int scale,
                      const eval_scenario_t *chosen, int node, int force)
{
    mc_blocks b;
    char err[PATH_MAX + 512];
    if (mc_blocks_load(blocks_path, &b, err, sizeof err)) return die_msg("export: %s", err), 1;
    export_set s = {0};
    int rc = gather(&s, args, n_args, node, err, sizeof err) ? (die_msg("%s", err), 1) : 0;
    const eval_scenario_t *sc[8];
    int n_sc = 0;
    if (chosen) sc[n_sc++] = chosen;
    else if (s.have_target) sc[n_sc++] = &s.target;
    else
        for (int i = 1; i <= eval_n_scenarios(); i++) sc[n_sc++] = eval_scenario(i);
    if (!rc) {
        int blocked = check_all(&s, sc, n_sc, &b, scale, force);
        if (blocked < 0) rc = 1;
        else if (blocked && !force) {
            die_msg("export: refused: scaling would block a route in %d of %d level%s (nothing written; --force "
                    "writes anyway)", blocked, s.n, s.n == 1 ? "" : "s");
            rc = EXIT_REFUSED;
        }
    }
    if (!rc && write_outputs(&s, out, ns, &b, scale)) rc = 1;
    if (!rc) {
        int size[3];
        mc_size(&b, s.levels[0].h, s.levels[0].w, scale, size);
        printf("export: %d level%s at scale %d (%d x %d x %d blocks for a %dx%d level) -> %s/%s.zip and %s/*.nbt\n"
               "in Minecraft 1.21.1: put %s.zip in saves/WORLD/datapacks/, /reload, then /function %s:%s\n",
               s.n, s.n == 1 ? "" : "s", scale, size[0], size[1], size[2], s.levels[0].h, s.levels[0].w, out, ns, out,
               ns, ns, s.names[0]);
    }
    for (int i = 0; i < s.n; i++) free(s.levels[i].t);
    free(s.levels);
    free(s.names);
    return rc;
}

int cmd_export(int argc, char **argv)
{
    static const struct option opts[] = {
        {"minecraft", no_argument, 0, 'm'}, {"out", required_argument, 0, 'o'},   {"scale", required_argument, 0, 'k'},
        {"blocks", required_argument, 0, 'b'}, {"name", required_argument, 0, 'n'}, {"scenario", required_argument, 0, 's'},
        {"target", required_argument, 0, 't'}, {"node", required_argument, 0, 'd'}, {"force", no_argument, 0, 'f'},
        {"help", no_argument, 0, 'h'},      {0, 0, 0, 0}};
    int minecraft = 0, force = 0, c;
    long scale = MC_DEFAULT_SCALE, number = -1, node = -1;
    const char *out = NULL, *blocks = NULL, *ns = "pcgrllm", *target_text = NULL;
    optind = 1;
    while ((c = getopt_full(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'm': minecraft = 1; break;
        case 'o': out = optarg; break;
        case 'b': blocks = optarg; break;
        case 'n': ns = optarg; break;
        case 't': target_text = optarg; break;
        case 'f': force = 1; break;
        case 'k':
            if (parse_int(optarg, 1, MC_SCALE_MAX, &scale))
                return die_msg("export: --scale must be a whole number 1..%d", MC_SCALE_MAX), 2;
            break;
        case 's':
            if (parse_int(optarg, 1, eval_n_scenarios(), &number))
                return die_msg("export: --scenario must be one of 1..%d", eval_n_scenarios()), 2;
            break;
        case 'd':
            if (parse_int(optarg, 0, 1000000, &node)) return die_msg("export: --node must be a node id"), 2;
            break;
        case 'h': export_usage(stdout); return 0;
        default: export_usage(stderr); return 2;
        }
    }
    if (!minecraft) return die_msg("export: say the format: --minecraft (the only one so far; pcgrllm export --help)"), 2;
    if (!out) return die_msg("export: --out DIR is required (where NS.zip and the .nbt files go)"), 2;
    if (optind >= argc) return die_msg("export: no levels given (level files, directories or a run directory)"), 2;
    char safe[NAME_MAX_LEN];
    mc_resource_name(ns, safe, sizeof safe);
    if (strcmp(safe, ns) || strlen(ns) >= NAME_MAX_LEN - 1)
        return die_msg("export: --name '%s' must be lower-case letters, digits, '_', '-' or '.' (e.g. %s)", ns, safe), 2;
    if (number > 0 && target_text) return die_msg("export: give --scenario or --target, not both"), 2;
    eval_scenario_t custom;
    const eval_scenario_t *chosen = number > 0 ? eval_scenario((int)number) : NULL;
    if (target_text) {
        target_t t;
        char why[512];
        int rc = target_from_json(target_text, &t, why, sizeof why);
        if (rc == STORY_OK && target_validate(&t, why, sizeof why) != 0) rc = STORY_INVALID;
        if (rc != STORY_OK) return die_msg("export: --target: %s", why), 2;
        target_to_scenario(&t, "", &custom);
        chosen = &custom;
    }
    return export_run(argv + optind, argc - optind, out, blocks, ns, (int)scale, chosen, (int)node, force);
}
