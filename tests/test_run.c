/* `pcgrllm run` end to end: stories refused before training, whole offline
 * runs for CoT, ToT and GoT with their graph, summary and report, the
 * ablations zs, sa and fb, resume after kill -9 at several points, resume
 * over damaged node files (the last node redone, an earlier one refused), runs
 * against the scripted OpenAI-compatible fake server (tests/fake_openai.py)
 * including --fitness llm and --feedback-input image, flag errors.
 * Budgets are tiny (small preset, 512 steps on 2 environments, 4 levels):
 * these tests check the loop, not what it learns. */
#define _GNU_SOURCE /* nftw */
#include "harness.h"
#include "graph.h"
#include "levelio.h"
#include "llm.h"
#include "util.h"
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Every offline run of these tests: 3 nodes, each trained for two PPO
 * updates of 256 steps on one thread (bit-for-bit reproducible). */
#define TINY_BUDGET "--preset small --steps 512 --envs 2 --threads 1 --align 1 --check-envs 4"
#define TINY TINY_BUDGET " --levels 4 --iterations 3 --quiet"
#define KEY_ENV "PCG_RUN_TEST_KEY"
#define TEST_KEY "sk-runtest-7c1e5a9b3d2f4e6a8b0c1d2e3f4a5b6c"



static char *slurp(const char *path)
{
    long len;
    char err[256];
    return read_file(path, 1L << 26, &len, err, sizeof err);
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

static int count_of(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle)) n++;
    return n;
}

static void load_graph(const char *dir, thought_graph *g)
{
    char path[PATH_MAX], err[512];
    snprintf(path, sizeof path, "%s/graph.json", dir);
    if (graph_load(path, g, err, sizeof err)) fail_msg("%s", err);
}

static char *node_file(const char *dir, int id, const char *name)
{
    char path[2 * PATH_MAX];
    snprintf(path, sizeof path, "%s/nodes/%03d/%s", dir, id, name);
    return slurp(path);
}

/* ---- offline runs, each made once and shared by the tests that need it ---- */

static char ref_dirs[3][PATH_MAX];

static const char *offline_run(int pe)
{
    if (ref_dirs[pe][0]) return ref_dirs[pe];
    pcg_test_use_source_prompts();
    snprintf(ref_dirs[pe], sizeof ref_dirs[pe], "%s/run-%s", pcg_test_tmpdir(), graph_pe_name(pe));
    char out[8192];
    int rc = pcg_test_sh(out, sizeof out, "%s run --scenario 1 --llm offline --pe %s " TINY " --out %s",
                         pcg_test_binary(), graph_pe_name(pe), ref_dirs[pe]);
    if (rc != 0) fail_msg("run --pe %s exited %d: %s", graph_pe_name(pe), rc, out);
    return ref_dirs[pe];
}

/* The node table, summary and report of a finished 3-node offline run. */
static void check_offline_run(int pe)
{
    const char *dir = offline_run(pe);
    thought_graph g;
    load_graph(dir, &g);
    assert_int_equal(g.pe, pe);
    assert_int_equal(g.n, 3);
    for (int i = 0; i < 3; i++) {
        const thought_node *nd = &g.nodes[i];
        assert_int_equal(nd->iteration, i + 1);
        assert_int_equal(nd->status, NODE_OK);
        assert_true(nd->fitness >= 0 && nd->fitness <= 1);
        assert_non_null(nd->feedback);
        assert_non_null(strstr(nd->feedback, "Problem:"));
        char expect[64];
        snprintf(expect, sizeof expect, "nodes/%03d/reward.c", i);
        assert_string_equal(nd->reward_path, expect);
        /* what the node trained on, its levels and its score */
        char *code = node_file(dir, i, "reward.c");
        assert_non_null(code);
        assert_non_null(strstr(code, "compute_reward"));
        char *trained = node_file(dir, i, "train/reward.c");
        assert_non_null(trained);
        assert_string_equal(code, trained);
        free(trained);
        free(code);
        char *ev = node_file(dir, i, "eval.json");
        assert_non_null(ev);
        json_t *j = json_loads(ev, 0, NULL);
        assert_non_null(j);
        assert_true(fabs(json_number_value(json_object_get(j, "fitness")) - nd->fitness) < 1e-9);
        assert_int_equal(json_array_size(json_object_get(j, "levels")), 4);
        json_decref(j);
        free(ev);
        for (int k = 0; k < 4; k++) {
            char name[64];
            snprintf(name, sizeof name, "levels/level_%03d.txt", k);
            char *lv = node_file(dir, i, name);
            assert_non_null(lv);
            free(lv);
        }
        char *fb = node_file(dir, i, "feedback.txt");
        assert_non_null(fb);
        assert_string_equal(fb, nd->feedback);
        free(fb);
        /* every node trains with the run's seed and the reference's details */
        char *tj = node_file(dir, i, "train/train.json");
        assert_non_null(tj);
        json_t *t = json_loads(tj, 0, NULL);
        assert_non_null(t);
        assert_int_equal(json_integer_value(json_object_get(t, "seed")), 0);
        assert_string_equal(json_string_value(json_object_get(t, "obs_centre")), "last");
        assert_string_equal(json_string_value(json_object_get(t, "final_level")), "edits767");
        json_decref(t);
        free(tj);
    }
    /* parents (docs/method.md#the-reward-design-loop): node 1 refines node 0, the only node; then CoT
     * takes the latest node, ToT and GoT the fittest with a free slot
     * (node 0 has one child of two), ties to the oldest */
    assert_int_equal(g.nodes[0].parent, -1);
    assert_int_equal(g.nodes[1].parent, 0);
    int p2 = pe == PE_COT ? 1 : g.nodes[1].fitness > g.nodes[0].fitness ? 1 : 0;
    assert_int_equal(g.nodes[2].parent, p2);
    /* GoT shows the best valid nodes but the previous iteration (node 1),
     * the parent among them (--got-refs reference, the default): node 0 */
    for (int i = 0; i < 3; i++) {
        int want = pe == PE_GOT && i == 2 ? 1 : 0;
        assert_int_equal(g.nodes[i].n_refs, want);
    }
    if (pe == PE_GOT) {
        assert_int_equal(g.nodes[2].refs[0], 0);
        assert_int_equal(g.nodes[2].ref_kind[0], REF_BEST);
        assert_true(g.nodes[2].ref_fitness[0] == g.nodes[0].fitness);
    }
    if (p2 == 0) { /* siblings refined from the same feedback differ */
        char *a = node_file(dir, 1, "reward_gen.c"), *b = node_file(dir, 2, "reward_gen.c");
        assert_non_null(a);
        assert_non_null(b);
        assert_string_not_equal(a, b);
        free(a);
        free(b);
    }
    int best = 0;
    for (int i = 1; i < 3; i++)
        if (g.nodes[i].fitness > g.nodes[best].fitness) best = i;

    /* summary.txt */
    char path[PATH_MAX], want[256];
    snprintf(path, sizeof path, "%s/summary.txt", dir);
    char *sum = slurp(path);
    assert_non_null(sum);
    snprintf(want, sizeof want, "best_node %d\nbest_fitness %.6f\n", best, g.nodes[best].fitness);
    assert_non_null(strstr(sum, want));
    assert_non_null(strstr(sum, "\nnodes 3\n"));
    const char *bp = best == 0 ? "best_path 0\n" : best == 1 ? "best_path 0 -> 1\n"
                     : p2 == 1                  ? "best_path 0 -> 1 -> 2\n"
                                                : "best_path 0 -> 2\n";
    assert_non_null(strstr(sum, bp));
    free(sum);

    /* report.html: self-contained, one row, section and picture per node */
    snprintf(path, sizeof path, "%s/report.html", dir);
    char *html = slurp(path);
    assert_non_null(html);
    assert_non_null(strstr(html, "<svg"));
    assert_non_null(strstr(html, "rule-based offline author"));
    assert_non_null(strstr(html, "<b>Prompts:</b> paper, reward API minimal, GoT references reference<br>"));
    /* 3 level pictures, the fitness chart, each node's entropy curve; its
     * 256 steps per environment end no 768-step episode, which the page
     * says in place of an empty reward curve */
    assert_int_equal(count_of(html, "data:image/png;base64,"), 7);
    assert_int_equal(count_of(html, "alt='entropy over training'"), 3);
    assert_int_equal(count_of(html, "No episode ended in the 512 steps of training: no mean episode reward"), 3);
    assert_non_null(strstr(html, "obs_centre last, terminal_reward env, final_level edits767, conv_init lecun, "
                                 "node_seeds same"));
    assert_int_equal(count_of(html, "alt='fitness by iteration'"), 1);
    assert_null(strstr(html, "src='http"));
    assert_null(strstr(html, "src=\"http"));
    for (int i = 0; i < 3; i++) {
        const thought_node *nd = &g.nodes[i];
        char row[256], par[16];
        snprintf(par, sizeof par, nd->parent < 0 ? "&ndash;" : "%d", nd->parent);
        snprintf(row, sizeof row, "<tr><td><a href='#node%d'>%d</a></td><td>%d</td><td>%s</td><td>ok</td><td>%.3f</td>",
                 i, i, i + 1, par, nd->fitness);
        if (!strstr(html, row)) fail_msg("report.html lacks the row %s", row);
        snprintf(row, sizeof row, "<div class='node' id='node%d'>", i);
        assert_non_null(strstr(html, row));
    }
    assert_int_equal(count_of(html, "float compute_reward(const level_t *prev, const level_t *curr)"), 3);
    assert_int_equal(count_of(html, "stroke-dasharray"), pe == PE_GOT ? 1 : 0);
    /* Word2Minecraft's metrics per node, and a Minecraft datapack to
     * download per level, embedded as a ZIP */
    assert_non_null(strstr(html, "<th>ASPAO</th><th>UTR</th><th>VUTR</th>"));
    assert_int_equal(count_of(html, "Word2Minecraft metrics: ASPAO"), 3);
    assert_int_equal(count_of(html, "download='pcgrllm_node"), 12);
    assert_non_null(strstr(html, "download='pcgrllm_node002_level_003.zip' href='data:application/zip;base64,UEsDB"));
    assert_non_null(strstr(html, "<code>/function pcgrllm:node001_level_000</code>"));
    free(html);

    /* `pcgrllm report DIR` prints the same table again */
    char out[8192];
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s report %s", pcg_test_binary(), dir), 0);
    snprintf(want, sizeof want, "best: node %d, fitness %.4f", best, g.nodes[best].fitness);
    assert_non_null(strstr(out, want));
    snprintf(want, sizeof want, "%-5d %-9d %-6d %-8s %8.3f", 2, 3, p2, "ok", g.nodes[2].fitness);
    assert_non_null(strstr(out, want));
    assert_non_null(strstr(out, "  aspao    utr   vutr"));

    /* the run's levels as Minecraft files: the best node's, by default */
    char mc[PATH_MAX - 64];
    snprintf(mc, sizeof mc, "%s/mc", dir);
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s export --minecraft --out %s %s", pcg_test_binary(), mc, dir), 0);
    snprintf(path, sizeof path, "%s/node%03d_level_003.nbt", mc, best);
    assert_true(pcg_test_exists(path));
    snprintf(path, sizeof path, "%s/pcgrllm.zip", mc);
    assert_true(pcg_test_exists(path));
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s export --minecraft --node 1 --out %s %s", pcg_test_binary(), mc, dir), 0);
    snprintf(path, sizeof path, "%s/node001_level_000.nbt", mc);
    assert_true(pcg_test_exists(path));
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s export --minecraft --node 7 --out %s %s", pcg_test_binary(), mc, dir), 1);
    assert_non_null(strstr(out, "has no node 7 (it has 3)"));
    graph_free(&g);
}

