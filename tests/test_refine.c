/* Persona-directed refinement (host/prefer/refine*.c, contracts.c and the
 * offline author's experience terms): the contracts hold for revisions
 * that steer the intended way and fail for the others, the experience
 * terms round-trip through the reward's header, and `prefer refine` runs
 * end to end on a small run, recording every candidate, and refuses bad
 * input with one line. */
#include "harness.h"
#include "refine_fixture.h"
#include "author_experience.h"
#include "contracts.h"
#include "dungeon.h"
#include "target.h"
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *code_of(const author_reward *r)
{
    char *buf = malloc(65536);
    assert_non_null(buf);
    assert_true(author_code(r, buf, 65536) > 0);
    return buf;
}

/* One dimension of each lever, both ways: the revision holds on every
 * pair for its own direction, on none for the other, and the original
 * against itself moves nothing. */
static void contracts_follow_the_direction(void **state)
{
    (void)state;
    static const char *const dims[] = {"decision", "cognitive", "curiosity", "emotional"};
    author_reward base;
    target_t t;
    target_scenario(1, &t);
    author_initial(&t, &base);
    char *parent = code_of(&base), err[800];
    for (size_t i = 0; i < sizeof dims / sizeof *dims; i++)
        for (int dir = -1; dir <= 1; dir += 2) {
            author_reward r = base;
            char note[200];
            assert_int_equal(author_experience_revise(&r, dims[i], dir, 1.0f, note, sizeof note), 1);
            char *revised = code_of(&r);
            contract_result res;
            if (contract_check(parent, revised, VARIANT_DUNGEON, dims[i], dir, &res, err, sizeof err))
                fail_msg("%s: %s", dims[i], err);
            assert_true(res.pairs >= 2);
            if (res.held != res.pairs) fail_msg("%s %+d held on %d of %d", dims[i], dir, res.held, res.pairs);
            assert_int_equal(contract_check(parent, revised, VARIANT_DUNGEON, dims[i], -dir, &res, err, sizeof err), 0);
            assert_int_equal(res.held, 0);
            free(revised);
        }
    contract_result res;
    assert_int_equal(contract_check(parent, parent, VARIANT_DUNGEON, "decision", 1, &res, err, sizeof err), 0);
    assert_int_equal(res.held, 0);
    /* a dimension without pairs is not checked */
    assert_int_equal(contract_check(parent, parent, VARIANT_DUNGEON, "goals_rules", 1, &res, err, sizeof err), 1);
    /* a reward that does not compile is an error, not a failed contract */
    assert_int_equal(contract_check(parent, "float compute_reward(", VARIANT_DUNGEON, "decision", 1, &res, err,
                                    sizeof err), -1);
    assert_non_null(strstr(err, "revised reward"));
    /* the parent's own failure is told apart: refine stops at it once */
    assert_int_equal(contract_check("float compute_reward(", parent, VARIANT_DUNGEON, "decision", 1, &res, err,
                                    sizeof err), -2);
    assert_non_null(strstr(err, "original reward"));
    free(parent);
}

static void experience_terms_round_trip(void **state)
{
    (void)state;
    author_reward r, back;
    target_t t;
    target_scenario(3, &t);
    author_initial(&t, &r);
    char note[200], err[300];
    int n0 = r.n;
    assert_int_equal(author_experience_revise(&r, "goals_rules", 1, 1.0f, note, sizeof note), 0);
    assert_non_null(strstr(note, "no lever"));
    assert_int_equal(r.n, n0);
    assert_int_equal(author_experience_revise(&r, "mastery", 1, 1.0f, note, sizeof note), 1);
    assert_int_equal(r.n, n0 + 1);
    assert_int_equal(r.term[n0].kind, AT_EXP_DEAD_ENDS);
    assert_true(r.term[n0].weight < 0); /* fewer dead ends raise mastery */
    assert_int_equal(author_experience_revise(&r, "mastery", 1, 2.0f, note, sizeof note), 1);
    assert_near(r.term[n0].weight, -2.0, 1e-6);
    /* steered the other way: the weight turns round */
    assert_int_equal(author_experience_revise(&r, "cognitive", 1, 1.0f, note, sizeof note), 1);
    assert_near(r.term[n0].weight, 1.0, 1e-6);
    assert_int_equal(author_experience_revise(&r, "meaning", 1, 1.0f, note, sizeof note), 1);
    char *code = code_of(&r);
    assert_non_null(strstr(code, "xp_guard"));
    assert_int_equal(author_parse(code, &back, err, sizeof err), 0);
    assert_int_equal(back.n, r.n);
    for (int i = 0; i < r.n; i++) {
        assert_int_equal(back.term[i].kind, r.term[i].kind);
        assert_near(back.term[i].weight, r.term[i].weight, 0);
    }
    free(code);
}

