/* The language requests of tests/golden/requests.json (docs/harness.md,
 * "Language requests"): English, Chinese and mixed requests, each valid one
 * with its target and each other one with the category it is refused
 * under.  The offline reader must give the expected target or refuse,
 * never another target; the model path is scripted on the fake server with
 * correct extractions (taken) and with wrong ones that leave out what the
 * request asks for (refused by the check against the story). */
#include "harness.h"
#include "author.h"
#include "run_state.h"
#include "story.h"
#include "target.h"
#include "util.h"
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REQUESTS "tests/golden/requests.json"
#define KEY_ENV "PCG_REQUESTS_TEST_KEY"
/* Valid requests the offline reader reads (measured; docs/harness.md).  A
 * change to the reader that reads fewer, or more, shows here. */
#define OFFLINE_READS 15

static json_t *load_requests(void)
{
    json_error_t je;
    json_t *root = json_load_file(REQUESTS, 0, &je);
    if (!root) fail_msg("%s: %s", REQUESTS, je.text);
    json_t *list = json_incref(json_object_get(root, "requests"));
    json_decref(root);
    assert_true(json_is_array(list));
    return list;
}

static void target_of(const json_t *obj, target_t *t)
{
    char *text = json_dumps(obj, JSON_COMPACT), why[300];
    if (target_from_json(text, t, why, sizeof why) != STORY_OK) fail_msg("%s: %s", text, why);
    free(text);
}

static void requests_offline_reader(void **state)
{
    (void)state;
    json_t *list = load_requests();
    size_t i;
    json_t *r;
    int valid = 0, read = 0, refusals = 0, same_category = 0, langs[3] = {0};
    json_array_foreach(list, i, r) {
        const char *text = json_string_value(json_object_get(r, "request"));
        const char *lang = json_string_value(json_object_get(r, "lang"));
        langs[!strcmp(lang, "en") ? 0 : !strcmp(lang, "zh") ? 1 : 2]++;
        target_t got, want;
        char why[600] = "";
        int rc = story_extract_offline(text, &got, why, sizeof why);
        assert_non_null(strchr(why, ':'));
        if (rc == STORY_REFUSED && !story_refusal_category(why)) fail_msg("\"%s\": no category in '%s'", text, why);
        json_t *target = json_object_get(r, "target");
        if (target) {
            valid++;
            target_of(target, &want);
            if (rc == STORY_OK && !target_equal(&got, &want)) fail_msg("\"%s\" read as a different target: %s", text, why);
            if (rc == STORY_OK) {
                read++;
                char check[300];
                assert_int_equal(story_check_target(text, &got, check, sizeof check), 0);
            }
            continue;
        }
        refusals++;
        if (rc != STORY_REFUSED) fail_msg("\"%s\" accepted as: %s", text, why);
        const char *cat = json_string_value(json_object_get(r, "refuse"));
        same_category += !strcmp(story_refusal_category(why), cat);
    }
    json_decref(list);
    assert_true(langs[0] >= 8 && langs[1] >= 6 && langs[2] >= 4);
    assert_int_equal(valid + refusals, (int)i);
    assert_int_equal(read, OFFLINE_READS);
    assert_true(read < valid); /* the rest it refuses rather than guesses */
    assert_int_equal(same_category, refusals);
}

typedef struct {
    run_config c;
    run_state R;
    pcg_fake_srv srv;
    char root[512];
} model_fixture;

/* A script answering each request with its target, its refusal, or (wrong)
 * its wrong extraction; the longest request first, as one may hold
 * another. */
static void write_script(json_t *list, int wrong, const char *path)
{
    json_t *rules = json_array();
    size_t i;
    json_t *r;
    json_array_foreach(list, i, r) {
        json_t *answer = json_object_get(r, wrong ? "wrong" : "target");
        char *content;
        if (answer) content = json_dumps(answer, JSON_COMPACT);
        else if (wrong) continue;
        else {
            char buf[200];
            snprintf(buf, sizeof buf, "{\"refuse\": \"%s: as scripted\"}", json_string_value(json_object_get(r, "refuse")));
            content = strdup(buf);
        }
        json_t *rule = json_pack("{s:O, s:{s:s}}", "match", json_object_get(r, "request"), "response", "content", content);
        free(content);
        size_t k = 0, len = strlen(json_string_value(json_object_get(r, "request")));
        while (k < json_array_size(rules) &&
               strlen(json_string_value(json_object_get(json_array_get(rules, k), "match"))) >= len)
            k++;
        json_array_insert_new(rules, k, rule);
    }
    json_t *script = json_pack("{s:o}", "rules", rules);
    assert_int_equal(json_dump_file(script, path, JSON_INDENT(1)), 0);
    json_decref(script);
}

