/* `prefer refine` on what it cannot trust: a run directory someone else
 * made (damaged, huge, FIFOs, links out of it, a story without its
 * target, months of training asked for), a model author's hostile replies and a failing server, a model
 * judge whose server fails, a rerun over an earlier refinement (a new
 * reward never inherits another's training, and nothing finished is
 * lost), and hostile records in the report. */
#include "harness.h"
#include "refine_fixture.h"
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A fresh copy NAME of the fixture's run, without any refinement. */
static void fresh_copy(const char *dir, const char *name)
{
    char out[4096];
    int rc = pcg_test_sh(out, sizeof out, "cd %s && rm -rf %s && cp -a run %s && rm -rf %s/prefer %s/report.html", dir,
                         name, name, name, name);
    if (rc) fail_msg("copy failed: %s", out);
}

static void bin_path(char *bin)
{
    assert_non_null(realpath(pcg_test_binary(), bin));
}

/* In dir: make, then `prefer refine ARGS`: exit 1 with one line holding says. */
static void refused_in_a_line(const char *dir, const char *make, const char *args, const char *says)
{
    char bin[PATH_MAX], out[8192];
    bin_path(bin);
    int rc = pcg_test_sh(out, sizeof out, "cd %s && %s && %s prefer refine %s 2>&1 </dev/null", dir, make, bin, args);
    if (rc != 1 || !strstr(out, says) || pcg_test_count_lines(out) != 1) fail_msg("%s: exit %d: %s", make, rc, out);
}

/* Each damage refused with one line naming it, exit 1, and nothing written
 * outside the run (the directory "outside" stays empty). */
static void refine_untrusted_run_directory(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    const char *dir = refine_fixture();
    char out[8192], make[600];
    static const struct {
        const char *damage, *says;
    } cases[] = {
        {"ln -sf /etc/shadow u/nodes/000/reward.c", "symbolic link"},
        {"rm u/nodes/000/reward.c && mkfifo u/nodes/000/reward.c", "FIFO"},
        {"head -c 300000 /dev/zero | tr '\\0' ' ' > u/nodes/000/reward.c", "too large"},
        {"printf 'float\\0x' > u/nodes/000/reward.c", "NUL byte"},
        {"ln -s $PWD/outside u/prefer", "symbolic link"},
        {"mkdir u/prefer && ln -s $PWD/outside u/prefer/thrill_seeker", "symbolic link"},
        {"mkdir -p u/prefer/thrill_seeker/refine.log", "refine.log"},
        {"ln -sf /etc/passwd u/nodes/000/levels/level_001.txt", "symbolic link"},
        {"echo '1 2 x' > u/nodes/000/levels/level_000.txt", "level_000.txt"},
        {"head -c 2000000 /dev/zero > u/nodes/000/levels/level_000.txt", "too large"},
        {"echo '{' > u/config.json", "config.json"},
        {"echo '{\"version\": 1, \"nodes\": {}}' > u/graph.json", "graph"},
        {"sed -i 's/\"scenario\": 1/\"scenario\": 0/' u/config.json && rm -f u/target.json", "target.json"},
        {"sed -i 's/\"scenario\": 1/\"scenario\": 0/' u/config.json && echo '{\"kind\": 7}' > u/target.json",
         "target"},
        /* a run asking for months of training per candidate: asked first, refused without a terminal */
        {"sed -i 's/\"steps\": 8192/\"steps\": 100000000000/' u/config.json", "--yes"},
        /* no finished node: the line says so, not "node -1" */
        {"python3 -c \"import json; g = json.load(open('u/graph.json')); g['nodes'][0].update(status='failed', "
         "fitness=0); json.dump(g, open('u/graph.json', 'w'))\"",
         "no finished node to refine"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        fresh_copy(dir, "u");
        snprintf(make, sizeof make, "rm -rf outside && mkdir outside && %s", cases[k].damage);
        refused_in_a_line(dir, make, "--persona thrill_seeker u obs.jsonl", cases[k].says);
        int rc = pcg_test_sh(out, sizeof out, "cd %s && ls -A outside | wc -l", dir);
        if (rc || atoi(out) != 0) fail_msg("%s: something was written outside the run", cases[k].damage);
    }
}

/* Observations that cannot fit the persona's model: one line, exit 1,
 * nothing written in the run. */
static void refine_untrusted_observations(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    const char *dir = refine_fixture();
    char prefer[700];
    static const struct {
        const char *make, *says;
    } cases[] = {
        {"echo '{' > bad.jsonl", "bad.jsonl: line 1"},
        {"grep -v thrill_seeker obs.jsonl > bad.jsonl", "too few ratings by thrill_seeker"},
        {"sed 's/\"overall\": *[0-9.]*/\"overall\": NaN/' obs.jsonl > bad.jsonl", "bad.jsonl: line 1"},
        {"sed 's/\"overall\": *[0-9.]*/\"overall\": 1e308/' obs.jsonl > bad.jsonl", "overall"},
        {"sed 's/\"score\": *[0-9]/\"score\": \"5\"/' obs.jsonl > bad.jsonl", "score"},
        {"rm -f bad.jsonl && mkfifo bad.jsonl", "FIFO"},
    };
    fresh_copy(dir, "o");
    snprintf(prefer, sizeof prefer, "%s/o/prefer", dir);
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        refused_in_a_line(dir, cases[k].make, "--persona thrill_seeker o bad.jsonl", cases[k].says);
        assert_false(pcg_test_exists(prefer));
    }
    refused_in_a_line(dir, "rm -f bad.jsonl", "--persona thrill_seeker o bad.jsonl", "bad.jsonl");
}

