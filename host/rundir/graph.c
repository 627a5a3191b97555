/* Thought graph: nodes, parent selection, GoT references, JSON. */
#include "graph.h"
#include "util.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const pe_names[] = {"cot", "tot", "got"};

int graph_pe_from_name(const char *name)
{
    for (int i = 0; name && i < 3; i++)
        if (!strcmp(name, pe_names[i])) return i;
    return -1;
}

const char *graph_pe_name(int pe) { return pe >= 0 && pe < 3 ? pe_names[pe] : "?"; }

int graph_init(thought_graph *g, int pe, int breadth)
{
    memset(g, 0, sizeof *g);
    if (pe < PE_COT || pe > PE_GOT || breadth < 1 || breadth > GRAPH_MAX_BREADTH) return -1;
    g->pe = pe;
    g->breadth = pe == PE_COT ? 1 : breadth;
    g->ref_rule = GRAPH_REFS_ENGINE;
    return 0;
}

void graph_free(thought_graph *g)
{
    for (int i = 0; i < g->n; i++) free(g->nodes[i].feedback), free(g->nodes[i].files);
    free(g->nodes);
    memset(g, 0, sizeof *g);
}

int graph_add(thought_graph *g, int iteration, int parent)
{
    if (iteration < 1 || parent < -1 || parent >= g->n || g->n >= GRAPH_MAX_NODES) return -1;
    if (g->n == g->cap) {
        int cap = g->cap ? g->cap * 2 : 16;
        thought_node *nodes = realloc(g->nodes, (size_t)cap * sizeof *nodes);
        if (!nodes) return -1;
        g->nodes = nodes;
        g->cap = cap;
    }
    thought_node *nd = &g->nodes[g->n];
    memset(nd, 0, sizeof *nd);
    nd->id = g->n;
    nd->iteration = iteration;
    nd->parent = parent;
    nd->status = NODE_PENDING;
    nd->n_files = -1;
    if (parent >= 0) g->nodes[parent].n_children++;
    return g->n++;
}

int graph_set_feedback(thought_graph *g, int id, const char *text)
{
    if (id < 0 || id >= g->n) return -1;
    char *copy = NULL;
    if (text && !(copy = strdup(text))) return -1;
    free(g->nodes[id].feedback);
    g->nodes[id].feedback = copy;
    return 0;
}

int graph_finish(thought_graph *g, int id, int status, double fitness)
{
    if (id < 0 || id >= g->n) return -1;
    if (status == NODE_FAILED) fitness = 0;
    else if (status != NODE_OK || !(fitness >= 0 && fitness <= 1)) return -1;
    g->nodes[id].status = status;
    g->nodes[id].fitness = fitness;
    return 0;
}

int graph_set_files(thought_graph *g, int id, const graph_file *files, int n)
{
    if (id < 0 || id >= g->n || n < -1 || n > GRAPH_MAX_FILES) return -1;
    graph_file *copy = NULL;
    if (n > 0) {
        if (!(copy = malloc(sizeof *copy * (size_t)n))) return -1;
        memcpy(copy, files, sizeof *copy * (size_t)n);
    }
    free(g->nodes[id].files);
    g->nodes[id].files = copy;
    g->nodes[id].n_files = n;
    return 0;
}

const graph_file *graph_find_file(const thought_node *nd, const char *name)
{
    for (int i = 0; i < nd->n_files; i++)
        if (!strcmp(nd->files[i].name, name)) return &nd->files[i];
    return NULL;
}

int graph_reopen(thought_graph *g, int id)
{
    if (id < 0 || id != g->n - 1) return -1;
    thought_node *nd = &g->nodes[id];
    nd->status = NODE_PENDING;
    nd->fitness = 0;
    nd->reward_path[0] = 0;
    graph_set_feedback(g, id, NULL);
    graph_set_files(g, id, NULL, -1);
    return 0;
}

/* a ranks before b: higher fitness, then lower id. */
static int better(const thought_node *a, const thought_node *b)
{
    if (a->fitness != b->fitness) return a->fitness > b->fitness;
    return a->id < b->id;
}