/* A small run, observations from random levels rated by two personas. */
static void make_run_and_observations(const char *dir, const char *bin)
{
    char out[8192];
    int rc = pcg_test_sh(out, sizeof out,
                         "set -e; rm -rf %s; mkdir -p %s; cd %s; %s run --scenario 1 --llm offline --quick --steps "
                         "8192 --iterations 1 --levels 4 --out run >/dev/null 2>&1; for g in 1 2 3; do %s levels --n 6 "
                         "--seed $g --policy random --out L/g$g >/dev/null; %s play --player explorer --seed $g --out "
                         "T/g$g L/g$g >/dev/null; done; for p in thrill_seeker system_purist; do %s assess --judge "
                         "offline --persona $p T/*/*.jsonl; done > obs.jsonl",
                         dir, dir, dir, bin, bin, bin, bin);
    if (rc) fail_msg("setup failed (%d): %s", rc, out);
}

const char *refine_fixture(void)
{
    static char dir[512];
    char bin[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/refine", pcg_test_tmpdir());
    assert_non_null(realpath(pcg_test_binary(), bin));
    if (!pcg_test_exists(dir)) make_run_and_observations(dir, bin);
    return dir;
}

static void refine_command_end_to_end(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    char dir[512], bin[PATH_MAX], out[65536];
    snprintf(dir, sizeof dir, "%s/refine", pcg_test_tmpdir());
    assert_non_null(realpath(pcg_test_binary(), bin));
    make_run_and_observations(dir, bin);
    int rc = pcg_test_sh(out, sizeof out, "cd %s && %s prefer refine --persona thrill_seeker run obs.jsonl 2>&1", dir,
                         bin);
    if (rc) fail_msg("refine failed (%d): %s", rc, out);
    char rdir[700];
    snprintf(rdir, sizeof rdir, "%s/run/prefer/thrill_seeker", dir);
    json_t *rec = pcg_test_json_in(rdir, "refine.json");
    assert_non_null(rec);
    assert_string_equal(json_string_value(json_object_get(rec, "persona")), "thrill_seeker");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(rec, "before"), "plays")), 4);
    json_t *cands = json_object_get(rec, "candidates");
    assert_true(json_array_size(cands) >= 1);
    size_t i;
    json_t *c;
    int trained = 0;
    json_array_foreach(cands, i, c) {
        assert_non_null(json_string_value(json_object_get(c, "verdict")));
        /* the offline author is given only dimensions it has a lever for */
        int sign;
        assert_true(author_experience_lever(json_string_value(json_object_get(c, "dimension")), &sign) >= 0);
        if (json_object_get(c, "profile")) {
            trained++;
            /* an offline revision holds its contracts by construction */
            json_t *k = json_object_get(c, "contracts");
            if (k) assert_int_equal(json_integer_value(json_object_get(k, "held")),
                                    json_integer_value(json_object_get(k, "pairs")));
            /* a candidate with an earlier one's reward reuses its training */
            const char *why = json_string_value(json_object_get(c, "why"));
            if (why && strstr(why, "reused")) continue;
            char path[1200];
            snprintf(path, sizeof path, "%s/run/%s/levels/level_000.txt", dir,
                     json_string_value(json_object_get(c, "dir")));
            assert_true(pcg_test_exists(path));
        }
    }
    assert_true(trained >= 1);
    assert_non_null(json_string_value(json_object_get(rec, "kept")));
    json_decref(rec);
    assert_non_null(strstr(out, "rating"));
    char *page = pcg_test_file_in(dir, "run/report.html");
    assert_non_null(page);
    assert_non_null(strstr(page, "Refined for personas"));
    assert_non_null(strstr(page, "<h3>thrill_seeker</h3>"));
    free(page);
}

/* prefer refine on the fixture's run against a scripted server (its log
 * into *log if given), after the persona's earlier refinement is removed.
 * Returns the exit status; out holds what it printed. */
static int refine_scripted(const char *script, const char *persona, const char *flags, char *out, size_t outlen,
                           char **log)
{
    pcg_test_use_source_prompts();
    const char *dir = refine_fixture();
    char bin[PATH_MAX];
    assert_non_null(realpath(pcg_test_binary(), bin));
    pcg_fake_srv srv;
    pcg_test_srv_start(&srv, script, "refine-server", "PCG_REFINE_KEY");
    int rc = pcg_test_sh(out, outlen,
                         "cd %s && rm -rf run/prefer/%s && PCG_REFINE_KEY=k %s prefer refine --persona %s %s "
                         "--base-url %s --api-key-env PCG_REFINE_KEY --llm-retries 1 run obs.jsonl 2>&1",
                         dir, persona, bin, persona, flags, srv.url);
    if (log) *log = pcg_test_slurp(srv.log);
    pcg_test_srv_stop(&srv);
    return rc;
}

/* A model author against a scripted server: the first reply holds no
 * reward (recorded, nothing trained), the later ones a reward that is
 * checked, trained and judged; every request names the persona, the
 * dimension, the direction, the story's target and the reward revised. */
