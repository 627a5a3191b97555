/* A language model as the judge (docs/prefer.md#a-model-judge): the twelve
 * dimensions in one call, the overall rating in a separate call that
 * never sees the dimension scores, each repeated and combined by the
 * median.  The prompts are prompts/prefer/judge_dimensions.txt and
 * judge_overall.txt; the dimensions are shown from
 * prompts/prefer/dimensions.json as written. */
#ifndef PCG_JUDGE_MODEL_H
#define PCG_JUDGE_MODEL_H
#include "dimensions.h"
#include "judge_offline.h"
#include "llm.h"
#include <jansson.h>

typedef struct {
    double score[PREFER_N_DIMS];          /* median of the valid answers; 0 when none */
    int answers[PREFER_N_DIMS];           /* repeats that gave a valid score */
    char why[PREFER_N_DIMS][JUDGE_WHY_LEN]; /* the first valid explanation */
    double rating;                        /* median of the valid ratings; 0 when none */
    int ratings[JUDGE_MAX_REPEATS], n_ratings;
    int complete;                         /* every repeat gave every score and a rating */
    int calls;
    long completion_tokens;
    char problem[200];                    /* the first malformed answer, for the record */
} judge_result;

/* Judge one play.  persona_text NULL: a neutral rating.  0, or -1 with one
 * line when a call fails outright (the server, not the model's answer:
 * malformed answers are recorded as incomplete, never filled in). */
int judge_model_assess(const llm_config *c, const json_t *dims, const char *persona_text, const char *play_text,
                       int repeats, judge_result *out, char *err, int errlen);

/* The model's dimension answer read into scores (0: missing or invalid)
 * and explanations; returns how many of the twelve are valid, and names
 * the first problem in problem. */
int judge_parse_dimensions(const char *reply, int *scores, char why[][JUDGE_WHY_LEN], char *problem, int len);
/* The overall rating 1..10, or 0 when the answer gives none. */
int judge_parse_rating(const char *reply, char *problem, int len);

#endif
