/* One exchange of the language-model author with its server, shared by the
 * two prompt profiles (host/author/author_model.c: the rich prompts and the
 * exchange itself; host/author/author_paper.c: the paper's prompts). */
#ifndef PCG_AUTHOR_EXCHANGE_H
#define PCG_AUTHOR_EXCHANGE_H
#include "author.h"
#include "prompts.h"

typedef struct {
    const char *name;        /* files ndir/llm/NAME.{request.json,reply.txt,outcome.json} */
    const char *sys;         /* the system message's template, or NULL for none */
    const char *tmpl;        /* the user message's template */
    const prompt_var *vars;
    int nvars;
    const void *image;
    size_t image_len;
    const llm_task *task;
    const char *retry;       /* a note appended to the prompt of a retry, or NULL */
    int attempt;             /* 1, 2, ...: later attempts also send another seed */
} exchange_t;

/* The tasks: a reward, feedback, a story's target, the model's fitness
 * (JSON only, rich) and the paper's judgement (reasons around its JSON). */
extern const llm_task au_task_code, au_task_feedback, au_task_target, au_task_fitness, au_task_judge;

/* The profile's folder under prompts/ ("paper", "rich"). */
const char *au_profile(const run_state *R);

/* One exchange; a stored reply is reused (resume), a recorded failure is
 * returned without asking again.  The reply text, or NULL with err. */
char *au_exchange(run_state *R, const char *ndir, const exchange_t *x, char *err, int errlen);
/* The reward in the reply: a code block that defines compute_reward. */
char *au_exchange_code(run_state *R, const char *ndir, const exchange_t *x, char *err, int errlen);
/* Does the exchange fit the server's context?  1 yes or unknown, 0 no (why). */
int au_exchange_fits(run_state *R, const exchange_t *x, char *why, int whylen);

/* An exchange over the node's levels: all of them, or as many as fit the
 * context (10, then 5).  vars[text_slot] gets text_of(ls, n) for the first
 * n levels, vars[count_slot] (count_slot >= 0) n.  The reply, or NULL. */
typedef char *(*au_levels_text_fn)(run_state *R, const level_set *ls, int n);
char *au_exchange_levels(run_state *R, const char *ndir, exchange_t *x, prompt_var *vars, int text_slot,
                         int count_slot, const level_set *ls, au_levels_text_fn text_of, char *err, int errlen);

/* The paper profile's exchanges (author_paper.c), behind the mdl_* ones. */
char *pap_generate(run_state *R, int node, const char *ndir, int trial, char *err, int errlen);
char *pap_fix(run_state *R, int node, const char *ndir, const char *code, const char *reason, int trial, int fix,
              char *err, int errlen);
char *pap_align(run_state *R, const char *ndir, const char *code, const reward_stats *st, int round, char *err,
                int errlen);
char *pap_feedback(run_state *R, const char *ndir, const char *code, const level_set *ls, char *err, int errlen);
int pap_fitness(run_state *R, const char *ndir, const level_set *ls, double *fitness, char *err, int errlen);

#endif