/* The first candidate of rec that was trained, its dir relative to the run. */
static const char *trained_dir(json_t *rec)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(rec, "candidates"), i, c) if (json_object_get(c, "profile")) return
        json_string_value(json_object_get(c, "dir"));
    return NULL;
}

/* A finished refinement is refused; an interrupted one resumes, reusing a
 * candidate's training only for the same reward: a candidate whose reward
 * changed is moved aside whole and trained anew; --restart keeps the
 * earlier refinement beside the new one. */
static void refine_rerun_keys_on_the_reward(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    const char *dir = refine_fixture();
    char bin[PATH_MAX], out[65536], rdir[1024], path[1400];
    bin_path(bin);
    fresh_copy(dir, "r");
    const char *cmd = "cd %s && %s prefer refine --persona thrill_seeker %s r obs.jsonl 2>&1";
    int rc = pcg_test_sh(out, sizeof out, cmd, dir, bin, "");
    if (rc) fail_msg("refine failed (%d): %s", rc, out);
    snprintf(rdir, sizeof rdir, "%s/r/prefer/thrill_seeker", dir);
    json_t *rec = pcg_test_json_in(rdir, "refine.json");
    char cand[600];
    assert_non_null(trained_dir(rec));
    snprintf(cand, sizeof cand, "%s/r/%s", dir, trained_dir(rec));
    json_decref(rec);

    rc = pcg_test_sh(out, sizeof out, cmd, dir, bin, "");
    if (rc != 1 || !strstr(out, "finished refinement") || !strstr(out, "--restart") || pcg_test_count_lines(out) != 1)
        fail_msg("a rerun over a finished refinement: exit %d: %s", rc, out);

    /* interrupted (no record), and the trained candidate's reward changed
     * since: its training must not be taken for the new revision's */
    rc = pcg_test_sh(out, sizeof out, "rm %s/refine.json && printf '\\n/* edited */\\n' >> %s/reward.c", rdir, cand);
    assert_int_equal(rc, 0);
    rc = pcg_test_sh(out, sizeof out, cmd, dir, bin, "");
    if (rc) fail_msg("resumed refine failed (%d): %s", rc, out);
    assert_non_null(strstr(out, "is kept in"));
    assert_non_null(strstr(out, "is reused")); /* the candidates left as they were */
    snprintf(path, sizeof path, "%s.1", cand);
    char *kept = pcg_test_file_in(path, "reward.c"), *now, *trained;
    assert_non_null(strstr(kept, "/* edited */"));
    assert_true(pcg_test_exists(strcat(path, "/train.done")));
    now = pcg_test_file_in(cand, "reward.c");
    trained = pcg_test_file_in(cand, "train/reward.c");
    assert_null(strstr(now, "/* edited */"));
    assert_string_equal(now, trained);
    free(kept);
    free(now);
    free(trained);
    rec = pcg_test_json_in(rdir, "refine.json");
    char *text = json_dumps(rec, 0);
    assert_non_null(text);
    assert_non_null(strstr(text, "earlier_attempt"));
    free(text);
    json_decref(rec);

    /* --restart: the earlier refinement, record and all, kept beside */
    rc = pcg_test_sh(out, sizeof out, cmd, dir, bin, "--restart");
    if (rc) fail_msg("refine --restart failed (%d): %s", rc, out);
    snprintf(path, sizeof path, "%s.1", rdir);
    json_decref(pcg_test_json_in(path, "refine.json"));
    json_decref(pcg_test_json_in(rdir, "refine.json"));
    char *page = pcg_test_file_in(dir, "r/report.html");
    assert_int_equal(pcg_test_count_of(page, "<h3>thrill_seeker"), 1); /* the one aside is not shown */
    free(page);
}

