/* `run --accept always|improve` and the grid axes --accept and
 * --target-fitness: the parent rule in the graph, config.json, the loop
 * against scripted fitness (a revision that scores lower), a resume, and
 * grids that vary them.  Budgets are tiny: these tests check the loop, not
 * what it learns. */
#include "harness.h"
#include "graph.h"
#include "grid.h"
#include "run_config.h"
#include "util.h"
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUDGET "--preset tiny --steps 256 --envs 2 --threads 1 --align 1 --check-envs 4 --levels 4 --quiet"
#define KEY_ENV "PCG_ACCEPT_TEST_KEY"
/* the model judges the levels, so the scripts choose every node's fitness */
#define SCRIPTED "--llm openai --model fake-coder --api-key-env " KEY_ENV " --llm-retries 1 --llm-backoff 0.01 " \
                 "--llm-timeout 20 --prompts rich --fitness llm --scenario 1 " BUDGET

/* Node i: a child of parent (-1: a root) that finished with fitness f. */
static void add_node(thought_graph *g, int parent, double f)
{
    int id = graph_add(g, g->n + 1, parent);
    assert_true(id >= 0);
    snprintf(g->nodes[id].reward_path, sizeof g->nodes[id].reward_path, "nodes/%03d/reward.c", id);
    assert_int_equal(graph_finish(g, id, NODE_OK, f), 0);
}

/* The parent each rule picks, on the same graph. */
static void expect_parents(thought_graph *g, int always, int improve)
{
    g->accept = GRAPH_ACCEPT_ALWAYS;
    assert_int_equal(graph_select_parent(g), always);
    g->accept = GRAPH_ACCEPT_IMPROVE;
    assert_int_equal(graph_select_parent(g), improve);
}

static void accept_graph_parent_rules(void **state)
{
    (void)state;
    thought_graph g;
    /* CoT: the latest node, or the best so far (ties: the earlier) */
    assert_int_equal(graph_init(&g, PE_COT, 1), 0);
    assert_int_equal(g.accept, GRAPH_ACCEPT_ALWAYS);
    expect_parents(&g, -1, -1);
    add_node(&g, -1, 0.6);
    expect_parents(&g, 0, 0);
    add_node(&g, 0, 0.3); /* worse: kept, not built on */
    expect_parents(&g, 1, 0);
    add_node(&g, 0, 0.8);
    expect_parents(&g, 2, 2);
    add_node(&g, 2, 0.8); /* a tie is no improvement */
    expect_parents(&g, 3, 2);
    int failed = graph_add(&g, g.n + 1, 2);
    assert_int_equal(graph_finish(&g, failed, NODE_FAILED, 0), 0);
    expect_parents(&g, 3, 2);
    graph_free(&g);
    /* ToT: only roots and nodes that scored above their parent are expanded */
    assert_int_equal(graph_init(&g, PE_TOT, 2), 0);
    add_node(&g, -1, 0.5);
    add_node(&g, 0, 0.4);
    add_node(&g, 0, 0.45); /* node 0 is full; neither child improved on it */
    expect_parents(&g, 2, -1);
    add_node(&g, -1, 0.2);
    add_node(&g, 3, 0.3);
    expect_parents(&g, 2, 4);
    graph_free(&g);
}

static void accept_config_round_trip(void **state)
{
    (void)state;
    run_config c, back;
    char err[256];
    run_config_defaults(&c);
    assert_int_equal(c.accept, GRAPH_ACCEPT_ALWAYS);
    char *argv[] = {"run", "--scenario", "2", "--accept", "improve", "--target-fitness", "0.75"};
    assert_int_equal(run_config_from_flags(&c, 7, argv, err, sizeof err), 0);
    assert_int_equal(c.accept, GRAPH_ACCEPT_IMPROVE);
    json_t *o = run_config_to_json(&c);
    assert_string_equal(json_string_value(json_object_get(o, "accept")), "improve");
    run_config_defaults(&back);
    assert_int_equal(run_config_from_json(o, &back, err, sizeof err), 0);
    assert_int_equal(back.accept, GRAPH_ACCEPT_IMPROVE);
    assert_near(back.target_fitness, 0.75, 0);
    /* a config.json from before the option: every revision was built on */
    json_object_del(o, "accept");
    assert_int_equal(run_config_from_json(o, &back, err, sizeof err), 0);
    assert_int_equal(back.accept, GRAPH_ACCEPT_ALWAYS);
    json_object_set_new(o, "accept", json_string("sometimes"));
    assert_int_equal(run_config_from_json(o, &back, err, sizeof err), -1);
    assert_non_null(strstr(err, "'accept'"));
    json_decref(o);
    /* none names the default: no early stop */
    char *none[] = {"run", "--scenario", "1", "--target-fitness", "0.5", "--target-fitness", "none"};
    assert_int_equal(run_config_from_flags(&c, 7, none, err, sizeof err), 0);
    assert_true(c.target_fitness < 0);
}

