/* Sandboxed validation: the hostile corpus is refused with the right
 * reasons and leaves no file or process behind, good rewards are accepted
 * with the statistics of in-process play, the child runner's watchdog, and
 * the check-reward command. */
#define _GNU_SOURCE
#include "harness.h"
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include "child.h"
#include "env.h"
#include "reward_jit.h"
#include "util.h"

static char *load(const char *path)
{
    char err[512];
    long len;
    char *s = read_file(path, REWARD_MAX_SOURCE, &len, err, sizeof err);
    if (!s) fail_msg("%s", err);
    return s;
}

/* The text after "expect: " on the first line, up to the comment end or ";". */
static void expectation(const char *src, char *out, size_t len)
{
    const char *e = strstr(src, "expect: ");
    out[0] = 0;
    if (!e) return;
    e += 8;
    size_t n = 0;
    while (e[n] && e[n] != '\n' && strncmp(e + n, " */", 3) && e[n] != ';' && n + 1 < len) n++;
    memcpy(out, e, n);
    out[n] = 0;
}

static int no_children_left(void)
{
    int st;
    return waitpid(-1, &st, WNOHANG) == -1 && errno == ECHILD;
}

static int dir_entries(const char *path)
{
    DIR *d = opendir(path);
    if (!d) return -1;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) n++;
    closedir(d);
    return n;
}

/* Every hostile or broken reward of rewards/test is refused with its
 * expected reason; the engine survives, no file appears (in the working
 * directory or where the rewards try to write), no process is left. */
static void sandbox_corpus_refused(void **state)
{
    (void)state;
    char nv[256];
    int gpu = reward_nvrtc_available(nv, sizeof nv);
    char root[1024], work[512];
    if (!getcwd(root, sizeof root)) fail_msg("getcwd");
    snprintf(work, sizeof work, "%s/corpus", pcg_test_tmpdir());
    assert_int_equal(make_dirs(work), 0);
    char dirpath[1100];
    snprintf(dirpath, sizeof dirpath, "%s/rewards/test", root);
    DIR *d = opendir(dirpath);
    assert_non_null(d);
    assert_int_equal(chdir(work), 0);
    struct dirent *de;
    int checked = 0;
    while ((de = readdir(d))) {
        if (strncmp(de->d_name, "bad_", 4)) continue;
        char path[1400];
        snprintf(path, sizeof path, "%s/%s", dirpath, de->d_name);
        char *src = load(path);
        char want[256];
        expectation(src, want, sizeof want);
        assert_true(want[0]);
        int needs_gpu = strstr(want, "GPU compiler") || strstr(want, "CPU compiler");
        if (needs_gpu && !gpu) {
            printf("  (skipped %s: %s)\n", de->d_name, nv);
            free(src);
            continue;
        }
        reward_stats st;
        char reason[1536] = "";
        int gc = 0;
        int rc = reward_validate_both(src, VARIANT_DUNGEON, 2, 7, 2.0, gpu, &st, &gc, reason, sizeof reason);
        free(src);
        if (rc != -1 || !strstr(reason, want))
            fail_msg("%s: rc %d, reason '%s', expected '%s'", de->d_name, rc, reason, want);
        assert_null(strchr(reason, '\n'));
        if (!no_children_left()) fail_msg("%s left a child process", de->d_name);
        checked++;
    }
    closedir(d);
    assert_int_equal(chdir(root), 0);
    assert_true(checked >= 20);
    assert_int_equal(dir_entries(work), 0);
    struct stat sb;
    assert_int_equal(stat("/tmp/pcgrllm-pwned", &sb), -1);
}

static void check_sane(const char *name, const reward_stats *s, long n)
{
    if (s->n != n) fail_msg("%s: n %ld, expected %ld", name, s->n, n);
    if (!isfinite(s->mean) || !isfinite(s->std) || !(s->min <= s->mean) || !(s->mean <= s->max) || s->std < 0 ||
        s->zero_share < 0 || s->zero_share > 1 || !(s->us_per_call > 0) || s->us_per_call > 1000)
        fail_msg("%s: bad statistics mean %g std %g min %g max %g zeros %g us %g", name, s->mean, s->std, s->min,
                 s->max, s->zero_share, s->us_per_call);
}

