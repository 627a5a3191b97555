/* The evaluator's results as JSON: one document for the scores of a set of
 * levels, the form `pcgrllm eval --json` prints and the Python package
 * returns. */
#ifndef PCG_EVAL_JSON_H
#define PCG_EVAL_JSON_H
#include "eval.h"
#include <jansson.h>

/* One level's metrics; file is its name (UTF-8, which JSON needs). */
json_t *eval_json_level(const eval_scenario_t *s, const char *file, const level_t *l, const eval_level_t *m);
/* The whole document: the summary, the target and levels[] (files[i]
 * naming lv[i]).  A new reference, NULL without memory. */
json_t *eval_json_doc(const eval_scenario_t *s, const char *const *files, const level_t *lv, const eval_level_t *per,
                      const eval_summary_t *sum);

#endif