/* cmd exits 2 with one line holding want, and makes no directory dir. */
static void refused(const char *cmd, const char *want, const char *dir)
{
    char out[4096];
    int rc = pcg_test_sh(out, sizeof out, "%s", cmd);
    if (rc != 2 || pcg_test_count_lines(out) != 1 || !strstr(out, want))
        fail_msg("'%s' exited %d with: %s", cmd, rc, out);
    assert_false(pcg_test_exists(dir));
}

static void accept_bad_values_exit_2(void **state)
{
    (void)state;
    char dir[PATH_MAX], cmd[2 * PATH_MAX + 256];
    snprintf(dir, sizeof dir, "%s/accept-refused", pcg_test_tmpdir());
    static const struct {
        const char *command, *args, *want;
    } cases[] = {
        {"run", "--scenario 1 --llm offline --accept sometimes", "--accept must be always or improve"},
        {"run", "--scenario 1 --llm offline --accept", "--accept needs a value"},
        {"run", "--scenario 1 --llm offline --target-fitness 1.5", "--target-fitness must be in [0, 1], or none"},
        {"grid", "--accept always,maybe", "--accept: unknown item 'maybe'"},
        {"grid", "--accept improve,improve", "'improve' is listed twice"},
        {"grid", "--target-fitness 0.9,2", "--target-fitness: unknown item '2'"},
        {"grid", "--target-fitness 0.9,0.90", "'0.90' is listed twice"},
        {"grid", "--target-fitness 0.9,", "an empty item"},
        {"grid", "--accept always,improve -- --accept improve", "--accept is set by the grid"},
        {"grid", "--target-fitness none,1 -- --target-fitness 1", "--target-fitness is set by the grid"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(cmd, sizeof cmd, "%s %s --out %s %s", pcg_test_binary(), cases[i].command, dir, cases[i].args);
        refused(cmd, cases[i].want, dir);
    }
}

/* The graph of run directory dir. */
static void load_graph(const char *dir, thought_graph *g)
{
    char path[PATH_MAX + 32], err[256];
    snprintf(path, sizeof path, "%s/graph.json", dir);
    if (graph_load(path, g, err, sizeof err)) fail_msg("%s", err);
}

/* The parents of the graph's nodes are want[0..n). */
static void expect_chain(const char *dir, const int *want, int n)
{
    thought_graph g;
    load_graph(dir, &g);
    assert_int_equal(g.n, n);
    for (int i = 0; i < n; i++) {
        assert_int_equal(g.nodes[i].status, NODE_OK);
        if (g.nodes[i].parent != want[i])
            fail_msg("%s: node %d refined node %d, not %d", dir, i, g.nodes[i].parent, want[i]);
    }
    graph_free(&g);
}

static void expect_config_accept(const char *dir, const char *want)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/config.json", dir);
    json_t *cfg = json_load_file(path, 0, NULL);
    assert_non_null(cfg);
    assert_string_equal(json_string_value(json_object_get(cfg, "accept")), want);
    json_decref(cfg);
}

/* A file of dir holds text. */
static void expect_in(const char *dir, const char *name, const char *text)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *s = pcg_test_slurp(path);
    assert_non_null(s);
    if (!strstr(s, text)) fail_msg("%s lacks \"%s\"", path, text);
    free(s);
}