/* Under GRAPH_ACCEPT_IMPROVE, whether nd may be built on: a root, or a
 * node that scored above the parent it refined. */
static int accepted(const thought_graph *g, const thought_node *nd)
{
    return g->accept != GRAPH_ACCEPT_IMPROVE || nd->parent < 0 || nd->fitness > g->nodes[nd->parent].fitness;
}

int graph_select_parent(const thought_graph *g)
{
    if (g->pe == PE_COT) {
        if (g->accept == GRAPH_ACCEPT_IMPROVE) return graph_best(g);
        for (int i = g->n - 1; i >= 0; i--)
            if (g->nodes[i].status == NODE_OK) return i;
        return -1;
    }
    int best = -1;
    for (int i = 0; i < g->n; i++) {
        const thought_node *nd = &g->nodes[i];
        if (nd->status != NODE_OK || nd->n_children >= g->breadth || !accepted(g, nd)) continue;
        if (best < 0 || better(nd, &g->nodes[best])) best = i;
    }
    return best;
}

/* Insert candidate i into the ranked list out[0..*n) (at most max long),
 * ranked by rank(a, b) != 0 when a goes before b. */
static void rank_insert(const thought_graph *g, int i, int *out, int *n, int max,
                        int (*rank)(const thought_node *, const thought_node *))
{
    int pos = *n;
    while (pos > 0 && rank(&g->nodes[i], &g->nodes[out[pos - 1]])) pos--;
    if (pos >= max) return;
    for (int k = (*n < max ? *n : max - 1); k > pos; k--) out[k] = out[k - 1];
    out[pos] = i;
    if (*n < max) (*n)++;
}

/* a ranks before b among the worst: lower fitness, then lower id. */
static int worse(const thought_node *a, const thought_node *b)
{
    if (a->fitness != b->fitness) return a->fitness < b->fitness;
    return a->id < b->id;
}

int graph_references(const thought_graph *g, int parent, int n_best, int n_worst, int out[GRAPH_MAX_REFS],
                     int kind[GRAPH_MAX_REFS])
{
    if (n_best < 0) n_best = 0;
    if (n_worst < 0) n_worst = 0;
    if (n_best > GRAPH_MAX_REF_KIND) n_best = GRAPH_MAX_REF_KIND;
    if (n_worst > GRAPH_MAX_REF_KIND) n_worst = GRAPH_MAX_REF_KIND;
    int previous = g->n - 1, nb = 0, nw = 0, worst[GRAPH_MAX_REF_KIND];
    /* the reference implementation leaves out the previous iteration only */
    int skip = g->ref_rule == GRAPH_REFS_REFERENCE ? -1 : parent;
    for (int i = 0; i < g->n; i++)
        if (i != skip && i != previous && g->nodes[i].status == NODE_OK) rank_insert(g, i, out, &nb, n_best, better);
    for (int i = 0; i < g->n; i++) {
        int taken = 0;
        for (int k = 0; k < nb; k++) taken |= out[k] == i;
        if (!taken && i != skip && i != previous && g->nodes[i].status == NODE_OK)
            rank_insert(g, i, worst, &nw, n_worst, worse);
    }
    for (int k = 0; k < nb + nw; k++) {
        if (k >= nb) out[k] = worst[k - nb];
        if (kind) kind[k] = k < nb ? REF_BEST : REF_WORST;
    }
    return nb + nw;
}

int graph_best(const thought_graph *g)
{
    int best = -1;
    for (int i = 0; i < g->n; i++)
        if (g->nodes[i].status == NODE_OK && (best < 0 || better(&g->nodes[i], &g->nodes[best]))) best = i;
    return best;
}

int graph_children(const thought_graph *g, int id, int *out, int max)
{
    int n = 0;
    for (int i = id + 1; i < g->n; i++)
        if (g->nodes[i].parent == id) {
            if (n < max) out[n] = i;
            n++;
        }
    return n;
}

