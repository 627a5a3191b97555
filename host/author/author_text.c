/* What both authors show the model: the reward API text and the GoT
 * references (author.h). */
#include "author.h"
#include "prompts.h"
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

/* The reward API text the prompts quote: docs/reward-api.md beside the
 * prompts directory. */
char *author_reward_api(char *err, int errlen)
{
    char dir[2048], path[2300];
    if (prompts_dir(dir, sizeof dir, err, errlen)) return NULL;
    const char *cands[] = {"%s/../docs/reward-api.md", "%s/reward-api.md", "%s/../share/pcgrllm/reward-api.md"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, cands[i], dir);
        char *t = run_read_text(path);
        if (t) return t;
    }
    snprintf(err, (size_t)errlen, "cannot find docs/reward-api.md beside the prompts directory %s", dir);
    return NULL;
}

/* GoT: the first n references of the node rendered with got_references.txt
 * ("" when n is 0); malloc'd, or NULL with err. */
char *author_references(run_state *R, int node, int n, char *err, int errlen)
{
    const thought_node *nd = &R->g.nodes[node];
    char *codes[GRAPH_MAX_REFS] = {0};
    double fit[GRAPH_MAX_REFS];
    int kinds[GRAPH_MAX_REFS], k = 0;
    for (int i = 0; i < nd->n_refs && i < n; i++) {
        codes[k] = run_node_code(R, nd->refs[i]);
        fit[k] = nd->ref_fitness[i];
        kinds[k] = nd->ref_kind[i];
        if (codes[k]) k++;
    }
    if (k == 0) return dupstr("");
    char *refs = prompt_references((const char *const *)codes, fit, kinds, k, err, errlen);
    for (int i = 0; i < k; i++) free(codes[i]);
    return refs;
}
