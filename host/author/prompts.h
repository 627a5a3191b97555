/* Prompt templates: plain text files in prompts/, loaded at run time.
 *
 * Where they are found (datadir.h): the directory named by $PCGRLLM_PROMPTS if set;
 * otherwise beside the binary (resolved through /proc/self/exe): DIR/prompts,
 * DIR/../prompts, DIR/../share/pcgrllm/prompts, the first that holds
 * system.txt.
 *
 * Syntax: {name} is a placeholder (name: a lower-case letter, then lower-case
 * letters, digits or '_'); "{{" and "}}" stand for literal braces; any other
 * brace is literal text, so C code and JSON examples need no escaping.
 * Values are inserted verbatim and never scanned for placeholders.  A
 * placeholder that is not in the vocabulary below, or that the caller gives
 * no value for, is an error naming the template and line.
 *
 * Vocabulary (the caller supplies the ones a template uses):
 *   story           the designer's story
 *   reward_api      the text of docs/reward-api.md
 *   iteration, iterations   "iteration y of Y" of the search
 *   parent_code     the parent reward's C code        parent_fitness  its fitness
 *   feedback        feedback on the parent (model text, or the text of
 *                   feedback_generic.txt / feedback_none.txt for the ablations)
 *   references      GoT: got_references.txt rendered, or "" for CoT/ToT
 *   reference_list  the reference rewards (see prompt_references())
 *   code            the reward under discussion
 *   rejection       why the sandbox rejected it
 *   statistics      self-alignment statistics of the reward on random play
 *   statistics_warning  statistics_warning.txt rendered when the statistics
 *                   show a reward no agent can learn from, else ""
 *   warning         the sandbox's warning about those statistics (one line)
 *   align_round, align_rounds  "round r of Z" of self-alignment
 *   levels          the generated levels as text grids (or a note that they
 *                   are in the attached image)
 *   level_count     how many levels are shown
 *   target          what the levels are scored on (the measured target, one line)
 *   attempt, attempts  "attempt a of A" of a retried request
 *   failure         why the previous attempt failed
 *   evaluator_rules how the evaluator scores levels: "" by default (the
 *                   paper's prompts state the story and the tiles, not the
 *                   scoring rules); with `run --evaluator-rules`, the text
 *                   of evaluator_rules_encounter.txt or _keydoor.txt
 *
 * Templates (prompt_template_names):
 *   system             system message of every request
 *   reward_init        iteration 1: empty template function, API, story, plan first
 *   reward_refine      later iterations: parent reward + its feedback (+ references)
 *   reward_fix         a rejected reward + the rejection reason
 *   self_align         a reward + its random-play statistics: keep the structure,
 *                      tune scale and sparsity
 *   feedback_specific  story + reward + levels: exactly one problem and the change
 *   feedback_generic   fixed advice unrelated to the levels (used as the feedback)
 *   feedback_none      the text used in place of feedback when there is none
 *   got_references     the reference rewards (best and worst others) with their fitness
 *   fitness_llm        the model's own 0-1 score of levels, answered as JSON
 *   target_extraction  story -> target JSON, or a refusal with its reason
 *   retry_note         appended to a retried prompt: what went wrong last time
 *   statistics_warning the sandbox's warning on a constant or all-zero reward
 *   evaluator_rules_encounter, evaluator_rules_keydoor
 *                      the evaluator's scoring rules for the two target kinds
 */
#ifndef PCG_PROMPTS_H
#define PCG_PROMPTS_H
#include <stddef.h>

typedef struct {
    const char *name;
    const char *value;
} prompt_var;

extern const char *const prompt_template_names[];
extern const int prompt_template_count;
/* NULL-terminated list of the placeholder names above. */
extern const char *const prompt_vocabulary[];

/* The prompts directory for a binary at exe (used by prompts_dir). */
int prompts_dir_for_exe(const char *exe, char *out, size_t outlen, char *err, int errlen);
/* $PCGRLLM_PROMPTS, or the directory beside this binary. 0 or -1 with err. */
int prompts_dir(char *out, size_t outlen, char *err, int errlen);

/* The raw text of prompts/NAME.txt (malloc'd). */
char *prompt_load(const char *name, char *err, int errlen);
/* Fill tmpl (named what, for messages) with vars; malloc'd result. */
char *prompt_fill(const char *tmpl, const char *what, const prompt_var *vars, int n, char *err,
                  int errlen);
/* prompt_load + prompt_fill. */
char *prompt_render(const char *name, const prompt_var *vars, int n, char *err, int errlen);

/* Check every template: present, only known placeholders, and each uses the
 * placeholders its role needs (e.g. reward_init uses {story}).  Run before a
 * search starts so that an edited template fails early.  0 or -1 with err. */
int prompts_check(char *err, int errlen);

/* got_references.txt rendered with the n reference rewards (code, fitness
 * and whether it is one of the best or the worst so far, kind REF_BEST or
 * REF_WORST of graph.h), in the order given; "" (malloc'd) when n == 0. */
char *prompt_references(const char *const *codes, const double *fitness, const int *kinds, int n, char *err,
                        int errlen);

/* statistics_warning.txt rendered with warning (reward_stats_warning's
 * line); "" (malloc'd) when warning is empty. */
char *prompt_statistics_warning(const char *warning, char *err, int errlen);

/* Read the answer to fitness_llm: a JSON object {"scores":[...],
 * "fitness":F}.  fitness is F, or the mean of the scores when F is absent;
 * every number must lie in [0,1].  0 or -1 with err. */
int prompt_parse_fitness(const char *reply, double *fitness, char *err, int errlen);

#endif