/* The model's scores of the nodes' levels are 0.6, 0.3, 0.5, 0.7, then
 * 0.5 (tests/fake_openai_accept.json): node 1 is a worse revision of node
 * 0.  always refines each node in turn; improve refines node 0 until node
 * 3 beats it, and keeps nodes 1 and 2 in the graph. */
static void accept_improve_refines_best_so_far(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    setenv(KEY_ENV, "sk-accept-test", 1);
    static const char *const rules[2] = {"always", "improve"};
    static const int parents[2][5] = {{-1, 0, 1, 2, 3}, {-1, 0, 0, 0, 3}};
    char dir[2][PATH_MAX], out[2][8192];
    int rc[2];
    for (int a = 0; a < 2; a++) {
        pcg_fake_srv s;
        pcg_test_srv_start(&s, "tests/fake_openai_accept.json", "accept", KEY_ENV);
        snprintf(dir[a], sizeof dir[a], "%s/accept-%s", pcg_test_tmpdir(), rules[a]);
        rc[a] = pcg_test_sh(out[a], sizeof out[a], "%s run " SCRIPTED " --base-url %s --iterations 5 --accept %s --out %s",
                            pcg_test_binary(), s.url, rules[a], dir[a]);
        pcg_test_srv_stop(&s);
    }
    for (int a = 0; a < 2; a++) {
        if (rc[a] != 0) fail_msg("run --accept %s exited %d: %s", rules[a], rc[a], out[a]);
        expect_chain(dir[a], parents[a], 5);
        expect_config_accept(dir[a], rules[a]);
    }
    expect_in(dir[1], "run.log", "accept improve (each iteration refines the best node so far)");
    expect_in(dir[1], "run.log", "parent node 0 (fitness 0.600, the best so far)");
    expect_in(dir[1], "report.html", "<b>Acceptance:</b> improve (each iteration refines the best node so far)");
    expect_in(dir[1], "report.html", "Refined from <a href='#node0'>node 0</a>, the best so far, not the latest node 2");
    expect_in(dir[0], "report.html", "<b>Acceptance:</b> always (each iteration refines the latest node)");
    /* the worse revisions were trained and recorded all the same */
    thought_graph g;
    load_graph(dir[1], &g);
    assert_near(g.nodes[1].fitness, 0.3, 1e-9);
    assert_near(g.nodes[2].fitness, 0.5, 1e-9);
    graph_free(&g);
}

/* A run halted by its server after two nodes (the third judgement answers
 * 503) keeps improve: its resume refines node 0 again after the resumed
 * node 2 scores 0.5, below node 0's 0.6. */
static void accept_resume_keeps_improve(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    setenv(KEY_ENV, "sk-accept-test", 1);
    char dir[PATH_MAX], out[8192];
    snprintf(dir, sizeof dir, "%s/accept-resume", pcg_test_tmpdir());
    pcg_fake_srv s;
    pcg_test_srv_start(&s, "tests/fake_openai_accept_halt.json", "accept-halt", KEY_ENV);
    int rc = pcg_test_sh(out, sizeof out, "%s run " SCRIPTED " --base-url %s --iterations 4 --accept improve --out %s",
                         pcg_test_binary(), s.url, dir);
    pcg_test_srv_stop(&s);
    if (rc != 4) fail_msg("the run should stop for its server (exit 4), exited %d: %s", rc, out);
    thought_graph g;
    load_graph(dir, &g);
    assert_int_equal(g.n, 3);
    assert_int_equal(g.nodes[2].status, NODE_PENDING);
    assert_int_equal(g.nodes[2].parent, 0);
    graph_free(&g);
    /* the stored setting goes on, whatever the command line says */
    pcg_test_srv_start(&s, "tests/fake_openai_accept_rest.json", "accept-rest", KEY_ENV);
    rc = pcg_test_sh(out, sizeof out, "%s run --resume --out %s --base-url %s --api-key-env " KEY_ENV
                     " --llm-retries 1 --llm-timeout 20 --quiet </dev/null",
                     pcg_test_binary(), dir, s.url);
    pcg_test_srv_stop(&s);
    if (rc != 0) fail_msg("the resume exited %d: %s", rc, out);
    static const int parents[4] = {-1, 0, 0, 0};
    expect_chain(dir, parents, 4);
    expect_config_accept(dir, "improve");
    load_graph(dir, &g);
    assert_near(g.nodes[2].fitness, 0.5, 1e-9);
    graph_free(&g);
}

