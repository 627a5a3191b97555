/* Thought graph: parent selection, GoT references, JSON round trip and
 * strict loading. */
#include "harness.h"
#include "graph.h"
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Add a finished node: status ok with fitness f, or failed when f < 0. */
static int add(thought_graph *g, int iteration, int parent, double f)
{
    int id = graph_add(g, iteration, parent);
    assert_true(id >= 0);
    char path[64];
    if (f >= 0) {
        snprintf(path, sizeof path, "nodes/%d/reward.c", id);
        snprintf(g->nodes[id].reward_path, sizeof g->nodes[id].reward_path, "%s", path);
        assert_int_equal(graph_finish(g, id, NODE_OK, f), 0);
    } else {
        assert_int_equal(graph_finish(g, id, NODE_FAILED, 0.7), 0);
    }
    return id;
}

static void graph_cot_parent_is_latest_valid(void **state)
{
    (void)state;
    thought_graph g;
    assert_int_equal(graph_init(&g, PE_COT, 2), 0);
    assert_int_equal(g.breadth, 1);
    assert_int_equal(graph_select_parent(&g), -1); /* empty: template */
    add(&g, 1, -1, 0.9);
    assert_int_equal(graph_select_parent(&g), 0);
    add(&g, 2, 0, 0.1); /* worse, but the latest */
    assert_int_equal(graph_select_parent(&g), 1);
    add(&g, 3, 1, -1); /* failed: no reward to refine */
    assert_int_equal(g.nodes[2].fitness, 0.0);
    assert_int_equal(graph_select_parent(&g), 1);
    int pending = graph_add(&g, 4, 1);
    assert_int_equal(pending, 3);
    assert_int_equal(graph_select_parent(&g), 1);
    graph_free(&g);
}

static void graph_tot_parent_best_with_room(void **state)
{
    (void)state;
    thought_graph g;
    assert_int_equal(graph_init(&g, PE_TOT, 2), 0);
    add(&g, 1, -1, 0.2);                           /* 0 */
    assert_int_equal(graph_select_parent(&g), 0);
    add(&g, 2, 0, 0.5);                            /* 1 */
    assert_int_equal(graph_select_parent(&g), 1);
    add(&g, 3, 1, 0.3);                            /* 2 */
    assert_int_equal(graph_select_parent(&g), 1); /* 1 has one child: room left */
    add(&g, 4, 1, 0.4);                            /* 3: node 1 is full now */
    assert_int_equal(g.nodes[1].n_children, 2);
    assert_int_equal(graph_select_parent(&g), 3); /* best with room: 0.4 */
    add(&g, 5, 3, -1);                             /* 4 failed, uses a slot of 3 */
    assert_int_equal(graph_select_parent(&g), 3);
    add(&g, 6, 3, 0.1);                            /* 5: node 3 full */
    assert_int_equal(graph_select_parent(&g), 2); /* 0.3 */
    /* Ties go to the lowest id. */
    thought_graph t;
    graph_init(&t, PE_TOT, 2);
    add(&t, 1, -1, 0.5);
    add(&t, 2, 0, 0.5);
    add(&t, 3, 0, 0.5); /* 0 is full */
    assert_int_equal(graph_select_parent(&t), 1);
    graph_free(&t);
    /* Nothing eligible: back to the template. */
    graph_init(&t, PE_TOT, 1);
    add(&t, 1, -1, 0.5);
    add(&t, 2, 0, -1);
    assert_int_equal(graph_select_parent(&t), -1);
    graph_free(&t);
    graph_free(&g);
}

