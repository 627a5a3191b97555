/* pcgrllm edit's run directory as something hostile or broken may leave
 * it: a run killed between steps resumes (state.json after every step), a
 * new run does not overwrite it, and damaged totals, a NUL byte, a step
 * line cut short and links inside the directory each get one line, never
 * a wrong budget or a record glued to garbage. */
#include "harness.h"
#include "util.h"
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define TARGET "--target '{\"kind\":\"pathlength\",\"player_key\":30,\"key_door\":30,\"enemy_count\":3,\"tolerance\":0}'"

/* The server answers two steps at once and holds the third; the run is
 * killed while it waits. */
static void edit_killed_run_resumes(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    char script[PATH_MAX], dir[PATH_MAX], log[PATH_MAX], cmd[4096], out[8192];
    snprintf(script, sizeof script, "%s/edit-killed.script.json", pcg_test_tmpdir());
    const char *text = "{\"responses\": [{\"content\": \"[]\"}, {\"content\": \"[]\"}, {\"content\": \"[]\", \"sleep\": 60}],"
                       " \"default\": {\"content\": \"[]\"}}";
    assert_int_equal(write_file_atomic(script, text, strlen(text)), 0);
    pcg_fake_srv s;
    pcg_test_srv_start(&s, script, "edit-killed", "PCG_EDIT_TEST_NO_KEY");
    snprintf(dir, sizeof dir, "%s/edit-killed", pcg_test_tmpdir());
    snprintf(log, sizeof log, "%s/edit-killed.out", pcg_test_tmpdir());
    const char *llm = "--llm openai --model fake --api-key-env '' --llm-retries 0";
    snprintf(cmd, sizeof cmd, "%s edit --seed 1 " TARGET " %s --base-url %s --steps 6 --out %s", pcg_test_binary(), llm,
             s.url, dir);
    int pid = pcg_test_spawn(cmd, log);
    int third = 0;
    for (int i = 0; i < 30000 && !third; i++) { /* the third request has come: two steps are done */
        char *reqs = pcg_test_slurp(s.log);
        third = reqs && pcg_test_count_lines(reqs) - pcg_test_count_of(reqs, "\"note\"") >= 3;
        free(reqs);
        if (!third) usleep(2000);
    }
    assert_true(third);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    json_t *st = pcg_test_json_in(dir, "state.json");
    assert_non_null(st);
    assert_int_equal(json_integer_value(json_object_get(st, "steps")), 2);
    assert_string_equal(json_string_value(json_object_get(st, "stop")), "running");
    json_decref(st);
    /* a new run into it is refused: its saved level stays */
    int rc = pcg_test_sh(out, sizeof out, "%s edit --seed 1 " TARGET " --llm offline --out %s 2>&1", pcg_test_binary(), dir);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, "--resume continues it"));
    rc = pcg_test_sh(out, sizeof out, "%s edit " TARGET " %s --base-url %s --steps 3 --resume --out %s 2>&1",
                     pcg_test_binary(), llm, s.url, dir);
    pcg_test_srv_stop(&s);
    assert_int_equal(rc, 1); /* no perfect match, the steps done */
    assert_null(strstr(out, "step 1:"));
    assert_non_null(strstr(out, "step 3:"));
    char *steps = pcg_test_file_in(dir, "steps.jsonl");
    assert_int_equal(pcg_test_count_lines(steps), 3);
    free(steps);
}

/* A finished two-step offline run copied to name, then changed by sh. */
static void damaged_copy(const char *base, const char *name, const char *damage, char *dir)
{
    char out[4096];
    snprintf(dir, PATH_MAX, "%s/%s", pcg_test_tmpdir(), name);
    if (pcg_test_sh(out, sizeof out, "rm -rf '%s' && cp -r '%s' '%s' && cd '%s' && %s", dir, base, dir, dir, damage))
        fail_msg("%s: %s", name, out);
}

static int resume(const char *dir, char *out, size_t len)
{
    return pcg_test_sh(out, len, "%s edit " TARGET " --llm offline --steps 3 --no-early-stop --no-feedback --resume --out %s 2>&1",
                       pcg_test_binary(), dir);
}

static void edit_resume_refuses_damage(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    char base[PATH_MAX], dir[PATH_MAX], out[8192];
    snprintf(base, sizeof base, "%s/edit-damage-base", pcg_test_tmpdir());
    int rc = pcg_test_sh(out, sizeof out, "rm -rf '%s' && %s edit --seed 1 " TARGET " --llm offline --steps 2 --no-feedback --out %s",
                         base, pcg_test_binary(), base);
    assert_int_equal(rc, 1);
    static const char *const bad[][3] = {
        {"huge", "sed -i 's/\"calls\": 2/\"calls\": 4611686018427387904/' state.json", "'calls' must be an integer"},
        {"type", "sed -i 's/\"tokens\": 0/\"tokens\": \"none\"/' state.json", "'tokens' must be an integer"},
        {"negative", "sed -i 's/\"accepted\": [0-9]*/\"accepted\": -4/' state.json", "'accepted' must be an integer"},
        {"nul", "printf 'x\\000y\\n' >> steps.jsonl", "holds a NUL byte"},
        {"order", "sed -i '1s/\"step\": *1/\"step\": 2/' steps.jsonl", "line 1: step out of order where step 1 was due"},
        {"link", "rm level.txt && ln -s /etc/passwd level.txt", "links there are not followed"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char name[64];
        snprintf(name, sizeof name, "edit-damage-%s", bad[i][0]);
        damaged_copy(base, name, bad[i][1], dir);
        rc = resume(dir, out, sizeof out);
        assert_int_equal(rc, 1);
        assert_int_equal(pcg_test_count_lines(out), 1);
        if (!strstr(out, bad[i][2])) fail_msg("%s: '%s' lacks '%s'", bad[i][0], out, bad[i][2]);
    }
    /* a step line cut short (a run killed while writing it): that step is
     * asked again, and its line starts a line of its own */
    damaged_copy(base, "edit-damage-cut", "truncate -s -20 steps.jsonl", dir);
    rc = resume(dir, out, sizeof out);
    if (rc != 0 && rc != 1) fail_msg("cut: exit %d: %s", rc, out); /* a match or not, no error */
    assert_non_null(strstr(out, "step 2:"));
    char *steps = pcg_test_file_in(dir, "steps.jsonl");
    assert_non_null(strstr(steps, "\n{\"step\":2,"));
    free(steps);
}

/* A directory that cannot hold files (/proc/self exists, but nothing can
 * be created in it): one line naming the file once. */
static void edit_unwritable_dir_one_line(void **state)
{
    (void)state;
    char out[4096];
    int rc = pcg_test_sh(out, sizeof out, "%s edit --seed 1 " TARGET " --llm offline --steps 1 --out /proc/self 2>&1",
                         pcg_test_binary());
    assert_int_equal(rc, 1);
    assert_int_equal(pcg_test_count_lines(out), 1);
    assert_int_equal(pcg_test_count_of(out, "start.txt"), 1);
}

PCG_TESTS(edit_untrusted, cmocka_unit_test(edit_killed_run_resumes), cmocka_unit_test(edit_resume_refuses_damage),
          cmocka_unit_test(edit_unwritable_dir_one_line))