static void sandbox_good_rewards_accepted(void **state)
{
    (void)state;
    char reason[1536];
    /* the engine's four, and the reference's two ports (rewards/human's
     * scenario 3 and 4 are copies of the engine's) */
    for (int k = 0; k < 6; k++) {
        int sc = k < 4 ? k + 1 : k - 3;
        char path[64];
        snprintf(path, sizeof path, "rewards/%s/scenario%d.c", k < 4 ? "engine" : "human", sc);
        char *src = load(path);
        reward_stats st;
        int rc = reward_validate(src, sc >= 3 ? VARIANT_TREASURE : VARIANT_DUNGEON, 2, 11, 30, &st, reason,
                                 sizeof reason);
        free(src);
        if (rc) fail_msg("%s refused: %s", path, reason);
        check_sane(path, &st, 2 * 768);
        assert_true(st.std > 0.1);
        assert_true(st.zero_share < 0.9);
        assert_true(st.min < 0 && st.max > 0); /* potential-difference rewards go both ways */
    }
    static const char *good[] = {"rewards/test/good_features.c", "rewards/test/good_big_locals.c",
                                 "rewards/test/good_zero.c"};
    for (int i = 0; i < 3; i++) {
        char *src = load(good[i]);
        reward_stats st;
        int rc = reward_validate(src, VARIANT_DUNGEON, 2, 11, 30, &st, reason, sizeof reason);
        free(src);
        if (rc) fail_msg("%s refused: %s", good[i], reason);
        check_sane(good[i], &st, 2 * 768);
        if (i == 2) {
            assert_true(st.zero_share == 1.0);
            assert_true(st.std == 0.0 && st.mean == 0.0);
        } else {
            assert_true(st.std > 0);
        }
    }
    assert_true(no_children_left());
}

/* Statistics of known values, as text and as JSON that parses. */
static void sandbox_stats_formats(void **state)
{
    (void)state;
    reward_acc a;
    reward_acc_init(&a);
    double v[] = {0, 1, 2, 0};
    for (int i = 0; i < 4; i++) reward_acc_add(&a, v[i]);
    a.seconds = 0.002;
    reward_stats s;
    reward_acc_finish(&a, &s);
    assert_int_equal(s.n, 4);
    assert_float_equal(s.mean, 0.75, 1e-12);
    assert_float_equal(s.std, sqrt(0.6875), 1e-12);
    assert_float_equal(s.min, 0, 0);
    assert_float_equal(s.max, 2, 0);
    assert_float_equal(s.zero_share, 0.5, 0);
    assert_float_equal(s.us_per_call, 500, 1e-9);
    char buf[512];
    assert_true(reward_stats_text(&s, buf, sizeof buf) > 0);
    assert_string_equal(buf, "over 4 steps of random play: mean 0.75, std 0.829156, min 0, max 2, zero rewards 50.0%, "
                             "500.00 us per call");
    assert_true(reward_stats_json(&s, buf, sizeof buf) > 0);
    json_error_t je;
    json_t *j = json_loads(buf, 0, &je);
    if (!j) fail_msg("bad JSON '%s': %s", buf, je.text);
    assert_int_equal(json_integer_value(json_object_get(j, "n")), 4);
    assert_float_equal(json_number_value(json_object_get(j, "mean")), 0.75, 1e-9);
    assert_float_equal(json_number_value(json_object_get(j, "zero_share")), 0.5, 1e-9);
    assert_float_equal(json_number_value(json_object_get(j, "us_per_call")), 500, 1e-3);
    assert_non_null(json_object_get(j, "std"));
    assert_non_null(json_object_get(j, "min"));
    assert_non_null(json_object_get(j, "max"));
    json_decref(j);
    /* no values: zeros, not NaN */
    reward_acc_init(&a);
    reward_acc_finish(&a, &s);
    assert_true(s.n == 0 && s.mean == 0 && s.std == 0 && s.min == 0 && s.max == 0);
}

