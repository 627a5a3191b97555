/* LLM client against the scripted fake server (tests/fake_openai.py), code
 * and JSON extraction, prompt templates. */
#include "harness.h"
#include "graph.h"
#include "llm.h"
#include "prompts.h"
#include "reward_jit.h"
#include "util.h"
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define KEY_ENV "PCG_TEST_LLM_KEY"
#define TEST_KEY "sk-test-9f8e7d6c5b4a39281706f5e4d3c2b1a0"

static const char good_reward[] =
    "Plan: reward keys near the bat.\n\n```c\nfloat compute_reward(const level_t *prev, const level_t *curr)\n"
    "{\n    return (float)(count_tiles(curr, KEY) - count_tiles(prev, KEY));\n}\n```\nDone.";

/* ---- the fake server ---------------------------------------------------------- */

typedef pcg_fake_srv fake_srv;

static int srv_counter;

/* The server with script (the text of a script file), the test key. */
static void srv_start(fake_srv *s, const char *script)
{
    int id = ++srv_counter;
    char script_path[PATH_MAX], name[64];
    snprintf(name, sizeof name, "llm-%d", id);
    snprintf(script_path, sizeof script_path, "%s/llm-script-%d.json", pcg_test_tmpdir(), id);
    assert_int_equal(write_file_atomic(script_path, script, strlen(script)), 0);
    setenv(KEY_ENV, TEST_KEY, 1); /* the key the server expects */
    pcg_test_srv_start(s, script_path, name, KEY_ENV);
}

static void srv_stop(fake_srv *s)
{
    pcg_test_srv_stop(s);
}

/* The logged requests as a JSON array (new reference); with notes, also
 * the lines that note a stream the client closed ("cancelled_after"). */
static json_t *srv_log(const fake_srv *s, int notes)
{
    json_t *arr = json_array();
    FILE *f = fopen(s->log, "r");
    if (!f) return arr;
    char line[1 << 16];
    while (fgets(line, sizeof line, f)) {
        json_t *j = json_loads(line, 0, NULL);
        assert_non_null(j);
        if (!notes && json_object_get(j, "note")) json_decref(j);
        else json_array_append_new(arr, j);
    }
    fclose(f);
    return arr;
}

static json_t *srv_requests(const fake_srv *s)
{
    return srv_log(s, 0);
}

static int file_contains(const char *path, const char *needle)
{
    long len;
    char err[256];
    char *t = read_file(path, 1 << 24, &len, err, sizeof err);
    if (!t) return 0;
    int found = strstr(t, needle) != NULL;
    free(t);
    return found;
}

static void test_config(llm_config *c, const fake_srv *s)
{
    llm_config_defaults(c);
    snprintf(c->base_url, sizeof c->base_url, "%s", s->url);
    snprintf(c->model, sizeof c->model, "fake-coder-7b");
    snprintf(c->api_key_env, sizeof c->api_key_env, KEY_ENV);
    c->connect_timeout = 2;
    c->total_timeout = 5;
    c->retries = 2;
    c->backoff = 0.01;
    c->backoff_max = 0.05;
    setenv(KEY_ENV, TEST_KEY, 1);
}


static const llm_message two_msgs[] = {
    {"system", "You write reward functions.", NULL, 0},
    {"user", "Write a reward for the story.", NULL, 0},
};

/* ---- client behaviour ------------------------------------------------------------ */

static void llm_good_reply_and_request_fields(void **state)
{
    (void)state;
    fake_srv s;
    char script[4096];
    json_t *resp = json_pack("{s:[{s:s, s:{s:i, s:i, s:i}}]}", "responses", "content", good_reward, "usage",
                             "prompt_tokens", 120, "completion_tokens", 45, "total_tokens", 165);
    char *st = json_dumps(resp, 0);
    snprintf(script, sizeof script, "%s", st);
    free(st);
    json_decref(resp);
    srv_start(&s, script);
    llm_config c;
    test_config(&c, &s);
    c.seed = 1234;
    c.max_tokens = 777;
    llm_reply r;
    char err[512];
    int rc = llm_chat(&c, two_msgs, 2, &r, err, sizeof err);
    srv_stop(&s);
    assert_int_equal(rc, 0);
    assert_string_equal(r.content, good_reward);
    assert_string_equal(r.finish_reason, "stop");
    assert_int_equal(r.attempts, 1);
    assert_int_equal(r.continuations, 0);
    assert_int_equal(r.usage.prompt_tokens, 120);
    assert_int_equal(r.usage.completion_tokens, 45);
    assert_int_equal(r.usage.total_tokens, 165);
    assert_string_equal(r.model, "fake-coder-7b");

    json_t *reqs = srv_requests(&s);
    assert_int_equal(json_array_size(reqs), 1);
    json_t *q = json_array_get(reqs, 0);
    assert_string_equal(json_string_value(json_object_get(q, "path")), "/v1/chat/completions");
    assert_string_equal(json_string_value(json_object_get(q, "auth")), "match");
    assert_string_equal(json_string_value(json_object_get(q, "content_type")), "application/json");
    json_t *body = json_object_get(q, "body");
    assert_string_equal(json_string_value(json_object_get(body, "model")), "fake-coder-7b");
    json_t *temp = json_object_get(body, "temperature");
    assert_true(json_is_number(temp));
    assert_true(json_number_value(temp) == 0.0);
    assert_int_equal(json_integer_value(json_object_get(body, "seed")), 1234);
    assert_int_equal(json_integer_value(json_object_get(body, "max_tokens")), 777);
    /* streamed, with the usage asked for and the end-of-turn stop sequences */
    assert_true(json_is_true(json_object_get(body, "stream")));
    assert_true(json_is_true(json_object_get(json_object_get(body, "stream_options"), "include_usage")));
    assert_true(json_array_size(json_object_get(body, "stop")) >= 1);
    assert_null(json_object_get(body, "response_format"));
    assert_null(json_object_get(body, "n"));
    json_t *msgs = json_object_get(body, "messages");
    assert_int_equal(json_array_size(msgs), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(msgs, 0), "role")), "system");
    assert_string_equal(json_string_value(json_object_get(json_array_get(msgs, 1), "content")),
                        "Write a reward for the story.");
    json_decref(reqs);
    assert_false(file_contains(s.log, TEST_KEY));

    char cerr[256];
    char *code = llm_extract_code(r.content, cerr, sizeof cerr);
    assert_non_null(code);
    assert_non_null(strstr(code, "float compute_reward("));
    assert_null(strstr(code, "```"));
    assert_null(strstr(code, "Plan:"));
    free(code);
    llm_reply_free(&r);
}

static void llm_reward_with_bug_then_fix(void **state)
{
    (void)state;
    fake_srv s;
    srv_start(&s, "{\"responses\": ["
                  "{\"content\": \"```c\\nfloat compute_reward(const level_t *prev, const level_t *curr)\\n"
                  "{\\n    return fopen(0, 0) ? 1.0f : 0.0f;\\n}\\n```\"},"
                  "{\"content\": \"Removed the file access.\\n```c\\nfloat compute_reward(const level_t *prev, "
                  "const level_t *curr)\\n{\\n    return 0.5f;\\n}\\n```\"}]}");
    llm_config c;
    test_config(&c, &s);
    llm_reply r1, r2;
    char err[512];
    assert_int_equal(llm_chat(&c, two_msgs, 2, &r1, err, sizeof err), 0);
    llm_message fix[] = {{"system", "You write reward functions.", NULL, 0},
                         {"user", "It was rejected: unknown symbol fopen. Fix it.", NULL, 0}};
    assert_int_equal(llm_chat(&c, fix, 2, &r2, err, sizeof err), 0);
    srv_stop(&s);
    char cerr[256];
    char *c1 = llm_extract_code(r1.content, cerr, sizeof cerr);
    char *c2 = llm_extract_code(r2.content, cerr, sizeof cerr);
    assert_non_null(c1);
    assert_non_null(c2);
    assert_non_null(strstr(c1, "fopen"));
    assert_null(strstr(c2, "fopen"));
    assert_non_null(strstr(c2, "return 0.5f;"));
    json_t *reqs = srv_requests(&s);
    assert_int_equal(json_array_size(reqs), 2);
    const char *second = json_string_value(json_object_get(
        json_array_get(json_object_get(json_object_get(json_array_get(reqs, 1), "body"), "messages"), 1), "content"));
    assert_non_null(strstr(second, "unknown symbol fopen"));
    json_decref(reqs);
    free(c1);
    free(c2);
    llm_reply_free(&r1);
    llm_reply_free(&r2);
}

static void llm_reply_without_fence_is_whole_code(void **state)
{
    (void)state;
    fake_srv s;
    srv_start(&s, "{\"responses\": [{\"content\": \"\\n  float compute_reward(const level_t *prev, const level_t "
                  "*curr) { return 1.0f; }\\n\\n\"}]}");
    llm_config c;
    test_config(&c, &s);
    llm_reply r;
    char err[512];
    assert_int_equal(llm_chat(&c, two_msgs, 2, &r, err, sizeof err), 0);
    srv_stop(&s);
    char *code = llm_extract_code(r.content, err, sizeof err);
    assert_non_null(code);
    assert_string_equal(code, "float compute_reward(const level_t *prev, const level_t *curr) { return 1.0f; }\n");
    free(code);
    llm_reply_free(&r);
}