static void graph_got_parent_and_references(void **state)
{
    (void)state;
    thought_graph g;
    int refs[GRAPH_MAX_REFS], kinds[GRAPH_MAX_REFS];
    assert_int_equal(graph_init(&g, PE_GOT, 2), 0);
    assert_int_equal(graph_references(&g, -1, 2, 0, refs, kinds), 0);
    add(&g, 1, -1, 0.3); /* 0 */
    assert_int_equal(graph_references(&g, 0, 2, 0, refs, kinds), 0);
    add(&g, 2, 0, 0.6); /* 1 */
    /* node 2 refines node 1: node 1 is also the previous iteration, node 0 is left */
    assert_int_equal(graph_references(&g, 1, 2, 0, refs, kinds), 1);
    assert_int_equal(refs[0], 0);
    assert_int_equal(kinds[0], REF_BEST);
    /* refining node 0: the previous iteration (node 1) is never a reference */
    assert_int_equal(graph_references(&g, 0, 2, 0, refs, kinds), 0);
    add(&g, 3, 1, 0.6); /* 2: ties node 1 */
    add(&g, 4, 1, 0.9); /* 3 */
    add(&g, 5, 3, -1);  /* 4 failed: never a reference */
    add(&g, 6, 0, 0.6); /* 5 */
    /* node 3 (0.9) has one child; parent selection picks it */
    int p = graph_select_parent(&g);
    assert_int_equal(p, 3);
    /* without the parent and node 5 (the previous iteration): 1 and 2 (0.6,
     * lowest id first), then 0 */
    assert_int_equal(graph_references(&g, p, 2, 0, refs, kinds), 2);
    assert_int_equal(refs[0], 1);
    assert_int_equal(refs[1], 2);
    /* When the parent is not the best, the best is a reference. */
    assert_int_equal(graph_references(&g, 2, 2, 0, refs, kinds), 2);
    assert_int_equal(refs[0], 3);
    assert_int_equal(refs[1], 1);
    /* best and worst: the worst never repeat a best one */
    assert_int_equal(graph_references(&g, p, 1, 2, refs, kinds), 3);
    assert_int_equal(refs[0], 1);
    assert_int_equal(kinds[0], REF_BEST);
    assert_int_equal(refs[1], 0); /* 0.3 */
    assert_int_equal(kinds[1], REF_WORST);
    assert_int_equal(refs[2], 2); /* 0.6 */
    assert_int_equal(kinds[2], REF_WORST);
    assert_int_equal(graph_references(&g, p, 0, 1, refs, kinds), 1);
    assert_int_equal(refs[0], 0);
    assert_int_equal(graph_references(&g, p, 0, 0, refs, kinds), 0);
    /* more than there are: every eligible node once */
    assert_int_equal(graph_references(&g, p, 4, 4, refs, NULL), 3);
    assert_int_equal(graph_best(&g), 3);
    int ch[4];
    assert_int_equal(graph_children(&g, 1, ch, 4), 2);
    assert_int_equal(ch[0], 2);
    assert_int_equal(ch[1], 3);
    graph_free(&g);
}

static void graph_rejects_bad_arguments(void **state)
{
    (void)state;
    thought_graph g;
    assert_int_equal(graph_init(&g, 7, 2), -1);
    assert_int_equal(graph_init(&g, PE_TOT, 0), -1);
    assert_int_equal(graph_init(&g, PE_TOT, GRAPH_MAX_BREADTH + 1), -1);
    assert_int_equal(graph_pe_from_name("got"), PE_GOT);
    assert_int_equal(graph_pe_from_name("GoT?"), -1);
    assert_int_equal(graph_pe_from_name(NULL), -1);
    graph_init(&g, PE_TOT, 2);
    assert_int_equal(graph_add(&g, 1, 0), -1); /* no node 0 yet */
    assert_int_equal(graph_add(&g, 0, -1), -1);
    int id = graph_add(&g, 1, -1);
    assert_int_equal(graph_finish(&g, id, NODE_OK, 1.5), -1);
    assert_int_equal(graph_finish(&g, id, NODE_OK, 0.0 / 0.0), -1);
    assert_int_equal(graph_finish(&g, id, NODE_PENDING, 0.5), -1);
    assert_int_equal(graph_finish(&g, 9, NODE_OK, 0.5), -1);
    graph_free(&g);
}