static int run_with_server(char *out, size_t len, const char *dir, const char *script, const char *name,
                           const char *args, char **log)
{
    char bin[PATH_MAX];
    bin_path(bin);
    pcg_fake_srv srv;
    pcg_test_srv_start(&srv, script, name, "PCG_REFINE_HOSTILE_KEY");
    int rc = pcg_test_sh(out, len,
                         "cd %s && PCG_REFINE_HOSTILE_KEY=sk-refine %s prefer refine --base-url %s --model fake "
                         "--api-key-env PCG_REFINE_HOSTILE_KEY --llm-retries 1 %s m obs.jsonl 2>&1",
                         dir, bin, srv.url, args);
    *log = pcg_test_slurp(srv.log);
    pcg_test_srv_stop(&srv);
    return rc;
}

/* A model author's hostile replies: a reply cut in a loop is not used
 * (even though a code block begins), a reward that never returns and one
 * that reads a file are refused before training, without a hang; a server
 * that fails ends with exit 4 after the record, nothing made up. */
static void refine_model_replies_untrusted(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    const char *dir = refine_fixture();
    char out[65536], rdir[1024];
    char *log;
    fresh_copy(dir, "m");
    int rc = run_with_server(out, sizeof out, dir, "tests/fake_openai_refine_hostile.json", "refine-hostile",
                             "--persona system_purist --llm openai --no-feedback", &log);
    free(log);
    if (rc) fail_msg("refine exited %d: %s", rc, out);
    snprintf(rdir, sizeof rdir, "%s/m/prefer/system_purist", dir);
    json_t *rec = pcg_test_json_in(rdir, "refine.json");
    json_t *cands = json_object_get(rec, "candidates");
    assert_int_equal(json_array_size(cands), 3);
    static const char *const verdicts[] = {"no revision", "refused by the sandbox (not trained)",
                                           "refused by the sandbox (not trained)"};
    static const char *const says[] = {"loop", "did not return", "#include"};
    for (size_t i = 0; i < 3; i++) {
        json_t *c = json_array_get(cands, i);
        assert_string_equal(json_string_value(json_object_get(c, "verdict")), verdicts[i]);
        const char *why = json_string_value(json_object_get(c, i ? "why" : "author"));
        if (!why || !strstr(why, says[i])) fail_msg("candidate %zu: %s", i + 1, why ? why : "(none)");
        assert_null(json_object_get(c, "profile"));
    }
    assert_false(pcg_test_exists(strcat(strcpy(out, rdir), "/candidate_1/reward.c")));
    assert_false(pcg_test_exists(strcat(strcpy(out, rdir), "/candidate_2/train")));
    json_decref(rec);

    /* the server fails (the judge's script answers no revision request):
     * exit 4, the record written, the candidate says so */
    rc = run_with_server(out, sizeof out, dir, "tests/fake_openai_refine_judge_down.json", "refine-hostile-down",
                         "--persona system_purist --llm openai --restart", &log);
    free(log);
    if (rc != 4) fail_msg("a failing author's server: exit %d: %s", rc, out);
    rec = pcg_test_json_in(rdir, "refine.json");
    cands = json_object_get(rec, "candidates");
    assert_int_equal(json_array_size(cands), 1);
    json_t *c = json_array_get(cands, 0);
    assert_non_null(strstr(json_string_value(json_object_get(c, "author")), "server failed"));
    assert_string_equal(json_string_value(json_object_get(c, "verdict")), "failed");
    assert_null(json_object_get(c, "contracts"));
    assert_string_equal(json_string_value(json_object_get(rec, "kept")), "original");
    json_decref(rec);
}

/* A model author resumed: a request answered before is not asked again,
 * and its training is reused; one whose reply held no reward is asked
 * again, the earlier exchange kept aside. */
