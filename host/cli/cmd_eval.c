/* pcgrllm eval: score level files against a scenario (docs/evaluator.md). */
#include "commands.h"
#include "eval.h"
#include "eval_json.h"
#include "level_set.h"
#include "levelio.h"
#include "target.h"
#include "util.h"
#include <getopt.h>
#include <jansson.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void eval_usage(FILE *f)
{
    fprintf(f, "usage: pcgrllm eval (--scenario N | --target JSON) [--json] LEVEL|DIR...\n"
               "  Scores level files (rows of tile ids 1-9 separated by single spaces, '#' lines\n"
               "  are comments) against scenario N and prints the fitness (mean score), the\n"
               "  per-level metrics and the diversity of the set.  A directory stands for its\n"
               "  *.txt files in name order (e.g. the output of pcgrllm generate).\n"
               "  --scenario N  the scenario (see below)\n"
               "  --target JSON any other target, e.g. '{\"kind\":\"encounter\",\"enemies\":[\"BAT\",\"SPIDER\"]}'\n"
               "                or '{\"kind\":\"keydoor\",\"gate\":\"KEY\"}'\n"
               "                or '{\"kind\":\"pathlength\",\"length\":30,\"tolerance\":3}' (scenario 0 in the output)\n"
               "                or '{\"kind\":\"pathlength\",\"player_key\":20,\"key_door\":30,\"tolerance\":0}' (two legs)\n"
               "  --json        one JSON document instead of a table\n"
               "scenarios:\n");
    for (int i = 1; i <= eval_n_scenarios(); i++) {
        const eval_scenario_t *s = eval_scenario(i);
        fprintf(f, "  %d  %s\n     %s\n", s->number, s->flow, s->story);
    }
    fprintf(f, "Rules and metrics: docs/evaluator.md\n");
}

static int print_json(const eval_scenario_t *s, char **files, const level_t *lv, const eval_level_t *per,
                      const eval_summary_t *sum)
{
    json_t *doc = eval_json_doc(s, (const char *const *)files, lv, per, sum);
    if (!doc) return die_msg("eval: out of memory"), 1;
    int rc = json_dumpf(doc, stdout, JSON_INDENT(2)) == 0 && putchar('\n') != EOF ? 0 : 1;
    json_decref(doc);
    return rc;
}

static void fmt_dist(char *buf, size_t len, int v)
{
    if (v < 0) snprintf(buf, len, "-");
    else snprintf(buf, len, "%d", v);
}

/* What the table's columns mean, under it (docs/evaluator.md has more). */
static void columns_legend(const eval_scenario_t *s)
{
    int keydoor = s->kind == EVAL_KEYDOOR;
    printf("\ncolumns: score  the level's score\n");
    printf("  sol      %s\n", keydoor ? "gates on a playable route" : "keys that give a solution (player -> key -> door)");
    printf("  play     %s\n", keydoor ? "the level is playable" : "the player reaches the door");
    if (s->kind == EVAL_ENCOUNTER) printf("  met      BAT, SCORPION, SPIDER met (within 2 cells) on some solution's route\n");
    if (keydoor) {
        printf("  p->gate, gate->door  steps, DOORs blocking; p->treasure  steps, DOORs passable\n");
    } else {
        printf("  p->door  steps from the player to the door\n");
        printf("  route    steps of the shortest solution route\n");
        if (s->kind == EVAL_PATHLENGTH)
            printf("  p->key, key->door  its two legs;  perfect  both legs (or the route) exact, enemy count met\n");
    }
    printf("  walls    share of WALL tiles;  entropy  Shannon entropy of the tile types, bits\n");
    if (s->kind != EVAL_PATHLENGTH) printf("  aspao    mean steps from the player to each objective (Word2Minecraft)\n");
    printf("  -        no such route\n");
}

