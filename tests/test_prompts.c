/* What the model is sent, call by call: every exchange of the language-model
 * author rendered on a fixed run state (a graph of finished nodes, fixed
 * levels and statistics, scenario 1) against the scripted fake server, and
 * the messages of each request compared with the golden copies under
 * tests/golden/PROFILE/ (CASE.system.txt, CASE.user.txt; a missing file is
 * a message that must not be sent).  PCG_GOLDEN_WRITE=1 writes the copies
 * instead of comparing: read every one against what it must say before
 * committing it. */
#include "harness.h"
#include "author.h"
#include "levelio.h"
#include "eval.h"
#include "graph.h"
#include "prompts.h"
#include "run_state.h"
#include "target.h"
#include "util.h"
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY_ENV "PCG_PROMPTS_TEST_KEY"

static const char *const codes[] = {
    "static float score(const level_t *l)\n{\n    return -fabsf((float)count_tiles(l, KEY) - 1.0f);\n}\n\n"
    "float compute_reward(const level_t *prev, const level_t *curr)\n{\n    return score(curr) - score(prev);\n}\n",
    "static float score(const level_t *l)\n{\n    float s = -fabsf((float)count_tiles(l, KEY) - 1.0f);\n"
    "    s -= fabsf((float)count_tiles(l, BAT) - 1.0f);\n    return s;\n}\n\n"
    "float compute_reward(const level_t *prev, const level_t *curr)\n{\n    return score(curr) - score(prev);\n}\n",
    "float compute_reward(const level_t *prev, const level_t *curr)\n{\n"
    "    return 0.5f * (float)(count_tiles(curr, BAT) - count_tiles(prev, BAT));\n}\n",
};
static const char *const feedbacks[] = {
    "Problem: no level has a bat.\nCause: nothing rewards bats.\nChange: reward one bat.",
    "Problem: the bats are far from the route.\nCause: bats count anywhere.\nChange: reward bats near the key.",
    "Problem: too many keys.\nCause: keys are not limited.\nChange: penalise keys beyond one.",
};
static const double fitnesses[] = {0.40, 0.75, 0.55};
/* each node's evaluation summary, as its eval.json holds it */
static const double summaries[][3] = {{0.5, 1.25, 0.0}, {1.0, 2.0, 1.0}, {0.75, 1.5, 0.5}};
static const char *const buggy = "float compute_reward(const level_t *prev, const level_t *curr)\n{\n"
                                 "    return (float)rand();\n}\n";
static const char *const rejection = "it calls rand, which is not in the reward API";

typedef struct {
    run_config c;
    run_state R;
    pcg_fake_srv srv;
    level_set *ls;
    char root[512];
} fixture;

static void write_or_fail(const char *path, const char *text)
{
    char err[512];
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    if (make_dirs_msg(dir, err, sizeof err)) fail_msg("%s", err);
    if (write_file_atomic(path, text, strlen(text))) fail_msg("cannot write %s", path);
}

/* Three 16x16 levels, the same on every run: walls on a fixed pattern,
 * the player and the door in opposite corners, a key and a bat. */
static void make_levels(level_set *ls)
{
    ls->n = 3;
    for (int i = 0; i < ls->n; i++) {
        level_t *l = &ls->levels[i];
        l->h = l->w = 16;
        l->t = ls->tiles[i];
        for (int c = 0; c < 256; c++) l->t[c] = (c * 7 + i * 5) % 13 == 0 ? TILE_WALL : TILE_EMPTY;
        l->t[1 * 16 + 1] = TILE_PLAYER;
        l->t[14 * 16 + 14] = TILE_DOOR;
        l->t[(3 + i) * 16 + 10] = TILE_KEY;
        l->t[8 * 16 + 4 + i] = TILE_BAT;
    }
}

/* The nodes 0..2 finished (rewards, fitness, feedback, evaluations), and
 * node 3 pending, refining node 1, its references chosen as a run would. */