static void refine_model_author(void **state)
{
    (void)state;
    char out[65536], *log = NULL;
    int rc = refine_scripted("tests/fake_openai_refine.json", "system_purist",
                             "--llm openai --model fake-author --no-feedback", out, sizeof out, &log);
    if (rc) fail_msg("refine exited %d: %s", rc, out);
    const char *dir = refine_fixture();
    char rdir[700];
    snprintf(rdir, sizeof rdir, "%s/run/prefer/system_purist", dir);
    json_t *rec = pcg_test_json_in(rdir, "refine.json");
    assert_non_null(rec);
    assert_string_equal(json_string_value(json_object_get(rec, "author")), "fake-author");
    json_t *cands = json_object_get(rec, "candidates");
    assert_true(json_array_size(cands) >= 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(cands, 0), "verdict")), "no revision");
    char *reward = pcg_test_file_in(rdir, "candidate_2/reward.c");
    assert_non_null(reward);
    assert_non_null(strstr(reward, "scripted revision"));
    free(reward);
    int n_cands = (int)json_array_size(cands);
    json_decref(rec);
    assert_non_null(log);
    assert_int_equal(pcg_test_count_of(log, "Revise the reward below"), n_cands);
    assert_non_null(strstr(log, "System Purist") ? log : strstr(log, "system"));
    assert_non_null(strstr(log, "offline-author-terms")); /* the reward revised is shown */
    assert_true(strstr(log, "so that the generated levels raise") || strstr(log, "so that the generated levels lower"));
    free(log);
}

/* A model judge that answers every dimension for the original's four plays
 * and leaves most out afterwards: no candidate can be kept on an
 * incomplete profile, and nothing is filled in. */
static void refine_model_judge_incomplete(void **state)
{
    (void)state;
    char out[65536];
    int rc = refine_scripted("tests/fake_openai_refine_judge.json", "thrill_seeker",
                             "--judge openai --model fake-judge --repeats 1 --targets 1 --no-feedback", out,
                             sizeof out, NULL);
    if (rc) fail_msg("refine exited %d: %s", rc, out);
    const char *dir = refine_fixture();
    char rdir[700];
    snprintf(rdir, sizeof rdir, "%s/run/prefer/thrill_seeker", dir);
    json_t *rec = pcg_test_json_in(rdir, "refine.json");
    assert_non_null(rec);
    assert_true(json_is_true(json_object_get(json_object_get(rec, "before"), "complete")));
    json_t *c = json_array_get(json_object_get(rec, "candidates"), 0);
    assert_string_equal(json_string_value(json_object_get(c, "verdict")), "incomplete profile");
    json_t *prof = json_object_get(c, "profile");
    assert_false(json_is_true(json_object_get(prof, "complete")));
    assert_true(json_is_null(json_object_get(json_object_get(prof, "dimensions"), "mastery")));
    assert_string_equal(json_string_value(json_object_get(rec, "kept")), "original");
    json_decref(rec);
}

static void refine_bad_input(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    char dir[512], bin[PATH_MAX], out[8192];
    snprintf(dir, sizeof dir, "%s/refine", pcg_test_tmpdir());
    assert_non_null(realpath(pcg_test_binary(), bin));
    if (!pcg_test_exists(dir)) make_run_and_observations(dir, bin);
    static const struct {
        const char *args, *says;
        int rc;
    } cases[] = {
        {"run obs.jsonl", "--persona", 2},
        {"--persona thrill_seeker run", "assessments", 2},
        {"--persona thrill_seeker obs.jsonl obs.jsonl", "obs.jsonl: cannot open", 1},
        {"--persona thrill_seeker L obs.jsonl", "no finished run", 1},
        {"--persona social_lubricator run obs.jsonl", "too few ratings", 1},
        {"--persona ../x run obs.jsonl", "persona", 2},
        {"--persona thrill_seeker --node 7 run obs.jsonl", "no finished node 7", 1},
        {"--persona thrill_seeker --targets 4 run obs.jsonl", "--targets", 2},
        {"--persona thrill_seeker run run/config.json", "line 1", 1},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        int rc = pcg_test_sh(out, sizeof out, "cd %s && %s prefer refine %s 2>&1", dir, bin, cases[k].args);
        if (rc != cases[k].rc || !strstr(out, cases[k].says) || pcg_test_count_lines(out) != 1)
            fail_msg("%s: exit %d: %s", cases[k].args, rc, out);
    }
}

PCG_TESTS(refine, cmocka_unit_test(contracts_follow_the_direction), cmocka_unit_test(experience_terms_round_trip),
          cmocka_unit_test(refine_command_end_to_end), cmocka_unit_test(refine_model_author),
          cmocka_unit_test(refine_model_judge_incomplete),
          cmocka_unit_test(refine_bad_input))
