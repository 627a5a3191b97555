/* A run's settings (config.json, the flags of `pcgrllm run`): the struct,
 * its defaults and names, the named profiles, reading and writing
 * config.json, and run's flag parser, which the grid reads its cells'
 * flags with. */
#ifndef PCG_RUN_CONFIG_H
#define PCG_RUN_CONFIG_H
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "eval.h"
#include "graph.h"
#include "llm.h"
#include "ppo.h"
#include "target.h"

/* The ranges of run's flags, which config.json must keep too: a stored
 * value past them would be work the run cannot use and its projected cost
 * does not count (docs/sandbox.md: budgets are the directory's, within
 * the flags' limits). */
#define RUN_ITERATIONS_MAX 1000
#define RUN_LEVELS_MAX 64
#define RUN_CHECK_ENVS_MAX 4096
#define RUN_CHECK_TIMEOUT_MIN 0.1
#define RUN_CHECK_TIMEOUT_MAX 3600.0
#define RUN_SECONDS_MAX 1e9

enum { ABL_ZS = 0, ABL_SA = 1, ABL_FB = 2, ABL_FULL = 3 };
enum { FB_SPECIFIC = 0, FB_GENERIC = 1, FB_NONE = 2 };
enum { FIT_HEURISTIC = 0, FIT_LLM = 1 };
enum { FBIN_TEXT = 0, FBIN_IMAGE = 1 };
/* What the model is shown (docs/llm.md, "Prompt profiles"): the paper's
 * prompts or the engine's richer ones (the folders prompts/paper/,
 * prompts/rich/), and which reward API functions the prompts list. */
enum { PROMPTS_PAPER = 0, PROMPTS_RICH = 1 };
enum { API_MINIMAL = 0, API_FULL = 1 };
/* --node-seeds: every node trains with --seed, as the reference code's
 * nodes do, or node n with seed + n */
enum { NODE_SEEDS_SAME = 0, NODE_SEEDS_OFFSET = 1 };

typedef struct {
    /* the task */
    int scenario;              /* 1..4, or 0 for a custom story */
    char story[STORY_MAX_LEN + 1];
    char init_reward[1024];    /* --init-reward FILE: node 0 trains it as it is ("" = none);
                                  the run keeps its copy in DIR/init_reward.c */
    /* the author */
    int offline;               /* 1: rule-based offline author (no language model) */
    llm_config llm;
    /* the search */
    int pe, iterations, align, breadth;
    int got_best, got_worst;   /* GoT references: best and worst other nodes (2, 0) */
    int got_refs;              /* GRAPH_REFS_REFERENCE or _ENGINE: which nodes and what of them
                                  (evaluation summary or fitness) the GoT prompt shows */
    int prompts;               /* PROMPTS_PAPER or PROMPTS_RICH */
    int reward_api;            /* API_MINIMAL or API_FULL */
    int ablation, feedback, fitness_mode, feedback_input;
    int trials, fixes;         /* generation trials per node, code fixes per trial */
    double node_time;          /* seconds a node's model calls may take together; 0 = no limit */
    int evaluator_rules;       /* 1: the prompts also state how levels are scored */
    double target_fitness;     /* stop once reached; < 0: never */
    int accept;                /* GRAPH_ACCEPT_ALWAYS (the paper's) or GRAPH_ACCEPT_IMPROVE */
    /* training, passed to `pcgrllm train` and `generate` for every node */
    long long steps;
    int envs, threads;
    char preset[16], backend[16];
    char matmul[8];            /* fp32, tf32 or bf16: the device trainer's matmuls */
    uint64_t seed;
    double train_timeout;      /* seconds per node's training, 0 = none */
    int n_levels;              /* levels generated per node (30) */
    uint64_t eval_seed;        /* their fixed evaluation seed */
    /* reward checks */
    int check_envs;            /* environments of the random-play check */
    double check_timeout;      /* seconds */
    char out[1024];
    int resume;
    int base_url_given;        /* --base-url given with --resume: it replaces the stored one */
    int llm_given, model_given; /* --llm, --model given: with --resume they must be the stored author (a
                                 * grid names its cells' this way), never replace it */
    int quiet;
    int yes;                   /* go on with a job projected at over 3 hours on the CPU */
    char profile[16];          /* "" or the named profile (--quick) the flags started from */
    /* the reference details train takes (ppo.h's PPO_DETAIL_*, 0 the
     * reference's), passed to every node's train and generate */
    int details[PPO_N_DETAILS];
    int node_seeds;            /* NODE_SEEDS_* */
} run_config;

