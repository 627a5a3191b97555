/* The parts of the reward-design loop (host/loop/run.c), shared among the
 * files of host/loop/ only.  Each function is described where it is
 * defined. */
#ifndef PCG_LOOP_INTERNAL_H
#define PCG_LOOP_INTERNAL_H
#include "run.h"
#include "run_state.h"

/* A step's result that ends the run, not only the node: the node stays
 * pending for a --resume (the model server failed, or a subprocess refused
 * the flags the loop gave it). */
#define RUN_FATAL (-2)

/* run.c: one line on stderr and in run.log */
void run_warn(run_state *R, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* run_open.c: opening the run */
int open_config(run_config *c);
int preflight(run_state *R);
int say_cost(run_config *c, char *line, int len);
int setup_target(run_state *R);
void note_halt(const run_config *c, const char *why);

/* run_node.c: one thought node */
int run_node(run_state *R, int id);
json_t *run_eval_json(const run_state *R, const level_set *ls);

/* run_child.c: the steps that run as subprocesses */
int step_train(run_state *R, int id, const char *ndir, char *reason, int len);
int step_generate_levels(run_state *R, const char *ndir, char *reason, int len);

/* report.c, report_prefer.c: the report's pages */
void report_html_escape(FILE *f, const char *s);
void report_write_refinements(FILE *f, const char *dir);

/* run_resume.c: the nodes' files and their checksums */
int check_finished_nodes(run_state *R, const char *graph_path);
int redo_damaged(run_state *R, int id);
void record_files(run_state *R, int id);

/* run_usage.c: what the model cost, and the summary */
void save_usage(run_state *R);
void load_usage(run_state *R);
void say_context(run_state *R);
void say_summary(run_state *R, int best);

#endif