static void run_offline_cot(void **state)
{
    (void)state;
    check_offline_run(PE_COT);
}

static void assert_file_has(const char *dir, const char *name, const char *want);

/* The report of a run made before config.json recorded the prompts names
 * the settings it was made with: today's rich prompts. */
static void run_report_names_prompts_of_older_runs(void **state)
{
    (void)state;
    const char *src = offline_run(PE_COT);
    char dir[PATH_MAX], path[PATH_MAX + 64], out[8192];
    snprintf(dir, sizeof dir, "%s/older-run", pcg_test_tmpdir());
    assert_int_equal(pcg_test_sh(out, sizeof out, "rm -rf '%s' && cp -r '%s' '%s'", dir, src, dir), 0);
    snprintf(path, sizeof path, "%s/config.json", dir);
    json_t *cfg = json_load_file(path, 0, NULL);
    assert_non_null(cfg);
    json_object_del(cfg, "prompts");
    json_object_del(cfg, "reward_api");
    json_object_del(cfg, "got_refs");
    assert_int_equal(json_dump_file(cfg, path, JSON_INDENT(2)), 0);
    json_decref(cfg);
    int rc = pcg_test_sh(out, sizeof out, "%s report %s", pcg_test_binary(), dir);
    if (rc != 0) fail_msg("report exited %d: %s", rc, out);
    assert_file_has(dir, "report.html",
                    "<b>Prompts:</b> rich, reward API full, GoT references engine (a run made before these settings "
                    "were recorded)");
}

static void run_offline_tot(void **state)
{
    (void)state;
    check_offline_run(PE_TOT);
}

static void run_offline_got(void **state)
{
    (void)state;
    check_offline_run(PE_GOT);
}

/* ---- ablations (the paper's Table II, docs/method.md#the-reward-design-loop) ------------- */

/* DIR/config.json records want as the string member key. */
static void assert_config(const char *dir, const char *key, const char *want)
{
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/config.json", dir);
    json_t *j = json_load_file(path, 0, NULL);
    assert_non_null(j);
    const char *v = json_string_value(json_object_get(j, key));
    assert_string_equal(v ? v : "", want);
    json_decref(j);
}

/* DIR/name holds want. */
static void assert_file_has(const char *dir, const char *name, const char *want)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *t = slurp(path);
    if (!t) fail_msg("%s is missing", path);
    if (!strstr(t, want)) fail_msg("%s lacks \"%s\"", path, want);
    free(t);
}

/* An offline run with --ablation abl and --iterations 3 (the ablations
 * without feedback make one node whatever Y is) or 2, checked for what
 * the ablation must and must not do: the number of nodes, alignment
 * rounds (align_K.c/.json, the author's "align" lines in run.log, reward.c
 * being the aligned reward), feedback (feedback.txt, the graph's feedback,
 * refinement from a parent), and the ablation recorded in config.json,
 * run.log and report.html. */
