/* The editing loop (host/harness/edit.h) against the scripted server and
 * with the rule-based editors: recovery, early stop, acceptance, the open
 * loop, refusals, an infeasible target, records and --resume. */
#include "build.h"
#include "edit.h"
#include "edit_internal.h"
#include "env.h"
#include "eval.h"
#include "feasible.h"
#include "harness.h"
#include "harness_set.h"
#include "levelio.h"
#include "util.h"
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The level of the scripted runs: the key 5 steps from the player and 6
 * from the door; the target wants 7 and 4, which moving the key to (2,5)
 * gives. */
#define LEVEL_ROWS "@.......", "........", "...k....", "........", ".......D"
static const char *const target_json_text = "{\"kind\":\"pathlength\",\"player_key\":7,\"key_door\":4,\"tolerance\":0}";

#define CUT "[{\"tool\":\"set\",\"row\":0,\"col\":5,\"tile\":\"WALL\"}, {\"tool\":\"set\",\"ro"
#define PERFECT                                                          \
    "Moving the key:\n[{\"tool\":\"set\",\"row\":2,\"col\":3,\"tile\":\"EMPTY\"}," \
    "{\"tool\":\"set\",\"row\":2,\"col\":5,\"tile\":\"KEY\"}]"
#define BREAKING "[{\"tool\":\"set\",\"row\":4,\"col\":0,\"tile\":\"KEY\"}]"

static int server_n;

/* A scripted server answering replies in order (each a JSON string literal). */
static void start_server(pcg_fake_srv *s, const char *const *replies, int n)
{
    json_t *rs = json_array();
    for (int i = 0; i < n; i++) json_array_append_new(rs, json_pack("{s:s}", "content", replies[i]));
    json_t *script = json_pack("{s:o}", "responses", rs);
    char *text = json_dumps(script, 0);
    json_decref(script);
    char path[PATH_MAX], name[64];
    snprintf(name, sizeof name, "edit-%d", ++server_n);
    snprintf(path, sizeof path, "%s/%s.script.json", pcg_test_tmpdir(), name);
    assert_int_equal(write_file_atomic(path, text, strlen(text)), 0);
    free(text);
    pcg_test_srv_start(s, path, name, "PCG_EDIT_TEST_NO_KEY");
}

/* Requests the server received (its log's lines that are not notes). */
static int server_requests(const pcg_fake_srv *s)
{
    char *log = pcg_test_slurp(s->log);
    if (!log) return 0;
    int n = pcg_test_count_lines(log) - pcg_test_count_of(log, "\"note\"");
    free(log);
    return n;
}

typedef struct {
    pcg_test_grid g;
    target_t t;
    llm_config llm;
    edit_editor ed;
    edit_run run;
    level_t final;
    unsigned char tiles[PCG_MAX_CELLS];
    edit_result res;
    char dir[PATH_MAX];
} episode;

/* An episode of the scripted level against the server at url with
 * switches sw (target: the scripted one when NULL; dir named by name, or
 * in memory when NULL).  edit_episode's status, err its line. */
static int run_from(episode *e, const char *url, const level_t *start, const edit_switches *sw, int steps,
                    const char *name, char *err, int errlen);
static int run_on(episode *e, const char *url, const target_t *target, const edit_switches *sw, int steps,
                  const char *name, char *err, int errlen)
{
    PCG_GRID(e->g, LEVEL_ROWS);
    if (target) e->t = *target;
    else assert_int_equal(target_from_json(target_json_text, &e->t, err, errlen), STORY_OK);
    return run_from(e, url, &e->g.l, sw, steps, name, err, errlen);
}

/* The same from another start level, for the target in e->t. */
static int run_from(episode *e, const char *url, const level_t *start, const edit_switches *sw, int steps,
                    const char *name, char *err, int errlen)
{
    llm_config_defaults(&e->llm);
    snprintf(e->llm.base_url, sizeof e->llm.base_url, "%s", url);
    snprintf(e->llm.model, sizeof e->llm.model, "fake");
    e->llm.api_key_env[0] = 0;
    e->llm.retries = 0;
    e->ed = (edit_editor){EDITOR_OPENAI, 0, 1, &e->llm};
    if (name) snprintf(e->dir, sizeof e->dir, "%s/%s", pcg_test_tmpdir(), name);
    e->run = (edit_run){start, &e->t, &e->ed, *sw, {steps, 0, 0, 0}, name ? e->dir : NULL, 0, 0};
    return edit_episode(&e->run, &e->final, e->tiles, &e->res, err, errlen);
}