/* ------------------------------------------------------------------ */
/* JSON                                                               */

static const char *const status_names[] = {"pending", "ok", "failed"};

static json_t *files_to_json(const thought_node *nd)
{
    json_t *o = json_object();
    for (int i = 0; i < nd->n_files; i++) {
        char hex[17];
        snprintf(hex, sizeof hex, "%016llx", (unsigned long long)nd->files[i].fnv1a);
        json_object_set_new(o, nd->files[i].name, json_string(hex));
    }
    return o;
}

json_t *graph_to_json(const thought_graph *g)
{
    json_t *nodes = json_array();
    for (int i = 0; i < g->n; i++) {
        const thought_node *nd = &g->nodes[i];
        json_t *children = json_array(), *refs = json_array();
        for (int k = i + 1; k < g->n; k++)
            if (g->nodes[k].parent == i) json_array_append_new(children, json_integer(k));
        for (int k = 0; k < nd->n_refs; k++)
            json_array_append_new(refs, json_pack("{s:i, s:f, s:s}", "id", nd->refs[k], "fitness", nd->ref_fitness[k],
                                                  "kind", nd->ref_kind[k] == REF_WORST ? "worst" : "best"));
        json_t *o = json_pack("{s:i, s:i, s:o, s:o, s:o, s:s, s:f, s:s, s:o, s:{s:I, s:I}, s:f}", "id", nd->id,
                              "iteration", nd->iteration, "parent",
                              nd->parent < 0 ? json_null() : json_integer(nd->parent), "children", children,
                              "references", refs, "reward", nd->reward_path, "fitness", nd->fitness, "status",
                              status_names[nd->status], "feedback",
                              nd->feedback ? json_string(nd->feedback) : json_null(), "tokens", "prompt",
                              (json_int_t)nd->tokens_prompt, "completion", (json_int_t)nd->tokens_completion,
                              "wall_s", nd->wall_s);
        if (nd->n_files >= 0) json_object_set_new(o, "files", files_to_json(nd));
        json_array_append_new(nodes, o);
    }
    json_t *j = json_pack("{s:i, s:s, s:i}", "version", 1, "pe", graph_pe_name(g->pe), "breadth", g->breadth);
    /* only when it is not the rule of graphs made before there were two */
    if (g->ref_rule == GRAPH_REFS_REFERENCE) json_object_set_new(j, "references_rule", json_string("reference"));
    json_object_set_new(j, "nodes", nodes);
    return j;
}

static int fail(char *err, int errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, int errlen, const char *fmt, ...)
{
    if (err && errlen > 0) {
        int n = snprintf(err, (size_t)errlen, "thought graph: ");
        va_list ap;
        va_start(ap, fmt);
        if (n < errlen) vsnprintf(err + n, (size_t)(errlen - n), fmt, ap);
        va_end(ap);
    }
    return -1;
}

static int only_keys(const json_t *o, const char *const *allowed, const char **bad)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)o, key, v) {
        int ok = 0;
        for (int i = 0; allowed[i] && !ok; i++) ok = !strcmp(key, allowed[i]);
        if (!ok) {
            *bad = key;
            return -1;
        }
    }
    return 0;
}

/* A plain integer in [lo, hi]. */
static int get_int(const json_t *o, const char *key, long lo, long hi, long *out)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_integer(v)) return -1;
    json_int_t x = json_integer_value(v);
    if (x < lo || x > hi) return -1;
    *out = (long)x;
    return 0;
}

static int get_real(const json_t *o, const char *key, double lo, double hi, double *out)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_number(v)) return -1;
    double x = json_number_value(v);
    if (!isfinite(x) || x < lo || x > hi) return -1;
    *out = x;
    return 0;
}

static int safe_rel_path(const char *p)
{
    if (strlen(p) >= GRAPH_PATH_MAX || p[0] == '/') return 0;
    for (const char *c = p; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == '\\') return 0;
    /* no ".." component */
    for (const char *c = p; *c;) {
        const char *e = strchr(c, '/');
        size_t n = e ? (size_t)(e - c) : strlen(c);
        if (n == 2 && c[0] == '.' && c[1] == '.') return 0;
        c += n;
        if (*c == '/') c++;
    }
    return 1;
}

