/* A finished run opened again for work on its generators (`prefer refine`,
 * docs/prefer.md#refinement): its stored settings, target and thought
 * graph, and a candidate reward trained, generated from and scored exactly
 * as the run trains, generates from and scores its own nodes. */
#ifndef PCG_RUN_REFINE_H
#define PCG_RUN_REFINE_H
#include "graph.h"
#include "run_state.h"

/* Open run directory dir (guarded: nothing in it is followed out of it):
 * config.json into *c (llm, when given, replaces its author: the refining
 * author is the caller's), the target into R, the graph into *g.  log: the
 * file lines go to (may be NULL).  0, or -1 with one line in err. */
int run_refine_open(run_state *R, run_config *c, thought_graph *g, const char *dir, const llm_config *llm,
                    int offline, FILE *log, char *err, int errlen);

/* Train cdir/reward.c with the run's training flags and node id's seed,
 * generate the run's levels from it into cdir/levels, and evaluate them
 * (cdir/eval.json): *fitness is the evaluator's.  Finished steps are not
 * redone (their .done files).  0, or -1 with one line in err. */
int run_refine_candidate(run_state *R, int id, const char *cdir, level_set *ls, double *fitness, char *err,
                         int errlen);

/* Before training `candidates` rewards as the run trained its nodes
 * (config.json's steps, envs, preset; a run from elsewhere may ask for
 * months): on the CPU, a projected time past TRAIN_ASK_ABOVE_S goes on only
 * when asked (or yes).  0 to go on, 1 refused (one line said). */
int run_refine_cost(const run_state *R, int candidates, int yes);

#endif