static int run_scripted(episode *e, const pcg_fake_srv *s, const edit_switches *sw, int steps, const char *name)
{
    char err[600];
    int rc = run_on(e, s->url, NULL, sw, steps, name, err, sizeof err);
    if (rc != EDIT_OK) fail_msg("edit_episode: %s", err);
    return rc;
}

/* An episode against a fresh server answering replies; *requests: what
 * the server received.  The caller frees it. */
static episode *scripted(const char *const *replies, int n, const edit_switches *sw, int steps, const char *name,
                         int *requests)
{
    pcg_test_use_source_prompts();
    pcg_fake_srv s;
    start_server(&s, replies, n);
    episode *e = calloc(1, sizeof *e);
    assert_int_equal(run_scripted(e, &s, sw, steps, name), EDIT_OK);
    *requests = server_requests(&s);
    pcg_test_srv_stop(&s);
    return e;
}

/* The saved level in DIR/level.txt, measured. */
static void saved_level(const char *dir, const target_t *t, int *perfect, int *valid)
{
    char path[PATH_MAX + 16], err[600];
    snprintf(path, sizeof path, "%s/level.txt", dir);
    unsigned char tiles[PCG_MAX_CELLS];
    level_t l;
    if (level_read(path, &l, tiles, err, sizeof err)) fail_msg("%s", err);
    eval_scenario_t s;
    target_to_scenario(t, NULL, &s);
    eval_level_t m;
    eval_level(&s, &l, &m);
    char why[200];
    *valid = target_level_valid(t, &l, why, sizeof why) == 0;
    *perfect = *valid && m.perfect;
}