static void build_sample(thought_graph *g)
{
    graph_init(g, PE_GOT, 2);
    add(g, 1, -1, 0.25);
    add(g, 2, 0, 0.5);
    add(g, 3, 1, 0.1);
    add(g, 4, 1, -1);
    int refs[GRAPH_MAX_REFS], kinds[GRAPH_MAX_REFS];
    /* node 4 refines node 2: node 3 (failed, the previous iteration) is out */
    int n = graph_references(g, 2, 1, 1, refs, kinds);
    assert_int_equal(n, 2);
    int id = add(g, 5, 2, 2.0 / 3.0);
    g->nodes[id].n_refs = n;
    for (int k = 0; k < n; k++) {
        g->nodes[id].refs[k] = refs[k];
        g->nodes[id].ref_kind[k] = kinds[k];
        g->nodes[id].ref_fitness[k] = g->nodes[refs[k]].fitness;
    }
    graph_set_feedback(g, 0, "Problem: the BAT is not met in 20 of 30 levels.\n\"quoted\" \\ ok");
    graph_set_feedback(g, 3, "reward rejected: compile error");
    g->nodes[1].tokens_prompt = 1234;
    g->nodes[1].tokens_completion = 567;
    g->nodes[1].wall_s = 12.5;
    const graph_file files[2] = {{"reward.c", 0x0123456789abcdefULL}, {"levels/level_000.txt", 42}};
    assert_int_equal(graph_set_files(g, 1, files, 2), 0);
    assert_int_equal(graph_set_files(g, 3, NULL, 0), 0); /* recorded: nothing */
    graph_add(g, 6, 4); /* pending */
}

