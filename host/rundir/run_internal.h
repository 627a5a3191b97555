/* Shared by the loop (run.c), the authors (run_author.c) and the report
 * (report.c); not an API for anything else. */
#ifndef PCG_RUN_INTERNAL_H
#define PCG_RUN_INTERNAL_H
#include <stdio.h>
#include "reward_jit.h"
#include "run.h"

#define RUN_MAX_LEVELS RUN_LEVELS_MAX

/* What the model's replies came to over a run, for the closing summary
 * (kept in usage.json, so a resumed run counts on). */
typedef struct {
    int calls, replies;              /* model calls; of them, with any reply text */
    int cut_loop, cut_time, cut_length, early_stops;
    int rewards_held;                /* replies holding a reward function */
    int compiled, validated, trained;/* rewards that compiled, passed the sandbox, were trained on */
    double call_seconds;             /* wall time in model calls */
} run_tally;

typedef struct run_state {
    run_config *c;
    target_t target;
    eval_scenario_t esc;
    char flow[128];
    thought_graph g;
    llm_usage usage;
    llm_server server;
    run_tally tally;
    FILE *log;
    double t_start;
    char evaluator_rules[4096]; /* the {evaluator_rules} text: "" unless --evaluator-rules */
    /* why the run stops at once: a model call failed for a reason that is
     * not the model's (the server is down, refuses, times out), so no result
     * may be made of it; "" while all is well */
    char halted[1200];
} run_state;

/* A node's generated levels and their evaluation. */
typedef struct {
    int n;
    level_t levels[RUN_MAX_LEVELS];
    unsigned char tiles[RUN_MAX_LEVELS][PCG_MAX_CELLS];
    eval_level_t per[RUN_MAX_LEVELS];
    eval_summary_t sum;
} level_set;


char *run_read_text(const char *path);
int run_write_text(const char *path, const char *text);
char *run_levels_text(const level_t *levels, int n);
/* A node's levels DIR/level_000.txt ... (at most RUN_MAX_LEVELS of n).
 * 0, or -1 with one line in err. */
int run_load_levels(const char *dir, int n, level_set *ls, char *err, int errlen);
/* Thought nodes the run makes: 1 for the zs and sa ablations (one reward,
 * no feedback), else --iterations.  What "iteration y of Y" counts. */
int run_node_count(const run_config *c);
/* 1 for node 0 of a run given --init-reward: it trains that reward as it
 * is (no generation, no alignment); later nodes refine it. */
int run_init_node(const run_state *R, int id);
void run_say(run_state *R, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The author: a language model through prompts/, or the rule-based offline
 * baseline.  Each returns malloc'd text, or NULL with a one-line err.
 * ndir is the node's directory: exchanges with a model are stored there
 * (request and reply), and a stored reply is reused on resume. */
char *au_generate(run_state *R, int node, const char *ndir, int trial, const char *previous, char *err,
                  int errlen);
char *au_fix(run_state *R, int node, const char *ndir, const char *code, const char *reason, int trial,
                 int fix, char *err, int errlen);
char *au_align(run_state *R, int node, const char *ndir, const char *code, const reward_stats *st,
                   int round, char *err, int errlen);
char *au_feedback(run_state *R, int node, const char *ndir, const char *code, const level_set *ls,
                      char *err, int errlen);
/* The model's own 0-1 fitness of the first ten levels (RQ4).  0 or -1. */
int au_fitness(run_state *R, int node, const char *ndir, const level_set *ls, double *fitness, char *err,
                   int errlen);
/* Story -> target: 0 accepted, 3 refused (reason), -1 error. */
int au_target(run_state *R, const char *dir, target_t *t, char *reason, int len);

/* The language-model author (host/author/run_model.c) behind the au_* functions.
 * previous: why the last trial failed, told to the model on a retry. */
char *mdl_generate(run_state *R, int node, const char *ndir, int trial, const char *previous, char *err, int errlen);
char *mdl_fix(run_state *R, const char *ndir, const char *code, const char *reason, int trial, int fix, char *err,
              int errlen);
char *mdl_align(run_state *R, const char *ndir, const char *code, const reward_stats *st, int round, char *err,
                int errlen);
char *mdl_feedback(run_state *R, const char *ndir, const char *code, const level_set *ls, char *err, int errlen);
int mdl_fitness(run_state *R, const char *ndir, const level_set *ls, double *fitness, char *err, int errlen);
int mdl_target(run_state *R, const char *dir, target_t *t, char *reason, int len);

/* Shared by both authors (host/author/run_author.c): the reward API text the
 * prompts quote, a node's reward code, and GoT references rendered. */
char *run_reward_api_text(char *err, int errlen);
char *run_node_code(run_state *R, int node);
char *run_references(run_state *R, int node, int n, char *err, int errlen);

#endif
