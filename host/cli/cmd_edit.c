/* pcgrllm edit: the execution harness's editing loop on one level
 * (docs/harness.md, "The editing loop"): flags in, edit_episode out. */
#include "commands.h"
#include "env.h"
#include "edit.h"
#include "levelio.h"
#include "util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void edit_usage(FILE *f)
{
    fprintf(f,
            "usage: pcgrllm edit (--from LEVEL | --seed S) (--target JSON | --story TEXT)\n"
            "                    --llm offline|noisy:P|openai [llm flags] --out DIR\n"
            "                    [--steps N] [--no-recovery] [--no-feedback] [--history K] [--no-guidance]\n"
            "                    [--no-accept] [--no-early-stop] [--resume]\n\n"
            "Edit a level toward a path-length target through tool calls: each step the editor\n"
            "replies with a JSON list of calls, which the harness checks, runs on a copy of the\n"
            "saved level and measures; the copy replaces the saved level only when it is\n"
            "accepted.  Records: DIR/requests.jsonl, replies.jsonl, steps.jsonl, level.txt,\n"
            "state.json.\n\n"
            "  --from LEVEL        the start level (a level file)\n"
            "  --seed S            the start level: the generator's reset map for seed S (16x16)\n"
            "  --target JSON       e.g. '{\"kind\":\"pathlength\",\"player_key\":20,\"key_door\":14,\n"
            "                      \"tolerance\":0,\"enemy_count\":3}' or '{\"kind\":\"pathlength\",\"length\":30}'\n"
            "  --story TEXT        the target read from a story (offline and noisy: the keyword\n"
            "                      reader; openai: the model)\n"
            "  --llm EDITOR        offline: the rule-based editor; noisy:P: the rule-based editor\n"
            "                      with each call replaced by a random one with probability P\n"
            "                      (a stand-in for a weak model); openai: the model server\n"
            "  --out DIR           the run directory\n"
            "  --steps N           editor replies asked for, at most (default 12)\n"
            "  --max-calls N       requests to the model server, at most (retries included)\n"
            "  --token-budget N    model tokens in all, at most\n"
            "  --time S            wall seconds for the episode (also each model call's deadline)\n"
            "  --editor-seed N     the noisy editor's draws and the cave and maze tools' seeds\n"
            "  --no-recovery       an unreadable reply is asked once more, with the error, instead\n"
            "                      of keeping the complete calls of a cut list\n"
            "  --no-feedback       the request does not carry the measured legs and validity\n"
            "  --history K         the last K steps and their outcomes in the request (default 3; 0 none)\n"
            "  --no-guidance       no map of the route and what a wall on it would do\n"
            "  --no-accept         the open loop: every executable edit is saved\n"
            "  --no-early-stop     go on after a perfect match\n"
            "  --resume            continue DIR's run: the steps done are not asked again\n"
            "%s\n"
            "Exit status: 0 a perfect match, 1 the steps or budgets ran out first (or an error),\n"
            "2 bad usage, 3 a target the level's map cannot hold (nothing asked), 4 the model\n"
            "server failed.\n",
            llm_flags_help());
}

typedef struct {
    const char *from, *target, *story, *llm, *out;
    long seed;
    int have_seed;
    edit_run run;
    edit_editor editor;
    llm_config llm_cfg;
} edit_args;

static int bad(const char *fmt, const char *a)
{
    char line[800];
    snprintf(line, sizeof line, fmt, a);
    die_msg("edit: %s (pcgrllm edit --help)", line);
    return EXIT_USAGE;
}

/* The switches without a value.  1 when flag is one. */
static int switch_flag(edit_args *a, const char *flag)
{
    edit_switches *w = &a->run.sw;
    int *slot = !strcmp(flag, "--no-recovery")   ? &w->recovery
                : !strcmp(flag, "--no-feedback") ? &w->feedback
                : !strcmp(flag, "--no-guidance") ? &w->guidance
                : !strcmp(flag, "--no-accept")   ? &w->accept
                : !strcmp(flag, "--no-early-stop") ? &w->early_stop
                                                   : NULL;
    if (slot) *slot = 0;
    if (!strcmp(flag, "--resume")) a->run.resume = 1;
    return slot || !strcmp(flag, "--resume");
}

/* One --flag VALUE.  -1 to go on, else the exit status. */
static int value_flag(edit_args *a, const char *flag, const char *v)
{
    const char **text[] = {&a->from, &a->target, &a->story, &a->llm, &a->out};
    const char *names[] = {"--from", "--target", "--story", "--llm", "--out"};
    for (int i = 0; i < 5; i++)
        if (!strcmp(flag, names[i])) {
            *text[i] = v;
            return -1;
        }
    long n;
    double d;
    edit_budget *b = &a->run.budget;
    if (!strcmp(flag, "--seed") || !strcmp(flag, "--editor-seed")) {
        if (parse_int(v, 0, 0x7fffffffL, &n)) return bad("%s takes a non-negative integer", flag);
        if (flag[2] == 's') a->seed = n, a->have_seed = 1;
        else a->editor.seed = (uint64_t)n;
    } else if (!strcmp(flag, "--steps") || !strcmp(flag, "--history")) {
        if (parse_int(v, 0, 100000, &n)) return bad("%s takes a whole number from 0", flag);
        if (flag[2] == 's') b->steps = (int)n;
        else a->run.sw.history = (int)n;
    } else if (!strcmp(flag, "--max-calls") || !strcmp(flag, "--token-budget")) {
        if (parse_int(v, 1, 1L << 40, &n)) return bad("%s takes a positive integer", flag);
        if (flag[2] == 'm') b->max_calls = n;
        else b->max_tokens = n;
    } else if (!strcmp(flag, "--time")) {
        if (parse_double(v, 0.001, 1e7, &d)) return bad("--time takes seconds (%s)", v);
        b->max_seconds = d;
    } else {
        char err[600];
        int r = llm_config_flag(&a->llm_cfg, flag, v, err, sizeof err);
        if (r < 0) return bad("%s", err);
        if (r == 0) return bad("unknown option %s", flag);
    }
    return -1;
}