static int edit_cli(char *out, size_t outlen, char *dir, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int edit_cli(char *out, size_t outlen, char *dir, const char *name, const char *fmt, ...)
{
    char args[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(dir, PATH_MAX, "%s/%s", pcg_test_tmpdir(), name);
    return pcg_test_sh(out, outlen, "%s edit %s --out %s", pcg_test_binary(), args, dir);
}

static void edit_recovery_and_early_stop(void **state)
{
    (void)state;
    const char *replies[] = {CUT, PERFECT, BREAKING};
    edit_switches sw;
    edit_switches_full(&sw);
    int requests;
    episode *e = scripted(replies, 3, &sw, 6, "early-stop", &requests);
    assert_int_equal(requests, 2); /* the perfect match ends it */
    assert_true(e->res.perfect);
    assert_int_equal(e->res.steps, 2);
    assert_int_equal(e->res.recovered, 1);
    assert_int_equal(e->res.stop, EDIT_STOP_PERFECT);
    int perfect, valid;
    saved_level(e->dir, &e->t, &perfect, &valid);
    assert_true(perfect);
    /* the second request carries the feedback, the history and the guidance */
    char *req = pcg_test_file_in(e->dir, "requests.jsonl");
    const char *second = strchr(req, '\n');
    assert_non_null(second);
    assert_non_null(strstr(second, "Measured on the saved level: player -> key 5 steps (wanted 7)"));
    assert_non_null(strstr(second, "- step 1: 1 call (0 refused, 1 cells changed); rejected"));
    assert_non_null(strstr(second, "What a wall on a route tile would do"));
    const char *history = strstr(req, "- step 1:");
    assert_true(history > second); /* the first request has no history yet */
    free(req);
    char *steps = pcg_test_file_in(e->dir, "steps.jsonl");
    assert_int_equal(pcg_test_count_lines(steps), 2);
    assert_non_null(strstr(steps, "\"recovered\":1"));
    free(steps);
    free(e);
}

static void edit_acceptance_keeps_the_perfect_level(void **state)
{
    (void)state;
    const char *replies[] = {CUT, PERFECT, BREAKING};
    edit_switches sw;
    edit_switches_full(&sw);
    sw.early_stop = 0;
    int requests;
    episode *e = scripted(replies, 3, &sw, 3, "accept", &requests);
    assert_int_equal(requests, 3);
    assert_true(e->res.perfect);
    int perfect, valid;
    saved_level(e->dir, &e->t, &perfect, &valid);
    assert_true(perfect);
    char *steps = pcg_test_file_in(e->dir, "steps.jsonl");
    const char *third = strstr(steps, "\"step\":3");
    assert_non_null(third);
    assert_non_null(strstr(third, "\"outcome\":\"rejected\""));
    assert_non_null(strstr(third, "2 KEY"));
    free(steps);
    free(e);
}

static void edit_open_loop_ends_broken(void **state)
{
    (void)state;
    const char *replies[] = {CUT, PERFECT, BREAKING};
    edit_switches sw;
    edit_switches_open(&sw);
    sw.recovery = 1;
    int requests;
    episode *e = scripted(replies, 3, &sw, 3, "open-loop", &requests);
    assert_int_equal(requests, 3);
    assert_false(e->res.perfect);
    assert_false(e->res.valid);
    int perfect, valid;
    saved_level(e->dir, &e->t, &perfect, &valid);
    assert_false(perfect);
    assert_false(valid);
    /* the open loop's requests show neither feedback nor guidance */
    char *req = pcg_test_file_in(e->dir, "requests.jsonl");
    assert_null(strstr(req, "Measured on the saved level"));
    assert_null(strstr(req, "What a wall on a route tile would do"));
    free(req);
    free(e);
}

static void edit_retry_without_recovery(void **state)
{
    (void)state;
    const char *replies[] = {CUT, PERFECT};
    edit_switches sw;
    edit_switches_full(&sw);
    sw.recovery = 0;
    int requests;
    episode *e = scripted(replies, 2, &sw, 1, "retry", &requests);
    assert_int_equal(requests, 2); /* one step: the reply and its retry */
    assert_true(e->res.perfect);
    assert_int_equal(e->res.recovered, 0);
    assert_int_equal(e->res.calls, 2);
    char *req = pcg_test_file_in(e->dir, "requests.jsonl");
    assert_non_null(strstr(req, "could not read your reply: the list of tool calls is cut off"));
    free(req);
    free(e);
}

static void edit_refusals_one_by_one(void **state)
{
    (void)state;
    const char *replies[] = {"[{\"tool\":\"teleport\"},{\"tool\":\"set\",\"row\":99,\"col\":0,\"tile\":\"WALL\"},"
                             "{\"tool\":\"set\",\"row\":0,\"col\":0,\"tile\":\"WALL\"},"
                             "{\"tool\":\"set\",\"row\":3,\"col\":3,\"tile\":\"WALL\"}]"};
    edit_switches sw;
    edit_switches_open(&sw);
    int requests;
    episode *e = scripted(replies, 1, &sw, 1, "refusals", &requests);
    assert_int_equal(requests, 1);
    char *steps = pcg_test_file_in(e->dir, "steps.jsonl");
    assert_non_null(strstr(steps, "call 1: unknown tool 'teleport' (set, line, rect, room, cave, automata, maze, repair)"));
    assert_non_null(strstr(steps, "call 2: row 99 is outside 0..4"));
    assert_non_null(strstr(steps, "call 3: would overwrite the PLAYER at (0,0)"));
    assert_non_null(strstr(steps, "\"changed\":1"));
    free(steps);
    free(e);
}

static void edit_infeasible_target_asks_nothing(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    const char *replies[] = {PERFECT};
    pcg_fake_srv s;
    start_server(&s, replies, 1);
    edit_switches sw;
    edit_switches_full(&sw);
    episode *e = calloc(1, sizeof *e);
    char err[600];
    target_t t;
    target_pathlegs(&t, 2, 3, 0); /* 5 steps: the door is 11 from the player */
    assert_int_equal(run_on(e, s.url, &t, &sw, 4, NULL, err, sizeof err), EDIT_INFEASIBLE);
    assert_non_null(strstr(err, "cannot be met"));
    assert_int_equal(server_requests(&s), 0);
    pcg_test_srv_stop(&s);
    free(e);
    /* the command: exit status 3, one line */
    char out[4096], dir[PATH_MAX];
    int rc = edit_cli(out, sizeof out, dir, "infeasible",
                      "--seed 1 --target '{\"kind\":\"pathlength\",\"player_key\":3,\"key_door\":3}' --llm offline");
    assert_int_equal(rc, EDIT_INFEASIBLE);
    assert_int_equal(pcg_test_count_lines(out), 1);
}

/* The rule-based editor from the generator's map of seed 1. */
static void edit_offline_reaches_perfect(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    static const int legs[][2] = {{20, 14}, {30, 30}, {12, 40}};
    for (size_t i = 0; i < sizeof legs / sizeof legs[0]; i++) {
        char out[8192], dir[PATH_MAX], name[32];
        snprintf(name, sizeof name, "offline-%zu", i);
        int rc = edit_cli(out, sizeof out, dir, name,
                          "--seed 1 --target '{\"kind\":\"pathlength\",\"player_key\":%d,\"key_door\":%d,"
                          "\"tolerance\":0,\"enemy_count\":3}' --llm offline --steps 12",
                          legs[i][0], legs[i][1]);
        if (rc != 0) fail_msg("target %d/%d: exit %d: %s", legs[i][0], legs[i][1], rc, out);
        assert_non_null(strstr(out, "a perfect match after"));
        assert_non_null(strstr(out, "offline (rule-based)"));
        char *steps = pcg_test_file_in(dir, "steps.jsonl");
        assert_non_null(strstr(steps, "\"editor\":\"offline (rule-based)\""));
        free(steps);
        target_t t;
        target_pathlegs(&t, legs[i][0], legs[i][1], 0);
        t.enemy_count = 3;
        int perfect, valid;
        saved_level(dir, &t, &perfect, &valid);
        assert_true(perfect);
    }
}

/* Without feedback, so that the witness does not end it at the first step. */
static void edit_resume_continues(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    char out[8192], dir[PATH_MAX];
    const char *target = "--target '{\"kind\":\"pathlength\",\"player_key\":30,\"key_door\":30,\"enemy_count\":3,"
                         "\"tolerance\":0}'";
    int rc = edit_cli(out, sizeof out, dir, "resume", "--seed 1 %s --llm offline --no-feedback --steps 2", target);
    assert_int_equal(rc, 1); /* not there yet */
    char *before = pcg_test_file_in(dir, "steps.jsonl");
    assert_int_equal(pcg_test_count_lines(before), 2);
    /* a second run without --resume refuses to overwrite it */
    rc = edit_cli(out, sizeof out, dir, "resume", "--seed 1 %s --llm offline --no-feedback --steps 2", target);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, "--resume continues it"));
    rc = edit_cli(out, sizeof out, dir, "resume", "%s --llm offline --no-feedback --steps 12 --resume", target);
    if (rc != 0) fail_msg("resume: exit %d: %s", rc, out);
    assert_null(strstr(out, "step 1:"));
    assert_non_null(strstr(out, "step 3:"));
    char *after = pcg_test_file_in(dir, "steps.jsonl");
    assert_memory_equal(after, before, strlen(before)); /* the steps done stay as they were */
    assert_non_null(strstr(after + strlen(before), "\"step\":3"));
    free(before);
    free(after);
    /* another target is refused */
    rc = edit_cli(out, sizeof out, dir, "resume", "--target '{\"kind\":\"pathlength\",\"length\":40}' --llm offline --resume");
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, "another target"));
}