static void print_table(const eval_scenario_t *s, char **files, const eval_level_t *per, const eval_summary_t *sum)
{
    int fw = 4;
    for (int i = 0; i < sum->n; i++) {
        int n = (int)strlen(files[i]);
        if (n > fw) fw = n;
    }
    if (fw > 48) fw = 48;
    if (s->number) printf("scenario %d: %s\n  %s\n", s->number, s->flow, s->story);
    else printf("custom target (scenario 0): %s\n", s->flow);
    if (s->kind == EVAL_ENCOUNTER)
        printf("  target: BAT %d, SCORPION %d, SPIDER %d\n\n%-*s  score  sol  play  met b s x  p->door  route  walls  "
               "entropy  aspao\n",
               s->enemies[0], s->enemies[1], s->enemies[2], fw, "file");
    else if (s->kind == EVAL_PATHLENGTH) {
        if (s->leg_key > 0)
            printf("  target: Player -> Key %d steps, Key -> Door %d, give or take %d", s->leg_key, s->leg_door,
                   s->tolerance);
        else printf("  target: route Player -> Key -> Door %d steps, give or take %d", s->length, s->tolerance);
        if (s->enemy_count) printf(", %d enemies", s->enemy_count);
        printf("\n\n%-*s  score  sol  play  p->door  route  p->key  key->door  perfect  walls  entropy\n", fw, "file");
    }
    else
        printf("  target: gate %s\n\n%-*s  score  sol  play  p->gate  gate->door  p->treasure  walls  entropy  aspao\n",
               tile_name(s->gate), fw, "file");
    for (int i = 0; i < sum->n; i++) {
        const eval_level_t *m = &per[i];
        char a[16], b[16], c[16];
        int n = (int)strlen(files[i]);
        const char *name = n > fw ? files[i] + n - fw : files[i];
        printf("%-*s  %5.3f  %3d  %-4s", fw, name, m->score, m->solutions, m->playable ? "yes" : "no");
        if (s->kind == EVAL_ENCOUNTER) {
            fmt_dist(a, sizeof a, m->player_door);
            fmt_dist(b, sizeof b, m->route);
            printf("        %d %d %d  %7s  %5s", m->met[0], m->met[1], m->met[2], a, b);
        } else if (s->kind == EVAL_PATHLENGTH) {
            char d[16];
            fmt_dist(a, sizeof a, m->player_door);
            fmt_dist(b, sizeof b, m->route);
            fmt_dist(c, sizeof c, m->route_key);
            fmt_dist(d, sizeof d, m->route_door);
            printf("  %7s  %5s  %6s  %9s  %-7s", a, b, c, d, m->perfect ? "yes" : "no");
        } else {
            fmt_dist(a, sizeof a, m->player_gate);
            fmt_dist(b, sizeof b, m->gate_door);
            fmt_dist(c, sizeof c, m->player_treasure);
            printf("  %7s  %10s  %11s", a, b, c);
        }
        printf("  %5.3f  %7.3f", m->wall_share, m->entropy);
        if (s->kind == EVAL_PATHLENGTH) {
            /* no objective tiles beyond key and door: the legs say it */
        } else if (m->objectives_reachable) printf("  %5.2f", m->objective_path);
        else printf("  %5s", "-");
        if (m->missing) printf("  (no %s)", tile_name(m->missing));
        putchar('\n');
    }
    columns_legend(s);
    printf("\nfitness %.4f over %d level%s\n", sum->fitness, sum->n, sum->n == 1 ? "" : "s");
    printf("playable %d/%d", sum->n_playable, sum->n);
    if (sum->n_playable) printf(", wall share on playable levels %.3f", sum->playable_wall_share);
    printf("\ndiversity %.2f cells (%.3f of the cells) mean pairwise Hamming distance\n", sum->diversity,
           sum->diversity_share);
    printf("Word2Minecraft: ");
    if (sum->n_valid) printf("ASPAO %.2f steps", sum->aspao);
    else printf("ASPAO -");
    printf(" over %d valid level%s (every objective reachable), UTR %.3f, VUTR %.3f\n", sum->n_valid,
           sum->n_valid == 1 ? "" : "s", sum->utr, sum->vutr);
}