static void llm_truncated_reply_is_continued(void **state)
{
    (void)state;
    fake_srv s;
    srv_start(&s, "{\"responses\": ["
                  "{\"content\": \"Plan.\\n```c\\nfloat compute_reward(const level_t *prev, const level_t *curr)\\n{\\n"
                  "    float r = 0.0f;\\n\", \"finish_reason\": \"length\","
                  " \"usage\": {\"prompt_tokens\": 100, \"completion_tokens\": 20, \"total_tokens\": 120}},"
                  "{\"content\": \"```c\\n    r += 1.0f;\\n    return r;\\n}\\n```\", \"finish_reason\": \"stop\","
                  " \"usage\": {\"prompt_tokens\": 130, \"completion_tokens\": 12, \"total_tokens\": 142}}]}");
    llm_config c;
    test_config(&c, &s);
    llm_reply r;
    char err[512];
    assert_int_equal(llm_chat(&c, two_msgs, 2, &r, err, sizeof err), 0);
    srv_stop(&s);
    assert_int_equal(r.attempts, 2);
    assert_int_equal(r.continuations, 1);
    assert_string_equal(r.finish_reason, "stop");
    assert_int_equal(r.usage.prompt_tokens, 230);
    assert_int_equal(r.usage.completion_tokens, 32);
    assert_int_equal(r.usage.total_tokens, 262);
    char *code = llm_extract_code(r.content, err, sizeof err);
    assert_non_null(code);
    assert_string_equal(code, "float compute_reward(const level_t *prev, const level_t *curr)\n{\n    float r = 0.0f;\n"
                              "    r += 1.0f;\n    return r;\n}\n");
    free(code);
    /* the follow-up carried the partial reply and asked to continue it */
    json_t *reqs = srv_requests(&s);
    assert_int_equal(json_array_size(reqs), 2);
    json_t *m2 = json_object_get(json_object_get(json_array_get(reqs, 1), "body"), "messages");
    assert_int_equal(json_array_size(m2), 4);
    assert_string_equal(json_string_value(json_object_get(json_array_get(m2, 2), "role")), "assistant");
    assert_non_null(strstr(json_string_value(json_object_get(json_array_get(m2, 2), "content")), "float r = 0.0f;"));
    assert_string_equal(json_string_value(json_object_get(json_array_get(m2, 3), "role")), "user");
    assert_non_null(strstr(json_string_value(json_object_get(json_array_get(m2, 3), "content")), "Continue"));
    json_decref(reqs);
    llm_reply_free(&r);
}

static void llm_truncated_reply_never_returned_half(void **state)
{
    (void)state;
    fake_srv s;
    srv_start(&s, "{\"default\": {\"content\": \"```c\\nfloat compute_reward(\", \"finish_reason\": \"length\"}}");
    llm_config c;
    test_config(&c, &s);
    c.max_continuations = 2;
    llm_reply r;
    char err[512];
    int rc = llm_chat(&c, two_msgs, 2, &r, err, sizeof err);
    assert_int_equal(rc, -1);
    /* never returned as a reply, but kept for the caller to save */
    assert_non_null(r.content);
    assert_non_null(strstr(r.content, "float compute_reward("));
    assert_int_equal(r.cut, LLM_CUT_LENGTH);
    assert_int_equal(r.model_failure, 1);
    assert_int_equal(r.attempts, 3);
    assert_non_null(strstr(err, "cut off by the token limit"));
    assert_null(strchr(err, '\n'));
    llm_reply_free(&r);
    c.max_continuations = 0;
    rc = llm_chat(&c, two_msgs, 2, &r, err, sizeof err);
    srv_stop(&s);
    assert_int_equal(rc, -1);
    assert_int_equal(r.attempts, 1);
    assert_non_null(strstr(err, "--max-tokens"));
    llm_reply_free(&r);
}

static void llm_429_honours_retry_after(void **state)
{
    (void)state;
    fake_srv s;
    char script[2048];
    snprintf(script, sizeof script,
             "{\"responses\": [{\"status\": 429, \"headers\": {\"Retry-After\": \"1\"}, \"body\": {\"error\": "
             "{\"message\": \"Rate limit reached\"}}}, {\"content\": \"ok reply\"}]}");
    srv_start(&s, script);
    llm_config c;
    test_config(&c, &s);
    llm_reply r;
    char err[512];
    double t0 = now_seconds();
    int rc = llm_chat(&c, two_msgs, 2, &r, err, sizeof err);
    double dt = now_seconds() - t0;
    srv_stop(&s);
    assert_int_equal(rc, 0);
    assert_string_equal(r.content, "ok reply");
    assert_int_equal(r.attempts, 2);
    assert_true(dt >= 0.95); /* backoff alone would be <= 0.05 s */
    assert_true(dt < 6.0);
    json_t *reqs = srv_requests(&s);
    assert_int_equal(json_array_size(reqs), 2);
    double gap = json_number_value(json_object_get(json_array_get(reqs, 1), "time")) -
                 json_number_value(json_object_get(json_array_get(reqs, 0), "time"));
    assert_true(gap >= 0.95);
    json_decref(reqs);
    llm_reply_free(&r);

    /* a Retry-After beyond the allowed wait is a clear error, not a long sleep */
    srv_start(&s, "{\"default\": {\"status\": 429, \"headers\": {\"Retry-After\": \"3600\"}}}");
    test_config(&c, &s);
    t0 = now_seconds();
    rc = llm_chat(&c, two_msgs, 2, &r, err, sizeof err);
    srv_stop(&s);
    assert_int_equal(rc, -1);
    assert_true(now_seconds() - t0 < 5.0);
    assert_non_null(strstr(err, "429"));
    assert_non_null(strstr(err, "3600"));
}

static void llm_500_is_retried(void **state)
{
    (void)state;
    fake_srv s;
    srv_start(&s, "{\"responses\": [{\"status\": 500}, {\"status\": 503, \"body\": \"overloaded\"}, "
                  "{\"content\": \"third time lucky\"}]}");
    llm_config c;
    test_config(&c, &s);
    llm_reply r;
    char err[512];
    int rc = llm_chat(&c, two_msgs, 2, &r, err, sizeof err);
    srv_stop(&s);
    assert_int_equal(rc, 0);
    assert_int_equal(r.attempts, 3);
    assert_int_equal(r.usage.requests, 3);
    assert_string_equal(r.content, "third time lucky");
    llm_reply_free(&r);
}

static void llm_5xx_gives_up_after_retries(void **state)
{
    (void)state;
    fake_srv s;
    srv_start(&s, "{\"default\": {\"status\": 502, \"body\": {\"error\": {\"message\": \"bad gateway\"}}}}");
    llm_config c;
    test_config(&c, &s);
    c.retries = 3;
    llm_reply r;
    char err[512];
    int rc = llm_chat(&c, two_msgs, 2, &r, err, sizeof err);
    srv_stop(&s);
    assert_int_equal(rc, -1);
    assert_int_equal(r.attempts, 4);
    assert_non_null(strstr(err, "HTTP 502"));
    assert_non_null(strstr(err, "bad gateway"));
    assert_non_null(strstr(err, "4 attempts"));
    json_t *reqs = srv_requests(&s);
    assert_int_equal(json_array_size(reqs), 4);
    json_decref(reqs);
}

static void llm_4xx_is_not_retried(void **state)
{
    (void)state;
    fake_srv s;
    srv_start(&s, "{\"default\": {\"status\": 400, \"body\": {\"error\": {\"message\": \"Only one completion "
                  "choice is allowed\"}}}}");
    llm_config c;
    test_config(&c, &s);
    llm_reply r;
    char err[512];
    int rc = llm_chat(&c, two_msgs, 2, &r, err, sizeof err);
    srv_stop(&s);
    assert_int_equal(rc, -1);
    assert_int_equal(r.attempts, 1);
    assert_non_null(strstr(err, "HTTP 400"));
    assert_non_null(strstr(err, "Only one completion choice"));
}

static void llm_malformed_json_is_clear_error(void **state)
{
    (void)state;
    fake_srv s;
    srv_start(&s, "{\"responses\": [{\"raw\": \"{\\\"choices\\\": [{\\\"message\\\": \"}, "
                  "{\"raw\": \"<html>proxy error</html>\"}, {\"raw\": \"[1, 2]\"}]}");
    llm_config c;
    test_config(&c, &s);
    llm_reply r;
    char err[512];
    for (int i = 0; i < 3; i++) {
        int rc = llm_chat(&c, two_msgs, 2, &r, err, sizeof err);
        assert_int_equal(rc, -1);
        assert_null(r.content);
        assert_int_equal(r.attempts, 1);
        assert_non_null(strstr(err, "malformed JSON"));
        assert_null(strchr(err, '\n'));
    }
    srv_stop(&s);
}

static void llm_oversized_response_is_refused(void **state)
{
    (void)state;
    fake_srv s;
    char script[4096], big[2100];
    /* letters without a period, or the loop watch would end it first */
    unsigned x = 12345;
    for (size_t i = 0; i + 1 < sizeof big; i++) x = x * 1103515245u + 12345u, big[i] = (char)('a' + (x >> 16) % 26);
    big[sizeof big - 1] = 0;
    snprintf(script, sizeof script, "{\"responses\": [{\"content\": \"%s\"}]}", big);
    srv_start(&s, script);
    llm_config c;
    test_config(&c, &s);
    c.max_response_bytes = 1024;
    llm_reply r;
    char err[512];
    int rc = llm_chat(&c, two_msgs, 2, &r, err, sizeof err);
    srv_stop(&s);
    assert_int_equal(rc, -1);
    assert_int_equal(r.attempts, 1);
    assert_non_null(strstr(err, "larger than 1024 bytes"));
    llm_reply_free(&r);
}