/* The call budget ends the episode (without feedback, which would end it
 * at the first step); a server that is gone ends it with
 * EDIT_SERVER and its line, and state.json says so. */
static void edit_budgets_and_a_server_gone(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    char out[8192], dir[PATH_MAX];
    int rc = edit_cli(out, sizeof out, dir, "budget",
                      "--seed 1 --target '{\"kind\":\"pathlength\",\"player_key\":30,\"key_door\":30}' "
                      "--llm offline --no-feedback --steps 10 --max-calls 2");
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, "after 2 steps (the call budget is spent)"));
    const char *replies[] = {PERFECT};
    pcg_fake_srv s;
    start_server(&s, replies, 1);
    pcg_test_srv_stop(&s); /* nothing listens on its port now */
    episode *e = calloc(1, sizeof *e);
    edit_switches sw;
    edit_switches_full(&sw);
    char err[600];
    assert_int_equal(run_on(e, s.url, NULL, &sw, 4, "server-gone", err, sizeof err), EDIT_SERVER);
    assert_non_null(strstr(err, "does not answer"));
    assert_int_equal(e->res.stop, EDIT_STOP_SERVER);
    assert_int_equal(e->res.steps, 0);
    char *st = pcg_test_file_in(e->dir, "state.json");
    assert_non_null(strstr(st, "\"stop\": \"server\""));
    free(st);
    free(e);
}

/* --story with the model: the target is the model's reading (step 0 of
 * the records), then the edits. */