/* The examples of docs/reward-api.md and of the rich prompts' API texts
 * (the full one, a copy of that document, and the minimal one) are
 * accepted as they stand. */
static void sandbox_doc_example_accepted(void **state)
{
    (void)state;
    const char *files[] = {"docs/reward-api.md", "prompts/rich/reward_api_full.txt", "prompts/rich/reward_api_minimal.txt"};
    for (int i = 0; i < 3; i++) {
        char *doc = load(files[i]);
        char *ex = strstr(doc, "## Example");
        assert_non_null(ex);
        char *b = strstr(ex, "```c\n");
        assert_non_null(b);
        b += 5;
        char *e = strstr(b, "```");
        assert_non_null(e);
        *e = 0;
        char reason[1536];
        reward_stats st;
        int rc = reward_validate(b, VARIANT_DUNGEON, 2, 3, 30, &st, reason, sizeof reason);
        if (rc) fail_msg("%s example refused: %s", files[i], reason);
        check_sane(files[i], &st, 2 * 768);
        free(doc);
    }
}

/* The sandbox's replay scores exactly the transitions that env_step shows a
 * reward in process, with env_random_actions. */
static void sandbox_stats_match_env(void **state)
{
    (void)state;
    char *src = load("rewards/human/scenario2.c");
    char reason[1536];
    int n = 3;
    uint64_t seed = 21;
    reward_stats sb;
    assert_int_equal(reward_validate(src, VARIANT_DUNGEON, n, seed, 30, &sb, reason, sizeof reason), 0);
    reward_prog *p = reward_compile_cpu(src, reason, sizeof reason);
    free(src);
    assert_non_null(p);
    env_t e;
    assert_int_equal(env_alloc(&e, n, 16, 16, VARIANT_DUNGEON, seed), 0);
    env_set_reward(&e, reward_prog_call, p);
    int acts[3];
    reward_acc acc;
    reward_acc_init(&acc);
    for (int t = 0; t < e.cfg.episode_len; t++) {
        env_random_actions(&e, seed, (uint64_t)t, acts);
        env_step(&e, acts);
        for (int i = 0; i < n; i++) reward_acc_add(&acc, e.rewards[i]);
    }
    reward_stats in;
    reward_acc_finish(&acc, &in);
    assert_int_equal(in.n, sb.n);
    assert_true(in.min == sb.min && in.max == sb.max && in.zero_share == sb.zero_share);
    assert_true(fabs(in.mean - sb.mean) <= 1e-9 * (1 + fabs(in.mean)));
    assert_true(fabs(in.std - sb.std) <= 1e-9 * (1 + fabs(in.std)));
    /* same seed, same statistics; another seed, others */
    reward_stats again, other;
    src = load("rewards/human/scenario2.c");
    assert_int_equal(reward_validate(src, VARIANT_DUNGEON, n, seed, 30, &again, reason, sizeof reason), 0);
    assert_int_equal(reward_validate(src, VARIANT_DUNGEON, n, seed + 1, 30, &other, reason, sizeof reason), 0);
    free(src);
    assert_true(again.mean == sb.mean && again.std == sb.std && again.zero_share == sb.zero_share);
    assert_true(other.mean != sb.mean);
    env_free(&e);
    reward_prog_free(p);
}

/* The warning of a reward no agent can learn from: all zeros, or the same
 * value everywhere; none for a reward that varies. */
static void sandbox_stats_warning(void **state)
{
    (void)state;
    char w[512];
    reward_stats zero = {0.0, 0.0, 0.0, 0.0, 1.0, 0.4, 1536}, constant = {0.5, 0.0, 0.5, 0.5, 0.0, 0.4, 1536};
    reward_stats varied = {0.01, 0.2, -1, 1, 0.99, 0.4, 1536}, none = {0};
    assert_true(reward_stats_warning(&zero, w, sizeof w) > 0);
    assert_string_equal(w, "compute_reward returned 0 on every one of 1536 steps of random play: an agent cannot "
                           "learn from a reward that is always zero; reward progress toward the goal");
    assert_true(reward_stats_warning(&constant, w, sizeof w) > 0);
    assert_string_equal(w, "compute_reward returned the same value (0.5) on every one of 1536 steps of random play "
                           "(std 0): an agent cannot learn from a constant reward; make it depend on how the level "
                           "changes");
    assert_int_equal(reward_stats_warning(&varied, w, sizeof w), 0);
    assert_string_equal(w, "");
    assert_int_equal(reward_stats_warning(&none, w, sizeof w), 0);
}