static void refine_model_author_resumes(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    const char *dir = refine_fixture();
    char out[65536], rdir[1024], path[1200];
    char *log;
    fresh_copy(dir, "m");
    const char *args = "--persona system_purist --llm openai --no-feedback --targets 2";
    int rc = run_with_server(out, sizeof out, dir, "tests/fake_openai_refine.json", "refine-resume", args, &log);
    free(log);
    if (rc) fail_msg("refine exited %d: %s", rc, out);
    snprintf(rdir, sizeof rdir, "%s/m/prefer/system_purist", dir);
    snprintf(path, sizeof path, "%s/candidate_2/train/checkpoint.bin", rdir);
    assert_int_equal(pcg_test_sh(out, sizeof out, "rm %s/refine.json && cp %s %s/m.checkpoint", rdir, path, dir), 0);
    rc = run_with_server(out, sizeof out, dir, "tests/fake_openai_refine.json", "refine-resume2", args, &log);
    if (rc) fail_msg("resumed refine exited %d: %s", rc, out);
    assert_int_equal(pcg_test_count_of(log ? log : "", "Revise the reward below"), 1); /* candidate 1 only */
    free(log);
    assert_true(pcg_test_exists(strcat(strcpy(out, rdir), "/candidate_1.1/reply.txt")));
    rc = pcg_test_sh(out, sizeof out, "cmp %s %s/m.checkpoint", path, dir);
    if (rc) fail_msg("the reused candidate was trained again: %s", out);
}

/* A model judge whose server fails: on the node's plays, one line and exit
 * 4; on a candidate's, exit 4 after the record, the candidate failed. */
static void refine_judge_server_fails(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    const char *dir = refine_fixture();
    char out[65536], rdir[1024];
    char *log;
    fresh_copy(dir, "m");
    int rc = run_with_server(out, sizeof out, dir, "tests/fake_openai_refine_judge_down.json", "refine-judge",
                             "--persona thrill_seeker --judge openai --repeats 1", &log);
    free(log);
    if (rc != 4) fail_msg("a judge failing on a candidate: exit %d: %s", rc, out);
    snprintf(rdir, sizeof rdir, "%s/m/prefer/thrill_seeker", dir);
    json_t *rec = pcg_test_json_in(rdir, "refine.json");
    json_t *cands = json_object_get(rec, "candidates");
    json_t *last = json_array_get(cands, json_array_size(cands) - 1);
    assert_string_equal(json_string_value(json_object_get(last, "verdict")), "failed");
    assert_non_null(strstr(json_string_value(json_object_get(last, "why")), "judge is down"));
    json_decref(rec);
    /* the judge's server fails at once: no profile of the node */
    rc = run_with_server(out, sizeof out, dir, "tests/fake_openai_refine_hostile.json", "refine-judge-down",
                         "--persona thrill_seeker --judge openai --repeats 1 --restart", &log);
    free(log);
    /* two lines: where --restart put the earlier refinement, and the failure */
    if (rc != 4 || !strstr(out, "node 0's plays") || pcg_test_count_lines(out) != 2)
        fail_msg("a judge failing on the node: exit %d: %s", rc, out);
}

/* A hostile refine.json in the report: markup escaped, numbers no
 * refinement writes shown as "-", a damaged record said in a line. */
static void refine_report_hostile_records(void **state)
{
    (void)state;
    const char *dir = refine_fixture();
    char bin[PATH_MAX], out[8192];
    bin_path(bin);
    fresh_copy(dir, "h");
    int rc = pcg_test_sh(
        out, sizeof out,
        "cd %s && mkdir -p h/prefer/evil h/prefer/deep && echo '{\"node\": \"x\", \"judge\": \"<b>j</b>\", "
        "\"candidates\": [{\"round\": \"<script>r</script>\", \"direction\": 5, \"verdict\": [1], \"fitness\": 1e300}],"
        " \"before\": {\"dimensions\": {\"<i>k\": 1e300, \"a\": \"s\"}, \"rating\": \"x\"}, \"after\": []}' > "
        "h/prefer/evil/refine.json && python3 -c \"print('[' * 100000)\" > h/prefer/deep/refine.json && %s report h "
        ">/dev/null 2>&1",
        dir, bin);
    if (rc) fail_msg("report failed (%d): %s", rc, out);
    char *page = pcg_test_file_in(dir, "h/report.html");
    assert_null(strstr(page, "<script>"));
    assert_null(strstr(page, "<b>j"));
    assert_non_null(strstr(page, "&lt;script&gt;r"));
    assert_null(strstr(page, "100000000000")); /* 1e300 not printed digit by digit */
    assert_non_null(strstr(page, "<h3>deep</h3>\n<p>The record cannot be read"));
    free(page);
}

PCG_TESTS(refine_untrusted, cmocka_unit_test(refine_untrusted_run_directory),
          cmocka_unit_test(refine_untrusted_observations),
          cmocka_unit_test(refine_rerun_keys_on_the_reward), cmocka_unit_test(refine_model_replies_untrusted),
          cmocka_unit_test(refine_model_author_resumes), cmocka_unit_test(refine_judge_server_fails),
          cmocka_unit_test(refine_report_hostile_records))