/* Exactly 16 lowercase hex digits. */
static int parse_hex64(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    int n = 0;
    for (; s && s[n]; n++) {
        char c = s[n];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0 || n >= 16) return -1;
        v = v << 4 | (uint64_t)d;
    }
    if (n != 16) return -1;
    *out = v;
    return 0;
}

/* A node's "files" (absent: none recorded).  0 or -1. */
static int files_from_json(const json_t *fo, thought_graph *g, int id)
{
    if (!fo) return 0;
    if (!json_is_object(fo) || json_object_size(fo) > GRAPH_MAX_FILES) return -1;
    graph_file files[GRAPH_MAX_FILES];
    int n = 0;
    const char *name;
    json_t *v;
    json_object_foreach((json_t *)fo, name, v) {
        if (!name[0] || strlen(name) >= GRAPH_FILE_NAME_MAX || !safe_rel_path(name) ||
            parse_hex64(json_string_value(v), &files[n].fnv1a))
            return -1;
        snprintf(files[n++].name, GRAPH_FILE_NAME_MAX, "%s", name);
    }
    return graph_set_files(g, id, files, n);
}

/* A node's "references": earlier nodes other than parent (-1: any), no repeats,
 * each with its fitness and kind (absent in graphs from before worst
 * references: best).  0, or -1 with err. */
static int refs_from_json(const json_t *refs, thought_node *nd, int parent, char *err, int errlen)
{
    static const char *const ref_keys[] = {"id", "fitness", "kind", NULL};
    size_t r;
    const json_t *ro;
    const char *bad;
    json_array_foreach(refs, r, ro) {
        long rid;
        double rf;
        const json_t *kj = json_object_get(ro, "kind");
        const char *ks = kj ? json_string_value(kj) : "best";
        int ok = json_is_object(ro) && !only_keys(ro, ref_keys, &bad) && !get_int(ro, "id", 0, nd->id - 1, &rid) &&
                 rid != parent && !get_real(ro, "fitness", 0, 1, &rf) && ks &&
                 (!strcmp(ks, "best") || !strcmp(ks, "worst"));
        for (size_t k = 0; ok && k < r; k++) ok = nd->refs[k] != rid;
        if (!ok)
            return fail(err, errlen,
                        "node %d: each reference must be {\"id\":earlier node other than the parent (but under "
                        "the reference rule), \"fitness\":0..1, \"kind\":\"best\"|\"worst\"}, no repeats",
                        nd->id);
        nd->refs[r] = (int)rid;
        nd->ref_fitness[r] = rf;
        nd->ref_kind[r] = !strcmp(ks, "worst") ? REF_WORST : REF_BEST;
        nd->n_refs = (int)r + 1;
    }
    return 0;
}

static const char *const node_keys[] = {"id", "iteration", "parent", "children", "references", "reward",
                                        "fitness", "status", "feedback", "tokens", "wall_s", "files", NULL};

/* Node id's place: its id, iteration and parent, added to g.  *parent: the
 * parent's id or -1.  0, or -1 with err. */
static int node_place_from_json(const json_t *o, int id, thought_graph *g, long *parent, char *err, int errlen)
{
    const char *bad = NULL;
    long v, iteration;
    if (!json_is_object(o)) return fail(err, errlen, "node %d: expected an object", id);
    if (only_keys(o, node_keys, &bad)) return fail(err, errlen, "node %d: unexpected field '%.40s'", id, bad);
    if (get_int(o, "id", id, id, &v)) return fail(err, errlen, "node %d: 'id' must equal its position %d", id, id);
    if (get_int(o, "iteration", 1, 1000000, &iteration))
        return fail(err, errlen, "node %d: 'iteration' must be a positive integer", id);
    const json_t *pj = json_object_get(o, "parent");
    *parent = -1;
    if (!pj || (!json_is_null(pj) && get_int(o, "parent", 0, id - 1, parent)))
        return fail(err, errlen, "node %d: 'parent' must be null or the id of an earlier node", id);
    if (graph_add(g, (int)iteration, (int)*parent) != id) return fail(err, errlen, "node %d: out of memory", id);
    return 0;
}