typedef struct {
    char text[8192];
    int lines;
} line_log;

static void log_line(void *ctx, const char *line)
{
    line_log *l = ctx;
    size_t n = strlen(l->text);
    snprintf(l->text + n, sizeof l->text - n, "%s\n", line);
    l->lines++;
}

/* A check that runs a while says where it is, on the sink it was given:
 * a first call that does not return, then one that is slow but fine. */
static void sandbox_progress_lines(void **state)
{
    (void)state;
    line_log log = {"", 0};
    char reason[512];
    reward_stats st;
    reward_check_progress(log_line, &log, 0.1);
    const char *loop = "float compute_reward(const level_t *p, const level_t *c)\n"
                       "{ volatile int spin = 1; while (spin) { } return 0; }\n";
    assert_int_equal(reward_validate(loop, VARIANT_DUNGEON, 1, 1, 1.0, &st, reason, sizeof reason), -1);
    if (!strstr(log.text, "reward check: 0.") || !strstr(log.text, " s, still running the first call\n"))
        fail_msg("lines: %s", log.text);
    /* A spin, not searches, so the check takes a while however fast the
     * level helpers become: about 0.25 ms a call, 1216 calls */
    const char *slow = "float compute_reward(const level_t *p, const level_t *c)\n"
                       "{ volatile int s = 0; for (int k = 0; k < 150000; k++) s += k;\n"
                       "  return (float)(s & 1); }\n";
    log.text[0] = 0;
    log.lines = 0;
    reward_check_progress(log_line, &log, 0.02);
    int rc = reward_validate(slow, VARIANT_DUNGEON, 1, 1, 30, &st, reason, sizeof reason);
    reward_check_progress(NULL, NULL, 5.0);
    if (rc) fail_msg("refused: %s", reason);
    if (log.lines < 1 || !strstr(log.text, " of 1216 calls done\n")) fail_msg("lines: %s", log.text);
}

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A call that does not return is stopped at the call deadline (half the
 * timeout when that is under 2 s), the first call and a later one alike. */
static void sandbox_timeout_kills(void **state)
{
    (void)state;
    const char *src = "float compute_reward(const level_t *p, const level_t *c)\n"
                      "{ volatile int spin = 1; while (spin) { } return 0; }\n";
    char reason[512];
    reward_stats st;
    double t0 = mono();
    assert_int_equal(reward_validate(src, VARIANT_DUNGEON, 1, 1, 1.0, &st, reason, sizeof reason), -1);
    double el = mono() - t0;
    if (!strstr(reason, "the first call of compute_reward did not return within 0.5 s (an infinite loop?)"))
        fail_msg("got '%s'", reason);
    assert_true(el < 3.0);
    assert_true(no_children_left());
    /* the first 16 steps edit row 0; the loop starts at the first edit below it */
    const char *later = "float compute_reward(const level_t *p, const level_t *c)\n"
                        "{ volatile int spin = 0;\n"
                        "  for (int r = 1; r < 16; r++) for (int k = 0; k < 16; k++)\n"
                        "    if (tile_at(p, r, k) != tile_at(c, r, k)) spin = 1;\n"
                        "  while (spin) { } return 0; }\n";
    t0 = mono();
    assert_int_equal(reward_validate(later, VARIANT_DUNGEON, 1, 1, 1.0, &st, reason, sizeof reason), -1);
    el = mono() - t0;
    if (!strstr(reason, "a later call of compute_reward did not return within 0.5 s")) fail_msg("got '%s'", reason);
    assert_true(el < 3.0);
    assert_true(no_children_left());
}

/* The seccomp filter is really there: files, processes, stray writes,
 * programs, sockets and new executable memory are all stopped with SIGSYS. */
