/* pcgrllm prefer refine: a run's generator refined for a persona
 * (docs/prefer.md#refinement). */
#include "commands.h"
#include "dimensions.h"
#include "prefer_fit.h"
#include "refine.h"
#include "util.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void refine_usage(FILE *f)
{
    fprintf(f,
            "usage: pcgrllm prefer refine --persona P [--node N] [--llm offline|openai] [--judge offline|openai]\n"
            "                             [--targets K] [--repeats R] [--seed S] [--lambda L] [--no-feedback]\n"
            "                             [--restart] [--yes]\n"
            "                             [llm flags] RUN ASSESSMENTS.jsonl...\n"
            "  Refines node N of RUN (default: its best) for persona P: the node's levels are played\n"
            "  (explorer) and judged under P; P's ridge model, fitted on the assessments, picks up\n"
            "  to K (3) dimensions; for each the author revises the reward (contracts on small\n"
            "  level pairs checked before training), the revision is trained and generated from as\n"
            "  the run trains its nodes, played and judged, and kept only if the dimension moved\n"
            "  the intended way, the predicted preference rose and the story's fitness did not\n"
            "  fall; otherwise one feedback round on the best rejected candidate.  Records in\n"
            "  RUN/prefer/P/ (refine.json); an interrupted refinement resumes, reusing a candidate's\n"
            "  training only for the same revision; --restart moves an earlier one aside to\n"
            "  RUN/prefer/P.N and starts over (a finished one is refused without it).  Each\n"
            "  candidate trains as the run trained (its config.json); --yes goes on when that is\n"
            "  projected at over 3 hours on the CPU.\n"
            "  --llm offline    the rule-based offline author's experience terms (default)\n"
            "  --llm openai     a language model author (llm flags); --judge openai a model judge\n"
            "%s\n",
            llm_flags_help());
}

static struct option refine_table[48];

static const struct option *refine_options(void)
{
    static const struct option own[] = {
        {"persona", required_argument, 0, 'p'}, {"node", required_argument, 0, 'n'},
        {"llm", required_argument, 0, 'a'},     {"judge", required_argument, 0, 'j'},
        {"targets", required_argument, 0, 't'}, {"repeats", required_argument, 0, 'r'},
        {"seed", required_argument, 0, 's'},    {"lambda", required_argument, 0, 'l'},
        {"no-feedback", no_argument, 0, 'F'},   {"restart", no_argument, 0, 'R'},
        {"yes", no_argument, 0, 'y'},
        {"help", no_argument, 0, 'h'}};
    llm_options_table(own, sizeof own / sizeof own[0], 'L', refine_table, sizeof refine_table / sizeof refine_table[0]);
    return refine_table;
}

/* One of offline|openai into *model; -1 to go on, else the exit status. */
static int which(const char *flag, const char *v, int *model)
{
    if (strcmp(v, "offline") && strcmp(v, "openai")) return die_msg("prefer refine: %s must be offline or openai", flag), 2;
    *model = !strcmp(v, "openai");
    return -1;
}

static int refine_flag(refine_opts *o, int c, const char *name)
{
    long v;
    char err[600], flag[80];
    switch (c) {
    case 'p': o->persona = optarg; return -1;
    case 'n':
        if (parse_int(optarg, 0, 9999, &v)) return die_msg("prefer refine: --node must be a node number"), 2;
        o->node = (int)v;
        return -1;
    case 'a': return which("--llm", optarg, &o->author_model);
    case 'j': return which("--judge", optarg, &o->judge_model);
    case 't':
        if (parse_int(optarg, 1, REFINE_MAX_TARGETS, &v))
            return die_msg("prefer refine: --targets must be in 1..%d", REFINE_MAX_TARGETS), 2;
        o->max_targets = (int)v;
        return -1;
    case 'r':
        if (parse_int(optarg, 1, 9, &v)) return die_msg("prefer refine: --repeats must be in 1..9"), 2;
        o->repeats = (int)v;
        return -1;
    case 's':
        if (parse_int(optarg, 0, 4294967295L, &v)) return die_msg("prefer refine: --seed must be in 0..4294967295"), 2;
        o->seed = (unsigned)v;
        return -1;
    case 'l':
        if (parse_double(optarg, 0, 1e6, &o->lambda)) return die_msg("prefer refine: --lambda must be in [0, 1e6]"), 2;
        return -1;
    case 'F': o->feedback = 0; return -1;
    case 'R': o->restart = 1; return -1;
    case 'y': o->yes = 1; return -1;
    case 'L':
        snprintf(flag, sizeof flag, "--%s", name);
        if (llm_config_flag(&o->llm, flag, optarg, err, sizeof err) < 0) return die_msg("prefer refine: %s", err), 2;
        return -1;
    case 'h': refine_usage(stdout); return 0;
    default: refine_usage(stderr); return 2;
    }
}

int prefer_refine(int argc, char **argv)
{
    refine_opts o = {.node = -1, .max_targets = REFINE_MAX_TARGETS, .repeats = 3, .lambda = PREFER_LAMBDA,
                     .feedback = 1};
    llm_config_defaults(&o.llm);
    const struct option *opts = refine_options();
    int c, idx = 0, rc;
    optind = 1;
    while ((c = getopt_full(argc, argv, "", opts, &idx)) != -1)
        if ((rc = refine_flag(&o, c, opts[idx].name)) >= 0) return rc;
    if (!o.persona) return die_msg("prefer refine: --persona P is required (prompts/prefer/personas/)"), 2;
    if (argc - optind < 2)
        return die_msg("prefer refine: give the run directory and at least one assessments file (pcgrllm assess)"), 2;
    char err[1200];
    int usage;
    char *persona = persona_load(o.persona, &usage, err, sizeof err);
    if (!persona) return die_msg("prefer refine: %s", err), usage ? 2 : 1;
    free(persona);
    o.run = argv[optind];
    o.observations = argv + optind + 1;
    o.n_observations = argc - optind - 1;
    return refine_run(&o);
}
