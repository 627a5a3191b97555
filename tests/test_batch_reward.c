/* A reward file scored in the confined batch-reward worker
 * (reward_jit/batch_reward.h) behind the library's environment
 * (pcg_vec_set_reward_file): the same rewards as the engine's own build of
 * the reward, and one line, never a crash or a hang, when the reward
 * misbehaves.  The worker is this test binary (it dispatches the roles). */
#include "harness.h"
#include "pcg_api.h"
#include "reward_jit.h"
#include "util.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SELF "/proc/self/exe"

static char *read_reward(const char *path)
{
    char err[512];
    long len;
    char *src = read_file(path, REWARD_MAX_SOURCE, &len, err, sizeof err);
    assert_non_null(src);
    return src;
}

static pcg_vec *new_vec(int n, int size)
{
    char err[512];
    pcg_vec *v = pcg_vec_new(n, size, "dungeon", 6, err, sizeof err);
    assert_non_null(v);
    return v;
}

/* n environments for steps steps, scored in process and in the worker. */
static void compare_with_human(int n, int steps)
{
    char err[1024];
    char *src = read_reward("rewards/human/scenario1.c");
    pcg_vec *a = new_vec(n, 16), *b = new_vec(n, 16);
    assert_int_equal(pcg_vec_set_human_reward(a, 1, err, sizeof err), 0);
    assert_int_equal(pcg_vec_set_reward_file(b, SELF, src, 10, err, sizeof err), 0);
    free(src);
    int32_t *act = malloc(sizeof(int32_t) * (size_t)n), shape[8];
    pcg_vec_shape(a, shape);
    size_t obs = (size_t)n * shape[3] * shape[4];
    int nonzero = 0;
    for (int t = 0; t < steps; t++) {
        pcg_vec_random_actions(a, 2, (uint64_t)t, act);
        assert_int_equal(pcg_vec_step(a, act, err, sizeof err), 0);
        assert_int_equal(pcg_vec_step(b, act, err, sizeof err), 0);
        assert_memory_equal(pcg_vec_rewards(a), pcg_vec_rewards(b), sizeof(float) * n);
        assert_memory_equal(pcg_vec_obs(a), pcg_vec_obs(b), obs);
        assert_memory_equal(pcg_vec_dones(a), pcg_vec_dones(b), (size_t)n);
        for (int i = 0; i < n; i++) nonzero += pcg_vec_rewards(a)[i] != 0.0f;
    }
    double la[3], lb[3];
    pcg_vec_log(a, la, 0);
    pcg_vec_log(b, lb, 0);
    assert_memory_equal(la, lb, sizeof la);
    assert_true(nonzero > 0);
    if (steps > 768) assert_true(la[0] == n); /* past the first episodes' end */
    free(act);
    pcg_vec_free(a);
    pcg_vec_free(b);
}

static void batch_reward_matches_human_reward(void **state)
{
    (void)state;
    compare_with_human(9, 800); /* one chunk, through an episode's end */
    compare_with_human(1030, 60); /* four uneven chunks */
}

/* A step that fails, with err; the batch has still taken the step. */
static void step_fails(pcg_vec *v, int n, const char *want)
{
    char err[1024];
    int32_t act[8] = {0};
    int before = pcg_vec_steps(v)[0];
    assert_int_equal(pcg_vec_step(v, act, err, sizeof err), -1);
    assert_string_equal(err, want);
    assert_int_equal(pcg_vec_steps(v)[0], before + 1);
    for (int i = 0; i < n; i++) assert_true(pcg_vec_rewards(v)[i] == 0.0f || !isfinite(pcg_vec_rewards(v)[i]));
}

static void batch_reward_crash_is_one_line(void **state)
{
    (void)state;
    char err[1024];
    char *src = read_reward("rewards/test/bad_null.c");
    pcg_vec *v = new_vec(8, 16);
    assert_int_equal(pcg_vec_set_reward_file(v, SELF, src, 10, err, sizeof err), 0);
    free(src);
    step_fails(v, 8, "reward worker: crashed with SIGSEGV (invalid memory access)");
    step_fails(v, 8, "reward worker: crashed with SIGSEGV (invalid memory access)");
    assert_true(pcg_vec_bench(v, 0.01) < 0);
    pcg_vec_free(v);
}

static void batch_reward_watchdog_stops_a_loop(void **state)
{
    (void)state;
    char err[1024];
    char *src = read_reward("rewards/test/bad_infinite_loop.c");
    pcg_vec *v = new_vec(4, 16);
    assert_int_equal(pcg_vec_set_reward_file(v, SELF, src, 0.5, err, sizeof err), 0);
    free(src);
    double t0 = now_seconds();
    step_fails(v, 4, "reward worker: the reward did not return within 0.5 s (an endless loop?); killed");
    assert_true(now_seconds() - t0 < 5);
    pcg_vec_free(v);
}

static void batch_reward_nonfinite_is_one_line(void **state)
{
    (void)state;
    char err[1024];
    char *src = read_reward("rewards/test/bad_nan.c");
    pcg_vec *v = new_vec(4, 16);
    assert_int_equal(pcg_vec_set_reward_file(v, SELF, src, 10, err, sizeof err), 0);
    free(src);
    step_fails(v, 4, "the reward returned NaN for environment 0, which is not finite");
    pcg_vec_free(v);
}

/* A reward that behaves on validation's levels and then makes a system
 * call (getuid) meets the worker's seccomp filter. */
static void batch_reward_filter_stops_a_syscall(void **state)
{
    (void)state;
    char err[1024];
    char *src = read_reward("tests/hostile/syscall_in_training.c");
    pcg_vec *v = new_vec(4, 16);
    assert_int_equal(pcg_vec_set_reward_file(v, SELF, src, 10, err, sizeof err), 0);
    free(src);
    step_fails(v, 4, "reward worker: crashed with SIGSYS (forbidden system call)");
    pcg_vec_free(v);
}

/* Unchecked code straight to the worker: it compiles there or nowhere. */
static void batch_reward_worker_refuses_what_it_cannot_compile(void **state)
{
    (void)state;
    char err[1024], path[600], src[900];
    snprintf(path, sizeof path, "%s/batch-reward-touched", pcg_test_tmpdir());
    unlink(path);
    snprintf(src, sizeof src,
             "float compute_reward(const level_t *prev, const level_t *curr) { fopen(\"%s\", \"w\"); return 0; }",
             path);
    pcg_vec *v = new_vec(4, 16);
    assert_int_equal(pcg_vec_set_reward_file(v, SELF, src, 10, err, sizeof err), -1);
    assert_string_equal(err, "reward worker: could not compile the reward");
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(pcg_vec_set_reward_file(v, "/nonexistent/pcgrllm", "float compute_reward(const level_t *p, "
                                             "const level_t *c) { return 0; }", 10, err, sizeof err), -1);
    assert_string_equal(err, "reward worker: cannot run /nonexistent/pcgrllm: No such file or directory");
    int32_t act[4] = {0};
    assert_int_equal(pcg_vec_step(v, act, err, sizeof err), 0); /* still the environment it was */
    pcg_vec_free(v);
}

PCG_TESTS(batch_reward, cmocka_unit_test(batch_reward_matches_human_reward),
          cmocka_unit_test(batch_reward_crash_is_one_line), cmocka_unit_test(batch_reward_watchdog_stops_a_loop),
          cmocka_unit_test(batch_reward_nonfinite_is_one_line), cmocka_unit_test(batch_reward_filter_stops_a_syscall),
          cmocka_unit_test(batch_reward_worker_refuses_what_it_cannot_compile))
