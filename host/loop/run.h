/* The reward-design loop (Algorithm 1, docs/method.md#the-reward-design-loop): `pcgrllm run`.
 *
 * One thought node per iteration: generate or refine a reward (author),
 * check it in the sandbox (fixing rejected code), self-align it, train a
 * policy on it, generate levels, score them (fitness) and ask for one piece
 * of feedback.  Parents are chosen by the thought graph (host/rundir/graph.h).
 * Everything goes into the run directory, written atomically, so that
 * `--resume` continues a killed run without redoing finished work. */
#ifndef PCG_RUN_H
#define PCG_RUN_H
#include "run_config.h"

/* The exit code of a run stopped because its model server failed (down,
 * refusing, timing out): nothing was made of the failed calls, the node
 * stays pending and DIR/halted.txt says why; --resume goes on. */
#define RUN_EXIT_SERVER 4
/* Run (or resume) the loop.  Returns the process exit code: 0 done,
 * 3 story refused, 4 the model server failed, 1 error or no node produced
 * a reward.  *looped (if given) is 1 when the search ran to its end, so
 * that there is a node table to print (run_report). */
int run_main(run_config *c, int *looped);

/* Print the node table and best path of a run directory; write
 * DIR/report.html.  Returns 0 or 1. */
int run_report(const char *dir, int write_html, int quiet);

#endif