/* Node id's outcome: status, fitness and reward path.  0, or -1 with err. */
static int node_outcome_from_json(const json_t *o, thought_node *nd, char *err, int errlen)
{
    int id = nd->id;
    const char *st = json_string_value(json_object_get(o, "status"));
    int status = -1;
    for (int k = 0; st && k < 3; k++)
        if (!strcmp(st, status_names[k])) status = k;
    if (status < 0) return fail(err, errlen, "node %d: 'status' must be pending, ok or failed", id);
    nd->status = status;
    if (get_real(o, "fitness", 0, 1, &nd->fitness))
        return fail(err, errlen, "node %d: 'fitness' must be a number in [0,1]", id);
    if (status == NODE_FAILED && nd->fitness != 0) return fail(err, errlen, "node %d: a failed node has fitness 0", id);
    const char *rw = json_string_value(json_object_get(o, "reward"));
    if (!rw || !safe_rel_path(rw))
        return fail(err, errlen, "node %d: 'reward' must be a relative path inside the run directory", id);
    if (status == NODE_OK && !rw[0]) return fail(err, errlen, "node %d: an ok node needs its reward path", id);
    snprintf(nd->reward_path, sizeof nd->reward_path, "%s", rw);
    return 0;
}

/* Node id's record: feedback, tokens, wall time, files and references.
 * 0, or -1 with err. */
static int node_record_from_json(const json_t *o, thought_graph *g, int id, int parent, char *err, int errlen)
{
    static const char *const tok_keys[] = {"prompt", "completion", NULL};
    const char *bad = NULL;
    thought_node *nd = &g->nodes[id];
    const json_t *fb = json_object_get(o, "feedback");
    if (!fb || (!json_is_null(fb) && !json_is_string(fb)))
        return fail(err, errlen, "node %d: 'feedback' must be a string or null", id);
    if (json_is_string(fb) && graph_set_feedback(g, id, json_string_value(fb)))
        return fail(err, errlen, "node %d: out of memory", id);
    const json_t *tk = json_object_get(o, "tokens");
    if (!json_is_object(tk) || only_keys(tk, tok_keys, &bad) ||
        get_int(tk, "prompt", 0, 1L << 40, &nd->tokens_prompt) ||
        get_int(tk, "completion", 0, 1L << 40, &nd->tokens_completion))
        return fail(err, errlen, "node %d: 'tokens' must be {\"prompt\":N,\"completion\":N} with N >= 0", id);
    if (get_real(o, "wall_s", 0, 1e9, &nd->wall_s))
        return fail(err, errlen, "node %d: 'wall_s' must be a number >= 0", id);
    if (files_from_json(json_object_get(o, "files"), g, id))
        return fail(err, errlen, "node %d: 'files' must map at most %d relative file names to 16 hex digits", id,
                    GRAPH_MAX_FILES);
    const json_t *refs = json_object_get(o, "references");
    if (!json_is_array(refs) || json_array_size(refs) > GRAPH_MAX_REFS)
        return fail(err, errlen, "node %d: 'references' must be an array of at most %d", id, GRAPH_MAX_REFS);
    /* under the reference rule the parent may be a reference too */
    return refs_from_json(refs, nd, g->ref_rule == GRAPH_REFS_REFERENCE ? -1 : parent, err, errlen);
}

/* Children are derived from parents; the stored lists must agree, and
 * stay within the breadth.  0, or -1 with err. */
