/* pcgrllm play: recorded playthroughs of level files (docs/prefer.md#play). */
#include "commands.h"
#include "levelio.h"
#include "play.h"
#include "util.h"
#include <getopt.h>
#include <limits.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void play_usage(FILE *f)
{
    fprintf(f,
            "usage: pcgrllm play --player route|explorer [--seed S] [--curiosity C] [--max-steps N]\n"
            "                    [--out DIR] LEVEL|DIR...\n"
            "  Plays each level from the PLAYER to the KEY and on to the DOOR and records every\n"
            "  step as JSON lines: a header, one line per position (the 5x5 window seen, legal\n"
            "  moves, the move taken, events: enemy in view, key, door, dead end, backtrack) and\n"
            "  a closing summary.  A level without a route ends with the reason, not an error.\n"
            "  --player route     walks the evaluator's shortest solution route\n"
            "  --player explorer  explores first (seeded), then heads for what it has seen\n"
            "  --seed S           the explorer's choices (default 0)\n"
            "  --curiosity C      explorer: share 0..1 of its reachable cells to visit before it\n"
            "                     heads for the key and the door (default 0.5)\n"
            "  --max-steps N      stop a play after N steps (default: four times the cells)\n"
            "  --out DIR          one DIR/NAME.jsonl per level instead of standard output\n");
}

/* The record of one level as text. */
static char *record_text(const char *name, const level_t *l, const play_opts *o, play_summary *sum)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return NULL;
    int rc = play_write_record(f, name, l, o, sum);
    if (fclose(f) || rc) {
        free(text);
        return NULL;
    }
    return text;
}

static int parse_play_flags(int argc, char **argv, play_opts *o, const char **out)
{
    static const struct option opts[] = {{"player", required_argument, 0, 'p'}, {"seed", required_argument, 0, 's'},
                                         {"curiosity", required_argument, 0, 'c'},
                                         {"max-steps", required_argument, 0, 'm'}, {"out", required_argument, 0, 'o'},
                                         {"help", no_argument, 0, 'h'},           {0, 0, 0, 0}};
    int c, have_player = 0;
    long v;
    optind = 1;
    while ((c = getopt_full(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'p':
            if (!strcmp(optarg, "route")) o->player = PLAY_ROUTE;
            else if (!strcmp(optarg, "explorer")) o->player = PLAY_EXPLORER;
            else return die_msg("play: --player must be route or explorer"), 2;
            have_player = 1;
            break;
        case 's':
            if (parse_int(optarg, 0, 4294967295L, &v)) return die_msg("play: --seed must be an integer in 0..4294967295"), 2;
            o->seed = (unsigned)v;
            break;
        case 'c':
            if (parse_double(optarg, 0, 1, &o->curiosity)) return die_msg("play: --curiosity must be in [0, 1]"), 2;
            break;
        case 'm':
            if (parse_int(optarg, 1, 1000000, &v)) return die_msg("play: --max-steps must be an integer in 1..1000000"), 2;
            o->max_steps = (int)v;
            break;
        case 'o': *out = optarg; break;
        case 'h': play_usage(stdout); return 0;
        default: play_usage(stderr); return 2;
        }
    }
    if (!have_player) return die_msg("play: --player route|explorer is required (pcgrllm play --help)"), 2;
    if (optind >= argc) return die_msg("play: no levels given (level files or directories)"), 2;
    return -1;
}

/* The file's base name without .txt. */
static void stem_of(const char *path, char *stem, size_t len)
{
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    size_t n = strlen(base);
    if (n > 4 && !strcmp(base + n - 4, ".txt")) n -= 4;
    snprintf(stem, len, "%.*s", (int)n, base);
}

static int play_one(const char *path, const play_opts *o, const char *out)
{
    unsigned char tiles[PCG_MAX_CELLS];
    level_t l;
    char err[600], stem[256], dest[PATH_MAX];
    if (level_read(path, &l, tiles, err, sizeof err)) return die_msg("play: %s", err), 1;
    stem_of(path, stem, sizeof stem);
    play_summary sum;
    char *text = record_text(stem, &l, o, &sum);
    if (!text) return die_msg("play: out of memory"), 1;
    int rc = 0;
    if (!out) {
        fputs(text, stdout);
    } else {
        snprintf(dest, sizeof dest, "%s/%s.jsonl", out, stem);
        if (write_file_atomic_msg(dest, text, strlen(text), err, sizeof err)) {
            die_msg("play: %s", err);
            rc = 1;
        } else
            printf("%s: %s after %d steps (%d backtracks, %d dead ends, %d enemies seen) -> %s\n", stem,
                   play_end_name(sum.end), sum.steps, sum.backtracks, sum.dead_ends, sum.enemies_seen, dest);
    }
    free(text);
    return rc;
}

int cmd_play(int argc, char **argv)
{
    play_opts o;
    play_opts_default(&o);
    const char *out = NULL;
    int rc = parse_play_flags(argc, argv, &o, &out);
    if (rc >= 0) return rc;
    rc = 0;
    char err[1200];
    if (out && make_dirs_msg(out, err, sizeof err)) return die_msg("play: %s", err), 1;
    int n;
    char **files = level_paths(argv + optind, argc - optind, &n, err, sizeof err);
    if (!files) return die_msg("play: %s", err), 1;
    for (int i = 0; i < n; i++) {
        if (!rc) rc = play_one(files[i], &o, out);
        free(files[i]);
    }
    free(files);
    return rc;
}