/* -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, edit_args *a)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
            edit_usage(stdout);
            return 0;
        }
        if (switch_flag(a, arg)) continue;
        if (strncmp(arg, "--", 2)) return bad("unexpected argument '%s'", arg);
        if (i + 1 >= argc) return bad("%s needs a value", arg);
        int rc = value_flag(a, arg, argv[++i]);
        if (rc >= 0) return rc;
    }
    if (!a->out) return bad("%s", "--out DIR names the run directory");
    if (!a->llm) return bad("%s", "--llm offline|noisy:P|openai chooses the editor");
    if (!a->target == !a->story) return bad("%s", "give one of --target JSON and --story TEXT");
    if (!a->run.resume && !a->from == !a->have_seed) return bad("%s", "give one of --from LEVEL and --seed S");
    uint64_t seed = a->editor.seed;
    char err[300];
    if (edit_editor_parse(a->llm, &a->editor, err, sizeof err)) return bad("%s", err);
    a->editor.seed = seed;
    if (a->editor.kind == EDITOR_OPENAI) a->editor.llm = &a->llm_cfg;
    return -1;
}

/* The start level into tiles.  0, or the exit status. */
static int start_level(const edit_args *a, level_t *l, unsigned char *tiles)
{
    if (a->from) {
        char err[600];
        if (level_read(a->from, l, tiles, err, sizeof err)) {
            die_msg("edit: %s", err);
            return EXIT_USAGE;
        }
        return 0;
    }
    *l = env_start_level((uint64_t)a->seed, PCG_DEFAULT_SIDE, PCG_DEFAULT_SIDE, tiles);
    return 0;
}

/* The target from --target or --story.  0, or the exit status. */
static int read_target(edit_args *a, target_t *t)
{
    char why[600];
    if (a->target) {
        if (target_read_json(a->target, t, why, sizeof why) == STORY_OK) return 0;
        return bad("--target: %s", why);
    }
    if (make_dirs_msg(a->out, why, sizeof why)) {
        die_msg("edit: %s", why);
        return 1;
    }
    int rc = edit_story_target(a->story, &a->editor, a->out, t, why, sizeof why);
    if (rc == STORY_OK) return 0;
    die_msg("edit: --story: %s%s", rc == STORY_REFUSED ? "refused: " : "", why);
    return rc == EDIT_STORY_SERVER ? EDIT_SERVER : rc == STORY_REFUSED ? EDIT_INFEASIBLE : 1;
}

static void summary(const edit_args *a, const target_t *t, const edit_result *r)
{
    char label[160], desc[300];
    edit_editor_label(&a->editor, label, sizeof label);
    target_describe(t, desc, sizeof desc);
    printf("edit: %s after %d step%s (%s): player -> key %d, key -> door %d, route %d; %s\n",
           r->perfect ? "a perfect match" : "no perfect match", r->steps, r->steps == 1 ? "" : "s", r->why,
           r->route_key, r->route_door, r->route, r->valid ? "valid" : "not valid");
    printf("edit: target %s; editor %s; %ld editor call%s, %ld tokens, %d recovered, %d accepted, %.1f s; "
           "the level: %s/level.txt\n",
           desc, label, r->calls, r->calls == 1 ? "" : "s", r->tokens, r->recovered, r->accepted, r->seconds, a->out);
}

int cmd_edit(int argc, char **argv)
{
    edit_args a;
    memset(&a, 0, sizeof a);
    llm_config_defaults(&a.llm_cfg);
    edit_switches_full(&a.run.sw);
    a.run.budget.steps = 12;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0) return rc;
    static unsigned char tiles[PCG_MAX_CELLS], out_tiles[PCG_MAX_CELLS];
    level_t start = {0, 0, tiles}, final;
    if (!a.run.resume && (rc = start_level(&a, &start, tiles))) return rc;
    target_t t;
    if ((rc = read_target(&a, &t))) return rc;
    a.run.start = &start;
    a.run.target = &t;
    a.run.editor = &a.editor;
    a.run.dir = a.out;
    a.run.verbose = 1;
    edit_result r;
    char err[600];
    rc = edit_episode(&a.run, &final, out_tiles, &r, err, sizeof err);
    if (rc != EDIT_OK) {
        die_msg("edit: %s", err);
        return rc;
    }
    summary(&a, &t, &r);
    return r.perfect ? 0 : 1;
}