static void check_ablation(const char *abl, int iterations, int want_nodes, int aligned, int feedback)
{
    pcg_test_use_source_prompts();
    char dir[PATH_MAX], path[PATH_MAX + 64], out[8192], want[128];
    snprintf(dir, sizeof dir, "%s/ablation-%s", pcg_test_tmpdir(), abl);
    int rc = pcg_test_sh(out, sizeof out,
                         "%s run --scenario 1 --llm offline --ablation %s " TINY_BUDGET
                         " --levels 4 --iterations %d --quiet --out %s",
                         pcg_test_binary(), abl, iterations, dir);
    if (rc != 0) fail_msg("run --ablation %s exited %d: %s", abl, rc, out);
    assert_config(dir, "ablation", abl);
    thought_graph g;
    load_graph(dir, &g);
    assert_int_equal(g.n, want_nodes);
    for (int i = 0; i < g.n; i++) {
        const thought_node *nd = &g.nodes[i];
        assert_int_equal(nd->status, NODE_OK);
        assert_int_equal(nd->parent, i - 1);
        char *code = node_file(dir, i, "reward.c"), *gen = node_file(dir, i, "reward_gen.c");
        char *al = node_file(dir, i, "align_1.c"), *al_json = node_file(dir, i, "align_1.json");
        char *fb = node_file(dir, i, "feedback.txt");
        assert_non_null(code);
        assert_non_null(gen);
        snprintf(path, sizeof path, "%s/nodes/%03d/align_2.c", dir, i);
        assert_false(pcg_test_exists(path)); /* --align 1: one round at most */
        if (aligned) {
            assert_non_null(al);
            assert_non_null(al_json);
            assert_non_null(strstr(al_json, "\"stats\""));
            assert_string_equal(code, al); /* trained on the aligned reward */
        } else {
            assert_null(al);
            assert_null(al_json);
            assert_string_equal(code, gen); /* trained on the generated reward */
        }
        if (feedback) {
            assert_non_null(fb);
            assert_non_null(strstr(fb, "Problem:"));
            assert_non_null(nd->feedback);
            assert_string_equal(nd->feedback, fb);
        } else {
            assert_null(fb);
            assert_null(nd->feedback);
        }
        if (i > 0) { /* refined from the parent's feedback: a changed reward */
            char *parent = node_file(dir, i - 1, "reward.c");
            assert_non_null(parent);
            assert_string_not_equal(gen, parent);
            free(parent);
        }
        free(code);
        free(gen);
        free(al);
        free(al_json);
        free(fb);
    }
    graph_free(&g);
    snprintf(path, sizeof path, "%s/nodes/%03d", dir, want_nodes);
    assert_false(pcg_test_exists(path));
    /* the alignment rounds the nodes have, not the flag's value */
    snprintf(want, sizeof want, "%d iteration%s, align %d, breadth 2, ablation %s,", want_nodes,
             want_nodes == 1 ? "" : "s", aligned, abl);
    assert_file_has(dir, "run.log", want);
    snprintf(path, sizeof path, "%s/run.log", dir);
    char *log = slurp(path);
    assert_non_null(log);
    assert_int_equal(count_of(log, "offline author, align 1:"), aligned ? want_nodes : 0);
    assert_int_equal(count_of(log, "  feedback: "), feedback ? want_nodes : 0);
    /* "iteration y of Y" counts the nodes the run makes, not --iterations */
    snprintf(want, sizeof want, "node 0: iteration 1 of %d,", want_nodes);
    assert_non_null(strstr(log, want));
    free(log);
    snprintf(want, sizeof want, "\nnodes %d\n", want_nodes);
    assert_file_has(dir, "summary.txt", want);
    snprintf(want, sizeof want, "ablation %s,", abl);
    assert_file_has(dir, "report.html", want);
}

/* zero-shot: one reward, trained as generated, no feedback */
static void run_ablation_zs(void **state)
{
    (void)state;
    check_ablation("zs", 3, 1, 0, 0);
}

/* self-alignment only: one node, aligned, no feedback */
static void run_ablation_sa(void **state)
{
    (void)state;
    check_ablation("sa", 3, 1, 1, 0);
}

/* feedback only: Y nodes, each refined from its parent's feedback, none aligned */
static void run_ablation_fb(void **state)
{
    (void)state;
    check_ablation("fb", 2, 2, 0, 1);
}

/* ---- refusals and flag errors -------------------------------------------------- */

static void run_story_refused_before_training(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    char dir[PATH_MAX], path[PATH_MAX + 16], out[4096];
    snprintf(dir, sizeof dir, "%s/refused", pcg_test_tmpdir());
    int rc = pcg_test_sh(out, sizeof out, "%s run --llm offline --story 'A dragon guards the door' " TINY " --out %s",
                         pcg_test_binary(), dir);
    assert_int_equal(rc, 3);
    assert_int_equal(count_lines(out), 1);
    assert_non_null(strstr(out, "story refused"));
    assert_non_null(strstr(out, "dragon"));
    snprintf(path, sizeof path, "%s/nodes", dir);
    assert_false(pcg_test_exists(path));
    snprintf(path, sizeof path, "%s/graph.json", dir);
    assert_false(pcg_test_exists(path));
    /* a story that asks for a choice of monsters cannot be measured */
    snprintf(dir, sizeof dir, "%s/refused2", pcg_test_tmpdir());
    rc = pcg_test_sh(out, sizeof out,
                     "%s run --llm offline --story 'The player must meet a bat or a spider before the door' " TINY
                     " --out %s",
                     pcg_test_binary(), dir);
    assert_int_equal(rc, 3);
    assert_int_equal(count_lines(out), 1);
    snprintf(path, sizeof path, "%s/nodes", dir);
    assert_false(pcg_test_exists(path));
    /* a route the generator's map cannot hold: corners 26 steps apart */
    snprintf(dir, sizeof dir, "%s/refused3", pcg_test_tmpdir());
    rc = pcg_test_sh(out, sizeof out,
                     "%s run --llm offline --story 'The route from the player to the key and on to the door should "
                     "be exactly 12 steps' " TINY " --out %s",
                     pcg_test_binary(), dir);
    assert_int_equal(rc, 3);
    assert_int_equal(count_lines(out), 1);
    assert_non_null(strstr(out, "at least 26"));
    snprintf(path, sizeof path, "%s/nodes", dir);
    assert_false(pcg_test_exists(path));
}

static void run_flag_errors_one_line(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    const char *tmp = pcg_test_tmpdir();
    const char *bad[] = {
        "",
        "--scenario 5",
        "--scenario 1 --story 'meet a bat'",
        "--scenario 1 --pe bfs",
        "--scenario 1 --iterations 0",
        "--scenario 1 --align -1",
        "--scenario 1 --ablation most",
        "--scenario 1 --feedback loud",
        "--scenario 1 --fitness vibes",
        "--scenario 1 --llm offline --fitness llm",
        "--scenario 1 --steps 0",
        "--scenario 1 --envs x",
        "--scenario 1 --preset huge",
        "--scenario 1 --backend tpu",
        "--scenario 1 --llm gpt",
        "--scenario 1 --target-fitness 2",
        "--scenario 1 --levels 0",
        "--scenario 1 --temperature hot",
        "--scenario 1 --no-such-flag",
        "--scenario 1 --steps",
        "--scenario 1 extra",
        "--story ''",
        "--story-file /nonexistent/story.txt",
        "--scenario 1 --init-reward /nonexistent/reward.c",
        "--scenario 1 --init-reward /tmp",
        "--scenario 1 --got-best 5",
        "--scenario 1 --got-worst -1",
    };
    char out[4096], dir[PATH_MAX];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(dir, sizeof dir, "%s/flags-%zu", tmp, i);
        int rc = pcg_test_sh(out, sizeof out, "%s run --out %s %s", pcg_test_binary(), dir, bad[i]);
        if (rc != 2 || count_lines(out) != 1 || !strstr(out, "pcgrllm: run: "))
            fail_msg("run %s: exit %d, output: %s", bad[i], rc, out);
        assert_false(pcg_test_exists(dir)); /* nothing written */
    }
    /* --resume needs the directory */
    int rc = pcg_test_sh(out, sizeof out, "%s run --resume", pcg_test_binary());
    assert_int_equal(rc, 2);
    assert_int_equal(count_lines(out), 1);
    /* --resume of a directory that holds no run: one line, nothing created */
    snprintf(dir, sizeof dir, "%s/not-a-run", tmp);
    rc = pcg_test_sh(out, sizeof out, "%s run --resume --out %s", pcg_test_binary(), dir);
    assert_int_equal(rc, 1);
    assert_int_equal(count_lines(out), 1);
    assert_non_null(strstr(out, "holds no run"));
    assert_false(pcg_test_exists(dir));
    assert_int_equal(mkdir(dir, 0755), 0);
    rc = pcg_test_sh(out, sizeof out, "%s run --resume --out %s", pcg_test_binary(), dir);
    assert_int_equal(rc, 1);
    assert_int_equal(count_lines(out), 1);
    assert_non_null(strstr(out, "holds no run"));
    rc = pcg_test_sh(out, sizeof out, "%s report %s", pcg_test_binary(), dir);
    assert_int_equal(rc, 1);
    assert_int_equal(count_lines(out), 1);
    /* a damaged config is named, in one line */
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/config.json", dir);
    assert_int_equal(write_file_atomic(path, "{\"format\": 1}\n", 14), 0);
    rc = pcg_test_sh(out, sizeof out, "%s run --resume --out %s", pcg_test_binary(), dir);
    assert_int_equal(rc, 1);
    assert_int_equal(count_lines(out), 1);
    assert_non_null(strstr(out, "config.json"));
}