static void make_graph(fixture *f)
{
    run_state *R = &f->R;
    assert_int_equal(graph_init(&R->g, f->c.pe, f->c.pe == PE_COT ? 1 : f->c.breadth), 0);
    R->g.ref_rule = f->c.got_refs;
    const int parents[] = {-1, 0, 0};
    char path[PATH_MAX + 64];
    for (int i = 0; i < 3; i++) {
        assert_int_equal(graph_add(&R->g, i + 1, parents[i]), i);
        snprintf(R->g.nodes[i].reward_path, GRAPH_PATH_MAX, "nodes/%03d/reward.c", i);
        snprintf(path, sizeof path, "%s/%s", f->c.out, R->g.nodes[i].reward_path);
        write_or_fail(path, codes[i]);
        assert_int_equal(graph_finish(&R->g, i, NODE_OK, fitnesses[i]), 0);
        assert_int_equal(graph_set_feedback(&R->g, i, feedbacks[i]), 0);
        char ev[256];
        snprintf(ev, sizeof ev, "{\"fitness\": %g, \"solvability\": %g, \"mean_solutions\": %g, "
                                "\"important_reachable\": %g}\n",
                 fitnesses[i], summaries[i][0], summaries[i][1], summaries[i][2]);
        snprintf(path, sizeof path, "%s/nodes/%03d/eval.json", f->c.out, i);
        write_or_fail(path, ev);
    }
    int refs[GRAPH_MAX_REFS], kinds[GRAPH_MAX_REFS];
    int nr = graph_references(&R->g, 1, f->c.got_best, f->c.got_worst, refs, kinds);
    assert_int_equal(graph_add(&R->g, 4, 1), 3);
    thought_node *nd = &R->g.nodes[3];
    nd->n_refs = nr;
    for (int k = 0; k < nr; k++) {
        nd->refs[k] = refs[k];
        nd->ref_kind[k] = kinds[k];
        nd->ref_fitness[k] = R->g.nodes[refs[k]].fitness;
    }
}

static void fixture_open(fixture *f, const char *profile, int pe, const char *api, const char *refs)
{
    pcg_test_use_source_prompts();
    memset(f, 0, sizeof *f);
    snprintf(f->root, sizeof f->root, "%s/prompts-%s-%s-%s-%s", pcg_test_tmpdir(), profile, graph_pe_name(pe),
             api ? api : "default", refs ? refs : "default");
    char out[256];
    assert_int_equal(pcg_test_sh(out, sizeof out, "rm -rf '%s'", f->root), 0);
    run_config *c = &f->c;
    run_config_defaults(c);
    c->offline = 0;
    c->quiet = 1;
    c->scenario = 1;
    c->pe = pe;
    c->prompts = run_parse_prompts(profile);
    if (api) c->reward_api = run_parse_reward_api(api);
    if (refs) c->got_refs = run_parse_got_refs(refs);
    run_config_follow_profile(c);
    snprintf(c->story, sizeof c->story, "%s", story_scenario_text(1));
    snprintf(c->out, sizeof c->out, "%s/run", f->root);
    setenv(KEY_ENV, "sk-prompts-test", 1);
    pcg_test_srv_start(&f->srv, "tests/fake_openai_run.json", "prompts", KEY_ENV);
    snprintf(c->llm.base_url, sizeof c->llm.base_url, "%s", f->srv.url);
    snprintf(c->llm.model, sizeof c->llm.model, "fake-coder");
    snprintf(c->llm.api_key_env, sizeof c->llm.api_key_env, KEY_ENV);
    c->llm.retries = 0;
    c->llm.connect_timeout = 2;
    c->llm.total_timeout = 10;
    run_state *R = &f->R;
    R->c = c;
    target_scenario(1, &R->target);
    R->esc = *eval_scenario(1);
    target_describe(&R->target, R->flow, sizeof R->flow);
    R->esc.flow = R->flow;
    f->ls = calloc(1, sizeof *f->ls);
    assert_non_null(f->ls);
    make_levels(f->ls);
    eval_levels(&R->esc, f->ls->levels, f->ls->n, f->ls->per, &f->ls->sum);
    make_graph(f);
}

static void fixture_close(fixture *f)
{
    pcg_test_srv_stop(&f->srv);
    graph_free(&f->R.g);
    free(f->ls);
}

/* The directory of one case (a node directory of its own, so that no
 * stored reply is reused). */
static const char *case_dir(fixture *f, const char *name, char *buf, size_t len)
{
    snprintf(buf, len, "%s/cases/%s", f->root, name);
    return buf;
}

