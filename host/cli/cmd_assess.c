/* pcgrllm assess: recorded plays judged on the twelve experience
 * dimensions and an overall rating (docs/prefer.md#assess). */
#include "commands.h"
#include "judge_model.h"
#include "judge_offline.h"
#include "play.h"
#include "prompts.h"
#include "trajectory.h"
#include "util.h"
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void assess_usage(FILE *f)
{
    fprintf(f,
            "usage: pcgrllm assess --judge offline|openai [--persona P] [--repeats R] [--seed S]\n"
            "                      [--max-steps N] [llm flags] TRAJECTORY...\n"
            "  Rates each recorded play (pcgrllm play's .jsonl files) on the twelve experience\n"
            "  dimensions (1-5, each with an explanation from the play) and gives an overall\n"
            "  rating (1-10, judged apart from the dimensions), the median of R repeats; one JSON\n"
            "  object a line on standard output (docs/prefer.md).\n"
            "  --judge offline  the rule-based judge: dimension scores from measurable proxies of the\n"
            "                   play, ratings from synthetic personas (a planted linear function of the\n"
            "                   dimensions plus seeded noise); not a model's or a person's view\n"
            "  --judge openai   a language model (llm flags below): the dimensions in one call and\n"
            "                   the rating in another that never sees them, per repeat; a malformed\n"
            "                   answer is recorded as incomplete, never filled in\n"
            "  --max-steps N    openai: steps of the play shown to the model (default 300)\n"
            "  --persona P      rate as persona P (prompts/prefer/personas/P.txt); without it a\n"
            "                   neutral rating\n"
            "  --repeats R      ratings per play, their median reported (1..9, default 3)\n"
            "  --seed S         the synthetic personas' noise (default 0)\n"
            "%s\n",
            llm_flags_help());
}

typedef struct {
    int persona, repeats, model, max_steps;
    unsigned seed;
    const char *persona_name;
    char *persona_text; /* the persona's file, for a model judge */
    llm_config llm;
} assess_opts;

/* --persona names a file under prompts/prefer/personas/; the offline
 * judge knows only its five. */
static int persona_ok(assess_opts *o)
{
    char err[PATH_MAX + 300];
    int usage;
    if (!(o->persona_text = persona_load(o->persona_name, &usage, err, sizeof err)))
        return die_msg("assess: %s", err), usage ? 2 : 1;
    o->persona = persona_index(o->persona_name);
    if (!o->model && o->persona < 0) {
        die_msg("assess: the offline judge has synthetic preferences only for its five personas, not '%s'",
                o->persona_name);
        return 2;
    }
    return -1;
}

static struct option assess_opts_table[48];

static const struct option *assess_options(void)
{
    static const struct option own[] = {{"judge", required_argument, 0, 'j'},  {"persona", required_argument, 0, 'p'},
                                        {"repeats", required_argument, 0, 'r'}, {"seed", required_argument, 0, 's'},
                                        {"max-steps", required_argument, 0, 'm'}, {"help", no_argument, 0, 'h'}};
    llm_options_table(own, sizeof own / sizeof own[0], 'L', assess_opts_table, sizeof assess_opts_table / sizeof assess_opts_table[0]);
    return assess_opts_table;
}

/* One flag; -1 to go on, else the exit status. */
static int assess_flag(assess_opts *o, int c, const char *name, int *judge)
{
    long v;
    char err[600], flag[80];
    switch (c) {
    case 'j':
        if (strcmp(optarg, "offline") && strcmp(optarg, "openai"))
            return die_msg("assess: --judge must be offline or openai"), 2;
        o->model = !strcmp(optarg, "openai");
        *judge = 1;
        return -1;
    case 'p': o->persona_name = optarg; return -1;
    case 'r':
        if (parse_int(optarg, 1, JUDGE_MAX_REPEATS, &v))
            return die_msg("assess: --repeats must be an integer in 1..%d", JUDGE_MAX_REPEATS), 2;
        o->repeats = (int)v;
        return -1;
    case 's':
        if (parse_int(optarg, 0, 4294967295L, &v)) return die_msg("assess: --seed must be in 0..4294967295"), 2;
        o->seed = (unsigned)v;
        return -1;
    case 'm':
        if (parse_int(optarg, 1, 100000, &v)) return die_msg("assess: --max-steps must be an integer in 1..100000"), 2;
        o->max_steps = (int)v;
        return -1;
    case 'L':
        snprintf(flag, sizeof flag, "--%s", name);
        if (llm_config_flag(&o->llm, flag, optarg, err, sizeof err) < 0) return die_msg("assess: %s", err), 2;
        return -1;
    case 'h': assess_usage(stdout); return 0;
    default: assess_usage(stderr); return 2;
    }
}