static void llm_request_body_is_valid_for_any_text(void **state)
{
    (void)state;
    llm_config c;
    llm_config_defaults(&c);
    char err[256];
    llm_message bad_utf8[] = {{"user", "story \xff\xfe with \"quotes\" and \x01 control", NULL, 0}};
    char *body = llm_request_json(&c, NULL, bad_utf8, 1, err, sizeof err);
    assert_non_null(body);
    json_t *j = json_loads(body, 0, NULL);
    assert_non_null(j);
    const char *content =
        json_string_value(json_object_get(json_array_get(json_object_get(j, "messages"), 0), "content"));
    assert_string_equal(content, "story ?? with \"quotes\" and \x01 control");
    assert_true(json_is_number(json_object_get(j, "temperature")));
    assert_null(json_object_get(j, "seed"));
    assert_null(json_object_get(j, "n"));
    json_decref(j);
    free(body);
    llm_message bad_role[] = {{"tool", "x", NULL, 0}};
    assert_null(llm_request_json(&c, NULL, bad_role, 1, err, sizeof err));
    assert_non_null(strstr(err, "role 'tool'"));
    assert_null(llm_request_json(&c, NULL, bad_role, 0, err, sizeof err));
    assert_non_null(strstr(err, "no messages"));
}

static void llm_empty_choices_is_clear_error(void **state)
{
    (void)state;
    fake_srv s;
    srv_start(&s, "{\"responses\": [{\"choices\": []}, {\"choices\": [{\"index\": 0}]}, "
                  "{\"content\": \"  \\n \"}]}");
    llm_config c;
    test_config(&c, &s);
    llm_reply r;
    char err[512];
    assert_int_equal(llm_chat(&c, two_msgs, 2, &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "empty \"choices\""));
    assert_int_equal(llm_chat(&c, two_msgs, 2, &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "no \"message\""));
    assert_int_equal(llm_chat(&c, two_msgs, 2, &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "empty reply"));
    srv_stop(&s);
}

static void llm_timeout_is_bounded(void **state)
{
    (void)state;
    fake_srv s;
    srv_start(&s, "{\"default\": {\"sleep\": 6, \"content\": \"too late\"}}");
    llm_config c;
    test_config(&c, &s);
    c.total_timeout = 1.0;
    c.retries = 1;
    llm_reply r;
    char err[512];
    double t0 = now_seconds();
    int rc = llm_chat(&c, two_msgs, 2, &r, err, sizeof err);
    double dt = now_seconds() - t0;
    srv_stop(&s);
    assert_int_equal(rc, -1);
    assert_null(r.content);
    /* a single-slot server may still be busy with it: not resent */
    assert_int_equal(r.attempts, 1);
    assert_int_equal(r.cut, LLM_CUT_TIME);
    assert_non_null(strstr(err, "no complete answer within the time allowed"));
    assert_non_null(strstr(err, "not resent"));
    assert_true(dt >= 0.9);
    assert_true(dt < 4.0);
}

/* The call's own budget ends a slow stream, keeps what came, and the
 * server sees the connection closed (which cancels the generation). */
static void llm_call_time_cuts_a_slow_stream(void **state)
{
    (void)state;
    fake_srv s;
    srv_start(&s, "{\"default\": {\"content\": \"Thinking about the reward. \", \"repeat\": 40, "
                  "\"piece\": 3, \"piece_sleep\": 0.05}}");
    llm_config c;
    test_config(&c, &s);
    c.call_time = 1.5;
    llm_reply r;
    char err[512];
    double t0 = now_seconds();
    int rc = llm_chat(&c, two_msgs, 2, &r, err, sizeof err);
    double dt = now_seconds() - t0;
    assert_int_equal(rc, -1);
    assert_int_equal(r.cut, LLM_CUT_TIME);
    assert_int_equal(r.attempts, 1);
    assert_non_null(r.content);
    assert_non_null(strstr(r.content, "Thinking"));
    assert_true(r.usage.completion_tokens > 5);
    assert_int_equal(r.tokens_counted, 1);
    assert_true(dt >= 1.4 && dt < 3.0);
    llm_reply_free(&r);
    usleep(300000);
    srv_stop(&s);
    json_t *reqs = srv_log(&s, 1);
    int cancelled = 0;
    for (size_t i = 0; i < json_array_size(reqs); i++)
        if (json_object_get(json_array_get(reqs, i), "cancelled_after")) cancelled = 1;
    assert_true(cancelled);
    json_decref(reqs);
}

/* A server that never answered is not waited for: one attempt, a line
 * naming the server and what to do.  One that has answered before (a
 * restart) is retried, with the attempts counted. */
static void llm_connection_refused_is_bounded(void **state)
{
    (void)state;
    /* a port that was free a moment ago: start and stop a server */
    fake_srv s;
    srv_start(&s, "{}");
    srv_stop(&s);
    llm_config c;
    test_config(&c, &s);
    c.retries = 2;
    llm_reply r;
    char err[512];
    double t0 = now_seconds();
    int rc = llm_chat(&c, two_msgs, 2, &r, err, sizeof err);
    assert_int_equal(rc, -1);
    assert_int_equal(r.attempts, 1);
    assert_true(now_seconds() - t0 < 1.0);
    assert_false(r.model_failure);
    assert_non_null(strstr(err, "does not answer"));
    assert_non_null(strstr(err, c.base_url));
    assert_non_null(strstr(err, "start it, or check --base-url"));
    assert_int_equal(llm_check_server(&c, err, sizeof err), -1);
    assert_non_null(strstr(err, "does not answer"));
    llm_reply_free(&r);
    llm_server seen = {.answered = 1};
    c.server = &seen;
    t0 = now_seconds();
    rc = llm_chat(&c, two_msgs, 2, &r, err, sizeof err);
    assert_int_equal(rc, -1);
    assert_int_equal(r.attempts, 3);
    assert_true(now_seconds() - t0 < 5.0);
    assert_non_null(strstr(err, "could not connect"));
    assert_non_null(strstr(err, "3 attempts"));
    llm_reply_free(&r);
}

static void llm_key_never_in_errors_or_reply(void **state)
{
    (void)state;
    fake_srv s;
    srv_start(&s, "{\"responses\": [{\"status\": 401, \"echo_auth\": true}, {\"echo_auth\": true}, "
                  "{\"status\": 500, \"echo_auth\": true}]}");
    llm_config c;
    test_config(&c, &s);
    c.retries = 0;
    llm_reply r;
    char err[512];
    /* a server that echoes the key in an error */
    assert_int_equal(llm_chat(&c, two_msgs, 2, &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "HTTP 401"));
    assert_non_null(strstr(err, KEY_ENV));
    assert_non_null(strstr(err, "[redacted]"));
    assert_null(strstr(err, TEST_KEY));
    assert_null(strstr(err, "9f8e7d6c5b4a"));
    /* ... and in a reply */
    assert_int_equal(llm_chat(&c, two_msgs, 2, &r, err, sizeof err), 0);
    assert_non_null(strstr(r.content, "Bearer [redacted]"));
    assert_null(strstr(r.content, TEST_KEY));
    llm_reply_free(&r);
    /* ... and in a retryable error that runs out of retries */
    assert_int_equal(llm_chat(&c, two_msgs, 2, &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "HTTP 500"));
    assert_null(strstr(err, TEST_KEY));
    srv_stop(&s);
    /* the key went in the header (auth match) and nowhere else */
    json_t *reqs = srv_requests(&s);
    assert_int_equal(json_array_size(reqs), 3);
    for (size_t i = 0; i < 3; i++)
        assert_string_equal(json_string_value(json_object_get(json_array_get(reqs, i), "auth")), "match");
    json_decref(reqs);
    assert_false(file_contains(s.log, TEST_KEY));
    /* the texts a run directory stores */
    char *req = llm_request_json(&c, NULL, two_msgs, 2, err, sizeof err);
    char *cfg = llm_config_json(&c);
    assert_non_null(req);
    assert_non_null(cfg);
    assert_null(strstr(req, TEST_KEY));
    assert_null(strstr(cfg, TEST_KEY));
    /* nor the variable: a stored one would let a directory choose it */
    assert_null(strstr(cfg, KEY_ENV));
    free(req);
    free(cfg);
}

static void llm_no_key_sends_no_authorization(void **state)
{
    (void)state;
    fake_srv s;
    srv_start(&s, "{\"default\": {\"content\": \"hello\"}}");
    llm_config c;
    test_config(&c, &s);
    unsetenv(KEY_ENV);
    llm_reply r;
    char err[512];
    assert_int_equal(llm_chat(&c, two_msgs, 2, &r, err, sizeof err), 0);
    llm_reply_free(&r);
    c.api_key_env[0] = 0;
    assert_int_equal(llm_chat(&c, two_msgs, 2, &r, err, sizeof err), 0);
    llm_reply_free(&r);
    srv_stop(&s);
    json_t *reqs = srv_requests(&s);
    assert_int_equal(json_array_size(reqs), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(reqs, 0), "auth")), "none");
    assert_string_equal(json_string_value(json_object_get(json_array_get(reqs, 1), "auth")), "none");
    json_decref(reqs);

    /* OpenAI itself without a key: a clear error before any request */
    llm_config o;
    llm_config_defaults(&o);
    snprintf(o.api_key_env, sizeof o.api_key_env, KEY_ENV);
    assert_int_equal(llm_chat(&o, two_msgs, 2, &r, err, sizeof err), -1);
    assert_int_equal(r.attempts, 0);
    assert_non_null(strstr(err, KEY_ENV));
    assert_non_null(strstr(err, "not set"));
}