static void edit_story_read_by_the_model(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    const char *replies[] = {"{\"kind\":\"pathlength\",\"player_key\":7,\"key_door\":4,\"tolerance\":0}", PERFECT};
    pcg_fake_srv s;
    start_server(&s, replies, 2);
    pcg_test_grid g;
    PCG_GRID(g, LEVEL_ROWS);
    char level[PATH_MAX], out[8192], dir[PATH_MAX];
    snprintf(level, sizeof level, "%s/story-start.txt", pcg_test_tmpdir());
    assert_int_equal(level_write(level, &g.l, NULL), 0);
    int rc = edit_cli(out, sizeof out, dir, "story",
                      "--from %s --story 'Seven steps to the key, four on to the door.' --llm openai --base-url %s "
                      "--model fake --api-key-env '' --llm-retries 0",
                      level, s.url);
    int requests = server_requests(&s);
    pcg_test_srv_stop(&s);
    if (rc != 0) fail_msg("exit %d: %s", rc, out);
    assert_int_equal(requests, 2);
    assert_non_null(strstr(out, "a perfect match after 1 step"));
    char *req = pcg_test_file_in(dir, "requests.jsonl");
    assert_non_null(strstr(req, "\"task\":\"target\""));
    assert_non_null(strstr(req, "Seven steps to the key"));
    free(req);
}

/* The noisy editor is reproducible from its seed, and labelled. */
static void edit_noisy_is_seeded(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    char *steps[2];
    for (int i = 0; i < 2; i++) {
        char out[8192], dir[PATH_MAX], name[32];
        snprintf(name, sizeof name, "noisy-%d", i);
        edit_cli(out, sizeof out, dir, name,
                 "--seed 2 --target '{\"kind\":\"pathlength\",\"player_key\":20,\"key_door\":20}' "
                 "--llm noisy:0.5 --editor-seed 9 --steps 4 --no-early-stop");
        assert_non_null(strstr(out, "noisy:0.50 (rule-based, random calls)"));
        steps[i] = pcg_test_file_in(dir, "steps.jsonl");
    }
    assert_string_equal(steps[0], steps[1]);
    free(steps[0]);
    free(steps[1]);
}

/* Cases of the fixed benchmark set where the rule-based editor's own
 * moves stop a step or two off the target within 8 steps. */
static const int witness_cases[] = {22, 26, 34};

/* The start level and target of fixed-set case i. */
static void fixed_case(int i, level_t *start, unsigned char *tiles, target_t *t)
{
    static harness_case cases[HARNESS_SET_MAX];
    assert_true(harness_set_make(HARNESS_SET_SEED, cases) > i);
    *start = env_start_level(cases[i].level_seed, PCG_DEFAULT_SIDE, PCG_DEFAULT_SIDE, tiles);
    harness_case_target(&cases[i], t);
}

/* The builder's level on start's map, found by trying every corner (its
 * rows joined as JSON writes a newline), or fail. */
static void witness_rows(const target_t *t, const level_t *start, char *out, size_t len)
{
    static build_result_t b;
    char why[400];
    int player = lv_first(start, TILE_PLAYER);
    for (uint64_t seed = 0; seed < 4; seed++) {
        if (build_level(t, start->w, seed, &b, why, sizeof why) != BUILD_OK || b.level.t[player] != TILE_PLAYER)
            continue;
        size_t j = 0;
        for (int r = 0; r < b.level.h; r++) {
            for (int c = 0; c < b.level.w && j + 1 < len; c++) out[j++] = tile_char(lv_get(&b.level, r, c));
            if (j + 3 < len) j += (size_t)snprintf(out + j, len - j, "\\n");
        }
        out[j] = 0;
        return;
    }
    fail_msg("no corner of the builder holds the player");
}

/* With feedback on the model is shown the builder's level for the target
 * on its own map; with feedback off it is not. */
static void edit_witness_in_the_feedback(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    unsigned char tiles[PCG_MAX_CELLS];
    level_t start;
    target_t t;
    fixed_case(witness_cases[0], &start, tiles, &t);
    char rows[PCG_MAX_CELLS * 3];
    witness_rows(&t, &start, rows, sizeof rows);
    for (int feedback = 1; feedback >= 0; feedback--) {
        const char *replies[] = {"[]"};
        pcg_fake_srv s;
        start_server(&s, replies, 1);
        edit_switches sw;
        edit_switches_full(&sw);
        sw.feedback = feedback;
        episode *e = calloc(1, sizeof *e);
        e->t = t;
        char err[600];
        int rc = run_from(e, s.url, &start, &sw, 1, feedback ? "witness-on" : "witness-off", err, sizeof err);
        pcg_test_srv_stop(&s);
        if (rc != EDIT_OK) fail_msg("edit_episode: %s", err);
        char *req = pcg_test_file_in(e->dir, "requests.jsonl");
        const char *shown = strstr(req, "A level that meets the target looks like this");
        if (feedback) {
            assert_non_null(shown);
            assert_non_null(strstr(shown, rows));
        } else {
            assert_null(shown);
            assert_null(strstr(req, rows));
        }
        free(req);
        free(e);
    }
}