/* ---- resume after kill -9 ------------------------------------------------------------ */

/* Start `sh -c 'exec CMD'` (so the pid is the command's), output to log. */
/* Processes (other than this one) whose command line mentions s. */
static int processes_mentioning(const char *s)
{
    DIR *d = opendir("/proc");
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0 || pid == (long)getpid()) continue;
        char path[64], buf[8192];
        snprintf(path, sizeof path, "/proc/%ld/cmdline", pid);
        int fd = open(path, O_RDONLY);
        if (fd < 0) continue;
        ssize_t got = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (got <= 0) continue; /* a zombie has no command line */
        for (ssize_t k = 0; k < got; k++)
            if (!buf[k]) buf[k] = ' ';
        buf[got] = 0;
        if (strstr(buf, s)) n++;
    }
    closedir(d);
    return n;
}

static void assert_no_strays(const char *dir)
{
    int n = 0;
    for (int i = 0; i < 250 && (n = processes_mentioning(dir)) > 0; i++) usleep(20000);
    if (n) fail_msg("%d processes of the killed run in %s are still alive", n, dir);
}

/* Same graph: statuses, parents, references, fitness, feedback and the
 * reward each node trained on (wall times may differ). */
static void assert_same_run(const char *a_dir, const char *b_dir)
{
    thought_graph a, b;
    load_graph(a_dir, &a);
    load_graph(b_dir, &b);
    assert_int_equal(a.n, b.n);
    assert_int_equal(a.pe, b.pe);
    for (int i = 0; i < a.n; i++) {
        const thought_node *x = &a.nodes[i], *y = &b.nodes[i];
        assert_int_equal(x->status, y->status);
        assert_int_equal(x->iteration, y->iteration);
        assert_int_equal(x->parent, y->parent);
        assert_int_equal(x->n_refs, y->n_refs);
        for (int k = 0; k < x->n_refs; k++) {
            assert_int_equal(x->refs[k], y->refs[k]);
            assert_true(x->ref_fitness[k] == y->ref_fitness[k]);
        }
        if (x->fitness != y->fitness) fail_msg("node %d: fitness %.17g vs %.17g", i, x->fitness, y->fitness);
        assert_string_equal(x->reward_path, y->reward_path);
        assert_string_equal(x->feedback ? x->feedback : "", y->feedback ? y->feedback : "");
        char *ra = node_file(a_dir, i, "reward.c"), *rb = node_file(b_dir, i, "reward.c");
        assert_non_null(ra);
        assert_non_null(rb);
        assert_string_equal(ra, rb);
        free(ra);
        free(rb);
    }
    graph_free(&a);
    graph_free(&b);
}

static void run_resume_after_kill9_same_graph(void **state)
{
    (void)state;
    const char *ref = offline_run(PE_GOT);
    char dir[PATH_MAX], log[PATH_MAX + 16], cmd[3 * PATH_MAX], path[PATH_MAX + 64];
    snprintf(dir, sizeof dir, "%s/killed", pcg_test_tmpdir());
    snprintf(log, sizeof log, "%s.log", dir);
    /* kill points, in order: during the first reward check, during the
     * first training (after its first checkpoint), between nodes, after a
     * node's levels, during the second node's training */
    const char *points[] = {"nodes/000/reward_t1_f0.c", "nodes/000/train/checkpoint.bin", "nodes/001",
                            "nodes/001/levels.done", "nodes/002/train/checkpoint.bin"};
    int kills = 0;
    for (size_t k = 0; k <= sizeof points / sizeof points[0]; k++) {
        if (k == 0)
            snprintf(cmd, sizeof cmd, "%s run --scenario 1 --llm offline --pe got " TINY " --out %s",
                     pcg_test_binary(), dir);
        else
            snprintf(cmd, sizeof cmd, "%s run --resume --out %s --quiet", pcg_test_binary(), dir);
        pid_t pid = pcg_test_spawn(cmd, log);
        int status = 0;
        if (k < sizeof points / sizeof points[0]) {
            snprintf(path, sizeof path, "%s/%s", dir, points[k]);
            if (pcg_test_wait_for(path, pid, &status)) {
                kill(pid, SIGKILL);
                assert_int_equal(waitpid(pid, &status, 0), pid);
                assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
                kills++;
                assert_no_strays(dir);
                continue;
            }
            fail_msg("the run ended before %s appeared", points[k]);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            char *t = slurp(log);
            fail_msg("resumed run failed: %s", t ? t : "");
        }
    }
    assert_int_equal(kills, 5);
    assert_no_strays(dir);
    assert_same_run(ref, dir);
    snprintf(path, sizeof path, "%s/run.log", dir);
    char *runlog = slurp(path);
    assert_non_null(runlog);
    assert_int_equal(count_of(runlog, "resuming run"), 5);
    free(runlog);
    /* resuming a finished run changes nothing */
    char out[8192];
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s run --resume --out %s --quiet", pcg_test_binary(), dir), 0);
    assert_same_run(ref, dir);
}

/* ---- resume over damaged node files --------------------------------------------------- */

/* DIR = a fresh copy of the finished run ref, to damage. */
static void copy_run(const char *ref, const char *name, char *dir, size_t len)
{
    char out[1024];
    snprintf(dir, len, "%s/%s", pcg_test_tmpdir(), name);
    if (pcg_test_sh(out, sizeof out, "rm -rf '%s' && cp -a '%s' '%s'", dir, ref, dir)) fail_msg("cp: %s", out);
}

/* `run --resume --quiet`, killed (exit 137) rather than left hanging. */
static int resume_quiet(const char *dir, char *out, size_t len)
{
    return pcg_test_sh(out, len, "timeout -s KILL 300 %s run --resume --out %s --quiet", pcg_test_binary(), dir);
}

/* Edit DIR/graph.json: node 2 back to pending (as if killed before it
 * finished), or every node's "files" dropped (a graph from before
 * checksums). */
static void edit_graph(const char *dir, int pending_last, int drop_files)
{
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/graph.json", dir);
    json_t *j = json_load_file(path, 0, NULL);
    assert_non_null(j);
    json_t *nodes = json_object_get(j, "nodes");
    for (size_t i = 0; i < json_array_size(nodes); i++) {
        json_t *nd = json_array_get(nodes, i);
        if (drop_files || (pending_last && i == json_array_size(nodes) - 1)) json_object_del(nd, "files");
        if (!pending_last || i != json_array_size(nodes) - 1) continue;
        json_object_set_new(nd, "status", json_string("pending"));
        json_object_set_new(nd, "fitness", json_real(0));
        json_object_set_new(nd, "reward", json_string(""));
        json_object_set_new(nd, "feedback", json_null());
    }
    assert_int_equal(json_dump_file(j, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER), 0);
    json_decref(j);
}