static void llm_image_sent_as_data_url(void **state)
{
    (void)state;
    fake_srv s;
    srv_start(&s, "{\"default\": {\"content\": \"Problem: no bat.\"}}");
    llm_config c;
    test_config(&c, &s);
    static const unsigned char png[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R'};
    llm_message m[] = {{"system", "You judge levels.", NULL, 0},
                       {"user", "The levels are in the image.", png, sizeof png}};
    llm_reply r;
    char err[512];
    assert_int_equal(llm_chat(&c, m, 2, &r, err, sizeof err), 0);
    llm_reply_free(&r);
    srv_stop(&s);
    json_t *reqs = srv_requests(&s);
    json_t *msgs = json_object_get(json_object_get(json_array_get(reqs, 0), "body"), "messages");
    assert_true(json_is_string(json_object_get(json_array_get(msgs, 0), "content")));
    json_t *parts = json_object_get(json_array_get(msgs, 1), "content");
    assert_true(json_is_array(parts));
    assert_int_equal(json_array_size(parts), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(parts, 0), "type")), "text");
    assert_string_equal(json_string_value(json_object_get(json_array_get(parts, 0), "text")),
                        "The levels are in the image.");
    assert_string_equal(json_string_value(json_object_get(json_array_get(parts, 1), "type")), "image_url");
    const char *url = json_string_value(json_object_get(json_object_get(json_array_get(parts, 1), "image_url"), "url"));
    assert_string_equal(url, "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg==");
    json_decref(reqs);
}

static void llm_usage_accumulates_per_run(void **state)
{
    (void)state;
    fake_srv s;
    srv_start(&s, "{\"responses\": ["
                  "{\"content\": \"a\", \"usage\": {\"prompt_tokens\": 7, \"completion_tokens\": 3, \"total_tokens\": 10}},"
                  "{\"status\": 500},"
                  "{\"content\": \"b\", \"usage\": {\"prompt_tokens\": 11, \"completion_tokens\": 2}},"
                  "{\"content\": \"c\", \"usage\": null},"
                  "{\"choices\": []}]}");
    llm_config c;
    test_config(&c, &s);
    c.stream = LLM_STREAM_OFF; /* the plain path, with a usage object per response */
    llm_usage run = {0};
    c.usage = &run;
    llm_reply r;
    char err[512];
    for (int i = 0; i < 3; i++) {
        assert_int_equal(llm_chat(&c, two_msgs, 2, &r, err, sizeof err), 0);
        llm_reply_free(&r);
    }
    assert_int_equal(llm_chat(&c, two_msgs, 2, &r, err, sizeof err), -1);
    srv_stop(&s);
    assert_int_equal(run.prompt_tokens, 18);
    assert_int_equal(run.completion_tokens, 5);
    assert_int_equal(run.total_tokens, 23);
    assert_int_equal(run.requests, 5);
    assert_int_equal(run.replies, 3);
    assert_int_equal(run.failures, 1);
    assert_int_equal(run.missing_usage, 1);
}

static void llm_config_flags_and_base_url(void **state)
{
    (void)state;
    llm_config c;
    llm_config_defaults(&c);
    assert_true(c.temperature == 0.0);
    assert_string_equal(c.api_key_env, "OPENAI_API_KEY");
    char err[256];
    assert_int_equal(llm_config_flag(&c, "--base-url", "http://127.0.0.1:8080/v1/", err, sizeof err), 1);
    assert_int_equal(llm_config_flag(&c, "--model", "qwen2.5-coder", err, sizeof err), 1);
    assert_int_equal(llm_config_flag(&c, "--temperature", "0.7", err, sizeof err), 1);
    assert_int_equal(llm_config_flag(&c, "--llm-seed", "42", err, sizeof err), 1);
    assert_int_equal(llm_config_flag(&c, "--max-tokens", "2048", err, sizeof err), 1);
    assert_int_equal(llm_config_flag(&c, "--api-key-env", "", err, sizeof err), 1);
    assert_string_equal(c.base_url, "http://127.0.0.1:8080/v1/");
    assert_string_equal(c.model, "qwen2.5-coder");
    assert_true(c.temperature == 0.7);
    assert_int_equal(c.seed, 42);
    assert_int_equal(c.max_tokens, 2048);
    assert_string_equal(c.api_key_env, "");
    assert_int_equal(llm_config_flag(&c, "--steps", "100", err, sizeof err), 0);
    assert_int_equal(llm_config_flag(&c, "--temperature", "hot", err, sizeof err), -1);
    assert_non_null(strstr(err, "--temperature"));
    assert_int_equal(llm_config_flag(&c, "--temperature", "3", err, sizeof err), -1);
    assert_int_equal(llm_config_flag(&c, "--base-url", "127.0.0.1:8080", err, sizeof err), -1);
    assert_int_equal(llm_config_flag(&c, "--llm-retries", "99", err, sizeof err), -1);
    assert_int_equal(llm_config_flag(&c, "--max-tokens-field", "max_completion_tokens", err, sizeof err), 1);

    /* a trailing slash, or a full endpoint URL, reach the same path */
    fake_srv s;
    srv_start(&s, "{\"default\": {\"content\": \"x\"}}");
    test_config(&c, &s);
    char url[256];
    snprintf(url, sizeof url, "%s/", s.url);
    snprintf(c.base_url, sizeof c.base_url, "%s", url);
    snprintf(c.max_tokens_field, sizeof c.max_tokens_field, "max_completion_tokens");
    llm_reply r;
    assert_int_equal(llm_chat(&c, two_msgs, 2, &r, err, sizeof err), 0);
    llm_reply_free(&r);
    snprintf(c.base_url, sizeof c.base_url, "%s/chat/completions", s.url);
    assert_int_equal(llm_chat(&c, two_msgs, 2, &r, err, sizeof err), 0);
    llm_reply_free(&r);
    srv_stop(&s);
    json_t *reqs = srv_requests(&s);
    assert_int_equal(json_array_size(reqs), 2);
    for (size_t i = 0; i < 2; i++) {
        json_t *q = json_array_get(reqs, i);
        assert_string_equal(json_string_value(json_object_get(q, "path")), "/v1/chat/completions");
        assert_int_equal(json_integer_value(json_object_get(json_object_get(q, "body"), "max_completion_tokens")),
                         1024);
        assert_null(json_object_get(json_object_get(q, "body"), "max_tokens"));
    }
    json_decref(reqs);
}

/* Run cmd_ask in this process with stdout and stderr sent to files. */
static int run_ask(char **argv, int argc, char *out, size_t outlen, char *errout, size_t errlen)
{
    char opath[PATH_MAX], epath[PATH_MAX];
    snprintf(opath, sizeof opath, "%s/ask-out", pcg_test_tmpdir());
    snprintf(epath, sizeof epath, "%s/ask-err", pcg_test_tmpdir());
    fflush(stdout);
    fflush(stderr);
    int so = dup(1), se = dup(2);
    int fo = open(opath, O_WRONLY | O_CREAT | O_TRUNC, 0644), fe = open(epath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(so >= 0 && se >= 0 && fo >= 0 && fe >= 0);
    dup2(fo, 1);
    dup2(fe, 2);
    int rc = cmd_ask(argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(so, 1);
    dup2(se, 2);
    close(so);
    close(se);
    close(fo);
    close(fe);
    long len;
    char e[256];
    char *t = read_file(opath, 1 << 20, &len, e, sizeof e);
    snprintf(out, outlen, "%s", t ? t : "");
    free(t);
    t = read_file(epath, 1 << 20, &len, e, sizeof e);
    snprintf(errout, errlen, "%s", t ? t : "");
    free(t);
    return rc;
}

static void llm_ask_command(void **state)
{
    (void)state;
    fake_srv s;
    char script[2048];
    json_t *j = json_pack("{s:[{s:s}, {s:i}], s:{s:s}}", "responses", "content", good_reward, "status", 500,
                          "default", "content", "no code here");
    char *st = json_dumps(j, 0);
    snprintf(script, sizeof script, "%s", st);
    free(st);
    json_decref(j);
    srv_start(&s, script);
    char out[4096], errout[4096];
    char *a1[] = {"ask", "--base-url", s.url, "--model", "m1", "--api-key-env", KEY_ENV, "--system", "Be brief.",
                  "--extract", "code", "Write a reward."};
    int rc = run_ask(a1, 12, out, sizeof out, errout, sizeof errout);
    assert_int_equal(rc, 0);
    assert_string_equal(out, "float compute_reward(const level_t *prev, const level_t *curr)\n{\n    return "
                             "(float)(count_tiles(curr, KEY) - count_tiles(prev, KEY));\n}\n");
    assert_non_null(strstr(errout, "finish stop"));
    assert_non_null(strstr(errout, "stopped early: answer complete"));
    assert_non_null(strstr(errout, "(counted)"));
    char *a2[] = {"ask", "--base-url", s.url, "--model", "m1", "--llm-retries", "0", "Hello"};
    rc = run_ask(a2, 8, out, sizeof out, errout, sizeof errout);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(errout, "HTTP 500"));
    assert_string_equal(out, "");
    char *a3[] = {"ask", "--base-url", s.url, "--model", "m1", "--extract", "json", "Hello"};
    rc = run_ask(a3, 8, out, sizeof out, errout, sizeof errout);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(errout, "no JSON object"));
    srv_stop(&s);
    json_t *reqs = srv_requests(&s);
    json_t *m = json_object_get(json_object_get(json_array_get(reqs, 0), "body"), "messages");
    assert_string_equal(json_string_value(json_object_get(json_array_get(m, 0), "content")), "Be brief.");
    assert_string_equal(json_string_value(json_object_get(json_array_get(m, 1), "content")), "Write a reward.");
    json_decref(reqs);
    /* usage errors */
    char *a4[] = {"ask", "--temperature", "9", "x"};
    assert_int_equal(run_ask(a4, 4, out, sizeof out, errout, sizeof errout), 2);
    assert_non_null(strstr(errout, "--temperature"));
    char *a5[] = {"ask", "--llm", "offline", "x"};
    assert_int_equal(run_ask(a5, 4, out, sizeof out, errout, sizeof errout), 2);
    char *a6[] = {"ask", "--image", "/nonexistent.png", "x"};
    assert_int_equal(run_ask(a6, 4, out, sizeof out, errout, sizeof errout), 2);
    char *a7[] = {"ask"};
    assert_int_equal(run_ask(a7, 1, out, sizeof out, errout, sizeof errout), 2);
}