static void graph_json_round_trip(void **state)
{
    (void)state;
    thought_graph g, back;
    build_sample(&g);
    char path[512], err[300];
    snprintf(path, sizeof path, "%s/graph.json", pcg_test_tmpdir());
    assert_int_equal(graph_save(&g, path), 0);
    if (graph_load(path, &back, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(back.n, g.n);
    assert_int_equal(back.pe, PE_GOT);
    assert_int_equal(back.breadth, 2);
    for (int i = 0; i < g.n; i++) {
        const thought_node *a = &g.nodes[i], *b = &back.nodes[i];
        assert_int_equal(a->iteration, b->iteration);
        assert_int_equal(a->parent, b->parent);
        assert_int_equal(a->n_children, b->n_children);
        assert_int_equal(a->status, b->status);
        assert_true(a->fitness == b->fitness);
        assert_string_equal(a->reward_path, b->reward_path);
        assert_int_equal(!a->feedback, !b->feedback);
        if (a->feedback) assert_string_equal(a->feedback, b->feedback);
        assert_int_equal(a->tokens_prompt, b->tokens_prompt);
        assert_int_equal(a->tokens_completion, b->tokens_completion);
        assert_true(a->wall_s == b->wall_s);
        assert_int_equal(a->n_files, b->n_files);
        for (int k = 0; k < a->n_files; k++) {
            assert_string_equal(a->files[k].name, b->files[k].name);
            assert_true(a->files[k].fnv1a == b->files[k].fnv1a);
        }
        assert_int_equal(a->n_refs, b->n_refs);
        for (int k = 0; k < a->n_refs; k++) {
            assert_int_equal(a->refs[k], b->refs[k]);
            assert_true(a->ref_fitness[k] == b->ref_fitness[k]);
            assert_int_equal(a->ref_kind[k], b->ref_kind[k]);
        }
    }
    assert_int_equal(back.nodes[4].n_refs, 2);
    assert_int_equal(back.nodes[4].refs[0], 1);
    assert_int_equal(back.nodes[4].refs[1], 0);
    assert_int_equal(back.nodes[5].status, NODE_PENDING);
    /* checksums as 16 hex digits; absent "files": none recorded */
    assert_int_equal(back.nodes[0].n_files, -1);
    assert_int_equal(back.nodes[3].n_files, 0);
    assert_int_equal(back.nodes[5].n_files, -1);
    const graph_file *rf = graph_find_file(&back.nodes[1], "reward.c");
    assert_non_null(rf);
    assert_true(rf->fnv1a == 0x0123456789abcdefULL);
    assert_null(graph_find_file(&back.nodes[1], "eval.json"));
    char line[256];
    assert_int_equal(pcg_test_sh(line, sizeof line, "grep -c '\"reward.c\": \"0123456789abcdef\"' '%s'", path), 0);
    /* Same selection after the round trip. */
    assert_int_equal(graph_select_parent(&back), graph_select_parent(&g));
    /* Saving the loaded graph gives the same bytes. */
    char path2[512];
    snprintf(path2, sizeof path2, "%s/graph2.json", pcg_test_tmpdir());
    assert_int_equal(graph_save(&back, path2), 0);
    char out[64];
    assert_int_equal(pcg_test_sh(out, sizeof out, "cmp -s '%s' '%s'", path, path2), 0);
    graph_free(&g);
    graph_free(&back);
}

/* Take the sample graph's JSON, apply one edit, expect rejection naming
 * `word`. */
static void expect_rejected(void (*edit)(json_t *), const char *word)
{
    thought_graph g, back;
    build_sample(&g);
    json_t *j = graph_to_json(&g);
    graph_free(&g);
    edit(j);
    char err[300] = "";
    int rc = graph_from_json(j, &back, err, sizeof err);
    json_decref(j);
    if (rc == 0) {
        graph_free(&back);
        fail_msg("accepted a graph that should fail with '%s'", word);
    }
    if (!strstr(err, word)) fail_msg("error '%s' lacks '%s'", err, word);
    assert_int_equal(back.n, 0);
    assert_null(back.nodes);
}

static json_t *node(json_t *j, int i) { return json_array_get(json_object_get(j, "nodes"), (size_t)i); }
static void e_version(json_t *j) { json_object_set_new(j, "version", json_integer(2)); }
static void e_pe(json_t *j) { json_object_set_new(j, "pe", json_string("bfs")); }
static void e_breadth(json_t *j) { json_object_set_new(j, "breadth", json_integer(0)); }
static void e_topkey(json_t *j) { json_object_set_new(j, "extra", json_true()); }
static void e_nodes(json_t *j) { json_object_set_new(j, "nodes", json_object()); }
static void e_id(json_t *j) { json_object_set_new(node(j, 2), "id", json_integer(7)); }
static void e_parent_future(json_t *j) { json_object_set_new(node(j, 1), "parent", json_integer(3)); }
static void e_parent_self(json_t *j) { json_object_set_new(node(j, 1), "parent", json_integer(1)); }
static void e_parent_missing(json_t *j) { json_object_del(node(j, 1), "parent"); }
static void e_fitness(json_t *j) { json_object_set_new(node(j, 1), "fitness", json_real(1.5)); }
static void e_fitness_str(json_t *j) { json_object_set_new(node(j, 1), "fitness", json_string("0.5")); }
static void e_failed_fit(json_t *j) { json_object_set_new(node(j, 3), "fitness", json_real(0.5)); }
static void e_status(json_t *j) { json_object_set_new(node(j, 0), "status", json_string("done")); }
static void e_children(json_t *j) { json_array_append_new(json_object_get(node(j, 0), "children"), json_integer(3)); }
static void e_reward_abs(json_t *j) { json_object_set_new(node(j, 0), "reward", json_string("/etc/passwd")); }
static void e_reward_up(json_t *j) { json_object_set_new(node(j, 0), "reward", json_string("nodes/../../x.c")); }
static void e_reward_ok_empty(json_t *j) { json_object_set_new(node(j, 0), "reward", json_string("")); }
static void e_iteration(json_t *j) { json_object_set_new(node(j, 0), "iteration", json_integer(0)); }
static void e_tokens(json_t *j) { json_object_set_new(json_object_get(node(j, 1), "tokens"), "prompt", json_integer(-1)); }
static void e_wall(json_t *j) { json_object_set_new(node(j, 1), "wall_s", json_string("fast")); }
static void e_feedback(json_t *j) { json_object_set_new(node(j, 1), "feedback", json_integer(3)); }
static void e_nodekey(json_t *j) { json_object_set_new(node(j, 1), "score", json_real(0.5)); }
static void e_ref_parent(json_t *j)
{
    json_object_set_new(json_array_get(json_object_get(node(j, 4), "references"), 0), "id", json_integer(2));
}
static void e_ref_later(json_t *j)
{
    json_object_set_new(json_array_get(json_object_get(node(j, 4), "references"), 0), "id", json_integer(4));
}
static void e_node_type(json_t *j) { json_array_set_new(json_object_get(j, "nodes"), 1, json_string("node")); }
static void e_breadth_exceeded(json_t *j) { json_object_set_new(j, "breadth", json_integer(1)); }
static void set_file(json_t *j, const char *name, json_t *v)
{
    json_t *f = json_object();
    json_object_set_new(f, name, v);
    json_object_set_new(node(j, 1), "files", f);
}
static void e_files_type(json_t *j) { json_object_set_new(node(j, 1), "files", json_array()); }
static void e_files_short(json_t *j) { set_file(j, "reward.c", json_string("0123")); }
static void e_files_upper(json_t *j) { set_file(j, "reward.c", json_string("0123456789ABCDEF")); }
static void e_files_number(json_t *j) { set_file(j, "reward.c", json_integer(7)); }
static void e_files_up(json_t *j) { set_file(j, "../x.c", json_string("0123456789abcdef")); }
static void e_files_abs(json_t *j) { set_file(j, "/etc/passwd", json_string("0123456789abcdef")); }
static void e_files_long(json_t *j)
{
    char name[80];
    memset(name, 'a', sizeof name - 1);
    name[sizeof name - 1] = 0;
    set_file(j, name, json_string("0123456789abcdef"));
}

static void graph_json_rejects_malformed(void **state)
{
    (void)state;
    expect_rejected(e_version, "version");
    expect_rejected(e_pe, "'pe'");
    expect_rejected(e_breadth, "breadth");
    expect_rejected(e_topkey, "unexpected field 'extra'");
    expect_rejected(e_nodes, "'nodes'");
    expect_rejected(e_id, "node 2: 'id'");
    expect_rejected(e_parent_future, "node 1: 'parent'");
    expect_rejected(e_parent_self, "node 1: 'parent'");
    expect_rejected(e_parent_missing, "node 1: 'parent'");
    expect_rejected(e_fitness, "node 1: 'fitness'");
    expect_rejected(e_fitness_str, "node 1: 'fitness'");
    expect_rejected(e_failed_fit, "node 3: a failed node has fitness 0");
    expect_rejected(e_status, "node 0: 'status'");
    expect_rejected(e_children, "node 0: 'children'");
    expect_rejected(e_reward_abs, "node 0: 'reward'");
    expect_rejected(e_reward_up, "node 0: 'reward'");
    expect_rejected(e_reward_ok_empty, "node 0: an ok node needs its reward path");
    expect_rejected(e_iteration, "node 0: 'iteration'");
    expect_rejected(e_tokens, "node 1: 'tokens'");
    expect_rejected(e_wall, "node 1: 'wall_s'");
    expect_rejected(e_feedback, "node 1: 'feedback'");
    expect_rejected(e_nodekey, "node 1: unexpected field 'score'");
    expect_rejected(e_ref_parent, "node 4: each reference");
    expect_rejected(e_ref_later, "node 4: each reference");
    expect_rejected(e_node_type, "node 1: expected an object");
    expect_rejected(e_breadth_exceeded, "more than the breadth");
    expect_rejected(e_files_type, "node 1: 'files'");
    expect_rejected(e_files_short, "node 1: 'files'");
    expect_rejected(e_files_upper, "node 1: 'files'");
    expect_rejected(e_files_number, "node 1: 'files'");
    expect_rejected(e_files_up, "node 1: 'files'");
    expect_rejected(e_files_abs, "node 1: 'files'");
    expect_rejected(e_files_long, "node 1: 'files'");

    /* Files: missing, not JSON, not an object. */
    thought_graph g;
    char err[300], path[512];
    snprintf(path, sizeof path, "%s/nope.json", pcg_test_tmpdir());
    assert_int_equal(graph_load(path, &g, err, sizeof err), -1);
    assert_non_null(strstr(err, "cannot open"));
    snprintf(path, sizeof path, "%s/bad.json", pcg_test_tmpdir());
    FILE *f = fopen(path, "w");
    fputs("{\"version\": 1, \"pe\": \"cot\",", f);
    fclose(f);
    assert_int_equal(graph_load(path, &g, err, sizeof err), -1);
    assert_non_null(strstr(err, "line"));
    f = fopen(path, "w");
    fputs("[]", f);
    fclose(f);
    assert_int_equal(graph_load(path, &g, err, sizeof err), -1);
    assert_non_null(strstr(err, "expected a JSON object"));
}

/* Only the last node can be made pending again; it loses its outcome. */
static void graph_reopen_last_only(void **state)
{
    (void)state;
    thought_graph g;
    assert_int_equal(graph_init(&g, PE_TOT, 2), 0);
    add(&g, 1, -1, 0.4);
    add(&g, 2, 0, 0.6);
    graph_set_feedback(&g, 1, "Problem: x");
    const graph_file f = {"eval.json", 1};
    assert_int_equal(graph_set_files(&g, 1, &f, 1), 0);
    assert_int_equal(graph_reopen(&g, 0), -1);
    assert_int_equal(g.nodes[0].status, NODE_OK);
    assert_int_equal(graph_reopen(&g, 2), -1);
    assert_int_equal(graph_reopen(&g, 1), 0);
    const thought_node *nd = &g.nodes[1];
    assert_int_equal(nd->status, NODE_PENDING);
    assert_true(nd->fitness == 0);
    assert_string_equal(nd->reward_path, "");
    assert_null(nd->feedback);
    assert_int_equal(nd->n_files, -1);
    assert_int_equal(g.nodes[0].n_children, 1); /* still its parent's child */
    assert_int_equal(graph_set_files(&g, 1, &f, GRAPH_MAX_FILES + 1), -1);
    graph_free(&g);
}

/* --got-refs reference: the previous iteration is left out, the parent is
 * not, and the graph keeps the rule, with which it may hold the parent as
 * a reference; without the rule such a graph is refused. */
static void graph_reference_rule(void **state)
{
    (void)state;
    thought_graph g, back;
    int refs[GRAPH_MAX_REFS], kinds[GRAPH_MAX_REFS];
    char err[256];
    assert_int_equal(graph_init(&g, PE_GOT, 2), 0);
    assert_int_equal(g.ref_rule, GRAPH_REFS_ENGINE);
    g.ref_rule = GRAPH_REFS_REFERENCE;
    add(&g, 1, -1, 0.3); /* 0 */
    add(&g, 2, 0, 0.9);  /* 1 */
    add(&g, 3, 0, 0.6);  /* 2 */
    /* refining node 1: the best are node 1 (the parent) and node 0; node 2 is the previous iteration */
    assert_int_equal(graph_references(&g, 1, 2, 0, refs, kinds), 2);
    assert_int_equal(refs[0], 1);
    assert_int_equal(refs[1], 0);
    int id = graph_add(&g, 4, 1);
    g.nodes[id].n_refs = 2;
    for (int k = 0; k < 2; k++) g.nodes[id].refs[k] = refs[k], g.nodes[id].ref_fitness[k] = g.nodes[refs[k]].fitness;
    json_t *j = graph_to_json(&g);
    assert_string_equal(json_string_value(json_object_get(j, "references_rule")), "reference");
    if (graph_from_json(j, &back, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(back.ref_rule, GRAPH_REFS_REFERENCE);
    assert_int_equal(back.nodes[3].refs[0], 1);
    graph_free(&back);
    json_object_set_new(j, "references_rule", json_string("engines"));
    assert_int_equal(graph_from_json(j, &back, err, sizeof err), -1);
    assert_non_null(strstr(err, "'references_rule'"));
    json_object_del(j, "references_rule");
    assert_int_equal(graph_from_json(j, &back, err, sizeof err), -1);
    assert_non_null(strstr(err, "node 3: each reference"));
    json_decref(j);
    /* the engine's rule writes no field, as graphs made before it */
    g.ref_rule = GRAPH_REFS_ENGINE;
    j = graph_to_json(&g);
    assert_null(json_object_get(j, "references_rule"));
    json_decref(j);
    graph_free(&g);
}

PCG_TESTS(graph, cmocka_unit_test(graph_cot_parent_is_latest_valid), cmocka_unit_test(graph_tot_parent_best_with_room),
          cmocka_unit_test(graph_got_parent_and_references), cmocka_unit_test(graph_rejects_bad_arguments),
          cmocka_unit_test(graph_json_round_trip), cmocka_unit_test(graph_json_rejects_malformed), cmocka_unit_test(graph_reopen_last_only),
          cmocka_unit_test(graph_reference_rule))