/* The last node's files damaged in each way, and each step's: one line
 * naming the file and the step it is redone from, that step's and later
 * steps' outputs moved to damaged-1/, and the run ends as the undamaged
 * one did.  A second resume finds nothing to say. */
static void run_resume_redoes_damaged_last_node(void **state)
{
    (void)state;
    const char *ref = offline_run(PE_COT);
    static const struct {
        const char *name, *damage, *phrase, *step, *aside;
        int pending;
    } cases[] = {
        {"redo-reward", "rm reward.c", "nodes/002/reward.c is missing", "reward", "train", 0},
        {"redo-ckpt", "printf XXXX | dd of=train/checkpoint.bin bs=1 seek=200 conv=notrunc 2>/dev/null",
         "nodes/002/train/checkpoint.bin does not match the checksum recorded in graph.json", "training", "train", 0},
        {"redo-level", "echo garbage > levels/level_001.txt",
         "nodes/002/levels/level_001.txt does not match the checksum recorded in graph.json", "levels", "levels", 0},
        {"redo-eval", "printf '{\"fitness\": ' > eval.json",
         "nodes/002/eval.json does not match the checksum recorded in graph.json", "fitness", "eval.json", 0},
        {"redo-fifo", "rm feedback.txt && mkfifo feedback.txt", "nodes/002/feedback.txt: is a FIFO, not a regular file",
         "feedback", "feedback.txt", 0},
        /* an interrupted node: its finished steps are checked as well */
        {"redo-pending", "printf XXXX | dd of=train/checkpoint.bin bs=1 seek=200 conv=notrunc 2>/dev/null",
         "checkpoint.bin: corrupt checkpoint (checksum mismatch)", "training", "train", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char dir[PATH_MAX], out[8192], want[256], path[PATH_MAX + 64];
        copy_run(ref, cases[i].name, dir, sizeof dir);
        if (cases[i].pending) edit_graph(dir, 1, 0);
        if (pcg_test_sh(out, sizeof out, "cd '%s/nodes/002' && %s", dir, cases[i].damage)) fail_msg("damage: %s", out);
        int rc = resume_quiet(dir, out, sizeof out);
        if (rc != 0) fail_msg("%s: resume exited %d: %s", cases[i].name, rc, out);
        snprintf(want, sizeof want, "redoing it from its %s step\n", cases[i].step);
        if (count_lines(out) != 1 || !strstr(out, "pcgrllm: run: node 2: ") || !strstr(out, cases[i].phrase) ||
            !strstr(out, want))
            fail_msg("%s: expected one line with '%s' and '%s', got '%s'", cases[i].name, cases[i].phrase, want, out);
        snprintf(path, sizeof path, "%s/nodes/002/damaged-1/%s", dir, cases[i].aside);
        if (!pcg_test_exists(path)) fail_msg("%s: %s was not set aside", cases[i].name, path);
        assert_same_run(ref, dir);
        assert_file_has(dir, "run.log", cases[i].phrase);
        rc = resume_quiet(dir, out, sizeof out);
        if (rc != 0 || out[0]) fail_msg("%s: second resume exited %d: %s", cases[i].name, rc, out);
    }
}

/* A damaged file in an earlier node: the resume is refused in one line
 * naming the node and the file, and nothing is changed; with the file
 * restored it goes on.  Missing checksums are damage too: the last node
 * is redone, an earlier one refuses the resume. */
static void run_resume_refuses_damaged_earlier_node(void **state)
{
    (void)state;
    const char *ref = offline_run(PE_COT);
    char dir[PATH_MAX], out[8192];
    copy_run(ref, "refuse", dir, sizeof dir);
    assert_int_equal(pcg_test_sh(out, sizeof out, "cd '%s' && cp graph.json graph.before && "
                                                  "echo garbage > nodes/000/levels/level_001.txt", dir), 0);
    int rc = resume_quiet(dir, out, sizeof out);
    if (rc != 1 || count_lines(out) != 1 || !strstr(out, "pcgrllm: run: --resume: node 0: ") ||
        !strstr(out, "nodes/000/levels/level_001.txt does not match the checksum recorded in graph.json") ||
        !strstr(out, "cannot be redone"))
        fail_msg("resume over a damaged node 0: exit %d, '%s'", rc, out);
    assert_int_equal(pcg_test_sh(out, sizeof out, "cd '%s' && cmp -s graph.json graph.before && "
                                                  "! ls -d nodes/*/damaged-* 2>/dev/null", dir), 0);
    assert_file_has(dir, "nodes/000/levels/level_001.txt", "garbage");
    assert_int_equal(pcg_test_sh(out, sizeof out, "cp '%s/nodes/000/levels/level_001.txt' '%s/nodes/000/levels/'",
                                 ref, dir), 0);
    rc = resume_quiet(dir, out, sizeof out);
    if (rc != 0 || out[0]) fail_msg("resume with the file restored: exit %d, '%s'", rc, out);
    /* the last node's checksums gone (nothing shows its files are its
     * own): it is redone, to the same result */
    assert_int_equal(pcg_test_sh(out, sizeof out, "python3 -c 'import json; p=\"%s/graph.json\"; j=json.load(open(p)); "
                                                  "j[\"nodes\"][-1].pop(\"files\"); json.dump(j, open(p, \"w\"))'",
                                 dir),
                     0);
    rc = resume_quiet(dir, out, sizeof out);
    if (rc != 0 || count_lines(out) != 1 || !strstr(out, "node 2: graph.json records no checksums") ||
        !strstr(out, "redoing it from its reward step"))
        fail_msg("resume of a last node without checksums: exit %d, '%s'", rc, out);
    assert_same_run(ref, dir);
    /* a graph.json from before checksums: earlier nodes cannot be trusted */
    edit_graph(dir, 0, 1);
    rc = resume_quiet(dir, out, sizeof out);
    if (rc != 1 || count_lines(out) != 1 || !strstr(out, "node 0: graph.json records no checksums") ||
        !strstr(out, "cannot be redone"))
        fail_msg("resume of a graph without checksums: exit %d, '%s'", rc, out);
}

/* ---- against the fake OpenAI-compatible server --------------------------------------- */

typedef pcg_fake_srv fake_srv;

static void srv_start(fake_srv *s, const char *script_path, const char *name)
{
    pcg_test_srv_start(s, script_path, name, KEY_ENV);
}

static void srv_stop(fake_srv *s) { pcg_test_srv_stop(s); }

static const char *key_hit; /* a file of the run directory holding the key */
static char key_hit_path[PATH_MAX];

static int find_key(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    if (type != FTW_F) return 0;
    char *t = slurp(path);
    if (t && (strstr(t, TEST_KEY) || strstr(t, TEST_KEY + 10))) {
        snprintf(key_hit_path, sizeof key_hit_path, "%s", path);
        key_hit = key_hit_path;
    }
    free(t);
    return 0;
}

static void run_openai_fake_server(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    setenv(KEY_ENV, TEST_KEY, 1);
    fake_srv s;
    srv_start(&s, "tests/fake_openai_run.json", "run-openai");
    char dir[PATH_MAX], path[PATH_MAX + 64];
    snprintf(dir, sizeof dir, "%s/openai", pcg_test_tmpdir());
    static char out[1 << 16];
    int rc = pcg_test_sh(out, sizeof out,
                         "%s run --llm openai --base-url http://127.0.0.1:%d/v1 --model fake-coder --api-key-env %s "
                         "--llm-retries 1 --llm-backoff 0.01 --llm-timeout 20 "
                         "--story 'The player must meet a bat before picking up the key and leaving through the door' "
                         "--pe got --breadth 1 --preset small --steps 512 --envs 2 --threads 1 --align 1 "
                         "--check-envs 4 --levels 4 --iterations 3 --out %s",
                         pcg_test_binary(), s.port, KEY_ENV, dir);
    srv_stop(&s);
    if (rc != 0) fail_msg("run --llm openai exited %d: %s", rc, out);
    /* the key was sent to the server, and written nowhere */
    assert_null(strstr(out, TEST_KEY));
    key_hit = NULL;
    assert_int_equal(nftw(dir, find_key, 16, FTW_PHYS), 0);
    if (key_hit) fail_msg("the API key appears in %s", key_hit);
    char *reqs = slurp(s.log);
    assert_non_null(reqs);
    int n_req = count_of(reqs, "\"path\":"); /* requests; other lines note a stream the client ended early */
    assert_true(n_req >= 10);
    assert_int_equal(count_of(reqs, "\"auth\": \"match\""), n_req);
    free(reqs);
    /* the target came from the model's reply */
    snprintf(path, sizeof path, "%s/target.json", dir);
    char *t = slurp(path);
    assert_non_null(t);
    assert_non_null(strstr(t, "BAT"));
    free(t);
    snprintf(path, sizeof path, "%s/llm/target.reply.txt", dir);
    assert_true(pcg_test_exists(path));
    /* node 0: the first reward fails the sandbox, the fix is accepted */
    char *j0 = node_file(dir, 0, "reward_t1_f0.json");
    assert_non_null(j0);
    assert_non_null(strstr(j0, "\"accepted\": false"));
    assert_non_null(strstr(j0, "rand"));
    free(j0);
    char *j1 = node_file(dir, 0, "reward_t1_f1.json");
    assert_non_null(j1);
    assert_non_null(strstr(j1, "\"accepted\": true"));
    free(j1);
    char *fix = node_file(dir, 0, "llm/fix_t1_f1.request.json");
    assert_non_null(fix);
    assert_non_null(strstr(fix, "rand"));
    free(fix);
    /* every node trained and got the model's feedback */
    thought_graph g;
    load_graph(dir, &g);
    assert_int_equal(g.n, 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(g.nodes[i].status, NODE_OK);
        assert_non_null(g.nodes[i].feedback);
        assert_non_null(strstr(g.nodes[i].feedback, "Problem: most levels have no bat"));
        assert_true(g.nodes[i].tokens_prompt > 0 && g.nodes[i].tokens_completion > 0);
    }
    /* GoT with breadth 1: node 2 refines node 1 and shows node 0 (the
     * previous iteration, node 1, is never a reference) with its
     * evaluation summary, as the paper's prompts do by default; the
     * previous iteration's summary and the iteration count come with it */
    assert_int_equal(g.nodes[2].parent, 1);
    assert_int_equal(g.nodes[2].n_refs, 1);
    assert_int_equal(g.nodes[2].refs[0], 0);
    char *req = node_file(dir, 2, "llm/generate_1.request.json");
    assert_non_null(req);
    assert_non_null(strstr(req, "## Previous Reward Code"));
    assert_non_null(strstr(req, "[Reference 1]:"));
    assert_null(strstr(req, "[Reference 2]:"));
    assert_non_null(strstr(req, "** Score: Solvability: "));
    assert_non_null(strstr(req, "Previous reward score:\\nSolvability: "));
    assert_non_null(strstr(req, "Current Iteration: 3 / Max Iteration: 3 (100.0%)"));
    assert_null(strstr(req, "fitness 0.")); /* never the fitness */
    free(req);
    char *ev = node_file(dir, 1, "eval.json");
    assert_non_null(ev);
    assert_non_null(strstr(ev, "\"solvability\": "));
    assert_non_null(strstr(ev, "\"important_reachable\": "));
    free(ev);
    graph_free(&g);
    snprintf(path, sizeof path, "%s/usage.json", dir);
    char *u = slurp(path);
    assert_non_null(u);
    json_t *uj = json_loads(u, 0, NULL);
    assert_non_null(uj);
    assert_true(json_integer_value(json_object_get(uj, "total_tokens")) > 0);
    json_decref(uj);
    free(u);
    snprintf(path, sizeof path, "%s/config.json", dir);
    char *cfg = slurp(path);
    assert_non_null(cfg);
    assert_null(strstr(cfg, KEY_ENV)); /* the key's variable is the command line's, never stored */
    assert_non_null(strstr(cfg, "\"author\": \"openai\""));
    assert_non_null(strstr(cfg, "\"prompts\": \"paper\""));
    assert_non_null(strstr(cfg, "\"reward_api\": \"minimal\""));
    assert_non_null(strstr(cfg, "\"got_refs\": \"reference\""));
    free(cfg);
}

/* A model that refuses the story: exit 3 with its reason, nothing trained. */
static void run_openai_story_refused(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    setenv(KEY_ENV, TEST_KEY, 1);
    char script[PATH_MAX], dir[PATH_MAX], path[PATH_MAX + 16], out[4096];
    snprintf(script, sizeof script, "%s/refuse.json", pcg_test_tmpdir());
    const char *text = "{\"rules\": [{\"match\": \"# Read the target of a story\", \"response\": {\"content\": "
                       "\"{\\\"refuse\\\": \\\"the story asks for a dragon, which no level can hold\\\"}\"}}]}\n";
    assert_int_equal(write_file_atomic(script, text, strlen(text)), 0);
    fake_srv s;
    srv_start(&s, script, "run-refuse");
    snprintf(dir, sizeof dir, "%s/openai-refused", pcg_test_tmpdir());
    int rc = pcg_test_sh(out, sizeof out,
                         "%s run --llm openai --base-url http://127.0.0.1:%d/v1 --api-key-env %s "
                         "--story 'A dragon guards the door' " TINY " --out %s",
                         pcg_test_binary(), s.port, KEY_ENV, dir);
    srv_stop(&s);
    assert_int_equal(rc, 3);
    assert_int_equal(count_lines(out), 1);
    assert_non_null(strstr(out, "dragon"));
    snprintf(path, sizeof path, "%s/nodes", dir);
    assert_false(pcg_test_exists(path));
}

/* ---- --fitness llm and --feedback-input image, against the fake server ------------------ */

/* One ToT run of three nodes with 12 levels each, shared by the tests
 * below.  tests/fake_openai_judge.json answers the three judgements with
 * 0.25 (an explicit "fitness"), 0.95 (the mean of the "scores" alone) and
 * a reply without JSON. */
static char judge_dir[PATH_MAX], judge_log[PATH_MAX];
static char judge_out[1 << 16];
static int judge_rc = -1;

#define JUDGE_LEVELS 12

static void judge_start(void)
{
    pcg_test_use_source_prompts();
    setenv(KEY_ENV, TEST_KEY, 1);
    fake_srv s;
    srv_start(&s, "tests/fake_openai_judge.json", "run-judge");
    snprintf(judge_log, sizeof judge_log, "%s", s.log);
    snprintf(judge_dir, sizeof judge_dir, "%s/openai-judge", pcg_test_tmpdir());
    judge_rc = pcg_test_sh(judge_out, sizeof judge_out,
                           "%s run --llm openai --base-url http://127.0.0.1:%d/v1 --model fake-vision --api-key-env %s "
                           "--llm-retries 1 --llm-backoff 0.01 --llm-timeout 20 "
                           "--story 'The player must meet a bat before picking up the key and leaving through the "
                           "door' --prompts rich --pe tot --fitness llm --feedback-input image " TINY_BUDGET
                           " --levels %d --iterations 3 --out %s",
                           pcg_test_binary(), s.port, KEY_ENV, JUDGE_LEVELS, judge_dir);
    srv_stop(&s);
}

static const char *judge_run(void)
{
    if (!judge_dir[0]) judge_start();
    if (judge_rc != 0) fail_msg("run --fitness llm --feedback-input image exited %d: %s", judge_rc, judge_out);
    return judge_dir;
}

/* The requests the fake server received whose user message starts with
 * heading, in order: up to max, each the user message's text and, when
 * it has one, its image_url (NULL otherwise); returns the count. */
typedef struct {
    char *text;
    char *image_url;
} user_msg;

static int requests_with(const char *log, const char *heading, user_msg *out, int max)
{
    FILE *f = fopen(log, "r");
    assert_non_null(f);
    int n = 0;
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        json_t *e = json_loads(line, 0, NULL);
        assert_non_null(e);
        json_t *msgs = json_object_get(json_object_get(e, "body"), "messages"), *m;
        size_t i;
        json_array_foreach(msgs, i, m) {
            const char *role = json_string_value(json_object_get(m, "role"));
            if (!role || strcmp(role, "user")) continue;
            json_t *c = json_object_get(m, "content"), *part;
            const char *text = json_string_value(c), *url = NULL;
            size_t k;
            json_array_foreach(c, k, part) { /* a content list: text and image parts */
                const char *type = json_string_value(json_object_get(part, "type"));
                if (type && !strcmp(type, "text")) text = json_string_value(json_object_get(part, "text"));
                if (type && !strcmp(type, "image_url"))
                    url = json_string_value(json_object_get(json_object_get(part, "image_url"), "url"));
            }
            if (text && !strncmp(text, heading, strlen(heading))) {
                assert_true(n < max);
                out[n].text = strdup(text);
                out[n].image_url = url ? strdup(url) : NULL;
                n++;
            }
        }
        json_decref(e);
    }
    free(line);
    fclose(f);
    return n;
}