/* tests/fake_openai_run.json answers each kind of prompt the search sends
 * (routed by the templates' headings), the first reward with a bug. */
static void llm_fake_run_script_routes_each_prompt(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    long len;
    char err[512];
    char *script = read_file("tests/fake_openai_run.json", 1 << 20, &len, err, sizeof err);
    assert_non_null(script);
    fake_srv s;
    srv_start(&s, script);
    free(script);
    llm_config c;
    test_config(&c, &s);
    prompt_var all[64];
    int n = 0;
    for (int i = 0; prompt_vocabulary[i]; i++) all[n++] = (prompt_var){prompt_vocabulary[i], "1"};
    struct {
        const char *profile, *tmpl, *expect;
    } cases[] = {
        {"rich", "target_extraction", "\"enemies\""}, {"rich", "reward_init", "rand()"},
        {"rich", "reward_fix", "score(curr)"},       {"rich", "self_align", "score(curr)"},
        {"rich", "reward_init", "score(curr)"},      {"rich", "feedback_specific", "Problem:"},
        {"rich", "reward_refine", "score(curr)"},    {"rich", "fitness_llm", "\"fitness\""},
        {"paper", "target_extraction", "\"enemies\""}, {"paper", "reward_init", "rand()"},
        {"paper", "reward_fix", "score(curr)"},       {"paper", "self_align", "score(curr)"},
        {"paper", "reward_init", "score(curr)"},      {"paper", "feedback_specific", "Problem:"},
        {"paper", "reward_refine", "score(curr)"},    {"paper", "fitness_llm", "\"acc_imp_perc\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *sys = prompt_render(cases[i].profile, "system", NULL, 0, err, sizeof err);
        char *user = prompt_render(cases[i].profile, cases[i].tmpl, all, n, err, sizeof err);
        assert_non_null(sys);
        assert_non_null(user);
        llm_message m[] = {{"system", sys, NULL, 0}, {"user", user, NULL, 0}};
        llm_reply r;
        if (llm_chat(&c, m, 2, &r, err, sizeof err) != 0) fail_msg("%s/%s: %s", cases[i].profile, cases[i].tmpl, err);
        if (!strstr(r.content, cases[i].expect))
            fail_msg("%s/%s: unexpected reply %s", cases[i].profile, cases[i].tmpl, r.content);
        llm_reply_free(&r);
        free(user);
        free(sys);
    }
    srv_stop(&s);
}


/* ---- the harness: early stop, loops, advice, schemas, context ------------------------ */

static void script_of(char *buf, size_t len, json_t *j)
{
    char *t = json_dumps(j, 0);
    snprintf(buf, len, "%s", t);
    free(t);
    json_decref(j);
}

static int cancelled_in(const fake_srv *s)
{
    json_t *reqs = srv_log(s, 1);
    int n = 0;
    for (size_t i = 0; i < json_array_size(reqs); i++)
        n += json_object_get(json_array_get(reqs, i), "cancelled_after") != NULL;
    json_decref(reqs);
    return n;
}

/* A code task stops reading once the code block is closed, and the
 * server sees the stream closed (the rest is never generated). */
static void llm_code_reply_stops_when_the_block_closes(void **state)
{
    (void)state;
    char script[8192], tail[3000] = "";
    for (int i = 0; i < 60; i++) {
        size_t n = strlen(tail);
        snprintf(tail + n, sizeof tail - n, "Note %d: the weights can be tuned later. ", i * 7 + 3);
    }
    char content[6000];
    snprintf(content, sizeof content, "%s\n%s", good_reward, tail);
    script_of(script, sizeof script, json_pack("{s:{s:s, s:i, s:f}}", "default", "content", content, "piece", 8,
                                               "piece_sleep", 0.002));
    fake_srv s;
    srv_start(&s, script);
    llm_config c;
    test_config(&c, &s);
    llm_task task = {LLM_CODE, 0, NULL, "reward"};
    llm_reply r;
    char err[512];
    assert_int_equal(llm_chat_task(&c, &task, two_msgs, 2, &r, err, sizeof err), 0);
    usleep(200000);
    srv_stop(&s);
    assert_int_equal(r.early_stop, 1);
    assert_null(strstr(r.content, "Note 40"));
    char *code = llm_extract_code(r.content, err, sizeof err);
    assert_non_null(code);
    assert_non_null(strstr(code, "count_tiles(curr, KEY)"));
    free(code);
    assert_int_equal(cancelled_in(&s), 1);
    /* a code task asks for the reward budget */
    json_t *reqs = srv_requests(&s);
    json_t *body = json_object_get(json_array_get(reqs, 0), "body");
    assert_int_equal(json_integer_value(json_object_get(body, "max_tokens")), 1280);
    json_decref(reqs);
    llm_reply_free(&r);
}

/* A reply in a loop is cut while it streams, kept, and never continued. */
static void llm_loop_is_cut_and_not_continued(void **state)
{
    (void)state;
    fake_srv s;
    srv_start(&s, "{\"default\": {\"content\": \"You are an expert in reward design. \", \"repeat\": 300, "
                  "\"finish_reason\": \"length\"}}");
    llm_config c;
    test_config(&c, &s);
    llm_task task = {LLM_CODE, 0, NULL, "reward"};
    llm_reply r;
    char err[512];
    assert_int_equal(llm_chat_task(&c, &task, two_msgs, 2, &r, err, sizeof err), -1);
    srv_stop(&s);
    assert_int_equal(r.cut, LLM_CUT_LOOP);
    assert_int_equal(r.model_failure, 1);
    assert_int_equal(r.attempts, 1);
    assert_int_equal(r.continuations, 0);
    assert_non_null(r.content);
    assert_true(strlen(r.content) < 2000); /* cut early, not at the end of the 11 kB */
    assert_non_null(strstr(err, "loop"));
    assert_non_null(strstr(err, "chat template"));
    assert_null(strstr(err, "raise --max-tokens"));
    llm_reply_free(&r);
}

/* A model that rambles to the token limit without starting its code is
 * not continued, and is not told to raise the limit. */
static void llm_length_advice_fits_the_cause(void **state)
{
    (void)state;
    char script[8192], prose[4000] = "";
    for (int i = 0; i < 50; i++) {
        size_t n = strlen(prose);
        snprintf(prose + n, sizeof prose - n, "Idea %d is to count tiles of kind %d. ", i * 13 + 1, i % 9);
    }
    script_of(script, sizeof script,
              json_pack("{s:{s:s, s:s, s:i}}", "default", "content", prose, "finish_reason", "length", "piece", 32));
    fake_srv s;
    srv_start(&s, script);
    llm_config c;
    test_config(&c, &s);
    llm_task task = {LLM_CODE, 0, NULL, "reward"};
    llm_reply r;
    char err[600];
    assert_int_equal(llm_chat_task(&c, &task, two_msgs, 2, &r, err, sizeof err), -1);
    srv_stop(&s);
    assert_int_equal(r.cut, LLM_CUT_LENGTH);
    assert_int_equal(r.attempts, 1);
    assert_non_null(strstr(err, "without starting a code block"));
    assert_non_null(strstr(err, "chat training"));
    assert_non_null(strstr(err, "only makes each try longer"));
    llm_reply_free(&r);
}

/* A JSON task sends its schema; a server that refuses OpenAI's form gets
 * llama-cpp-python's, and one that takes neither the plain request. */
static void llm_json_schema_with_fallbacks(void **state)
{
    (void)state;
    static const char schema[] = "{\"type\":\"object\",\"properties\":{\"fitness\":{\"type\":\"number\"}}}";
    llm_task task = {LLM_JSON, 0, schema, "fitness"};
    const char *scripts[] = {
        "{\"default\": {\"content\": \"{\\\"fitness\\\": 0.5}\", \"reject_formats\": [\"json_schema\"]}}",
        "{\"default\": {\"content\": \"{\\\"fitness\\\": 0.5}\", \"reject_formats\": [\"json_schema\", "
        "\"json_object\"]}}",
    };
    for (int k = 0; k < 2; k++) {
        fake_srv s;
        srv_start(&s, scripts[k]);
        llm_config c;
        test_config(&c, &s);
        llm_server server = {0};
        c.server = &server;
        llm_reply r;
        char err[512];
        for (int call = 0; call < 2; call++) {
            if (llm_chat_task(&c, &task, two_msgs, 2, &r, err, sizeof err)) fail_msg("%s", err);
            assert_int_equal(r.constrained, k == 0);
            llm_reply_free(&r);
        }
        srv_stop(&s);
        assert_int_equal(server.schema_form, k == 0 ? 2 : -1);
        json_t *reqs = srv_requests(&s);
        /* first server: json_schema (422), json_object + schema, then straight to the form that worked */
        assert_int_equal(json_array_size(reqs), k == 0 ? 3 : 4);
        json_t *rf0 = json_object_get(json_object_get(json_array_get(reqs, 0), "body"), "response_format");
        assert_string_equal(json_string_value(json_object_get(rf0, "type")), "json_schema");
        json_t *rf1 = json_object_get(json_object_get(json_array_get(reqs, 1), "body"), "response_format");
        assert_string_equal(json_string_value(json_object_get(rf1, "type")), "json_object");
        assert_non_null(json_object_get(rf1, "schema"));
        json_t *last = json_object_get(json_array_get(reqs, json_array_size(reqs) - 1), "body");
        if (k == 0)
            assert_string_equal(json_string_value(json_object_get(json_object_get(last, "response_format"), "type")),
                                "json_object");
        else
            assert_null(json_object_get(last, "response_format"));
        json_decref(reqs);
    }
}

/* The context size is read from llama-server's /props; a prompt that
 * cannot fit is refused in one line, before anything is sent. */
static void llm_context_read_and_prompt_refused(void **state)
{
    (void)state;
    fake_srv s;
    srv_start(&s, "{\"props\": {\"default_generation_settings\": {\"n_ctx\": 600}}, \"default\": {\"content\": \"ok\"}}");
    llm_config c;
    test_config(&c, &s);
    char from[64];
    llm_server server = {0};
    server.context = llm_probe_context(&c, from, sizeof from);
    assert_int_equal(server.context, 600);
    assert_string_equal(from, "GET /props");
    c.server = &server;
    char big[3000];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = 0;
    llm_message m[] = {{"user", big, NULL, 0}};
    llm_reply r;
    char err[600];
    assert_int_equal(llm_chat(&c, m, 1, &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "more than the server's context of 600 tokens"));
    assert_null(strchr(err, '\n'));
    /* a short one fits */
    assert_int_equal(llm_chat(&c, two_msgs, 2, &r, err, sizeof err), -1); /* 1024 reply tokens do not fit 600 */
    c.max_tokens = 200;
    assert_int_equal(llm_chat(&c, two_msgs, 2, &r, err, sizeof err), 0);
    llm_reply_free(&r);
    srv_stop(&s);
    json_t *reqs = srv_requests(&s);
    assert_int_equal(json_array_size(reqs), 1);
    json_decref(reqs);
    /* a flag wins over the server, and a server that tells nothing leaves it unknown */
    c.context = 4096;
    assert_int_equal(llm_probe_context(&c, from, sizeof from), 4096);
    assert_string_equal(from, "--llm-context");
}

/* ask prints its summary and what arrived when the call fails. */
static void llm_ask_summary_on_failure(void **state)
{
    (void)state;
    fake_srv s;
    srv_start(&s, "{\"default\": {\"content\": \"Return one. Return one. \", \"repeat\": 200, "
                  "\"finish_reason\": \"length\"}}");
    char out[8192], errout[4096];
    char *a[] = {"ask", "--base-url", s.url, "--model", "base", "Write a C function that returns 1."};
    int rc = run_ask(a, 6, out, sizeof out, errout, sizeof errout);
    srv_stop(&s);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(errout, "pcgrllm: ask: model"));
    assert_non_null(strstr(errout, "cut: a loop"));
    assert_non_null(strstr(errout, "1 request"));
    assert_non_null(strstr(errout, "loop"));
    assert_non_null(strstr(out, "Return one."));
}

