/* Prompt templates: plain text files in prompts/PROFILE/, loaded at run time.
 *
 * A profile is one complete set of what the model is shown (docs/llm.md,
 * "Prompt profiles"): prompts/paper/ (the paper's prompts, the default) and
 * prompts/rich/ (the engine's richer ones).  Where the folder is found
 * (datadir.h): the directory named by $PCGRLLM_PROMPTS if set; otherwise
 * beside the binary (resolved through /proc/self/exe): DIR/prompts,
 * DIR/../prompts, DIR/../share/pcgrllm/prompts, the first that holds
 * paper/system.txt.
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
 *   reward_api      the reward API text (reward_api_minimal.txt or
 *                   reward_api_full.txt of the profile, by --reward-api)
 *   tile_enum       the tile ids of the level (tiles_dungeon.txt, or
 *                   tiles_treasure.txt for levels with a treasure)
 *   iteration, iterations   "iteration y of Y" of the search
 *   progress        y / Y as a percentage ("66.7%")
 *   thought_tips    the reasoning tips of the search (thoughts_cot.txt or
 *                   thoughts_got.txt rendered; in thoughts_got, the CoT ones)
 *   parent_code     the parent reward's C code        parent_fitness  its fitness
 *   feedback        feedback on the parent (model text, or the text of
 *                   feedback_generic.txt / feedback_none.txt for the ablations)
 *   references      GoT: the reference rewards rendered (prompt_references)
 *   reference_list  the reference items, inside got_references*.txt
 *   number, code, fitness, kind, summary   one reference item: its number,
 *                   its code, its fitness, "best" or "worst", and its
 *                   evaluation summary (evaluation_summary.txt rendered)
 *   solvability, solutions, reachable   the evaluation summary's numbers
 *   rejection       why the sandbox rejected a reward
 *   statistics      self-alignment statistics of the reward on random play
 *   mean, std, zero_percent   those statistics' numbers (statistics_line.txt)
 *   statistics_warning  statistics_warning.txt rendered when the statistics
 *                   show a reward no agent can learn from, else ""
 *   warning         the sandbox's warning about those statistics (one line)
 *   fix_request     a self-alignment fix: align_fix.txt rendered, else ""
 *   align_round, align_rounds  "round r of Z" of self-alignment
 *   levels          the generated levels as text (or levels_in_image.txt)
 *   tiles           one level as an array of tile ids (level_array.txt)
 *   level_count     how many levels are shown
 *   important_tiles the story's important tiles by name ("BAT, SCORPION")
 *   target          what the levels are scored on (the measured target, one line)
 *   attempt, attempts  "attempt a of A" of a retried request
 *   failure         why the previous attempt failed
 *   level           the editing loop's level as rows of tile characters
 *   step, steps     "step s of S" of an editing run
 *   history         the editing loop's last steps (edit_history_step.txt lines)
 *   guidance        the route's cells and what a wall on each would do
 *   legs            the measured legs of the route, with the wanted ones
 *   validity        "valid", or why the level is not
 *   outcome         what became of a step's edit ("accepted", "rejected", ...)
 *   calls           how many tool calls a step held
 *   evaluator_rules how the evaluator scores levels: "" by default (the
 *                   paper's prompts state the story and the tiles, not the
 *                   scoring rules); with `run --evaluator-rules`, the text
 *                   of evaluator_rules_encounter.txt or _keydoor.txt
 *
 * The templates of each profile, and what each must use, are listed in
 * prompts.c (common_templates, rich_templates, paper_templates; the editing
 * loop's, in prompts/harness/, harness_templates: prompt_template_names
 * ("harness") lists them);
 * prompts_check reads every one.
 */
#ifndef PCG_PROMPTS_H
#define PCG_PROMPTS_H
#include <stddef.h>

typedef struct {
    const char *name;
    const char *value;
} prompt_var;

/* The profiles' folder names (NULL-terminated): "paper", "rich". */
extern const char *const prompt_profiles[];
/* The templates of a profile (NULL-terminated), or NULL for an unknown one. */
const char *const *prompt_template_names(const char *profile);
/* NULL-terminated list of the placeholder names above. */
extern const char *const prompt_vocabulary[];

/* The prompts directory for a binary at exe (used by prompts_dir). */
int prompts_dir_for_exe(const char *exe, char *out, size_t outlen, char *err, int errlen);
/* $PCGRLLM_PROMPTS, or the directory beside this binary. 0 or -1 with err. */
int prompts_dir(char *out, size_t outlen, char *err, int errlen);

/* The raw text of prompts/PROFILE/NAME.txt (malloc'd). */
char *prompt_load(const char *profile, const char *name, char *err, int errlen);
/* Fill tmpl (named what, for messages) with vars; malloc'd result. */
char *prompt_fill(const char *tmpl, const char *what, const prompt_var *vars, int n, char *err,
                  int errlen);
/* prompt_load + prompt_fill. */
char *prompt_render(const char *profile, const char *name, const prompt_var *vars, int n, char *err, int errlen);

/* Check every template of every profile: present, only known placeholders,
 * and each uses the placeholders its role needs (e.g. reward_init uses
 * {story}).  Run before a search starts so that an edited template fails
 * early.  0 or -1 with err. */
int prompts_check(char *err, int errlen);

/* One GoT reference: its code, fitness, kind (REF_BEST or REF_WORST of
 * graph.h) and evaluation summary (evaluation_summary.txt rendered). */
typedef struct {
    const char *code;
    double fitness;
    int kind;
    const char *summary;
} prompt_reference;
/* The n references, in the order given, each rendered with
 * got_reference_summary.txt (summaries) or got_reference_fitness.txt, all
 * of them inside got_references_summaries.txt or got_references.txt; ""
 * (malloc'd) when n == 0. */
char *prompt_references(const char *profile, int summaries, const prompt_reference *refs, int n, char *err,
                        int errlen);

/* statistics_warning.txt rendered with warning (reward_stats_warning's
 * line); "" (malloc'd) when warning is empty. */
char *prompt_statistics_warning(const char *profile, const char *warning, char *err, int errlen);

/* Read the answer to fitness_llm: the first JSON object of the reply,
 * {"scores":[...], "fitness":F} (rich) or {"acc_imp_perc":F} (paper, the
 * reference implementation's metric).  fitness is F, or the mean of the
 * scores when no F is given; every number must lie in [0,1].  0 or -1 with
 * err. */
int prompt_parse_fitness(const char *reply, double *fitness, char *err, int errlen);

#endif
