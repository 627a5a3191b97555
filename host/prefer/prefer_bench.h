/* The judge benchmark (docs/prefer.md#the-judge-benchmark): several judges'
 * assessments of the same plays, compared with each other and with the
 * evaluator's fitness of the levels played.  A judge is an assessment's
 * "judge" and "persona" together; a play is its "trajectory". */
#ifndef PCG_PREFER_BENCH_H
#define PCG_PREFER_BENCH_H
#include "dimensions.h"
#include "eval.h"
#include <jansson.h>

#define BENCH_MAX_JUDGES 16
#define BENCH_MAX_PLAYS 2000

typedef struct {
    int n_judges, n_plays;
    char (*judges)[192];
    char (*plays)[256];
    double *rating;   /* [judge * BENCH_MAX_PLAYS + play], NaN when not rated */
    double *dims;     /* [(judge * BENCH_MAX_PLAYS + play) * PREFER_N_DIMS + j], NaN when missing */
    double *fitness;  /* [play]: the scenario's score of the level, NaN without a map */
} bench_data;

/* Assessment files in; each level scored against s.  0, or -1 with one line. */
int bench_read(char **paths, int n, const eval_scenario_t *s, bench_data *d, char *err, int errlen);
void bench_free(bench_data *d);

/* The comparison as a JSON document: per judge the Spearman correlation
 * of each dimension with its rating, of its rating with the fitness, and
 * its mean rating in the high, middle and low thirds of the plays (ranked
 * by the mean rating of all judges); per pair of judges the Spearman
 * correlation of their ratings and their pair agreement (the share of
 * pairs of plays both order the same way, ties left out). */
json_t *bench_compare(const bench_data *d);

#endif