/* The scenario of --scenario N, or --target's into *custom.  NULL after
 * the message. */
static const eval_scenario_t *eval_target(long number, const char *target_text, eval_scenario_t *custom)
{
    if (!target_text) return eval_scenario((int)number);
    char why[512];
    if (target_scenario_from_json(target_text, custom, why, sizeof why)) return die_msg("eval: --target: %s", why), NULL;
    return custom;
}

static void free_paths(char **files, int n)
{
    for (int k = 0; k < n; k++) free(files[k]);
    free(files);
}

/* JSON holds only UTF-8: with --json every file name must be.  0, or -1
 * after the message. */
static int names_are_utf8(char **files, int n)
{
    for (int i = 0; i < n; i++) {
        json_t *name = json_string(files[i]);
        if (!name) {
            die_msg("eval: file name '%s' is not valid UTF-8, which JSON needs; rename the file or drop --json",
                    files[i]);
            return -1;
        }
        json_decref(name);
    }
    return 0;
}

static void say_line(const char *line) { die_msg("%s", line); }

/* The levels of files scored against s and printed.  The exit status. */
static int score_files(const eval_scenario_t *s, char **files, int n, int json)
{
    level_t *lv = calloc((size_t)n, sizeof *lv);
    eval_level_t *per = calloc((size_t)n, sizeof *per);
    if (!lv || !per) {
        free(lv), free(per);
        return die_msg("eval: out of memory"), 1;
    }
    char err[1024];
    int bad = level_set_read(files, n, lv, say_line, err, sizeof err);
    if (bad < 0) die_msg("eval: %s", err);
    int rc = 1;
    if (!bad) {
        eval_summary_t sum;
        eval_levels(s, lv, n, per, &sum);
        if (json) rc = print_json(s, files, lv, per, &sum);
        else {
            print_table(s, files, per, &sum);
            rc = fflush(stdout) ? 1 : 0;
        }
    }
    for (int i = 0; i < n; i++) free(lv[i].t);
    free(lv), free(per);
    return rc;
}

int cmd_eval(int argc, char **argv)
{
    static const struct option opts[] = {{"scenario", required_argument, 0, 's'},
                                         {"json", no_argument, 0, 'j'},
                                         {"target", required_argument, 0, 't'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    long number = -1;
    int json = 0, c;
    const char *target_text = NULL;
    optind = 1;
    while ((c = getopt_full(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 's':
            if (parse_int(optarg, 1, eval_n_scenarios(), &number))
                return die_msg("eval: --scenario must be one of 1..%d (pcgrllm eval --help lists them)",
                               eval_n_scenarios()),
                       2;
            break;
        case 'j': json = 1; break;
        case 't': target_text = optarg; break;
        case 'h': eval_usage(stdout); return 0;
        default: eval_usage(stderr); return 2;
        }
    }
    if ((number < 0) == !target_text)
        return die_msg("eval: give exactly one of --scenario N and --target JSON (pcgrllm eval --help)"), 2;
    int n = argc - optind;
    if (n <= 0) return die_msg("eval: no level files given (usage: pcgrllm eval --scenario N LEVEL...)"), 2;
    eval_scenario_t custom;
    const eval_scenario_t *s = eval_target(number, target_text, &custom);
    if (!s) return 2;
    char err[1024];
    char **files = level_paths(argv + optind, n, &n, err, sizeof err);
    if (!files) return die_msg("eval: %s", err), 1;
    if (n < 1 || n > 10000000) { /* cannot happen: at least one argument, and memory bounds the rest */
        free_paths(files, n);
        return die_msg("eval: no level files"), 1;
    }
    if (json && names_are_utf8(files, n)) return free_paths(files, n), 2;
    int rc = score_files(s, files, n, json);
    free_paths(files, n);
    return rc;
}
