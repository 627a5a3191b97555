/* pcgrllm assess: recorded plays judged on the twelve experience
 * dimensions and an overall rating (docs/prefer.md#assess). */
#include "commands.h"
#include "judge_offline.h"
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
            "usage: pcgrllm assess --judge offline [--persona P] [--repeats R] [--seed S] TRAJECTORY...\n"
            "  Rates each recorded play (pcgrllm play's .jsonl files) on the twelve experience\n"
            "  dimensions (1-5, each with an explanation from the play) and gives an overall\n"
            "  rating (1-10, judged apart from the dimensions), the median of R repeats; one JSON\n"
            "  object a line on standard output (docs/prefer.md).\n"
            "  --judge offline  the rule-based judge: dimension scores from measurable proxies of the\n"
            "                   play, ratings from synthetic personas (a planted linear function of the\n"
            "                   dimensions plus seeded noise); not a model's or a person's view\n"
            "  --persona P      rate as persona P (prompts/prefer/personas/P.txt); without it a\n"
            "                   neutral rating\n"
            "  --repeats R      ratings per play, their median reported (1..9, default 3)\n"
            "  --seed S         the synthetic personas' noise (default 0)\n");
}

typedef struct {
    int persona, repeats;
    unsigned seed;
    const char *persona_name;
} assess_opts;

/* --persona names a file under prompts/prefer/personas/. */
static int persona_ok(const char *name, int *index)
{
    size_t n = strlen(name);
    if (!n || n > 64 || strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_") != n)
        return die_msg("assess: --persona must be a plain name (lower case, digits, _)"), 2;
    char dir[PATH_MAX], path[PATH_MAX + 128], err[PATH_MAX + 200];
    if (prompts_dir(dir, sizeof dir, err, sizeof err)) return die_msg("assess: %s", err), 1;
    snprintf(path, sizeof path, "%s/prefer/personas/%s.txt", dir, name);
    if (!path_is_file(path)) return die_msg("assess: no persona '%s' (%s does not exist)", name, path), 2;
    *index = persona_index(name);
    if (*index < 0) {
        die_msg("assess: the offline judge has synthetic preferences only for its five personas, not '%s'", name);
        return 2;
    }
    return -1;
}

static int parse_assess_flags(int argc, char **argv, assess_opts *o)
{
    static const struct option opts[] = {{"judge", required_argument, 0, 'j'},  {"persona", required_argument, 0, 'p'},
                                         {"repeats", required_argument, 0, 'r'}, {"seed", required_argument, 0, 's'},
                                         {"help", no_argument, 0, 'h'},          {0, 0, 0, 0}};
    int c, judge = 0;
    long v;
    optind = 1;
    while ((c = getopt_full(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'j':
            if (strcmp(optarg, "offline")) return die_msg("assess: --judge must be offline"), 2;
            judge = 1;
            break;
        case 'p': o->persona_name = optarg; break;
        case 'r':
            if (parse_int(optarg, 1, 9, &v)) return die_msg("assess: --repeats must be an integer in 1..9"), 2;
            o->repeats = (int)v;
            break;
        case 's':
            if (parse_int(optarg, 0, 4294967295L, &v)) return die_msg("assess: --seed must be in 0..4294967295"), 2;
            o->seed = (unsigned)v;
            break;
        case 'h': assess_usage(stdout); return 0;
        default: assess_usage(stderr); return 2;
        }
    }
    if (!judge) return die_msg("assess: --judge offline is required (pcgrllm assess --help)"), 2;
    if (optind >= argc) return die_msg("assess: no trajectories given (pcgrllm play writes them)"), 2;
    int rc = o->persona_name ? persona_ok(o->persona_name, &o->persona) : -1;
    return rc;
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

static json_t *assessment(const char *path, const play_features *f, const assess_opts *o)
{
    int x[PREFER_N_DIMS], ratings[9];
    char why[PREFER_N_DIMS][JUDGE_WHY_LEN];
    judge_offline_dims(f, x, why);
    json_t *dims = json_object();
    for (int j = 0; j < PREFER_N_DIMS; j++)
        json_object_set_new(dims, dim_id(j), json_pack("{s:i, s:s}", "score", x[j], "why", why[j]));
    json_t *all = json_array();
    for (int r = 0; r < o->repeats; r++) {
        ratings[r] = judge_offline_overall(f, o->persona, o->seed, r);
        json_array_append_new(all, json_integer(ratings[r]));
    }
    qsort(ratings, (size_t)o->repeats, sizeof *ratings, cmp_int);
    return json_pack("{s:s, s:s, s:s, s:s?, s:o, s:i, s:o, s:b}", "trajectory", path, "level", f->level, "judge",
                     "offline (rule-based)", "persona", o->persona_name, "dimensions", dims, "overall",
                     ratings[o->repeats / 2], "ratings", all, "complete", 1);
}

int cmd_assess(int argc, char **argv)
{
    assess_opts o = {-1, 3, 0, NULL};
    int rc = parse_assess_flags(argc, argv, &o);
    if (rc >= 0) return rc;
    json_t *defs;
    char err[1600];
    if (!(defs = dim_load(err, sizeof err))) return die_msg("assess: %s", err), 1;
    json_decref(defs); /* the offline judge needs only the ids; a model judge is shown the file */
    for (int i = optind; i < argc; i++) {
        play_features f;
        if (traj_read(argv[i], &f, err, sizeof err)) return die_msg("assess: %s", err), 1;
        json_t *a = assessment(argv[i], &f, &o);
        char *s = json_dumps(a, JSON_COMPACT | JSON_PRESERVE_ORDER);
        json_decref(a);
        if (!s) return die_msg("assess: out of memory"), 1;
        puts(s);
        free(s);
    }
    return 0;
}
