/* run --config FILE (host/rundir/run_config_file.h): a run started from
 * another run's config.json with one flag changed differs from it only in
 * that field; hand-written partial files; unknown keys, bad values and a
 * server the command line does not repeat refused in one line. */
#include "harness.h"
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TINY_RUN "--preset small --steps 256 --envs 2 --align 0 --check-envs 4 --levels 4 --iterations 1"

/* Keys that say how and where a run was made, not what it is. */
static int informational(const char *key)
{
    return !strcmp(key, "pcgrllm_commit") || !strcmp(key, "pcgrllm_version") || !strcmp(key, "threads_at_start") ||
           !strcmp(key, "threads_reason");
}

static json_t *config_of(const char *dir) { return pcg_test_json_in(dir, "config.json"); }

static void run_config_file_round_trip(void **state)
{
    (void)state;
    char a[600], b[600], out[8192];
    snprintf(a, sizeof a, "%s/cfg-a", pcg_test_tmpdir());
    snprintf(b, sizeof b, "%s/cfg-b", pcg_test_tmpdir());
    int rc = pcg_test_sh(out, sizeof out, "%s run --llm offline --scenario 2 " TINY_RUN " --out %s", pcg_test_binary(), a);
    if (rc) fail_msg("first run %d: %s", rc, out);
    rc = pcg_test_sh(out, sizeof out, "%s run --config %s/config.json --seed 7 --out %s", pcg_test_binary(), a, b);
    if (rc) fail_msg("run --config %d: %s", rc, out);
    json_t *ja = config_of(a), *jb = config_of(b);
    const char *key;
    json_t *v;
    int differ = 0;
    json_object_foreach(ja, key, v) {
        if (informational(key) || json_equal(v, json_object_get(jb, key))) continue;
        assert_string_equal(key, "seed");
        differ++;
    }
    assert_int_equal(differ, 1);
    assert_int_equal(json_integer_value(json_object_get(jb, "seed")), 7);
    assert_int_equal(json_object_size(ja), json_object_size(jb));
    json_decref(ja);
    json_decref(jb);
}

static void write_file(const char *name, const char *text, char *path, size_t len)
{
    snprintf(path, len, "%s/%s", pcg_test_tmpdir(), name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A file by hand with a few keys: the rest are the defaults, and the task
 * comes from the file. */
static void run_config_file_partial(void **state)
{
    (void)state;
    char path[600], dir[600], out[8192];
    write_file("cfg-partial.json", "{\"scenario\": 3, \"author\": \"offline\", \"preset\": \"small\", \"steps\": 256,"
                                   " \"envs\": 2, \"align\": 0, \"check_envs\": 4, \"levels\": 4, \"iterations\": 1}",
               path, sizeof path);
    snprintf(dir, sizeof dir, "%s/cfg-partial-run", pcg_test_tmpdir());
    int rc = pcg_test_sh(out, sizeof out, "%s run --config %s --out %s", pcg_test_binary(), path, dir);
    if (rc) fail_msg("run --config %d: %s", rc, out);
    json_t *j = config_of(dir);
    assert_int_equal(json_integer_value(json_object_get(j, "scenario")), 3);
    assert_string_equal(json_string_value(json_object_get(j, "author")), "offline");
    assert_string_equal(json_string_value(json_object_get(j, "pe")), "cot"); /* a default */
    json_decref(j);
}

static void run_config_file_refused(void **state)
{
    (void)state;
    static const char *const bad[][2] = {
        {"{\"scenario\": 1, \"iterationz\": 3}", "unknown key 'iterationz'"},
        {"{\"scenario\": 1, \"author\": \"openai\", \"llm\": {\"api_key_env\": \"SECRET\"}}", "unknown key 'llm.api_key_env'"},
        {"{\"scenario\": 1, \"iterations\": 0}", "iterations"},
        {"{\"scenario\": 1, \"llm\": 5}", "must be an object"},
        {"[1, 2]", "expected a JSON object"},
        {"{\"scenario\": 1, \"author\": \"openai\", \"llm\": {\"base_url\": \"http://127.0.0.1:9/v1\", \"model\": \"m\"}}",
         "give --base-url http://127.0.0.1:9/v1"},
        /* a file someone else wrote must not have the run copy what it names
         * into the run directory and the model's prompts */
        {"{\"scenario\": 1, \"init_reward\": \"/etc/hostname\"}", "give --init-reward /etc/hostname"},
        /* a wrong type is refused, not read as the default */
        {"{\"scenario\": 1, \"evaluator_rules\": \"yes\"}", "'evaluator_rules' must be true or false"},
        {"{\"scenario\": 1, \"node_time\": \"1h\"}", "'node_time' must be"},
        {"{\"scenario\": 1, \"backend\": \"gpu0\"}", "'backend' must be cpu, cuda or auto"},
        {"{\"scenario\": 1, \"matmul\": 16}", "'matmul' must be"},
        {"{\"scenario\": 1, \"profile\": 3}", "'profile' must be"},
    };
    char path[600], out[8192], dir[600];
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char name[64];
        snprintf(name, sizeof name, "cfg-bad-%zu.json", i);
        write_file(name, bad[i][0], path, sizeof path);
        snprintf(dir, sizeof dir, "%s/cfg-bad-run-%zu", pcg_test_tmpdir(), i);
        int rc = pcg_test_sh(out, sizeof out, "%s run --config %s " TINY_RUN " --out %s 2>&1", pcg_test_binary(), path, dir);
        assert_int_equal(rc, 2);
        assert_int_equal(pcg_test_count_lines(out), 1);
        if (!strstr(out, bad[i][1])) fail_msg("case %zu: '%s' lacks '%s'", i, out, bad[i][1]);
        assert_false(pcg_test_exists(dir));
    }
    /* --config starts a run; --resume continues one */
    int rc = pcg_test_sh(out, sizeof out, "%s run --config %s --resume --out %s 2>&1", pcg_test_binary(), path, dir);
    assert_int_equal(rc, 2);
    assert_non_null(strstr(out, "--config starts a run"));
}

PCG_TESTS(run_config_file, cmocka_unit_test(run_config_file_round_trip), cmocka_unit_test(run_config_file_partial),
          cmocka_unit_test(run_config_file_refused))
