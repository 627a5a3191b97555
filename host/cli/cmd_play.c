/* pcgrllm play: recorded playthroughs of level files (docs/prefer.md#play). */
#include "commands.h"
#include "levelio.h"
#include "dimensions.h"
#include "llm.h"
#include "play.h"
#include "play_model.h"
#include "prompts.h"
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
            "usage: pcgrllm play --player route|explorer|llm [--seed S] [--curiosity C] [--max-steps N]\n"
            "                    [--persona P] [--max-calls N] [llm flags] [--out DIR] LEVEL|DIR...\n"
            "  Plays each level from the PLAYER to the KEY and on to the DOOR and records every\n"
            "  step as JSON lines: a header, one line per position (the 5x5 window seen, legal\n"
            "  moves, the move taken, events: enemy in view, key, door, dead end, backtrack) and\n"
            "  a closing summary.  A level without a route ends with the reason, not an error.\n"
            "  --player route     walks the evaluator's shortest solution route\n"
            "  --player explorer  explores first (seeded), then heads for what it has seen\n"
            "  --player llm       follows corridors, turns back at dead ends, and asks a language model\n"
            "                     which way at each junction (prompts/prefer/player_move.txt), as\n"
            "                     --persona P if given; past --max-calls N per play (40) or on an answer\n"
            "                     with no legal move, the explorer's rule moves, and the record says so\n"
            "  --seed S           the explorer's choices (default 0)\n"
            "  --curiosity C      explorer: share 0..1 of its reachable cells to visit before it\n"
            "                     heads for the key and the door (default 0.5)\n"
            "  --max-steps N      stop a play after N steps (default: four times the cells)\n"
            "  --out DIR          one DIR/NAME.jsonl per level instead of standard output\n"
            "%s\n",
            llm_flags_help());
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

typedef struct {
    play_opts o;
    const char *out, *persona;
    play_model model;
    llm_config llm;
} play_args;

static struct option play_opts_table[48];

static const struct option *play_options(void)
{
    static const struct option own[] = {{"player", required_argument, 0, 'p'},    {"seed", required_argument, 0, 's'},
                                        {"curiosity", required_argument, 0, 'c'}, {"max-steps", required_argument, 0, 'm'},
                                        {"out", required_argument, 0, 'o'},       {"persona", required_argument, 0, 'P'},
                                        {"max-calls", required_argument, 0, 'C'}, {"help", no_argument, 0, 'h'}};
    llm_options_table(own, sizeof own / sizeof own[0], 'L', play_opts_table, sizeof play_opts_table / sizeof play_opts_table[0]);
    return play_opts_table;
}

/* One flag; -1 to go on, else the exit status. */
static int play_flag(play_args *a, int c, const char *name, int *have_player)
{
    long v;
    char err[600], flag[80];
    switch (c) {
    case 'p':
        if (!strcmp(optarg, "route")) a->o.player = PLAY_ROUTE;
        else if (!strcmp(optarg, "explorer")) a->o.player = PLAY_EXPLORER;
        else if (!strcmp(optarg, "llm")) a->o.player = PLAY_CHOOSER;
        else return die_msg("play: --player must be route, explorer or llm"), 2;
        *have_player = 1;
        return -1;
    case 's':
        if (parse_int(optarg, 0, 4294967295L, &v)) return die_msg("play: --seed must be an integer in 0..4294967295"), 2;
        a->o.seed = (unsigned)v;
        return -1;
    case 'c':
        if (parse_double(optarg, 0, 1, &a->o.curiosity)) return die_msg("play: --curiosity must be in [0, 1]"), 2;
        return -1;
    case 'm':
        if (parse_int(optarg, 1, 1000000, &v)) return die_msg("play: --max-steps must be an integer in 1..1000000"), 2;
        a->o.max_steps = (int)v;
        return -1;
    case 'C':
        if (parse_int(optarg, 0, 100000, &v)) return die_msg("play: --max-calls must be an integer in 0..100000"), 2;
        a->model.max_calls = v;
        return -1;
    case 'o': a->out = optarg; return -1;
    case 'P': a->persona = optarg; return -1;
    case 'L':
        snprintf(flag, sizeof flag, "--%s", name);
        if (llm_config_flag(&a->llm, flag, optarg, err, sizeof err) < 0) return die_msg("play: %s", err), 2;
        return -1;
    case 'h': play_usage(stdout); return 0;
    default: play_usage(stderr); return 2;
    }
}

/* The model player's persona and client.  -1 to go on, else the status. */
static int setup_model_player(play_args *a)
{
    char err[PATH_MAX + 300];
    int usage;
    const char *text_name = a->persona ? a->persona : NULL;
    char *text = text_name ? persona_load(text_name, &usage, err, sizeof err) : prompt_load("prefer", "neutral_player", err, sizeof err);
    if (!text) return die_msg("play: %s", err), text_name && usage ? 2 : 1;
    a->model.persona_text = text;
    a->model.llm = &a->llm;
    a->o.chooser = play_model_choose;
    a->o.chooser_ctx = &a->model;
    a->o.chooser_name = "llm";
    return -1;
}

static int parse_play_flags(int argc, char **argv, play_args *a)
{
    const struct option *opts = play_options();
    int c, idx = 0, have_player = 0, rc;
    optind = 1;
    while ((c = getopt_full(argc, argv, "", opts, &idx)) != -1)
        if ((rc = play_flag(a, c, opts[idx].name, &have_player)) >= 0) return rc;
    if (!have_player) return die_msg("play: --player route|explorer|llm is required (pcgrllm play --help)"), 2;
    if (optind >= argc) return die_msg("play: no levels given (level files or directories)"), 2;
    if (a->persona && a->o.player != PLAY_CHOOSER) return die_msg("play: --persona goes with --player llm"), 2;
    return a->o.player == PLAY_CHOOSER ? setup_model_player(a) : -1;
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
    static play_args a;
    memset(&a, 0, sizeof a);
    play_opts_default(&a.o);
    llm_config_defaults(&a.llm);
    a.model.max_calls = 40;
    int rc = parse_play_flags(argc, argv, &a);
    if (rc >= 0) return rc;
    rc = 0;
    const play_opts o = a.o;
    const char *out = a.out;
    char err[1200];
    if (out && make_dirs_msg(out, err, sizeof err)) return die_msg("play: %s", err), 1;
    int n;
    char **files = level_paths(argv + optind, argc - optind, &n, err, sizeof err);
    if (!files) return die_msg("play: %s", err), 1;
    for (int i = 0; i < n; i++) {
        a.model.calls = 0; /* the budget is per play */
        if (!rc) rc = play_one(files[i], &o, out);
        if (!rc && a.model.server_failed) {
            die_msg("play: %s: the model server failed (%s); the record is complete, its junctions after that moved "
                    "by the explorer's rule", files[i], a.model.error);
            rc = 4;
        }
        free(files[i]);
    }
    free(files);
    free((char *)a.model.persona_text);
    return rc;
}
