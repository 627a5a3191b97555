/* Who writes the rewards: a language model through the prompts
 * (author_model.c), or the rule-based offline baseline (author_offline.h);
 * one interface for the loop (author.c). */
#ifndef PCG_AUTHOR_H
#define PCG_AUTHOR_H
#include "reward_jit.h"
#include "run_state.h"

/* The author: a language model through prompts/, or the rule-based offline
 * baseline.  Each returns malloc'd text, or NULL with a one-line err.
 * ndir is the node's directory: exchanges with a model are stored there
 * (request and reply), and a stored reply is reused on resume. */
char *au_generate(run_state *R, int node, const char *ndir, int trial, const char *previous, char *err,
                  int errlen);
char *au_fix(run_state *R, int node, const char *ndir, const char *code, const char *reason, int trial,
                 int fix, char *err, int errlen);
/* A trial number past this is round (trial - AU_ALIGN_TRIAL) of
 * self-alignment: au_fix then fixes that round's rejected revision, whose
 * reward before the round (and its statistics) ndir holds. */
#define AU_ALIGN_TRIAL 100
char *au_align(run_state *R, int node, const char *ndir, const char *code, const reward_stats *st,
                   int round, char *err, int errlen);
char *au_feedback(run_state *R, int node, const char *ndir, const char *code, const level_set *ls,
                      char *err, int errlen);
/* The model's own 0-1 fitness of the first ten levels (RQ4).  0 or -1. */
int au_fitness(run_state *R, int node, const char *ndir, const level_set *ls, double *fitness, char *err,
                   int errlen);
/* Story -> target: 0 accepted, 3 refused (the reason, its category
 * first: story_refusal_category), -1 error.  Whoever read the target, it
 * is checked against the story's words (story_check_target) and the map
 * (target_feasible). */
int au_target(run_state *R, const char *dir, target_t *t, char *reason, int len);

/* The language-model author (host/author/author_model.c) behind the au_* functions.
 * previous: why the last trial failed, told to the model on a retry. */
char *mdl_generate(run_state *R, int node, const char *ndir, int trial, const char *previous, char *err, int errlen);
char *mdl_fix(run_state *R, int node, const char *ndir, const char *code, const char *reason, int trial, int fix,
              char *err, int errlen);
char *mdl_align(run_state *R, const char *ndir, const char *code, const reward_stats *st, int round, char *err,
                int errlen);
char *mdl_feedback(run_state *R, const char *ndir, const char *code, const level_set *ls, char *err, int errlen);
int mdl_fitness(run_state *R, const char *ndir, const level_set *ls, double *fitness, char *err, int errlen);
int mdl_target(run_state *R, const char *dir, target_t *t, char *reason, int len);

/* Shared by both authors (host/author/author_text.c): the reward API text
 * the prompts quote (the profile's reward_api_minimal.txt or _full.txt, by
 * --reward-api), the tile ids of the run's levels (paper), the evaluation
 * summary of a node (evaluation_summary.txt; evaluation_summary_none.txt
 * for no node or one without levels), and GoT references rendered. */
char *author_reward_api(run_state *R, char *err, int errlen);
char *author_tile_enum(run_state *R, char *err, int errlen);
char *author_summary(run_state *R, int node, char *err, int errlen);
char *author_references(run_state *R, int node, int n, char *err, int errlen);

#endif
