/* What both authors show the model beside their templates: the reward API
 * text, the tile ids, a node's evaluation summary and the GoT references
 * (author.h). */
#include "author_exchange.h"
#include "dungeon.h"
#include "util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dupstr(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

char *author_tile_enum(run_state *R, char *err, int errlen)
{
    /* TREASURE only where the levels hold one (docs/method.md#scenarios) */
    return prompt_load(au_profile(R), R->esc.variant == VARIANT_TREASURE ? "tiles_treasure" : "tiles_dungeon", err,
                       errlen);
}

char *author_reward_api(run_state *R, char *err, int errlen)
{
    const char *prof = au_profile(R);
    char *tiles = R->c->prompts == PROMPTS_PAPER ? author_tile_enum(R, err, errlen) : dupstr("");
    if (!tiles) return NULL;
    prompt_var v[] = {{"tile_enum", tiles}};
    char *api = prompt_render(prof, R->c->reward_api == API_FULL ? "reward_api_full" : "reward_api_minimal", v, 1,
                              err, errlen);
    free(tiles);
    return api;
}

/* The summary's three numbers of a node: from its eval.json, or from its
 * levels where eval.json was written before it held them.  0, or -1. */
static int summary_numbers(run_state *R, int node, double *solvable, double *solutions, double *reachable)
{
    char path[1400], err[1500];
    snprintf(path, sizeof path, "%s/nodes/%03d/eval.json", R->c->out, node);
    json_t *e = read_json_file(path, 1L << 22, err, sizeof err);
    json_t *sv = json_object_get(e, "solvability"), *ms = json_object_get(e, "mean_solutions");
    json_t *ir = json_object_get(e, "important_reachable");
    int ok = json_is_number(sv) && json_is_number(ms) && json_is_number(ir);
    if (ok) *solvable = json_number_value(sv), *solutions = json_number_value(ms), *reachable = json_number_value(ir);
    json_decref(e);
    if (ok) return 0;
    level_set *ls = calloc(1, sizeof *ls);
    snprintf(path, sizeof path, "%s/nodes/%03d/levels", R->c->out, node);
    if (!ls || run_load_levels(path, R->c->n_levels, ls, err, sizeof err)) return free(ls), -1;
    eval_levels(&R->esc, ls->levels, ls->n, ls->per, &ls->sum);
    *solvable = ls->sum.solvability, *solutions = ls->sum.mean_solutions, *reachable = ls->sum.important_reachable;
    free(ls);
    return 0;
}

char *author_summary(run_state *R, int node, char *err, int errlen)
{
    const char *prof = au_profile(R);
    double sv, ms, ir;
    if (node < 0 || node >= R->g.n || R->g.nodes[node].status != NODE_OK || summary_numbers(R, node, &sv, &ms, &ir))
        return prompt_load(prof, "evaluation_summary_none", err, errlen);
    char a[32], b[32], c[32];
    snprintf(a, sizeof a, "%.3f", sv);
    snprintf(b, sizeof b, "%.3f", ms);
    snprintf(c, sizeof c, "%.3f", ir);
    prompt_var v[] = {{"solvability", a}, {"solutions", b}, {"reachable", c}};
    return prompt_render(prof, "evaluation_summary", v, 3, err, errlen);
}

/* GoT: the first n references of the node rendered with the profile's
 * reference templates: each with its evaluation summary (--got-refs
 * reference) or its fitness (engine); "" when n is 0.  malloc'd, or NULL
 * with err. */
char *author_references(run_state *R, int node, int n, char *err, int errlen)
{
    const thought_node *nd = &R->g.nodes[node];
    int summaries = R->c->got_refs == GRAPH_REFS_REFERENCE;
    prompt_reference refs[GRAPH_MAX_REFS];
    char *codes[GRAPH_MAX_REFS] = {0}, *sums[GRAPH_MAX_REFS] = {0};
    int k = 0, failed = 0;
    for (int i = 0; i < nd->n_refs && i < n && !failed; i++) {
        codes[k] = run_node_code(R, nd->refs[i]);
        if (!codes[k]) continue;
        if (summaries && !(sums[k] = author_summary(R, nd->refs[i], err, errlen))) failed = 1;
        refs[k] = (prompt_reference){codes[k], nd->ref_fitness[i], nd->ref_kind[i], sums[k]};
        k++;
    }
    char *out = failed ? NULL : k == 0 ? dupstr("") : prompt_references(au_profile(R), summaries, refs, k, err, errlen);
    for (int i = 0; i < k; i++) free(codes[i]), free(sums[i]);
    return out;
}