static void llm_loop_and_closed_block_detection(void **state)
{
    (void)state;
    char why[300];
    /* a reward function with repeated short lines is no loop */
    const char *code =
        "float compute_reward(const level_t *prev, const level_t *curr)\n{\n    float r = 0.0f;\n"
        "    if (count_tiles(curr, KEY) == 1) r += 1.0f;\n    if (count_tiles(curr, BAT) == 1) r += 1.0f;\n"
        "    for (int i = 0; i < 3; i++) {\n        for (int j = 0; j < 3; j++) {\n            r += 0.0f;\n"
        "        }\n    }\n    return r;\n}\n";
    assert_int_equal(llm_text_loops(code, strlen(code), why, sizeof why), 0);
    char text[4000] = "";
    for (int i = 0; i < 20; i++) strcat(text, "The player must meet the bat before the key. ");
    assert_int_equal(llm_text_loops(text, strlen(text), why, sizeof why), 1);
    assert_non_null(strstr(why, "passage"));
    text[0] = 0;
    for (int i = 0; i < 14; i++) {
        size_t n = strlen(text);
        snprintf(text + n, sizeof text - n, "Step %d: compute the reward for this step.\nOk.\n", i);
    }
    assert_int_equal(llm_text_loops(text, strlen(text), why, sizeof why), 1);
    assert_non_null(strstr(why, "same line"));
    assert_int_equal(llm_text_loops("", 0, why, sizeof why), 0);
    assert_int_equal(llm_code_closed("Plan.\n```c\nint x;\n"), 0);
    assert_int_equal(llm_code_closed("Plan.\n```c\nint x;\n```\n"), 1);
    assert_int_equal(llm_code_closed("```json\n{}\n```\n```c\n"), 0);
    assert_int_equal(llm_code_closed("```c\n\n```\n"), 0);
    assert_int_equal(llm_json_closed("Here: {\"a\": {\"b\": 1}"), 0);
    assert_int_equal(llm_json_closed("Here: {\"a\": {\"b\": 1}}"), 1);
}

/* ---- extraction ------------------------------------------------------------------ */

static void llm_extract_code_cases(void **state)
{
    (void)state;
    char err[256];
    struct {
        const char *reply, *code;
    } ok[] = {
        {"```c\nint a;\n```", "int a;\n"},
        {"text\n```cpp\nint b;\n```\nmore", "int b;\n"},
        {"```C++\nint b2;\n```", "int b2;\n"},
        {"```\nint c;\n```", "int c;\n"},
        {"   ```c  \r\nint d;\r\n   ```\r\n", "int d;\n"},
        {"```python\nx = 1\n```\n```c\nint e;\n```", "int e;\n"},
        {"```c\nint first;\n```\n```c\nint second;\n```", "int first;\n"},
        {"```c\n\n```\n```c\nint f;\n```", "int f;\n"},
        {"````c\nint g; /* ``` inside */\n```\nint h;\n````", "int g; /* ``` inside */\n```\nint h;\n"},
        {"Here you go:\n```c\nint unterminated;\n", "int unterminated;\n"},
        {"int whole(void) { return 1; }", "int whole(void) { return 1; }\n"},
        {"Use `inline code` here.\nint z;", "Use `inline code` here.\nint z;\n"},
        {"<think>\nDraft:\n```c\nint draft;\n```\n</think>\n```c\nint final;\n```", "int final;\n"},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        char *code = llm_extract_code(ok[i].reply, err, sizeof err);
        if (!code) fail_msg("case %zu: %s", i, err);
        if (strcmp(code, ok[i].code)) fail_msg("case %zu: got [%s]", i, code);
        free(code);
    }
    assert_null(llm_extract_code("", err, sizeof err));
    assert_non_null(strstr(err, "empty"));
    assert_null(llm_extract_code(" \n\t", err, sizeof err));
    assert_null(llm_extract_code(NULL, err, sizeof err));
    assert_null(llm_extract_code("```python\nprint(1)\n```", err, sizeof err));
    assert_non_null(strstr(err, "python"));
    assert_null(llm_extract_code("```c\n   \n```", err, sizeof err));
    assert_non_null(strstr(err, "empty"));
    assert_null(llm_extract_code("<think>```c\nint a;\n```</think>\n", err, sizeof err));
    assert_non_null(strstr(err, "empty"));
}

