/* The state of a run as it goes, and the files of its directory: shared
 * by the loop (host/loop/), its authors (host/author/) and the report. */
#ifndef PCG_RUN_STATE_H
#define PCG_RUN_STATE_H
#include <stdio.h>
#include "run_config.h"

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


/* DIR/fmt... into out. */
void run_path(char *out, size_t len, const char *dir, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* A text file of the run directory (at most 8 MiB), or NULL. */
char *run_read_text(const char *path);
/* Written atomically: 0, or -1 (write_error() says why). */
int run_write_text(const char *path, const char *text);
/* j as indented JSON with a newline (j is released).  0 or -1. */
int run_write_json(const char *path, json_t *j);
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
/* The reward code of a node (its reward_path), or NULL. */
char *run_node_code(run_state *R, int node);

#endif