/* A named profile: the flags it stands for, which run parses before the
 * command line's own (so those override it), or NULL for an unknown name.
 * The run's config.json and report.html name the profile and its flags. */
const char *run_profile_flags(const char *name);
/* The profile's flags split into argv[0..n) (at most max, in buf of len
 * bytes); returns n, 0 for an unknown name. */
int run_profile_argv(const char *name, char *buf, size_t len, char **argv, int max);

/* What a parse of the flags found besides the config itself. */
typedef struct {
    int have_task, llm_set, base_url_set, help, quick;
    const char *config; /* --config FILE, NULL without */
} run_flags_seen;
/* run's command-line flags (argv[0] is "run") over c, a profile (--quick)
 * first so that the flags given override it.  0, or -1 with one line. */
int run_flags_parse(run_config *c, int argc, char **argv, run_flags_seen *seen, char *err, int errlen);
/* The checks that need every flag, and the defaults that depend on them
 * (the author, the run directory).  0, or -1 with one line. */
int run_flags_check(run_config *c, const run_flags_seen *seen, char *err, int errlen);
/* run's command-line flags (argv[0] is "run"), a profile included, over c
 * (from run_config_defaults), as `pcgrllm run` reads them (host/cli/cmd_run.c),
 * the author chosen as run chooses it: what a grid's cells will run with.
 * 0, or -1 with err. */
int run_config_from_flags(run_config *c, int argc, char **argv, char *err, int errlen);

/* The settings' names, as the flags and config.json spell them: the index
 * of a name (-1 if unknown), and the name of an index ("?" if none). */
int run_parse_ablation(const char *s);
int run_parse_feedback(const char *s);
int run_parse_fitness(const char *s);
int run_parse_feedback_input(const char *s);
int run_parse_prompts(const char *s);
int run_parse_reward_api(const char *s);
int run_parse_got_refs(const char *s);
int run_parse_accept(const char *s);
const char *run_ablation_name(int a);
const char *run_feedback_name(int f);
const char *run_feedback_input_name(int f);
/* "paper"/"rich" (the folder under prompts/), "minimal"/"full",
 * "reference"/"engine"; "?" for anything else. */
const char *run_prompts_name(int p);
const char *run_reward_api_name(int a);
const char *run_got_refs_name(int r);
/* "always"/"improve" */
const char *run_accept_name(int a);
/* What --accept a means for search pe, in words for run.log and the report. */
const char *run_accept_rule(int pe, int a);
/* "same" or "offset" -> NODE_SEEDS_*, -1 if neither; and back */
int run_parse_node_seeds(const char *s);
const char *run_node_seeds_name(int v);
/* The seed node id trains with. */
uint64_t run_node_seed(const run_config *c, int id);

/* The defaults: the paper's prompts with the minimal API and the
 * reference's GoT references.  reward_api and got_refs start unset (-1)
 * and follow the profile unless given: run_flags_parse sets them (rich:
 * full and engine, today's prompts as they were). */
void run_config_defaults(run_config *c);
/* reward_api and got_refs, where unset, from the prompt profile. */
void run_config_follow_profile(run_config *c);
/* config.json of c (a new reference), and back: a stored config over c
 * (the settings config.json does not hold keep c's; a run made before
 * "prompts", "reward_api" and "got_refs" were stored was made with rich,
 * full and engine).  0, or -1 with err. */
json_t *run_config_to_json(const run_config *c);
int run_config_from_json(json_t *o, run_config *c, char *err, int errlen);

#endif
