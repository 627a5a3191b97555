/* `pcgrllm run` options that change what the loop starts from or what the
 * prompts say: --init-reward (the paper's Human row: a given reward trained
 * as it is, then refined), a rejected initial reward, and the evaluator's
 * rules kept out of the prompts unless --evaluator-rules asks for them,
 * and the --quick profile (its flags, overridable, named in config.json, the
 * log and the report).
 * Budgets are tiny: these tests check the loop, not what it learns. */
#include "harness.h"
#include "graph.h"
#include "run_config.h"
#include "util.h"
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TINY "--llm offline --preset small --steps 512 --envs 2 --threads 1 --align 1 --check-envs 4 --levels 4 --quiet"

static char *node_file(const char *dir, int id, const char *name)
{
    char path[2 * PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/nodes/%03d/%s", dir, id, name);
    return pcg_test_slurp(path);
}

static int node_has(const char *dir, int id, const char *name)
{
    char path[2 * PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/nodes/%03d/%s", dir, id, name);
    return pcg_test_exists(path);
}

static void run_init_reward_trained_as_is_then_refined(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    char dir[PATH_MAX], path[PATH_MAX + 64], out[8192], err[256];
    snprintf(dir, sizeof dir, "%s/init-reward", pcg_test_tmpdir());
    int rc = pcg_test_sh(out, sizeof out, "%s run --scenario 1 " TINY " --iterations 2 --init-reward "
                         "rewards/human/scenario1.c --out %s", pcg_test_binary(), dir);
    if (rc != 0) fail_msg("run exited %d: %s", rc, out);
    char *human = pcg_test_slurp("rewards/human/scenario1.c");
    assert_non_null(human);
    /* the run's own copy, and node 0 trained exactly it: checked, not
     * generated, not aligned */
    snprintf(path, sizeof path, "%s/init_reward.c", dir);
    char *copy = pcg_test_slurp(path);
    assert_non_null(copy);
    assert_string_equal(copy, human);
    char *r0 = node_file(dir, 0, "reward.c");
    assert_non_null(r0);
    assert_string_equal(r0, human);
    assert_true(node_has(dir, 0, "reward_init.json"));
    assert_false(node_has(dir, 0, "reward_t1_f0.c"));
    assert_false(node_has(dir, 0, "align_1.c"));
    /* node 1 refines it (the offline author, which reads only its own
     * rewards, starts from its own design and says so) and is aligned */
    thought_graph g;
    snprintf(path, sizeof path, "%s/graph.json", dir);
    assert_int_equal(graph_load(path, &g, err, sizeof err), 0);
    assert_int_equal(g.n, 2);
    assert_int_equal(g.nodes[0].status, NODE_OK);
    assert_int_equal(g.nodes[1].parent, 0);
    assert_true(node_has(dir, 1, "align_1.c"));
    char *r1 = node_file(dir, 1, "reward.c");
    assert_non_null(r1);
    assert_string_not_equal(r1, human);
    graph_free(&g);
    snprintf(path, sizeof path, "%s/run.log", dir);
    char *log = pcg_test_slurp(path);
    assert_non_null(log);
    assert_non_null(strstr(log, "the given initial reward, trained as it is"));
    assert_non_null(strstr(log, "cannot read the given initial reward's terms"));
    snprintf(path, sizeof path, "%s/config.json", dir);
    json_t *cfg = json_load_file(path, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(cfg, "init_reward")), "rewards/human/scenario1.c");
    json_decref(cfg);
    free(log);
    free(r1);
    free(r0);
    free(copy);
    free(human);
}

static void run_init_reward_rejected_fails_the_node(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    char dir[PATH_MAX], path[PATH_MAX + 64], out[8192], err[256];
    snprintf(path, sizeof path, "%s/bad_init.c", pcg_test_tmpdir());
    const char *bad = "float compute_reward(const level_t *prev, const level_t *curr) { return (float)rand(); }\n";
    assert_int_equal(write_file_atomic(path, bad, strlen(bad)), 0);
    snprintf(dir, sizeof dir, "%s/init-bad", pcg_test_tmpdir());
    int rc = pcg_test_sh(out, sizeof out, "%s run --scenario 1 " TINY " --ablation zs --init-reward %s --out %s",
                         pcg_test_binary(), path, dir);
    /* the run's one node has no reward: exit 1 with the summary */
    if (rc != 1 || !strstr(out, "no node produced a reward")) fail_msg("run exited %d: %s", rc, out);
    thought_graph g;
    snprintf(path, sizeof path, "%s/graph.json", dir);
    assert_int_equal(graph_load(path, &g, err, sizeof err), 0);
    assert_int_equal(g.n, 1);
    assert_int_equal(g.nodes[0].status, NODE_FAILED);
    graph_free(&g);
    char *why = node_file(dir, 0, "failed.txt");
    assert_non_null(why);
    assert_non_null(strstr(why, "the initial reward (--init-reward"));
    assert_non_null(strstr(why, "rand"));
    free(why);
    assert_false(node_has(dir, 0, "train.done"));
}

/* Requests the fake server got, as text (one JSON line each). */
static void check_rules_in_requests(const char *dir, int want)
{
    const char *names[] = {"llm/generate_1.request.json", "llm/feedback.request.json"};
    for (int i = 0; i < 2; i++) {
        char *req = node_file(dir, 0, names[i]);
        if (!req) fail_msg("%s/nodes/000/%s is missing", dir, names[i]);
        int has = strstr(req, "How the levels are scored") != NULL;
        if (has != want) fail_msg("%s %s the evaluator's rules", names[i], has ? "states" : "lacks");
        if (want) assert_non_null(strstr(req, "scores 1 (playable)")); /* scenario 3: the key-door rules */
        free(req);
    }
}

static void run_evaluator_rules_only_on_request(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    setenv("PCG_RULES_TEST_KEY", "sk-rules-test", 1);
    pcg_fake_srv s;
    pcg_test_srv_start(&s, "tests/fake_openai_run.json", "rules", "PCG_RULES_TEST_KEY");
    char dir[2][PATH_MAX], path[2 * PATH_MAX + 64], out[2][16384];
    int rc[2];
    for (int on = 0; on < 2; on++) {
        snprintf(dir[on], sizeof dir[on], "%s/rules-%d", pcg_test_tmpdir(), on);
        rc[on] = pcg_test_sh(out[on], sizeof out[on],
                             "%s run --scenario 3 --llm openai --base-url http://127.0.0.1:%d/v1 --model fake-coder "
                             "--api-key-env PCG_RULES_TEST_KEY --llm-retries 1 --llm-timeout 20 --preset small "
                             "--steps 512 --envs 2 --threads 1 --check-envs 4 --levels 4 --ablation fb "
                             "--iterations 1 --quiet %s --out %s",
                             pcg_test_binary(), s.port, on ? "--evaluator-rules" : "", dir[on]);
    }
    pcg_test_srv_stop(&s); /* before any check can end the test: no server left behind */
    for (int on = 0; on < 2; on++) {
        if (rc[on] != 0) fail_msg("run exited %d: %s", rc[on], out[on]);
        check_rules_in_requests(dir[on], on);
        snprintf(path, sizeof path, "%s/config.json", dir[on]);
        json_t *cfg = json_load_file(path, 0, NULL);
        assert_non_null(cfg);
        assert_int_equal(json_is_true(json_object_get(cfg, "evaluator_rules")), on);
        json_decref(cfg);
    }
}

/* --quick parses the profile's flags before the command line's own: the
 * steps given override the profile's, the rest is the profile's, and the
 * run names the profile and its flags wherever its settings are shown. */
/* `pcgrllm run FLAGS --out TMP/name`, finished (dir receives its path),
 * and its config.json. */
static json_t *finished_run(char *dir, size_t len, const char *name, const char *flags)
{
    char out[8192];
    pcg_test_use_source_prompts();
    snprintf(dir, len, "%s/%s", pcg_test_tmpdir(), name);
    int rc = pcg_test_sh(out, sizeof out, "%s run %s --out %s", pcg_test_binary(), flags, dir);
    if (rc != 0) fail_msg("run %s exited %d: %s", flags, rc, out);
    return pcg_test_json_in(dir, "config.json");
}

static void run_quick_profile_named_and_overridable(void **state)
{
    (void)state;
    char dir[PATH_MAX], path[PATH_MAX + 64], out[8192];
    int rc;
    json_t *cfg = finished_run(dir, sizeof dir, "quick", "--scenario 1 --llm offline --steps 1024 --quick --threads 1 "
                               "--levels 4 --ablation zs --quiet");
    assert_string_equal(json_string_value(json_object_get(cfg, "profile")), "quick");
    const char *flags = json_string_value(json_object_get(cfg, "profile_flags"));
    assert_non_null(flags);
    assert_non_null(strstr(flags, "--preset tiny"));
    assert_int_equal(json_integer_value(json_object_get(cfg, "steps")), 1024); /* the command line's */
    assert_string_equal(json_string_value(json_object_get(cfg, "preset")), "tiny"); /* the profile's */
    assert_int_equal(json_integer_value(json_object_get(cfg, "envs")), 64);
    assert_int_equal(json_integer_value(json_object_get(cfg, "check_envs")), 16);
    snprintf(path, sizeof path, "%s/run.log", dir);
    char *log = pcg_test_slurp(path);
    assert_non_null(log);
    assert_non_null(strstr(log, "profile --quick: --preset tiny"));
    snprintf(path, sizeof path, "%s/report.html", dir);
    char *html = pcg_test_slurp(path);
    assert_non_null(html);
    assert_non_null(strstr(html, "<b>Profile:</b> --quick, which sets --preset tiny"));
    assert_non_null(strstr(html, "<b>Training:</b> 1024 steps per node, 64 environments, preset tiny"));
    free(html);
    free(log);
    json_decref(cfg);
    /* the help states the flags the profile stands for, in its place */
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s run --help", pcg_test_binary()), 0);
    const char *q = strstr(out, "  --quick ");
    assert_non_null(q);
    assert_non_null(strstr(q, "flags --preset tiny --envs 64"));
    assert_true(strstr(q, "training, for every node:") > q);
    /* a stored run keeps its settings: --quick with --resume is refused */
    rc = pcg_test_sh(out, sizeof out, "%s run --resume --quick --out %s", pcg_test_binary(), dir);
    assert_int_equal(rc, 2);
    assert_non_null(strstr(out, "--resume continues one with its stored settings"));
    /* "--quick" as another flag's value is that value, not the profile */
    rc = pcg_test_sh(out, sizeof out, "cd %s && %s run --resume --out --quick", pcg_test_tmpdir(), pcg_test_binary());
    assert_int_not_equal(rc, 0);
    if (strstr(out, "--quick starts a run")) fail_msg("--out's value taken as the profile: %s", out);
}

/* A reward the check accepts but no agent can learn from (always zero):
 * the warning is in the check's JSON and in the run's log. */
static void run_constant_reward_warned(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    char dir[PATH_MAX], path[PATH_MAX + 64], out[8192];
    snprintf(dir, sizeof dir, "%s/zero-reward", pcg_test_tmpdir());
    int rc = pcg_test_sh(out, sizeof out, "%s run --scenario 1 " TINY " --iterations 1 --init-reward "
                         "rewards/test/good_zero.c --out %s", pcg_test_binary(), dir);
    if (rc != 0) fail_msg("run exited %d: %s", rc, out);
    static const char *const warning = "compute_reward returned 0 on every one of 3072 steps of random play";
    char *j = node_file(dir, 0, "reward_init.json");
    assert_non_null(j);
    json_t *o = json_loads(j, 0, NULL);
    assert_non_null(o);
    assert_true(json_is_true(json_object_get(o, "accepted")));
    const char *w = json_string_value(json_object_get(o, "warning"));
    if (!w || strncmp(w, warning, strlen(warning))) fail_msg("reward_init.json: %s", j);
    json_decref(o);
    free(j);
    snprintf(path, sizeof path, "%s/run.log", dir);
    char *log = pcg_test_slurp(path);
    assert_non_null(log);
    assert_non_null(strstr(log, "  warning: "));
    assert_non_null(strstr(log, warning));
    free(log);
}

static json_t *node_train_json(const char *dir, int id)
{
    char *t = node_file(dir, id, "train/train.json");
    assert_non_null(t);
    json_t *o = json_loads(t, 0, NULL);
    free(t);
    assert_non_null(o);
    return o;
}

/* The reference details and --node-seeds: recorded in config.json and
 * passed to every node's train (its train.json) and generate (the level
 * files say how many edits they keep); node n trains with seed + n under
 * offset.  A config.json from before they existed reads as the engine's
 * first design; a bad name is one line, exit 2. */
static void run_reference_details_passed_on(void **state)
{
    (void)state;
    char dir[PATH_MAX], out[8192];
    json_t *cfg = finished_run(dir, sizeof dir, "details", "--scenario 1 " TINY " --iterations 2 --seed 7 "
                               "--node-seeds offset --obs-centre next --terminal-reward designed --final-level "
                               "edits768 --conv-init orthogonal");
    const char *const want[][2] = {{"obs_centre", "next"}, {"terminal_reward", "designed"},
                                   {"final_level", "edits768"}, {"conv_init", "orthogonal"}, {"node_seeds", "offset"}};
    for (int k = 0; k < 5; k++) assert_string_equal(json_string_value(json_object_get(cfg, want[k][0])), want[k][1]);
    json_decref(cfg);
    for (int id = 0; id < 2; id++) {
        json_t *t = node_train_json(dir, id);
        assert_int_equal(json_integer_value(json_object_get(t, "seed")), 7 + id);
        for (int k = 0; k < 4; k++) assert_string_equal(json_string_value(json_object_get(t, want[k][0])), want[k][1]);
        json_decref(t);
        char *lv = node_file(dir, id, "levels/level_000.txt");
        assert_non_null(lv);
        assert_non_null(strstr(lv, "the map after 768 of 768 edits"));
        free(lv);
    }
    /* an older config.json has none of the keys: the engine's first way */
    run_config c;
    run_config_defaults(&c);
    json_t *o = run_config_to_json(&c);
    for (int k = 0; k < 5; k++) assert_string_equal(json_string_value(json_object_get(o, want[k][0])),
                                                    k < 4 ? ppo_details[k].names[0] : "same");
    for (int k = 0; k < 5; k++) json_object_del(o, want[k][0]);
    char err[256];
    assert_int_equal(run_config_from_json(o, &c, err, sizeof err), 0);
    for (int k = 0; k < PPO_N_DETAILS; k++) assert_int_equal(c.details[k], 1);
    assert_int_equal(c.node_seeds, NODE_SEEDS_OFFSET);
    assert_true(run_node_seed(&c, 3) == c.seed + 3);
    json_object_set_new(o, "final_level", json_string("edits769"));
    assert_int_equal(run_config_from_json(o, &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "'final_level'"));
    json_decref(o);
    int rc = pcg_test_sh(out, sizeof out, "%s run --scenario 1 --llm offline --node-seeds random --out %s/x",
                     pcg_test_binary(), pcg_test_tmpdir());
    assert_int_equal(rc, 2);
    assert_non_null(strstr(out, "--node-seeds must be same or offset"));
    assert_true(strchr(out, '\n') == out + strlen(out) - 1);
    rc = pcg_test_sh(out, sizeof out, "%s run --scenario 1 --llm offline --conv-init xavier --out %s/x",
                     pcg_test_binary(), pcg_test_tmpdir());
    assert_int_equal(rc, 2);
    assert_non_null(strstr(out, "--conv-init must be lecun or orthogonal"));
}

PCG_TESTS(run_options, cmocka_unit_test(run_constant_reward_warned), cmocka_unit_test(run_init_reward_trained_as_is_then_refined),
          cmocka_unit_test(run_init_reward_rejected_fails_the_node), cmocka_unit_test(run_evaluator_rules_only_on_request),
          cmocka_unit_test(run_quick_profile_named_and_overridable), cmocka_unit_test(run_reference_details_passed_on))