static void sandbox_seccomp_blocks(void **state)
{
    (void)state;
    int probes[] = {REWARD_PROBE_OPEN,   REWARD_PROBE_FORK,   REWARD_PROBE_WRITE,
                    REWARD_PROBE_EXEC,   REWARD_PROBE_SOCKET, REWARD_PROBE_EXEC_MEMORY};
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        char reason[512];
        if (reward_sandbox_probe(probes[i], reason, sizeof reason)) fail_msg("probe %d: %s", probes[i], reason);
        assert_string_equal(reason, "made a forbidden system call; reward code may only compute");
    }
    assert_true(no_children_left());
}

/* ---- the child runner ---- */

static int ch_ok(void *arg)
{
    const char *msg = arg;
    child_heartbeat();
    child_send("first", 5);
    child_send(msg, strlen(msg) + 1);
    return 0;
}
static int ch_segv(void *arg)
{
    (void)arg;
    raise(SIGSEGV);
    return 0;
}
static int ch_abort(void *arg)
{
    (void)arg;
    abort();
}
static int ch_exit7(void *arg)
{
    (void)arg;
    return 7;
}
static int ch_fail(void *arg)
{
    (void)arg;
    child_fail("the model's reward said no");
    return 1;
}
static int ch_hang(void *arg)
{
    (void)arg;
    for (;;) pause();
    return 0;
}
static int ch_beats(void *arg)
{
    int n = *(int *)arg;
    for (int i = 0; i < n; i++) {
        child_heartbeat();
        struct timespec ts = {0, 50 * 1000000};
        nanosleep(&ts, NULL);
    }
    if (n < 10) ch_hang(NULL); /* stops beating */
    return 0;
}
static int ch_grandchild(void *arg)
{
    (void)arg;
    pid_t g = fork();
    if (g == 0) {
        for (;;) pause();
    }
    child_send(&g, sizeof g);
    return 0;
}