/* The rule-based editor with feedback on reaches a perfect match where
 * its own moves do not; with feedback off it is given no witness, and
 * stops short. */
static void edit_offline_uses_the_witness(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    edit_editor ed;
    char err[600];
    assert_int_equal(edit_editor_parse("offline", &ed, err, sizeof err), 0);
    for (size_t k = 0; k < sizeof witness_cases / sizeof witness_cases[0]; k++) {
        unsigned char tiles[PCG_MAX_CELLS], final_tiles[PCG_MAX_CELLS];
        level_t start, final;
        target_t t;
        fixed_case(witness_cases[k], &start, tiles, &t);
        for (int feedback = 1; feedback >= 0; feedback--) {
            char dir[PATH_MAX];
            snprintf(dir, sizeof dir, "%s/offline-witness-%zu-%d", pcg_test_tmpdir(), k, feedback);
            edit_run run = {&start, &t, &ed, {0}, {8, 0, 0, 0}, dir, 0, 0};
            edit_switches_full(&run.sw);
            run.sw.feedback = feedback;
            edit_result res;
            if (edit_episode(&run, &final, final_tiles, &res, err, sizeof err) != EDIT_OK)
                fail_msg("case %d: %s", witness_cases[k], err);
            char *req = pcg_test_file_in(dir, "requests.jsonl");
            if (feedback) {
                assert_true(res.perfect);
                assert_true(res.steps <= 8);
                assert_non_null(strstr(req, "\"witness\""));
            } else {
                assert_null(strstr(req, "\"witness\""));
                assert_false(res.perfect);
            }
            free(req);
        }
    }
}

/* Between two invalid levels acceptance takes the nearer to valid: one
 * KEY too many before three too many, though their legs are the same. */
static void edit_acceptance_counts_defects(void **state)
{
    (void)state;
    target_t t;
    char err[600];
    assert_int_equal(target_from_json(target_json_text, &t, err, sizeof err), STORY_OK);
    pcg_test_grid valid, one, three;
    PCG_GRID(valid, LEVEL_ROWS);
    PCG_GRID(one, "@......k", "........", "...k....", "........", ".......D");
    PCG_GRID(three, "@......k", "k.......", "...k....", "........", "k......D");
    edit_measure_t mv, m1, m3;
    edit_measure(&t, &valid.l, &mv);
    edit_measure(&t, &one.l, &m1);
    edit_measure(&t, &three.l, &m3);
    assert_true(mv.valid);
    assert_false(m1.valid);
    assert_false(m3.valid);
    assert_int_equal(m1.defects, 1);
    assert_int_equal(m3.defects, 3);
    assert_int_equal(m1.distance, m3.distance);
    assert_true(edit_better(&m1, &m3));
    assert_false(edit_better(&m3, &m1));
    assert_false(edit_better(&m1, &m1)); /* a tie keeps the saved level */
    assert_true(edit_better(&mv, &m1));
}

PCG_TESTS(edit, cmocka_unit_test(edit_recovery_and_early_stop), cmocka_unit_test(edit_acceptance_keeps_the_perfect_level),
          cmocka_unit_test(edit_open_loop_ends_broken), cmocka_unit_test(edit_retry_without_recovery),
          cmocka_unit_test(edit_refusals_one_by_one), cmocka_unit_test(edit_infeasible_target_asks_nothing),
          cmocka_unit_test(edit_offline_reaches_perfect), cmocka_unit_test(edit_resume_continues),
          cmocka_unit_test(edit_budgets_and_a_server_gone), cmocka_unit_test(edit_story_read_by_the_model),
          cmocka_unit_test(edit_noisy_is_seeded), cmocka_unit_test(edit_witness_in_the_feedback),
          cmocka_unit_test(edit_offline_uses_the_witness), cmocka_unit_test(edit_acceptance_counts_defects))