static void free_msgs(user_msg *m, int n)
{
    for (int i = 0; i < n; i++) {
        free(m[i].text);
        free(m[i].image_url);
    }
}

/* The shared run, with config.json's key set to value and exactly want
 * requests headed heading (in m, up to 8) received by the server. */
static const char *judge_requests(const char *key, const char *value, const char *heading, user_msg *m, int want)
{
    const char *dir = judge_run();
    assert_config(dir, key, value);
    assert_int_equal(requests_with(judge_log, heading, m, 8), want);
    return dir;
}

/* --fitness llm: the judgement prompt holds the first ten of the node's
 * twelve levels, the replies become the nodes' fitness (not the
 * evaluator's), and that fitness picks the parent. */
static void run_openai_fitness_llm(void **state)
{
    (void)state;
    user_msg m[8];
    int n = 3; /* one judgement per node */
    const char *dir = judge_requests("fitness", "llm", "# Judge generated levels", m, n);
    for (int i = 0; i < n; i++) {
        assert_non_null(strstr(m[i].text, "(10 levels)"));
        assert_null(m[i].image_url);
        assert_null(strstr(m[i].text, "\nLevel 11:\n"));
        /* levels 1..10 are the node's level_000..009, as text grids */
        for (int k = 0; k < 10; k++) {
            char path[PATH_MAX + 64], grid[2 * PCG_MAX_CELLS + 64], err[256];
            unsigned char tiles[PCG_MAX_CELLS];
            level_t lv;
            snprintf(path, sizeof path, "%s/nodes/%03d/levels/level_%03d.txt", dir, i, k);
            if (level_read(path, &lv, tiles, err, sizeof err)) fail_msg("%s", err);
            int len = snprintf(grid, sizeof grid, "\nLevel %d:\n", k + 1);
            for (int r = 0; r < lv.h; r++) {
                for (int c = 0; c < lv.w; c++) grid[len++] = tile_char(lv.t[r * lv.w + c]);
                grid[len++] = '\n';
            }
            grid[len] = 0;
            if (!strstr(m[i].text, grid)) fail_msg("node %d's judgement prompt lacks its level %d", i, k);
        }
    }
    free_msgs(m, n);
    /* the nodes' fitness is the model's, parsed from its reply */
    thought_graph g;
    load_graph(dir, &g);
    assert_int_equal(g.n, 3);
    assert_int_equal(g.nodes[0].status, NODE_OK);
    assert_int_equal(g.nodes[1].status, NODE_OK);
    assert_true(fabs(g.nodes[0].fitness - 0.25) < 1e-9);
    assert_true(fabs(g.nodes[1].fitness - 0.95) < 1e-9);
    /* eval.json keeps the evaluator's score, all twelve levels */
    char *ev = node_file(dir, 0, "eval.json");
    assert_non_null(ev);
    json_t *j = json_loads(ev, 0, NULL);
    assert_non_null(j);
    assert_int_equal(json_array_size(json_object_get(j, "levels")), JUDGE_LEVELS);
    double heuristic = json_number_value(json_object_get(j, "fitness"));
    assert_true(fabs(heuristic - 0.25) > 1e-6);
    json_decref(j);
    free(ev);
    /* ToT: node 2 refines the best judged node with a free slot (the
     * evaluator scores nodes 0 and 1 alike in this run, so by its fitness
     * the tie would go to node 0) */
    assert_int_equal(g.nodes[2].parent, 1);
    graph_free(&g);
    char want[128];
    snprintf(want, sizeof want, "fitness (model's judgement) 0.250; heuristic %.3f", heuristic);
    assert_file_has(dir, "run.log", want);
}