/* The axes' cells, names, flags and grid.json. */
static void accept_grid_axes_cells_and_json(void **state)
{
    (void)state;
    grid_def d, e;
    char err[256];
    memset(&d, 0, sizeof d);
    assert_int_equal(grid_parse_scenarios("1", &d, err, sizeof err), 0);
    assert_int_equal(grid_parse_pe("cot", &d, err, sizeof err), 0);
    assert_int_equal(grid_parse_ablations("zs,full", &d, err, sizeof err), 0);
    assert_int_equal(grid_parse_accept("always,improve", &d, err, sizeof err), 0);
    assert_int_equal(grid_parse_target_fitness("none,0.9", &d, err, sizeof err), 0);
    assert_int_equal(grid_set_human(&d, "rewards/human", err, sizeof err), 0);
    d.repeats = 1;
    grid_cell *c;
    int n = grid_cells(&d, &c);
    /* the zero-shot cell once (one node: nothing to accept or stop), the
     * full cells and the Human cells once per acceptance and target */
    static const char *const names[] = {"s1-zs-r0",
                                        "s1-cot-full-always-target-none-r0",
                                        "s1-cot-full-always-target0.9-r0",
                                        "s1-cot-full-improve-target-none-r0",
                                        "s1-cot-full-improve-target0.9-r0",
                                        "s1-human-always-target-none-r0",
                                        "s1-human-always-target0.9-r0",
                                        "s1-human-improve-target-none-r0",
                                        "s1-human-improve-target0.9-r0"};
    assert_int_equal(n, 9);
    for (int i = 0; i < n; i++) assert_string_equal(c[i].name, names[i]);
    char line[3][4096];
    for (int k = 0; k < 3; k++) {
        char *argv[GRID_MAX_ARGV];
        grid_argv_buf buf;
        int argc = grid_cell_argv(&d, &c[(int[]){4, 0, 5}[k]], "D", 0, 0, 0, &buf, argv);
        line[k][0] = 0;
        for (int i = 1; i < argc; i++) snprintf(line[k] + strlen(line[k]), sizeof line[k] - strlen(line[k]), " %s", argv[i]);
    }
    assert_string_equal(line[0], " run --scenario 1 --pe cot --ablation full --accept improve --target-fitness 0.9 "
                                 "--out D --yes --seed 0");
    assert_null(strstr(line[1], "--accept"));
    assert_null(strstr(line[1], "--target-fitness"));
    assert_non_null(strstr(line[2], " --accept always --target-fitness none --init-reward "));
    free(c);
    /* grid.json holds both axes, and reads back the same */
    char *js = grid_def_json(&d);
    json_t *o = json_loads(js, 0, NULL);
    assert_string_equal(json_string_value(json_array_get(json_object_get(o, "accept"), 1)), "improve");
    assert_string_equal(json_string_value(json_array_get(json_object_get(o, "target_fitness"), 0)), "none");
    assert_near(json_number_value(json_array_get(json_object_get(o, "target_fitness"), 1)), 0.9, 0);
    assert_int_equal(grid_def_from_json(js, &e, err, sizeof err), 0);
    assert_true(grid_def_equal(&d, &e));
    grid_def_free(&e);
    /* a grid.json made before the axes: neither is varied */
    json_object_del(o, "accept");
    json_object_del(o, "target_fitness");
    char *old = json_dumps(o, 0);
    assert_int_equal(grid_def_from_json(old, &e, err, sizeof err), 0);
    assert_int_equal(e.n_acc, 0);
    assert_int_equal(e.n_tf, 0);
    assert_false(grid_def_equal(&d, &e));
    grid_def_free(&e);
    free(old);
    json_decref(o);
    free(js);
    grid_def_free(&d);
}