static void llm_extract_json_cases(void **state)
{
    (void)state;
    char err[256];
    struct {
        const char *reply, *json;
    } ok[] = {
        {"{\"a\": 1}", "{\"a\": 1}"},
        {"The answer:\n```json\n{\"kind\": \"keydoor\", \"gate\": \"KEY\"}\n```", "{\"kind\": \"keydoor\", \"gate\": \"KEY\"}"},
        {"I think {not json} but {\"b\": \"}\"}", "{\"b\": \"}\"}"},
        {"{\"x\": {\"y\": [1, {\"z\": 2}]}} trailing", "{\"x\": {\"y\": [1, {\"z\": 2}]}}"},
        {"```\n{\"plain\": true}\n```", "{\"plain\": true}"},
        {"<think>maybe {\"kind\": \"x\"}?</think>{\"kind\": \"y\"}", "{\"kind\": \"y\"}"},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        char *j = llm_extract_json(ok[i].reply, err, sizeof err);
        if (!j) fail_msg("case %zu: %s", i, err);
        if (strcmp(j, ok[i].json)) fail_msg("case %zu: got [%s]", i, j);
        free(j);
    }
    assert_null(llm_extract_json("no object here", err, sizeof err));
    assert_non_null(strstr(err, "no JSON object"));
    assert_null(llm_extract_json("{\"open\": ", err, sizeof err));
    assert_null(llm_extract_json("[1, 2, 3]", err, sizeof err));
    assert_null(llm_extract_json("", err, sizeof err));
}