static void model_open(model_fixture *f, const char *script)
{
    pcg_test_use_source_prompts();
    memset(f, 0, sizeof *f);
    snprintf(f->root, sizeof f->root, "%s/requests-model", pcg_test_tmpdir());
    char out[256];
    assert_int_equal(pcg_test_sh(out, sizeof out, "rm -rf '%s' && mkdir -p '%s'", f->root, f->root), 0);
    run_config *c = &f->c;
    run_config_defaults(c);
    c->offline = 0;
    c->quiet = 1;
    c->prompts = run_parse_prompts("rich");
    run_config_follow_profile(c);
    setenv(KEY_ENV, "sk-requests-test", 1);
    pcg_test_srv_start(&f->srv, script, "requests", KEY_ENV);
    snprintf(c->llm.base_url, sizeof c->llm.base_url, "%s", f->srv.url);
    snprintf(c->llm.model, sizeof c->llm.model, "fake-reader");
    snprintf(c->llm.api_key_env, sizeof c->llm.api_key_env, KEY_ENV);
    c->llm.retries = 0, c->llm.connect_timeout = 2, c->llm.total_timeout = 10; /* a fake server answers at once */
    f->R.c = c;
}

/* au_target on one request in a directory of its own (no stored reply). */
static int ask(model_fixture *f, const char *text, int n, target_t *t, char *why, int len)
{
    char dir[700];
    snprintf(dir, sizeof dir, "%s/r%02d", f->root, n);
    snprintf(f->c.story, sizeof f->c.story, "%s", text);
    return au_target(&f->R, dir, t, why, len);
}

static void requests_model_path(void **state)
{
    (void)state;
    json_t *list = load_requests();
    char script[600];
    snprintf(script, sizeof script, "%s/requests-script-%d.json", pcg_test_tmpdir(), 0);
    write_script(list, 0, script);
    model_fixture f;
    model_open(&f, script);
    size_t i;
    json_t *r;
    int taken = 0, refused = 0, wrong = 0, n = 0;
    json_array_foreach(list, i, r) {
        const char *text = json_string_value(json_object_get(r, "request"));
        target_t got, want;
        char why[600] = "";
        int rc = ask(&f, text, n++, &got, why, sizeof why);
        json_t *target = json_object_get(r, "target");
        if (target) {
            target_of(target, &want);
            if (rc != 0) fail_msg("\"%s\": the correct extraction was refused: %s", text, why);
            char js[300] = "";
            target_to_json(&got, js, sizeof js);
            if (!target_equal(&got, &want)) fail_msg("\"%s\": the model's target came back as %s", text, js);
            taken++;
        } else {
            assert_int_equal(rc, 3);
            assert_string_equal(story_refusal_category(why), json_string_value(json_object_get(r, "refuse")));
            refused++;
        }
    }
    pcg_test_srv_stop(&f.srv);
    /* the wrong extractions: each leaves out or changes what the request names */
    snprintf(script, sizeof script, "%s/requests-script-%d.json", pcg_test_tmpdir(), 1);
    write_script(list, 1, script);
    model_open(&f, script);
    json_array_foreach(list, i, r) {
        json_t *bad = json_object_get(r, "wrong");
        if (!bad) continue;
        const char *text = json_string_value(json_object_get(r, "request"));
        target_t got;
        char why[600] = "";
        int rc = ask(&f, text, n++, &got, why, sizeof why);
        if (rc != 3) fail_msg("\"%s\": the wrong extraction was taken (rc %d, %s)", text, rc, why);
        assert_string_equal(story_refusal_category(why), json_string_value(json_object_get(r, "wrong_category")));
        wrong++;
    }
    pcg_test_srv_stop(&f.srv);
    assert_int_equal(taken + refused, (int)json_array_size(list));
    json_decref(list);
    assert_true(taken >= 12 && refused >= 10 && wrong >= 5);
}

/* The check on its own: a target that drops what the story names. */
static void requests_check_target(void **state)
{
    (void)state;
    target_t t;
    char why[300];
    target_pathlegs(&t, 20, 30, 2);
    assert_int_equal(story_check_target("the key 20 steps from the player and the door 30 beyond", &t, why, sizeof why), 0);
    assert_int_equal(story_check_target("a spider by the key, 20 steps from the player, the door 30 beyond", &t, why, sizeof why), -1);
    assert_string_equal(story_refusal_category(why), "incomplete");
    assert_non_null(strstr(why, "SPIDER"));
    assert_int_equal(story_check_target("蝙蝠在钥匙旁边", &t, why, sizeof why), -1); /* unknown words do not hide the bat */
    assert_non_null(strstr(why, "BAT"));
    target_encounter(&t, 1, 0, 0);
    assert_int_equal(story_check_target("meet the bat on the way to the key and the door", &t, why, sizeof why), 0);
    assert_int_equal(story_check_target("meet the bat, and the route about 30 steps", &t, why, sizeof why), -1);
    assert_non_null(strstr(why, "number of steps"));
    target_keydoor(&t, TILE_BAT);
    assert_int_equal(story_check_target("defeat the bat to open the door to the treasure", &t, why, sizeof why), 0);
    assert_int_equal(story_check_target("defeat the bat and the spider to reach the treasure", &t, why, sizeof why), -1);
    assert_non_null(strstr(why, "SPIDER"));
    assert_null(story_refusal_category("no category here"));
    assert_null(story_refusal_category(NULL));
}

PCG_TESTS(requests, cmocka_unit_test(requests_offline_reader), cmocka_unit_test(requests_model_path),
          cmocka_unit_test(requests_check_target))