/* The messages of the one request in dir/llm/ against the golden copies. */
static void check_golden(const char *profile, const char *name, const char *dir, const char *request)
{
    char path[PATH_MAX + 128], err[512];
    snprintf(path, sizeof path, "%s/llm/%s.request.json", dir, request);
    json_error_t je;
    json_t *req = json_load_file(path, 0, &je);
    if (!req) fail_msg("%s: no request was sent (%s)", name, je.text);
    int write = getenv("PCG_GOLDEN_WRITE") && !strcmp(getenv("PCG_GOLDEN_WRITE"), "1");
    static const char *const roles[] = {"system", "user"};
    for (int r = 0; r < 2; r++) {
        const char *text = NULL;
        size_t i;
        json_t *m;
        json_array_foreach(json_object_get(req, "messages"), i, m) {
            if (!strcmp(json_string_value(json_object_get(m, "role")), roles[r]))
                text = json_string_value(json_object_get(m, "content"));
        }
        snprintf(path, sizeof path, "tests/golden/%s/%s.%s.txt", profile, name, roles[r]);
        if (write) {
            if (text) write_or_fail(path, text);
            else remove(path);
            continue;
        }
        long len;
        char *want = pcg_test_exists(path) ? read_file(path, 1L << 22, &len, err, sizeof err) : NULL;
        if (!want && text) fail_msg("%s: a %s message was sent; %s does not exist", name, roles[r], path);
        if (want && !text) fail_msg("%s: no %s message was sent; %s expects one", name, roles[r], path);
        if (want && strcmp(want, text)) {
            size_t k = 0;
            while (want[k] && want[k] == text[k]) k++;
            fail_msg("%s: the %s message differs from %s at byte %zu: ...%.80s... (sent ...%.80s...)", name, roles[r],
                     path, k, want + (k > 20 ? k - 20 : 0), text + (k > 20 ? k - 20 : 0));
        }
        free(want);
    }
    json_decref(req);
}

/* Every call of a run, rendered and compared: iteration 1, its retry, a
 * refinement, a code fix, self-alignment (with and without the sandbox's
 * warning) and its fix, feedback, the model's fitness, the story's target. */
static void render_all(const char *profile, int pe, const char *suffix)
{
    fixture f;
    fixture_open(&f, profile, pe, NULL, NULL);
    run_state *R = &f.R;
    char dir[PATH_MAX], err[1024], name[64];
    double fit;
    target_t t;
    reward_stats st = {0.0123, 0.0456, -0.5, 1.0, 0.83, 0.4, 1536};
    reward_stats flat = {0.0, 0.0, 0.0, 0.0, 1.0, 0.4, 1536};
#define CASE(label) (snprintf(name, sizeof name, "%s%s", label, suffix), case_dir(&f, name, dir, sizeof dir))
    free(au_generate(R, 0, CASE("generate_first"), 1, NULL, err, sizeof err));
    check_golden(profile, name, dir, "generate_1");
    free(au_generate(R, 3, CASE("generate_refine"), 1, NULL, err, sizeof err));
    check_golden(profile, name, dir, "generate_1");
    free(au_fix(R, 0, CASE("fix_first"), buggy, rejection, 1, 1, err, sizeof err));
    check_golden(profile, name, dir, "fix_t1_f1");
    free(au_fix(R, 3, CASE("fix_refine"), buggy, rejection, 2, 1, err, sizeof err));
    check_golden(profile, name, dir, "fix_t2_f1");
    if (pe == PE_COT) {
        free(au_generate(R, 0, CASE("generate_retry"), 2, "the model fell into a loop", err, sizeof err));
        check_golden(profile, name, dir, "generate_2");
        free(au_align(R, 0, CASE("align"), codes[0], &st, 1, err, sizeof err));
        check_golden(profile, name, dir, "align_1");
        free(au_align(R, 0, CASE("align_flat"), codes[0], &flat, 1, err, sizeof err));
        check_golden(profile, name, dir, "align_1");
        /* a fix in round 1 of self-alignment: the reward before it and its statistics are in the node */
        CASE("align_fix");
        char path[PATH_MAX + 64], sj[512];
        snprintf(path, sizeof path, "%s/reward_gen.c", dir);
        write_or_fail(path, codes[0]);
        snprintf(path, sizeof path, "%s/reward_gen.json", dir);
        snprintf(sj, sizeof sj, "{\"accepted\": true, \"stats\": {\"mean\": %g, \"std\": %g, \"min\": %g, \"max\": %g, "
                                "\"zero_share\": %g, \"us_per_call\": %g, \"n\": %ld}}\n",
                 st.mean, st.std, st.min, st.max, st.zero_share, st.us_per_call, st.n);
        write_or_fail(path, sj);
        free(au_fix(R, 0, dir, buggy, rejection, 101, 1, err, sizeof err));
        check_golden(profile, name, dir, "fix_t101_f1");
        au_feedback(R, 0, CASE("feedback"), codes[0], f.ls, err, sizeof err);
        check_golden(profile, name, dir, "feedback");
        au_fitness(R, 0, CASE("fitness"), f.ls, &fit, err, sizeof err);
        check_golden(profile, name, dir, "fitness");
        au_target(R, CASE("target"), &t, err, sizeof err);
        check_golden(profile, name, dir, "target");
    }
#undef CASE
    fixture_close(&f);
}