static void llm_base64_known_answers(void **state)
{
    (void)state;
    const char *in[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    const char *out[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
    for (int i = 0; i < 7; i++) {
        char *b = llm_base64(in[i], strlen(in[i]));
        assert_string_equal(b, out[i]);
        free(b);
    }
}

/* ---- prompts ------------------------------------------------------------------------ */

static void prompts_fill_placeholders(void **state)
{
    (void)state;
    char err[256];
    prompt_var v[] = {{"story", "Meet the {bat}."}, {"iteration", "2"}, {"iterations", "6"}};
    char *s = prompt_fill("Story: {story}\nIteration {iteration} of {iterations}.\n", "t", v, 3, err, sizeof err);
    assert_non_null(s);
    assert_string_equal(s, "Story: Meet the {bat}.\nIteration 2 of 6.\n");
    free(s);
    /* braces that are not placeholders stay; {{ and }} are escapes */
    s = prompt_fill("f() {\n  return {\"a\":1};\n}\n{ story } {Story} {{story}} }} {{", "t", v, 3, err, sizeof err);
    assert_non_null(s);
    assert_string_equal(s, "f() {\n  return {\"a\":1};\n}\n{ story } {Story} {story} } {");
    free(s);
    /* the same placeholder twice; no placeholders at all */
    s = prompt_fill("{iteration}{iteration}", "t", v, 3, err, sizeof err);
    assert_string_equal(s, "22");
    free(s);
    s = prompt_fill("", "t", NULL, 0, err, sizeof err);
    assert_string_equal(s, "");
    free(s);
}

static void prompts_unknown_or_missing_placeholder(void **state)
{
    (void)state;
    char err[256];
    prompt_var v[] = {{"story", "s"}};
    assert_null(prompt_fill("line one\nline two {stroy}\n", "reward_init", v, 1, err, sizeof err));
    assert_non_null(strstr(err, "reward_init"));
    assert_non_null(strstr(err, "line 2"));
    assert_non_null(strstr(err, "unknown placeholder {stroy}"));
    assert_null(prompt_fill("{story}\n\n\n{feedback}", "reward_refine", v, 1, err, sizeof err));
    assert_non_null(strstr(err, "line 4"));
    assert_non_null(strstr(err, "no value given for {feedback}"));
    prompt_var nullv[] = {{"story", NULL}};
    assert_null(prompt_fill("{story}", "x", nullv, 1, err, sizeof err));
    assert_non_null(strstr(err, "{story}"));
}

static void make_layout(const char *root, const char *sub)
{
    char d[PATH_MAX], f[PATH_MAX + 32];
    snprintf(d, sizeof d, "%s/%s", root, sub);
    assert_int_equal(make_dirs(d), 0);
    snprintf(f, sizeof f, "%s/paper", d);
    assert_int_equal(make_dirs(f), 0);
    snprintf(f, sizeof f, "%s/paper/system.txt", d);
    assert_int_equal(write_file_atomic(f, "sys\n", 4), 0);
}

static void prompts_found_beside_the_binary(void **state)
{
    (void)state;
    char root[PATH_MAX - 64], exe[PATH_MAX], out[PATH_MAX], err[PATH_MAX * 2];
    snprintf(root, sizeof root, "%s/promptdirs", pcg_test_tmpdir());
    /* installed: bin/pcgrllm + share/pcgrllm/prompts */
    make_layout(root, "inst/share/pcgrllm/prompts");
    make_layout(root, "inst/bin");
    snprintf(exe, sizeof exe, "%s/inst/bin/pcgrllm", root);
    assert_int_equal(prompts_dir_for_exe(exe, out, sizeof out, err, sizeof err), 0);
    assert_non_null(strstr(out, "inst/share/pcgrllm/prompts"));
    /* source tree: ./pcgrllm beside prompts/ */
    make_layout(root, "src/prompts");
    snprintf(exe, sizeof exe, "%s/src/pcgrllm", root);
    assert_int_equal(prompts_dir_for_exe(exe, out, sizeof out, err, sizeof err), 0);
    assert_true(strlen(out) > 12 && !strcmp(out + strlen(out) - 12, "/src/prompts"));
    /* build/ one level down */
    snprintf(exe, sizeof exe, "%s/src/build/pcgrllm", root);
    make_layout(root, "src/build");
    assert_int_equal(prompts_dir_for_exe(exe, out, sizeof out, err, sizeof err), 0);
    assert_true(!strcmp(out + strlen(out) - 12, "/src/prompts"));
    /* nowhere: the error says where it looked and what to do */
    make_layout(root, "lonely/x");
    snprintf(exe, sizeof exe, "%s/lonely/pcgrllm", root);
    assert_int_equal(prompts_dir_for_exe(exe, out, sizeof out, err, sizeof err), -1);
    assert_non_null(strstr(err, "lonely/prompts"));
    assert_non_null(strstr(err, "PCGRLLM_PROMPTS"));
    /* the variable overrides; a wrong one is named */
    setenv("PCGRLLM_PROMPTS", root, 1);
    assert_int_equal(prompts_dir(out, sizeof out, err, sizeof err), -1);
    assert_non_null(strstr(err, "PCGRLLM_PROMPTS="));
    assert_null(prompt_load("paper", "system", err, sizeof err));
    snprintf(exe, sizeof exe, "%s/src/prompts", root);
    setenv("PCGRLLM_PROMPTS", exe, 1);
    char *t = prompt_load("paper", "system", err, sizeof err);
    assert_non_null(t);
    assert_string_equal(t, "sys\n");
    free(t);
    assert_null(prompt_load("paper", "reward_init", err, sizeof err));
    assert_non_null(strstr(err, "reward_init"));
    assert_null(prompt_load("paper", "../system", err, sizeof err));
    assert_null(prompt_load("../paper", "system", err, sizeof err));
    assert_non_null(strstr(err, "bad prompt template name"));
    pcg_test_use_source_prompts();
}

static void prompts_templates_check_and_render(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    char err[512];
    if (prompts_check(err, sizeof err) != 0) fail_msg("%s", err);
    /* every template of every profile renders with the whole vocabulary */
    prompt_var all[64];
    int n = 0;
    for (int i = 0; prompt_vocabulary[i]; i++) all[n++] = (prompt_var){prompt_vocabulary[i], "VALUE"};
    for (int p = 0; prompt_profiles[p]; p++) {
        const char *const *names = prompt_template_names(prompt_profiles[p]);
        for (int i = 0; names[i]; i++) {
            char *s = prompt_render(prompt_profiles[p], names[i], all, n, err, sizeof err);
            if (!s) fail_msg("%s/%s: %s", prompt_profiles[p], names[i], err);
            assert_true(strlen(s) > 3);
            free(s);
        }
    }
    /* the first iteration's prompt carries what the loop promises */
    prompt_var v[] = {{"story", "The player must meet a BAT before the KEY."},
                      {"reward_api", "int count_tiles(const level_t *l, int tile);"},
                      {"iteration", "1"},
                      {"iterations", "6"},
                      {"target", "encounter: meet BAT"}, {"evaluator_rules", ""}};
    char *s = prompt_render("rich", "reward_init", v, 6, err, sizeof err);
    if (!s) fail_msg("%s", err);
    assert_non_null(strstr(s, "iteration 1 of 6"));
    assert_non_null(strstr(s, "scored on this target: encounter: meet BAT."));
    assert_null(strstr(s, "first of")); /* a root may come at any iteration */
    assert_non_null(strstr(s, "The player must meet a BAT before the KEY."));
    assert_non_null(strstr(s, "int count_tiles(const level_t *l, int tile);"));
    assert_non_null(strstr(s, "float compute_reward(const level_t *prev, const level_t *curr)\n{"));
    assert_non_null(strstr(s, "plan"));
    assert_null(strstr(s, "{story}"));
    free(s);
    /* missing values are named */
    assert_null(prompt_render("rich", "reward_init", v, 3, err, sizeof err));
    assert_non_null(strstr(err, "{iterations}"));
    /* the retry note says which attempt and why */
    prompt_var rv[] = {{"attempt", "2"}, {"attempts", "3"}, {"failure", "the model fell into a loop"}};
    s = prompt_render("rich", "retry_note", rv, 3, err, sizeof err);
    assert_non_null(s);
    assert_non_null(strstr(s, "Attempt 2 of 3"));
    assert_non_null(strstr(s, "the model fell into a loop"));
    free(s);
    /* the evaluator's rules are not in the prompts unless the run asks for them */
    for (int p = 0; prompt_profiles[p]; p++) {
        const char *const *names = prompt_template_names(prompt_profiles[p]);
        for (int i = 0; names[i]; i++) {
            if (!strncmp(names[i], "evaluator_rules", 15)) continue;
            char *t = prompt_load(prompt_profiles[p], names[i], err, sizeof err);
            assert_non_null(t);
            if (strstr(t, "within 2 tiles") || strstr(t, "5x5 window") || strstr(t, "DOOR is locked") ||
                strstr(t, "DOOR stays locked") || strstr(t, "out of reach while"))
                fail_msg("prompts/%s/%s.txt states a scoring rule of the evaluator", prompt_profiles[p], names[i]);
            free(t);
        }
    }
    s = prompt_render("rich", "self_align", all, n, err, sizeof err);
    assert_non_null(strstr(s, "Keep the structure"));
    assert_non_null(strstr(s, "scale and sparsity"));
    free(s);
    s = prompt_render("rich", "feedback_specific", all, n, err, sizeof err);
    assert_non_null(strstr(s, "exactly one problem"));
    free(s);
}

static void prompts_check_catches_edited_templates(void **state)
{
    (void)state;
    char dir[PATH_MAX - 64], cmd[PATH_MAX * 3], err[512];
    snprintf(dir, sizeof dir, "%s/edited-prompts", pcg_test_tmpdir());
    char out[256];
    assert_int_equal(pcg_test_sh(out, sizeof out, "rm -rf '%s' && cp -r prompts '%s'", dir, dir), 0);
    setenv("PCGRLLM_PROMPTS", dir, 1);
    assert_int_equal(prompts_check(err, sizeof err), 0);
    /* a typo in a placeholder, in either profile */
    snprintf(cmd, sizeof cmd, "sed -i 's/{story}/{stroy}/' '%s/rich/feedback_specific.txt'", dir);
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s", cmd), 0);
    assert_int_equal(prompts_check(err, sizeof err), -1);
    assert_non_null(strstr(err, "rich/feedback_specific"));
    assert_non_null(strstr(err, "{stroy}"));
    /* a dropped placeholder the role needs */
    snprintf(cmd, sizeof cmd, "sed -i 's/{stroy}/the story/' '%s/rich/feedback_specific.txt'", dir);
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s", cmd), 0);
    assert_int_equal(prompts_check(err, sizeof err), -1);
    assert_non_null(strstr(err, "does not use {story}"));
    /* a missing file */
    snprintf(cmd, sizeof cmd, "cp prompts/rich/feedback_specific.txt '%s/rich/' && rm '%s/paper/fitness_llm.txt'", dir,
             dir);
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s", cmd), 0);
    assert_int_equal(prompts_check(err, sizeof err), -1);
    assert_non_null(strstr(err, "paper/fitness_llm"));
    pcg_test_use_source_prompts();
}

static void prompts_got_references(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    char err[256];
    const char *codes[] = {"float compute_reward(const level_t *a, const level_t *b) { return 1.0f; }",
                           "float compute_reward(const level_t *a, const level_t *b)\n{ return 2.0f; }\n"};
    double fit[] = {0.8333, 0.05};
    int kinds[] = {REF_BEST, REF_WORST};
    prompt_reference refs[] = {{codes[0], fit[0], kinds[0], NULL}, {codes[1], fit[1], kinds[1], NULL}};
    char *s = prompt_references("rich", 0, refs, 2, err, sizeof err);
    assert_non_null(s);
    assert_non_null(strstr(s, "Reference 1 (one of the best so far, fitness 0.833):\n```c\nfloat compute_reward(const "
                              "level_t *a, const level_t *b) { return 1.0f; }\n```\n"));
    assert_non_null(strstr(s, "Reference 2 (one of the worst so far, fitness 0.050):\n```c\n"));
    assert_true(strstr(s, "Reference 1") < strstr(s, "Reference 2"));
    free(s);
    s = prompt_references("rich", 0, NULL, 0, err, sizeof err);
    assert_string_equal(s, "");
    free(s);
}

/* The sandbox's warning on a reward no agent can learn from reaches the
 * self-alignment prompt; without one the prompt shows nothing extra. */
static void prompts_statistics_warning(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    char err[256], warning[512];
    reward_stats st = {0.0, 0.0, 0.0, 0.0, 1.0, 0.4, 1536};
    assert_true(reward_stats_warning(&st, warning, sizeof warning) > 0);
    char *w = prompt_statistics_warning("rich", warning, err, sizeof err);
    assert_non_null(w);
    assert_non_null(strstr(w, "**Warning from the sandbox:** compute_reward returned 0 on every one of 1536 steps"));
    prompt_var v[] = {{"story", "s"},        {"reward_api", "api"}, {"code", "float compute_reward(...)"},
                      {"statistics", "stats"}, {"align_round", "1"}, {"align_rounds", "1"},
                      {"statistics_warning", w}};
    char *s = prompt_render("rich", "self_align", v, 7, err, sizeof err);
    assert_non_null(s);
    assert_non_null(strstr(s, "stats\n\n**Warning from the sandbox:** compute_reward returned 0"));
    free(s);
    free(w);
    w = prompt_statistics_warning("rich", "", err, sizeof err);
    assert_string_equal(w, "");
    v[6].value = w;
    s = prompt_render("rich", "self_align", v, 7, err, sizeof err);
    assert_non_null(strstr(s, "stats\n\n## Your answer"));
    assert_null(strstr(s, "Warning"));
    free(s);
    free(w);
}

static void prompts_parse_fitness_reply(void **state)
{
    (void)state;
    char err[256];
    double f = -1;
    assert_int_equal(prompt_parse_fitness("{\"scores\": [1, 0, 0.5], \"fitness\": 0.5}", &f, err, sizeof err), 0);
    assert_true(f == 0.5);
    assert_int_equal(prompt_parse_fitness("Scores below.\n```json\n{\"scores\": [1, 0, 1, 0]}\n```", &f, err,
                                          sizeof err), 0);
    assert_true(f == 0.5);
    assert_int_equal(prompt_parse_fitness("{\"fitness\": 1.5}", &f, err, sizeof err), -1);
    assert_non_null(strstr(err, "[0,1]"));
    assert_int_equal(prompt_parse_fitness("{\"scores\": [1, \"high\"]}", &f, err, sizeof err), -1);
    assert_non_null(strstr(err, "score 2"));
    assert_int_equal(prompt_parse_fitness("{\"verdict\": \"good\"}", &f, err, sizeof err), -1);
    assert_int_equal(prompt_parse_fitness("about 0.7", &f, err, sizeof err), -1);
    assert_non_null(strstr(err, "no JSON object"));
}

PCG_TESTS(llm, cmocka_unit_test(llm_good_reply_and_request_fields), cmocka_unit_test(llm_reward_with_bug_then_fix),
          cmocka_unit_test(llm_reply_without_fence_is_whole_code), cmocka_unit_test(llm_truncated_reply_is_continued),
          cmocka_unit_test(llm_truncated_reply_never_returned_half), cmocka_unit_test(llm_429_honours_retry_after),
          cmocka_unit_test(llm_500_is_retried), cmocka_unit_test(llm_5xx_gives_up_after_retries),
          cmocka_unit_test(llm_4xx_is_not_retried), cmocka_unit_test(llm_malformed_json_is_clear_error),
          cmocka_unit_test(llm_oversized_response_is_refused), cmocka_unit_test(llm_request_body_is_valid_for_any_text),
          cmocka_unit_test(llm_empty_choices_is_clear_error), cmocka_unit_test(llm_timeout_is_bounded),
          cmocka_unit_test(llm_call_time_cuts_a_slow_stream), cmocka_unit_test(llm_connection_refused_is_bounded),
          cmocka_unit_test(llm_key_never_in_errors_or_reply), cmocka_unit_test(llm_no_key_sends_no_authorization),
          cmocka_unit_test(llm_image_sent_as_data_url), cmocka_unit_test(llm_usage_accumulates_per_run),
          cmocka_unit_test(llm_config_flags_and_base_url), cmocka_unit_test(llm_ask_command),
          cmocka_unit_test(llm_fake_run_script_routes_each_prompt), cmocka_unit_test(llm_extract_code_cases),
          cmocka_unit_test(llm_extract_json_cases), cmocka_unit_test(llm_base64_known_answers),
          cmocka_unit_test(llm_code_reply_stops_when_the_block_closes), cmocka_unit_test(llm_loop_is_cut_and_not_continued),
          cmocka_unit_test(llm_length_advice_fits_the_cause), cmocka_unit_test(llm_json_schema_with_fallbacks),
          cmocka_unit_test(llm_context_read_and_prompt_refused), cmocka_unit_test(llm_ask_summary_on_failure),
          cmocka_unit_test(llm_loop_and_closed_block_detection),
          cmocka_unit_test(prompts_fill_placeholders), cmocka_unit_test(prompts_unknown_or_missing_placeholder),
          cmocka_unit_test(prompts_found_beside_the_binary), cmocka_unit_test(prompts_templates_check_and_render),
          cmocka_unit_test(prompts_check_catches_edited_templates), cmocka_unit_test(prompts_got_references),
          cmocka_unit_test(prompts_statistics_warning),
          cmocka_unit_test(prompts_parse_fitness_reply))