/* --feedback-input image: the feedback request carries the node's
 * levels.png as a data URL in an image_url part, not the levels as text. */
static void run_openai_feedback_image(void **state)
{
    (void)state;
    user_msg m[8];
    int n = 2; /* nodes 0 and 1; node 2 failed before its feedback */
    const char *dir = judge_requests("feedback_input", "image", "# Feedback on generated levels", m, n);
    for (int i = 0; i < n; i++) {
        assert_non_null(m[i].image_url);
        assert_non_null(strstr(m[i].text, "attached image"));
        assert_null(strstr(m[i].text, "\nLevel 1:\n"));
        char path[PATH_MAX + 64], err[256];
        snprintf(path, sizeof path, "%s/nodes/%03d/levels.png", dir, i);
        long len;
        char *png = read_file(path, 1L << 26, &len, err, sizeof err);
        assert_non_null(png);
        assert_true(len > 8 && !memcmp(png, "\x89PNG\r\n\x1a\n", 8));
        char *b64 = llm_base64(png, (size_t)len);
        assert_non_null(b64);
        assert_true(!strncmp(m[i].image_url, "data:image/png;base64,", 22));
        if (strcmp(m[i].image_url + 22, b64)) fail_msg("node %d: the image sent is not its levels.png", i);
        free(b64);
        free(png);
        char *fb = node_file(dir, i, "feedback.txt");
        assert_non_null(fb);
        assert_non_null(strstr(fb, "Problem: most levels have no bat"));
        free(fb);
    }
    free_msgs(m, n);
}

/* A judgement reply without the JSON object fails its node with the
 * reason (fitness 0, failed.txt, no feedback); the run goes on and ends
 * normally with the best valid node. */
static void run_openai_fitness_llm_malformed(void **state)
{
    (void)state;
    const char *dir = judge_run();
    thought_graph g;
    load_graph(dir, &g);
    assert_int_equal(g.n, 3);
    assert_int_equal(g.nodes[2].status, NODE_FAILED);
    assert_true(g.nodes[2].fitness == 0);
    assert_null(g.nodes[2].feedback);
    graph_free(&g);
    assert_file_has(dir, "nodes/002/failed.txt", "fitness judgement: fitness reply:");
    assert_file_has(dir, "nodes/002/failed.txt",
                    "(expected {\"scores\": [...], \"fitness\": F} or {\"acc_imp_perc\": F})\n");
    assert_file_has(dir, "nodes/002/llm/fitness.reply.txt", "seven out of ten"); /* kept for inspection */
    char *fb = node_file(dir, 2, "feedback.txt");
    assert_null(fb);
    assert_non_null(strstr(judge_out, "node 2 failed: fitness judgement: fitness reply:"));
    assert_file_has(dir, "summary.txt", "best_node 1\nbest_fitness 0.950000\nbest_path 0 -> 1\nnodes 3\n");
}