/* Of summary.json's rows, how many have key `field` equal to value. */
static int rows_with(json_t *sum, const char *field, json_t *value)
{
    json_t *r;
    size_t i;
    int n = 0;
    json_array_foreach(json_object_get(sum, "rows"), i, r) n += json_equal(json_object_get(r, field), value);
    return n;
}

/* Every node of run dir refined what rule names: the latest valid node
 * (always) or the best so far (improve). */
static void expect_rule_followed(const char *dir, int improve)
{
    thought_graph g, before;
    load_graph(dir, &g);
    assert_int_equal(graph_init(&before, PE_COT, 1), 0);
    before.accept = improve ? GRAPH_ACCEPT_IMPROVE : GRAPH_ACCEPT_ALWAYS;
    for (int i = 0; i < g.n; i++) {
        if (g.nodes[i].parent != graph_select_parent(&before))
            fail_msg("%s: node %d refined node %d", dir, i, g.nodes[i].parent);
        add_node(&before, g.nodes[i].parent, g.nodes[i].fitness);
        if (g.nodes[i].status != NODE_OK) before.nodes[i].status = g.nodes[i].status;
    }
    graph_free(&before);
    graph_free(&g);
}

/* An offline grid, the quick profile made tiny: the cells of both axes,
 * each run with its rule and target (a target of 0.2, which the first
 * node reaches, stops the search there), and tables named by them. */
static void accept_grid_runs_and_tables(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    char dir[PATH_MAX], out[1 << 14], path[PATH_MAX + 64];
    snprintf(dir, sizeof dir, "%s/accept-grid", pcg_test_tmpdir());
    int rc = pcg_test_sh(out, sizeof out,
                         "%s grid --out %s --ablations fb --accept always,improve --target-fitness none,0.2 --jobs 2 -- "
                         "--llm offline --quick --steps 256 --envs 2 --align 0 --check-envs 4 "
                         "--levels 4 --iterations 3",
                         pcg_test_binary(), dir);
    if (rc != 0) fail_msg("grid exited %d: %s", rc, out);
    static const char *const cells[] = {"s1-cot-fb-always-target-none-r0", "s1-cot-fb-always-target0.2-r0",
                                        "s1-cot-fb-improve-target-none-r0", "s1-cot-fb-improve-target0.2-r0"};
    for (int i = 0; i < 4; i++) {
        char cell[PATH_MAX + 64];
        snprintf(cell, sizeof cell, "%s/cells/%s", dir, cells[i]);
        expect_config_accept(cell, i < 2 ? "always" : "improve");
        expect_in(cell, "config.json", "\"profile\": \"quick\"");
        expect_rule_followed(cell, i >= 2);
        thought_graph g;
        load_graph(cell, &g);
        assert_int_equal(g.n, i % 2 ? 1 : 3);
        graph_free(&g);
    }
    expect_in(dir, "tables.md", "### Table II — offline author, specific feedback, text input, always acceptance, target none");
    expect_in(dir, "tables.md", "### Table II — offline author, specific feedback, text input, improve acceptance, target 0.2");
    snprintf(path, sizeof path, "%s/summary.json", dir);
    json_t *sum = json_load_file(path, 0, NULL);
    assert_non_null(sum);
    json_t *imp = json_string("improve"), *always = json_string("always"), *tf = json_real(0.2), *none = json_null();
    assert_int_equal(rows_with(sum, "accept", imp), 4);    /* 3 + 1 nodes */
    assert_int_equal(rows_with(sum, "accept", always), 4);
    assert_int_equal(rows_with(sum, "target_fitness", tf), 2);
    assert_int_equal(rows_with(sum, "target_fitness", none), 6);
    json_decref(imp), json_decref(always), json_decref(tf), json_decref(none);
    json_decref(sum);
    expect_in(dir, "rows.csv", "accept,target_fitness");
}

PCG_TESTS(accept, cmocka_unit_test(accept_graph_parent_rules), cmocka_unit_test(accept_config_round_trip),
          cmocka_unit_test(accept_bad_values_exit_2), cmocka_unit_test(accept_improve_refines_best_so_far),
          cmocka_unit_test(accept_resume_keeps_improve), cmocka_unit_test(accept_grid_axes_cells_and_json),
          cmocka_unit_test(accept_grid_runs_and_tables))