static void prompts_rich_golden_cot(void **state)
{
    (void)state;
    render_all("rich", PE_COT, "");
}

static void prompts_rich_golden_got(void **state)
{
    (void)state;
    render_all("rich", PE_GOT, "_got");
}

static void prompts_paper_golden_cot(void **state)
{
    (void)state;
    render_all("paper", PE_COT, "");
}

static void prompts_paper_golden_tot(void **state)
{
    (void)state;
    render_all("paper", PE_TOT, "_tot");
}

static void prompts_paper_golden_got(void **state)
{
    (void)state;
    render_all("paper", PE_GOT, "_got");
}

/* The full reward API, and GoT references chosen and shown as the engine
 * does (the parent left out, each with its fitness). */
static void prompts_paper_golden_options(void **state)
{
    (void)state;
    fixture f;
    char dir[PATH_MAX], err[1024];
    fixture_open(&f, "paper", PE_COT, "full", NULL);
    free(au_generate(&f.R, 0, case_dir(&f, "generate_first_full", dir, sizeof dir), 1, NULL, err, sizeof err));
    check_golden("paper", "generate_first_full", dir, "generate_1");
    fixture_close(&f);
    fixture_open(&f, "paper", PE_GOT, NULL, "engine");
    free(au_generate(&f.R, 3, case_dir(&f, "generate_refine_got_engine", dir, sizeof dir), 1, NULL, err, sizeof err));
    check_golden("paper", "generate_refine_got_engine", dir, "generate_1");
    fixture_close(&f);
}

/* The text of every message of the one request in dir/llm/ (malloc'd). */
static char *request_text(const char *dir, const char *request)
{
    char path[PATH_MAX + 128];
    snprintf(path, sizeof path, "%s/llm/%s.request.json", dir, request);
    json_t *req = json_load_file(path, 0, NULL);
    if (!req) fail_msg("no request %s", path);
    size_t cap = 1 << 20, n = 0, i;
    char *all = calloc(1, cap);
    json_t *m;
    json_array_foreach(json_object_get(req, "messages"), i, m) {
        const char *t = json_string_value(json_object_get(m, "content"));
        size_t k = strlen(t);
        assert_true(n + k + 2 < cap);
        memcpy(all + n, t, k);
        n += k;
        all[n++] = '\n';
    }
    json_decref(req);
    return all;
}

static void expect_absent(const char *text, const char *what, const char *const *needles)
{
    for (int i = 0; needles[i]; i++)
        if (strstr(text, needles[i])) fail_msg("%s holds \"%s\"", what, needles[i]);
}

/* The paper's first reward prompt: the empty template and what a level
 * is, and nothing the paper's model did not get: no worked example, no
 * path helpers with the minimal API, no target line, no environment
 * facts, no map size. */