static int children_match(const json_t *nodes, const thought_graph *g, char *err, int errlen)
{
    size_t i;
    const json_t *o;
    json_array_foreach(nodes, i, o) {
        const json_t *ch = json_object_get(o, "children");
        int want[GRAPH_MAX_NODES];
        int n = graph_children(g, (int)i, want, GRAPH_MAX_NODES);
        int ok = json_is_array(ch) && json_array_size(ch) == (size_t)n;
        for (int k = 0; ok && k < n; k++) {
            const json_t *c = json_array_get(ch, (size_t)k);
            ok = json_is_integer(c) && json_integer_value(c) == want[k];
        }
        if (!ok) return fail(err, errlen, "node %d: 'children' does not match the parents of the other nodes", (int)i);
        if (g->pe != PE_COT && n > g->breadth)
            return fail(err, errlen, "node %d: %d children, more than the breadth %d", (int)i, n, g->breadth);
    }
    return 0;
}

int graph_from_json(const json_t *j, thought_graph *g, char *err, int errlen)
{
    static const char *const top_keys[] = {"version", "pe", "breadth", "references_rule", "nodes", NULL};
    const char *bad = NULL;
    long v;
    memset(g, 0, sizeof *g);
    if (!json_is_object(j)) return fail(err, errlen, "expected a JSON object");
    if (only_keys(j, top_keys, &bad)) return fail(err, errlen, "unexpected field '%.40s'", bad);
    if (get_int(j, "version", 1, 1, &v)) return fail(err, errlen, "'version' must be 1");
    int pe = graph_pe_from_name(json_string_value(json_object_get(j, "pe")));
    if (pe < 0) return fail(err, errlen, "'pe' must be cot, tot or got");
    long breadth;
    if (get_int(j, "breadth", 1, GRAPH_MAX_BREADTH, &breadth))
        return fail(err, errlen, "'breadth' must be an integer 1..%d", GRAPH_MAX_BREADTH);
    if (pe == PE_COT && breadth != 1) return fail(err, errlen, "a CoT graph has breadth 1");
    const json_t *nodes = json_object_get(j, "nodes");
    if (!json_is_array(nodes)) return fail(err, errlen, "'nodes' must be an array");
    if (json_array_size(nodes) > GRAPH_MAX_NODES) return fail(err, errlen, "more than %d nodes", GRAPH_MAX_NODES);
    graph_init(g, pe, (int)breadth);
    const json_t *rule = json_object_get(j, "references_rule");
    if (rule && !(json_is_string(rule) && !strcmp(json_string_value(rule), "reference"))) {
        graph_free(g);
        return fail(err, errlen, "'references_rule' must be \"reference\" (or absent: engine)");
    }
    if (rule) g->ref_rule = GRAPH_REFS_REFERENCE;

    size_t i;
    const json_t *o;
    json_array_foreach(nodes, i, o) {
        int id = (int)i;
        long parent = -1;
        if (node_place_from_json(o, id, g, &parent, err, errlen) ||
            node_outcome_from_json(o, &g->nodes[id], err, errlen) ||
            node_record_from_json(o, g, id, (int)parent, err, errlen))
            goto out;
    }
    if (children_match(nodes, g, err, errlen)) goto out;
    return 0;
out:
    graph_free(g);
    return -1;
}

int graph_save(const thought_graph *g, const char *path)
{
    json_t *j = graph_to_json(g);
    if (!j) return -1;
    char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(j);
    if (!s) return -1;
    size_t n = strlen(s);
    s[n] = '\n'; /* json_dumps leaves room for its NUL: reuse it for a newline */
    int rc = write_file_atomic(path, s, n + 1);
    free(s);
    return rc;
}

int graph_load(const char *path, thought_graph *g, char *err, int errlen)
{
    long len;
    char rerr[300];
    memset(g, 0, sizeof *g);
    char *text = read_file(path, 64L << 20, &len, rerr, sizeof rerr);
    if (!text) return fail(err, errlen, "%s", rerr);
    json_error_t je;
    json_t *j = json_loadb(text, (size_t)len, JSON_REJECT_DUPLICATES, &je);
    free(text);
    if (!j) return fail(err, errlen, "%s: line %d: %s", path, je.line, je.text);
    int rc = graph_from_json(j, g, err, errlen);
    json_decref(j);
    return rc;
}