/* ---- a model that never writes a reward ------------------------------------------ */

/* A script for a base model without chat training: it paraphrases the
 * prompt in a loop (cut by the client, never continued). */
static void write_script(const char *path, const char *text)
{
    assert_int_equal(write_file_atomic(path, text, strlen(text)), 0);
}

static const char loop_reply[] =
    "{\"content\": \"The reward function should reward the player for reaching the key.\\n\", \"repeat\": 400, "
    "\"piece\": 16, \"finish_reason\": \"length\"}";

static void run_openai_hopeless_model_exits_1(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    char script[PATH_MAX], dir[PATH_MAX], text[1024];
    snprintf(script, sizeof script, "%s/hopeless.json", pcg_test_tmpdir());
    snprintf(text, sizeof text, "{\"default\": %s}", loop_reply);
    write_script(script, text);
    snprintf(dir, sizeof dir, "%s/hopeless", pcg_test_tmpdir());
    fake_srv s;
    srv_start(&s, script, "hopeless");
    static char out[1 << 16];
    double t0 = now_seconds();
    int rc = pcg_test_sh(out, sizeof out,
                         "%s run --llm openai --base-url http://127.0.0.1:%d/v1 --model base --api-key-env %s "
                         "--scenario 1 --prompts rich --pe got --trials 2 --fixes 1 " TINY_BUDGET
                         " --levels 4 --iterations 4 --out %s",
                         pcg_test_binary(), s.port, KEY_ENV, dir);
    srv_stop(&s);
    /* bounded, honest and non-zero */
    assert_true(now_seconds() - t0 < 60);
    if (rc != 1) fail_msg("exit %d, expected 1: %s", rc, out);
    assert_non_null(strstr(out, "stopping: the model wrote no reward function in 2 nodes in a row"));
    assert_non_null(strstr(out, "no node produced a reward"));
    assert_non_null(strstr(out, "rewards: 0 held a reward function, 0 compiled, 0 passed validation, 0 trained"));
    assert_non_null(strstr(out, "cut: 4 loops"));
    assert_null(strstr(out, "first of"));
    thought_graph g;
    load_graph(dir, &g);
    assert_int_equal(g.n, 2);
    assert_int_equal(g.nodes[0].status, NODE_FAILED);
    assert_int_equal(g.nodes[1].status, NODE_FAILED);
    graph_free(&g);
    /* what the model wrote is kept, with its tokens and why it was cut */
    assert_file_has(dir, "nodes/000/llm/generate_1.reply.txt", "reward the player for reaching the key");
    assert_file_has(dir, "nodes/000/llm/generate_1.outcome.json", "\"cut\": \"loop\"");
    assert_file_has(dir, "nodes/000/llm/generate_1.outcome.json", "\"status\": \"failed\"");
    assert_file_has(dir, "nodes/000/llm/generate_1.outcome.json", "\"completion_tokens\": ");
    assert_file_has(dir, "nodes/000/failed.txt", "loop");
    /* the retry said why the first attempt failed */
    assert_file_has(dir, "nodes/000/llm/generate_2.request.json", "Attempt 2 of 2");
    assert_file_has(dir, "nodes/000/llm/generate_2.request.json", "fell into a loop");
    /* a small budget for a reward, the end-of-turn stops, a stream */
    assert_file_has(dir, "nodes/000/llm/generate_1.request.json", "\"max_tokens\": 1280");
    assert_file_has(dir, "nodes/000/llm/generate_1.request.json", "\"stream\": true");
    assert_file_has(dir, "nodes/000/llm/generate_1.request.json", "<end_of_turn>");
    /* no contradiction: node 1 is a root at iteration 2 */
    assert_file_has(dir, "nodes/001/llm/generate_1.request.json", "iteration 2 of 4");
    assert_non_null(strstr(out, "0.000            -  ")); /* no "reward bytes -1" */
}

/* A node killed after its first trial failed: --resume does not ask for
 * that trial again, and the next trial is told why the first failed. */
static void run_resume_skips_recorded_failed_trial(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    char script[PATH_MAX], script2[PATH_MAX], dir[PATH_MAX], text[2048];
    snprintf(script, sizeof script, "%s/trial1.json", pcg_test_tmpdir());
    snprintf(text, sizeof text, "{\"responses\": [%s], \"default\": {\"sleep\": 60, \"content\": \"late\"}}",
             loop_reply);
    write_script(script, text);
    snprintf(dir, sizeof dir, "%s/resume-trial", pcg_test_tmpdir());
    fake_srv s;
    srv_start(&s, script, "trial1");
    static char out[1 << 16];
    int rc = pcg_test_sh(out, sizeof out,
                         "timeout -s KILL 6 %s run --llm openai --base-url http://127.0.0.1:%d/v1 --model base "
                         "--api-key-env %s --scenario 1 --prompts rich --trials 2 --fixes 0 --ablation zs " TINY_BUDGET
                         " --levels 4 --out %s",
                         pcg_test_binary(), s.port, KEY_ENV, dir);
    srv_stop(&s);
    assert_int_equal(rc, 137);
    assert_file_has(dir, "nodes/000/llm/generate_1.outcome.json", "\"status\": \"failed\"");
    /* the second server answers with a good reward */
    snprintf(script2, sizeof script2, "%s/trial2.json", pcg_test_tmpdir());
    write_script(script2, "{\"default\": {\"content\": \"```c\\nfloat compute_reward(const level_t *prev, "
                          "const level_t *curr)\\n{\\n    return (float)(count_tiles(curr, KEY) == 1) - "
                          "(float)(count_tiles(prev, KEY) == 1);\\n}\\n```\\n\"}}");
    srv_start(&s, script2, "trial2");
    rc = pcg_test_sh(out, sizeof out,
                     "%s run --out %s --resume --base-url http://127.0.0.1:%d/v1 --api-key-env %s", pcg_test_binary(),
                     dir, s.port, KEY_ENV);
    srv_stop(&s);
    if (rc != 0) fail_msg("resume exited %d: %s", rc, out);
    char *reqs = slurp(s.log);
    assert_non_null(reqs);
    assert_int_equal(count_of(reqs, "\"path\":"), 1);
    assert_non_null(strstr(reqs, "Attempt 2 of 2"));
    free(reqs);
    assert_non_null(strstr(out, "recorded; not asked again"));
}

PCG_TESTS(run, cmocka_unit_test(run_flag_errors_one_line), cmocka_unit_test(run_story_refused_before_training),
          cmocka_unit_test(run_openai_story_refused), cmocka_unit_test(run_offline_cot),
          cmocka_unit_test(run_report_names_prompts_of_older_runs),
          cmocka_unit_test(run_offline_tot), cmocka_unit_test(run_offline_got),
          cmocka_unit_test(run_resume_after_kill9_same_graph), cmocka_unit_test(run_resume_redoes_damaged_last_node),
          cmocka_unit_test(run_resume_refuses_damaged_earlier_node), cmocka_unit_test(run_openai_fake_server),
          cmocka_unit_test(run_ablation_zs), cmocka_unit_test(run_ablation_sa), cmocka_unit_test(run_ablation_fb),
          cmocka_unit_test(run_openai_fitness_llm), cmocka_unit_test(run_openai_feedback_image),
          cmocka_unit_test(run_openai_fitness_llm_malformed), cmocka_unit_test(run_openai_hopeless_model_exits_1),
          cmocka_unit_test(run_resume_skips_recorded_failed_trial))