static void prompts_paper_first_prompt_holds_only_the_papers_facts(void **state)
{
    (void)state;
    fixture f;
    char dir[PATH_MAX], err[1024];
    fixture_open(&f, "paper", PE_COT, NULL, NULL);
    free(au_generate(&f.R, 0, case_dir(&f, "first", dir, sizeof dir), 1, NULL, err, sizeof err));
    char *t = request_text(dir, "generate_1");
    assert_non_null(strstr(t, "float compute_reward(const level_t *prev, const level_t *curr)\n{\n"
                              "    float reward = 0.0f;\n\n    return reward;\n}\n"));
    assert_non_null(strstr(t, "Target scenario: The 'Player' needs to obtain the Key"));
    assert_non_null(strstr(t, "EMPTY = 1, WALL = 2, PLAYER = 3, BAT = 4, SCORPION = 5, SPIDER = 6, KEY = 7, DOOR = 8"));
    assert_non_null(strstr(t, "int count_tiles(const level_t *l, int tile);"));
    const char *absent[] = {"TREASURE", "score(curr) - score(prev)", "## Example\n", "path_length", "nearest_tile",
                            "count_regions", "scored on this target", "meet BAT, not", f.R.flow, "16",
                            "opposite corners", "three passes", "Current Iteration", NULL};
    expect_absent(t, "the paper's first reward prompt", absent);
    free(t);
    fixture_close(&f);
    /* the full API lists the searches, the new one included */
    fixture_open(&f, "paper", PE_COT, "full", NULL);
    free(au_generate(&f.R, 0, case_dir(&f, "first_full", dir, sizeof dir), 1, NULL, err, sizeof err));
    t = request_text(dir, "generate_1");
    assert_non_null(strstr(t, "int path_length(const level_t *l, int r0, int c0, int r1, int c1);"));
    assert_non_null(strstr(t, "int path_length_through(const level_t *l, int r0, int c0, int r1, int c1, unsigned "
                              "passable_mask);"));
    free(t);
    fixture_close(&f);
    /* rich, today's: the API document with its example and the target */
    fixture_open(&f, "rich", PE_COT, NULL, NULL);
    free(au_generate(&f.R, 0, case_dir(&f, "first_rich", dir, sizeof dir), 1, NULL, err, sizeof err));
    t = request_text(dir, "generate_1");
    assert_non_null(strstr(t, "nearest_tile_distance(l, pr[0], pc[0], KEY)"));
    assert_non_null(strstr(t, "scored on this target: encounter: meet BAT, not SCORPION, SPIDER"));
    free(t);
    fixture_close(&f);
}

/* GoT references: the paper's rule and text show the parent among them and
 * their evaluation summaries, never a fitness; the engine's leave the
 * parent out and show the fitness. */
static void prompts_got_references_by_rule(void **state)
{
    (void)state;
    fixture f;
    fixture_open(&f, "paper", PE_GOT, NULL, NULL);
    thought_node *nd = &f.R.g.nodes[3];
    assert_int_equal(nd->n_refs, 2);
    assert_int_equal(nd->refs[0], 1); /* the parent, the fittest */
    assert_int_equal(nd->refs[1], 0); /* node 2, the previous iteration, is left out */
    char err[512];
    char *refs = author_references(&f.R, 3, 2, err, sizeof err);
    assert_non_null(refs);
    assert_non_null(strstr(refs, "** Score: Solvability: 1.000, Number of Solutions: 2.000, Reachable Important "
                                 "Tiles: 1.000 **"));
    assert_null(strstr(refs, "0.750"));
    free(refs);
    /* a node without eval.json numbers gets them from its levels */
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/nodes/000/eval.json", f.c.out);
    write_or_fail(path, "{\"fitness\": 0.4}\n");
    snprintf(path, sizeof path, "%s/nodes/000/levels", f.c.out);
    assert_int_equal(make_dirs(path), 0);
    f.c.n_levels = f.ls->n;
    for (int i = 0; i < f.ls->n; i++) {
        char lp[PATH_MAX + 96];
        snprintf(lp, sizeof lp, "%s/level_%03d.txt", path, i);
        assert_int_equal(level_write(lp, &f.ls->levels[i], NULL), 0);
    }
    char *sum = author_summary(&f.R, 0, err, sizeof err);
    assert_non_null(sum);
    char want[160];
    snprintf(want, sizeof want, "Solvability: %.3f, Number of Solutions: %.3f, Reachable Important Tiles: %.3f",
             f.ls->sum.solvability, f.ls->sum.mean_solutions, f.ls->sum.important_reachable);
    assert_string_equal(sum, want);
    free(sum);
    /* no earlier node: the summary says there is none */
    sum = author_summary(&f.R, -1, err, sizeof err);
    assert_non_null(strstr(sum, "None yet"));
    free(sum);
    fixture_close(&f);
    fixture_open(&f, "paper", PE_GOT, NULL, "engine");
    nd = &f.R.g.nodes[3];
    assert_int_equal(nd->n_refs, 1);
    assert_int_equal(nd->refs[0], 0);
    refs = author_references(&f.R, 3, 1, err, sizeof err);
    assert_non_null(strstr(refs, "** Score: fitness 0.400, one of the best so far **"));
    free(refs);
    fixture_close(&f);
}