static int parse_assess_flags(int argc, char **argv, assess_opts *o)
{
    const struct option *opts = assess_options();
    int c, idx = 0, judge = 0, rc;
    optind = 1;
    while ((c = getopt_full(argc, argv, "", opts, &idx)) != -1)
        if ((rc = assess_flag(o, c, opts[idx].name, &judge)) >= 0) return rc;
    if (!judge) return die_msg("assess: --judge offline|openai is required (pcgrllm assess --help)"), 2;
    if (optind >= argc) return die_msg("assess: no trajectories given (pcgrllm play writes them)"), 2;
    return o->persona_name ? persona_ok(o) : -1;
}


static json_t *offline_assessment(const char *path, const play_features *f, const assess_opts *o)
{
    int x[PREFER_N_DIMS], ratings[JUDGE_MAX_REPEATS];
    char why[PREFER_N_DIMS][JUDGE_WHY_LEN];
    judge_offline_dims(f, x, why);
    json_t *dims = json_object();
    for (int j = 0; j < PREFER_N_DIMS; j++)
        json_object_set_new(dims, dim_id(j), json_pack("{s:i, s:s}", "score", x[j], "why", why[j]));
    int overall = judge_offline_rating(f, o->persona, o->seed, o->repeats, ratings);
    json_t *all = json_array();
    for (int r = 0; r < o->repeats; r++) json_array_append_new(all, json_integer(ratings[r]));
    return json_pack("{s:s, s:s, s:s, s:s?, s:o, s:i, s:o, s:b}", "trajectory", path, "level", f->level, "judge",
                     "offline (rule-based)", "persona", o->persona_name, "dimensions", dims, "overall",
                     overall, "ratings", all, "complete", 1);
}

/* The model's answers as recorded: a dimension no repeat answered is null. */
static json_t *model_json(const char *path, const play_features *f, const assess_opts *o, const judge_result *r)
{
    json_t *dims = json_object(), *all = json_array();
    for (int j = 0; j < PREFER_N_DIMS; j++)
        json_object_set_new(dims, dim_id(j),
                            r->answers[j] ? json_pack("{s:f, s:s, s:i}", "score", r->score[j], "why", r->why[j],
                                                      "answers", r->answers[j])
                                          : json_pack("{s:n, s:i}", "score", "answers", 0));
    for (int k = 0; k < r->n_ratings; k++) json_array_append_new(all, json_integer(r->ratings[k]));
    json_t *a = json_pack("{s:s, s:s, s:s, s:s?, s:o, s:o, s:o, s:b, s:i, s:I}", "trajectory", path, "level",
                          f->level, "judge", o->llm.model, "persona", o->persona_name, "dimensions", dims, "overall",
                          r->n_ratings ? json_real(r->rating) : json_null(), "ratings", all, "complete", r->complete,
                          "calls", r->calls, "completion_tokens", (json_int_t)r->completion_tokens);
    if (r->problem[0]) json_object_set_new(a, "problem", json_string(r->problem));
    return a;
}

static json_t *model_assessment(const char *path, const play_features *f, const assess_opts *o, const json_t *defs,
                                char *err, int errlen)
{
    char *play = traj_render(path, o->max_steps, err, errlen);
    if (!play) return NULL;
    char *neutral = o->persona_text ? NULL : prompt_load("prefer", "neutral_player", err, errlen);
    judge_result r;
    int rc = o->persona_text || neutral ? judge_model_assess(&o->llm, defs, o->persona_text ? o->persona_text : neutral,
                                                             play, o->repeats, &r, err, errlen)
                                        : -1;
    free(play);
    free(neutral);
    return rc ? NULL : model_json(path, f, o, &r);
}

/* The level played, so that a benchmark can score it without the file. */
static void add_map(json_t *a, const play_features *f)
{
    level_t l;
    if (traj_level(f, &l)) json_object_set_new(a, "map", play_map_json(&l));
}

static int print_line(json_t *a)
{
    char *s = json_dumps(a, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(a);
    if (!s) return -1;
    puts(s);
    fflush(stdout);
    free(s);
    return 0;
}

int cmd_assess(int argc, char **argv)
{
    assess_opts o = {.persona = -1, .repeats = 3, .max_steps = 300};
    llm_config_defaults(&o.llm);
    int rc = parse_assess_flags(argc, argv, &o);
    if (rc >= 0) {
        free(o.persona_text);
        return rc;
    }
    char err[1600];
    json_t *defs = dim_load(err, sizeof err);
    if (!defs) {
        die_msg("assess: %s", err);
        rc = 1;
    }
    for (int i = optind; i < argc && rc < 0; i++) {
        play_features f;
        json_t *a = NULL;
        if (traj_read(argv[i], &f, err, sizeof err) == 0)
            a = o.model ? model_assessment(argv[i], &f, &o, defs, err, sizeof err) : offline_assessment(argv[i], &f, &o);
        if (a) add_map(a, &f);
        if (!a || print_line(a)) {
            die_msg("assess: %s", a ? "out of memory" : err);
            rc = 1;
        }
    }
    json_decref(defs);
    free(o.persona_text);
    return rc < 0 ? 0 : rc;
}