static void sandbox_child_runner(void **state)
{
    (void)state;
    char reason[512];
    void *blob = NULL;
    size_t len = 0;
    child_opts o = {.timeout_s = 10};
    assert_int_equal(child_run_ex(ch_ok, "hello", &o, &blob, &len, reason, sizeof reason), 0);
    assert_int_equal(len, 6);
    assert_string_equal(blob, "hello"); /* the last blob wins */
    free(blob);

    assert_int_equal(child_run(ch_segv, NULL, 10, reason, sizeof reason), -1);
    assert_string_equal(reason, "crashed with SIGSEGV (invalid memory access)");
    assert_int_equal(child_run(ch_abort, NULL, 10, reason, sizeof reason), -1);
    assert_string_equal(reason, "crashed with SIGABRT (aborted)");
    assert_int_equal(child_run(ch_exit7, NULL, 10, reason, sizeof reason), -1);
    assert_string_equal(reason, "exited with status 7");
    assert_int_equal(child_run(ch_fail, NULL, 10, reason, sizeof reason), -1);
    assert_string_equal(reason, "the model's reward said no");

    double t0 = mono();
    assert_int_equal(child_run(ch_hang, NULL, 0.3, reason, sizeof reason), -1);
    assert_true(mono() - t0 < 2.0);
    assert_string_equal(reason, "timed out after 0.3 s (killed; an infinite loop?)");

    /* watchdog: beating every 50 ms passes a 0.3 s idle limit; silence does not */
    child_opts w = {.timeout_s = 20, .idle_timeout_s = 0.3};
    int beats = 10;
    assert_int_equal(child_run_ex(ch_beats, &beats, &w, NULL, NULL, reason, sizeof reason), 0);
    beats = 3;
    assert_int_equal(child_run_ex(ch_beats, &beats, &w, NULL, NULL, reason, sizeof reason), -1);
    assert_string_equal(reason, "stopped responding for 0.3 s (hung; killed)");

    /* a process the child leaves behind is killed with it */
    assert_int_equal(child_run_ex(ch_grandchild, NULL, &o, &blob, &len, reason, sizeof reason), 0);
    assert_int_equal(len, sizeof(pid_t));
    pid_t g = *(pid_t *)blob;
    free(blob);
    int gone = 0;
    for (int i = 0; i < 200 && !gone; i++) {
        char p[64], st[512] = "";
        snprintf(p, sizeof p, "/proc/%d/stat", (int)g);
        FILE *f = fopen(p, "r");
        if (!f) gone = 1;
        else {
            if (fgets(st, sizeof st, f)) {
                const char *rp = strrchr(st, ')');
                if (rp && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X')) gone = 1;
            }
            fclose(f);
        }
        if (!gone) {
            struct timespec ts = {0, 10 * 1000000};
            nanosleep(&ts, NULL);
        }
    }
    assert_true(gone);
    assert_true(no_children_left());
}

/* ---- check-reward ---- */

static void sandbox_check_reward_cli(void **state)
{
    (void)state;
    const char *bin = pcg_test_binary();
    char out[8192];
    int rc = pcg_test_sh(out, sizeof out, "%s check-reward --scenario 3 --envs 2 rewards/human/scenario3.c", bin);
    if (rc != 0 || !strstr(out, "accepted: rewards/human/scenario3.c (treasure variant") ||
        !strstr(out, "statistics: over 1536 steps of random play: mean "))
        fail_msg("rc %d: %s", rc, out);
    rc = pcg_test_sh(out, sizeof out, "%s check-reward --json --envs 2 --seed 5 rewards/human/scenario1.c", bin);
    if (rc != 0 || strncmp(out, "{\"accepted\": true", 17) || !strstr(out, "\"zero_share\": ") ||
        !strstr(out, "\"n\": 1536"))
        fail_msg("rc %d: %s", rc, out);
    /* an accepted reward no agent can learn from: a warning on stderr and in the JSON */
    rc = pcg_test_sh(out, sizeof out, "%s check-reward --envs 2 rewards/test/good_zero.c 2>&1 >/dev/null", bin);
    if (rc != 0 || strcmp(out, "warning: compute_reward returned 0 on every one of 1536 steps of random play: an agent "
                               "cannot learn from a reward that is always zero; reward progress toward the goal\n"))
        fail_msg("rc %d: %s", rc, out);
    rc = pcg_test_sh(out, sizeof out, "%s check-reward --json --envs 2 rewards/test/good_zero.c 2>/dev/null", bin);
    if (rc != 0 || !strstr(out, "\"warning\": \"compute_reward returned 0 on every one of 1536 steps"))
        fail_msg("rc %d: %s", rc, out);
    rc = pcg_test_sh(out, sizeof out, "%s check-reward --envs 2 rewards/human/scenario1.c 2>&1 >/dev/null", bin);
    if (rc != 0 || out[0]) fail_msg("rc %d: %s", rc, out);
    rc = pcg_test_sh(out, sizeof out, "%s check-reward --envs 2 rewards/test/bad_nan.c 2>&1 >/dev/null", bin);
    if (rc != 1 || strncmp(out, "error: returned NaN", 19)) fail_msg("rc %d: %s", rc, out);
    rc = pcg_test_sh(out, sizeof out, "%s check-reward --json --envs 2 rewards/test/bad_include.c 2>/dev/null", bin);
    if (rc != 1 || strncmp(out, "{\"accepted\": false", 18) || !strstr(out, "#include is not allowed"))
        fail_msg("rc %d: %s", rc, out);
    /* --backend cuda: all four architectures, and a run on the device or
     * the reason why not */
    char nv[256];
    if (reward_nvrtc_available(nv, sizeof nv)) {
        rc = pcg_test_sh(out, sizeof out, "%s check-reward --backend cuda --envs 2 rewards/human/scenario2.c", bin);
        if (rc != 0 || !strstr(out, "gpu: compiled with NVRTC") || !strstr(out, "sm_75 (") || !strstr(out, "sm_90 (") ||
            !(strstr(out, "gpu: ran on ") || strstr(out, "gpu: NVRTC compile only, not run: ")))
            fail_msg("rc %d: %s", rc, out);
    }
    /* usage errors: exit 2 with one line */
    static const char *usage[] = {"",
                                  "--envs 0 rewards/human/scenario1.c",
                                  "--backend tpu rewards/human/scenario1.c",
                                  "--scenario 5 rewards/human/scenario1.c",
                                  "--scenario 1 --variant dungeon rewards/human/scenario1.c",
                                  "--timeout -1 rewards/human/scenario1.c",
                                  "/nonexistent/reward.c",
                                  "rewards",
                                  "rewards/human/scenario1.c rewards/human/scenario2.c"};
    for (size_t i = 0; i < sizeof usage / sizeof usage[0]; i++) {
        rc = pcg_test_sh(out, sizeof out, "%s check-reward %s", bin, usage[i]);
        if (rc != 2 || !strstr(out, "check-reward") || strchr(out, '\n') != out + strlen(out) - 1)
            fail_msg("'%s': rc %d: %s", usage[i], rc, out);
    }
    char nul[600];
    snprintf(nul, sizeof nul, "%s/nul.c", pcg_test_tmpdir());
    FILE *f = fopen(nul, "wb");
    assert_non_null(f);
    fwrite("float x;\0junk", 1, 13, f);
    fclose(f);
    rc = pcg_test_sh(out, sizeof out, "%s check-reward %s", bin, nul);
    if (rc != 2 || !strstr(out, "NUL byte")) fail_msg("rc %d: %s", rc, out);
}

/* The command refuses the whole corpus the same way, exit 1 and
 * "error: <reason>", from a scratch working directory that stays empty. */
static void sandbox_check_reward_corpus(void **state)
{
    (void)state;
    char root[1024], work[600], bin[1200];
    if (!getcwd(root, sizeof root)) fail_msg("getcwd");
    const char *b = pcg_test_binary();
    if (b[0] == '/') snprintf(bin, sizeof bin, "%s", b);
    else snprintf(bin, sizeof bin, "%s/%s", root, b);
    snprintf(work, sizeof work, "%s/cli-corpus", pcg_test_tmpdir());
    assert_int_equal(make_dirs(work), 0);
    char nv[256];
    int gpu = reward_nvrtc_available(nv, sizeof nv);
    char dirpath[1100];
    snprintf(dirpath, sizeof dirpath, "%s/rewards/test", root);
    DIR *d = opendir(dirpath);
    assert_non_null(d);
    struct dirent *de;
    int n = 0;
    while ((de = readdir(d))) {
        if (strncmp(de->d_name, "bad_", 4)) continue;
        char path[1400], want[256], out[4096];
        snprintf(path, sizeof path, "%s/%s", dirpath, de->d_name);
        char *src = load(path);
        expectation(src, want, sizeof want);
        free(src);
        if (!gpu && (strstr(want, "GPU compiler") || strstr(want, "CPU compiler"))) continue;
        int rc = pcg_test_sh(out, sizeof out, "cd '%s' && '%s' check-reward --envs 1 --timeout 2 '%s' 2>&1 >/dev/null",
                             work, bin, path);
        if (rc != 1 || strncmp(out, "error: ", 7) || !strstr(out, want) || strchr(out, '\n') != out + strlen(out) - 1)
            fail_msg("%s: rc %d, output '%s', expected 'error: ...%s...'", de->d_name, rc, out, want);
        n++;
    }
    closedir(d);
    assert_true(n >= 20);
    assert_int_equal(dir_entries(work), 0);
}

PCG_TESTS(sandbox, cmocka_unit_test(sandbox_corpus_refused), cmocka_unit_test(sandbox_good_rewards_accepted), cmocka_unit_test(sandbox_doc_example_accepted),
          cmocka_unit_test(sandbox_stats_formats), cmocka_unit_test(sandbox_stats_warning),
          cmocka_unit_test(sandbox_progress_lines),
          cmocka_unit_test(sandbox_stats_match_env), cmocka_unit_test(sandbox_timeout_kills), cmocka_unit_test(sandbox_seccomp_blocks),
          cmocka_unit_test(sandbox_child_runner), cmocka_unit_test(sandbox_check_reward_cli),
          cmocka_unit_test(sandbox_check_reward_corpus))