/* The flags and config.json: the profile's defaults, explicit values,
 * one-line errors, and runs made before the settings were stored. */
static void prompts_flags_and_config(void **state)
{
    (void)state;
    struct {
        const char *flags[6];
        int prompts, api, refs;
    } cases[] = {
        {{NULL}, PROMPTS_PAPER, API_MINIMAL, GRAPH_REFS_REFERENCE},
        {{"--prompts", "rich", NULL}, PROMPTS_RICH, API_FULL, GRAPH_REFS_ENGINE},
        {{"--prompts", "rich", "--reward-api", "minimal", "--got-refs", "reference"}, PROMPTS_RICH, API_MINIMAL,
         GRAPH_REFS_REFERENCE},
        {{"--reward-api", "full", "--got-refs", "engine", NULL}, PROMPTS_PAPER, API_FULL, GRAPH_REFS_ENGINE},
    };
    char err[512];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *argv[10] = {"run", "--scenario", "1"};
        int argc = 3;
        for (int k = 0; k < 6 && cases[i].flags[k]; k++) argv[argc++] = (char *)cases[i].flags[k];
        run_config c;
        run_config_defaults(&c);
        if (run_config_from_flags(&c, argc, argv, err, sizeof err)) fail_msg("case %zu: %s", i, err);
        assert_int_equal(c.prompts, cases[i].prompts);
        assert_int_equal(c.reward_api, cases[i].api);
        assert_int_equal(c.got_refs, cases[i].refs);
        /* config.json keeps them */
        json_t *j = run_config_to_json(&c);
        assert_string_equal(json_string_value(json_object_get(j, "prompts")), run_prompts_name(cases[i].prompts));
        assert_string_equal(json_string_value(json_object_get(j, "reward_api")), run_reward_api_name(cases[i].api));
        assert_string_equal(json_string_value(json_object_get(j, "got_refs")), run_got_refs_name(cases[i].refs));
        run_config back;
        run_config_defaults(&back);
        if (run_config_from_json(j, &back, err, sizeof err)) fail_msg("case %zu: %s", i, err);
        assert_int_equal(back.prompts, cases[i].prompts);
        assert_int_equal(back.reward_api, cases[i].api);
        assert_int_equal(back.got_refs, cases[i].refs);
        /* a run made before: today's rich prompts, full API, the engine's references */
        json_object_del(j, "prompts");
        json_object_del(j, "reward_api");
        json_object_del(j, "got_refs");
        if (run_config_from_json(j, &back, err, sizeof err)) fail_msg("case %zu: %s", i, err);
        assert_int_equal(back.prompts, PROMPTS_RICH);
        assert_int_equal(back.reward_api, API_FULL);
        assert_int_equal(back.got_refs, GRAPH_REFS_ENGINE);
        /* a stored name that is not one */
        json_object_set_new(j, "reward_api", json_string("some"));
        assert_int_equal(run_config_from_json(j, &back, err, sizeof err), -1);
        assert_non_null(strstr(err, "'reward_api'"));
        json_decref(j);
    }
    const char *bad[][2] = {{"--prompts", "--prompts must be paper or rich"},
                            {"--reward-api", "--reward-api must be minimal or full"},
                            {"--got-refs", "--got-refs must be reference or engine"}};
    for (int i = 0; i < 3; i++) {
        char *argv[] = {"run", "--scenario", "1", (char *)bad[i][0], "papers"};
        run_config c;
        run_config_defaults(&c);
        assert_int_equal(run_config_from_flags(&c, 5, argv, err, sizeof err), -1);
        assert_string_equal(err, bad[i][1]);
    }
}

PCG_TESTS(prompts, cmocka_unit_test(prompts_rich_golden_cot), cmocka_unit_test(prompts_rich_golden_got),
          cmocka_unit_test(prompts_paper_golden_cot), cmocka_unit_test(prompts_paper_golden_tot),
          cmocka_unit_test(prompts_paper_golden_got), cmocka_unit_test(prompts_paper_golden_options),
          cmocka_unit_test(prompts_paper_first_prompt_holds_only_the_papers_facts),
          cmocka_unit_test(prompts_got_references_by_rule), cmocka_unit_test(prompts_flags_and_config))
