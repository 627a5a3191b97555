/* Persona-directed refinement of a run's generator, `pcgrllm prefer refine`
 * (docs/prefer.md#refinement): the generator's plays are judged under the
 * persona, the persona's preference model picks up to three dimensions, the
 * author revises the reward for each (contracts checked before training),
 * each revision is trained, generated from, played and judged, and the
 * gate of refine_plan.h keeps one or none; without one, a feedback round
 * revises the best rejected candidate once more.  Everything is recorded
 * under RUN/prefer/PERSONA/. */
#ifndef PCG_REFINE_H
#define PCG_REFINE_H
#include "llm.h"
#include "refine_plan.h"
#include "run_state.h"

typedef struct {
    const char *run;        /* the run directory */
    int node;               /* -1: the run's best node */
    const char *persona;    /* a persona's name (prompts/prefer/personas/) */
    char **observations;    /* assess output the persona's model is fitted on */
    int n_observations;
    int judge_model;        /* 0: the offline judge; 1: a model judge (llm) */
    int author_model;       /* 0: the offline author; 1: a model author (llm) */
    llm_config llm;
    int max_targets;        /* 1..REFINE_MAX_TARGETS */
    int repeats;            /* judge repeats per play */
    unsigned seed;          /* the explorer's and the offline judge's */
    double lambda;
    int feedback;           /* a feedback round when nothing is accepted */
    int restart;            /* an earlier refinement for the persona is moved aside, not refused */
    int yes;                /* train even when the CPU time projected is many hours */
} refine_opts;

/* A generator's experience under the persona: the mean of its plays'
 * dimension scores (NaN where no play has one) and of their ratings. */
typedef struct {
    double x[PREFER_N_DIMS];
    double rating;
    int plays, complete;
} refine_profile;

/* Play every level of ls with the explorer into dir/plays/ and judge the
 * plays under persona (index p of the offline judge, text for a model
 * judge).  0, or -1 with one line (REFINE_SERVER_FAILED when it was the
 * model judge's server). */
#define REFINE_SERVER_FAILED (-2)
int refine_profile_levels(const refine_opts *o, int p, const char *persona_text, const level_set *ls,
                          const char *dir, refine_profile *out, char *err, int errlen);

/* The whole refinement.  Returns the process exit status (0: done, whether
 * or not a candidate was accepted; 1: error, printed; 4: the model server
 * failed). */
int refine_run(const refine_opts *o);

#endif
