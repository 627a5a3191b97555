/* Results a researcher can trust: a model server that is down or dies
 * mid-run is an error, never a result (the run exits 4 with a line naming
 * the server and stays resumable, the grid leaves the cell unfinished and
 * a later start finishes it); a grid made with --quick resumes, here and
 * through its batch script; CPU training gives the same bits for the same
 * seed at any thread count, and train.json says which threads it used. */
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

#define KEY_ENV "PCG_RESULTS_TEST_KEY"
#define BUDGET "--preset small --steps 512 --envs 2 --threads 1 --align 1 --check-envs 4 --levels 4 --quiet"
#define FAST_LLM "--llm-retries 1 --llm-backoff 0.01 --llm-timeout 20"

static void one_line(const char *what, const char *out, const char *a, const char *b)
{
    if (pcg_test_count_lines(out) != 1 || !strstr(out, a) || (b && !strstr(out, b)))
        fail_msg("%s: expected one line with '%s'%s%s, got '%s'", what, a, b ? " and " : "", b ? b : "", out);
}

static void start_server(pcg_fake_srv *s, const char *name, int port)
{
    pcg_test_use_source_prompts();
    setenv(KEY_ENV, "sk-results-test", 1);
    pcg_test_srv_start_on(s, "tests/fake_openai_run.json", name, KEY_ENV, port);
}

/* A port nothing listens on, where a server can come back later. */
static int closed_port(const char *name)
{
    pcg_fake_srv s;
    start_server(&s, name, 0);
    int port = s.port;
    pcg_test_srv_stop(&s);
    return port;
}

/* Wait for path while the command in the background runs; fail if it ends first. */
static void wait_or_fail(const char *path, int pid, const char *log)
{
    int status;
    if (pcg_test_wait_for(path, pid, &status)) return;
    char *t = pcg_test_slurp(log);
    fail_msg("the command ended before %s appeared: %s", path, t ? t : "");
}

static int wait_exit(int pid)
{
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static json_t *load_json(const char *dir, const char *name)
{
    char path[PATH_MAX + 64], err[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    json_t *j = read_json_file(path, 1L << 24, err, sizeof err);
    if (!j) fail_msg("%s", err);
    return j;
}

/* The server dies while node 1 runs: exit 4 with one line naming the
 * server, the node left pending and halted.txt saying why; with the
 * server back, --resume finishes the run. */
static void results_run_server_dies(void **state)
{
    (void)state;
    pcg_fake_srv s;
    start_server(&s, "dies", 0);
    char dir[PATH_MAX], cmd[4 * PATH_MAX], log[PATH_MAX + 16], path[PATH_MAX + 64];
    static char out[1 << 15];
    snprintf(dir, sizeof dir, "%s/results-dies", pcg_test_tmpdir());
    snprintf(log, sizeof log, "%s.log", dir);
    snprintf(cmd, sizeof cmd,
             "%s run --llm openai --base-url %s --model fake-coder --api-key-env %s " FAST_LLM " --scenario 1 " BUDGET
             " --iterations 2 --out %s </dev/null",
             pcg_test_binary(), s.url, KEY_ENV, dir);
    int pid = pcg_test_spawn(cmd, log);
    snprintf(path, sizeof path, "%s/nodes/001", dir);
    wait_or_fail(path, pid, log);
    pcg_test_srv_stop(&s);
    assert_int_equal(wait_exit(pid), 4);
    char *text = pcg_test_slurp(log);
    assert_non_null(text);
    if (!strstr(text, "pcgrllm: run: node 1: ") || !strstr(text, s.url))
        fail_msg("the run's last words do not name node 1 and the server: %s", text);
    free(text);
    json_t *g = load_json(dir, "graph.json");
    json_t *nodes = json_object_get(g, "nodes");
    assert_int_equal(json_array_size(nodes), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(nodes, 1), "status")), "pending");
    json_decref(g);
    snprintf(path, sizeof path, "%s/halted.txt", dir);
    assert_true(pcg_test_exists(path));
    assert_false(pcg_test_exists(strcat(strcpy(path, dir), "/stopped.txt")));
    start_server(&s, "dies", s.port);
    int rc = pcg_test_sh(out, sizeof out, "%s run --resume --out %s --base-url %s --api-key-env %s " FAST_LLM
                                          " --quiet </dev/null",
                         pcg_test_binary(), dir, s.url, KEY_ENV);
    pcg_test_srv_stop(&s);
    if (rc != 0) fail_msg("resume with the server back exited %d: %s", rc, out);
    snprintf(path, sizeof path, "%s/halted.txt", dir);
    assert_false(pcg_test_exists(path));
    g = load_json(dir, "graph.json");
    nodes = json_object_get(g, "nodes");
    for (size_t i = 0; i < json_array_size(nodes); i++)
        assert_string_equal(json_string_value(json_object_get(json_array_get(nodes, i), "status")), "ok");
    json_decref(g);
}

/* A grid against a closed port starts nothing and exits 4 in one line;
 * with the server up the same command finishes the cell, and the
 * summary counts no failed server. */
static void results_grid_server_down_then_up(void **state)
{
    (void)state;
    int port = closed_port("grid-down");
    char dir[PATH_MAX], grid[4 * PATH_MAX], url[64];
    static char out[1 << 15];
    snprintf(dir, sizeof dir, "%s/results-grid-down", pcg_test_tmpdir());
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1", port);
    snprintf(grid, sizeof grid, "%s grid --out %s --models fake-coder@%s --ablations zs --api-key-env %s -- " BUDGET
                                " " FAST_LLM " </dev/null",
             pcg_test_binary(), dir, url, KEY_ENV);
    int rc = pcg_test_sh(out, sizeof out, "%s", grid);
    assert_int_equal(rc, 4);
    one_line("a grid against a closed port", out, "does not answer", url);
    rc = pcg_test_sh(out, sizeof out, "%s grid --out %s --list", pcg_test_binary(), dir);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, " new"));
    pcg_fake_srv s;
    start_server(&s, "grid-down", port);
    rc = pcg_test_sh(out, sizeof out, "%s", grid);
    pcg_test_srv_stop(&s);
    if (rc != 0) fail_msg("the grid with its server up exited %d: %s", rc, out);
    json_t *sum = load_json(dir, "summary.json");
    assert_int_equal(json_integer_value(json_object_get(sum, "cells_finished")), 1);
    assert_int_equal(json_integer_value(json_object_get(sum, "cells_server_failed")), 0);
    json_decref(sum);
}

/* The server dies under a running cell: the grid exits 1 with the cell
 * failed for its server, --list and the summary say so (no fitness 0),
 * and a later start with the server back finishes it. */
static void results_grid_server_dies(void **state)
{
    (void)state;
    pcg_fake_srv s;
    start_server(&s, "grid-dies", 0);
    char dir[PATH_MAX], grid[4 * PATH_MAX], log[PATH_MAX + 16], path[PATH_MAX + 64];
    static char out[1 << 15];
    snprintf(dir, sizeof dir, "%s/results-grid-dies", pcg_test_tmpdir());
    snprintf(log, sizeof log, "%s.out", dir);
    snprintf(grid, sizeof grid, "%s grid --out %s --models fake-coder@%s --ablations full --api-key-env %s -- " BUDGET
                                " " FAST_LLM " --iterations 2 </dev/null",
             pcg_test_binary(), dir, s.url, KEY_ENV);
    int pid = pcg_test_spawn(grid, log);
    snprintf(path, sizeof path, "%s/cells/s1-cot-full-r0/nodes/001", dir);
    wait_or_fail(path, pid, log);
    pcg_test_srv_stop(&s);
    assert_int_equal(wait_exit(pid), 1);
    char *text = pcg_test_slurp(log);
    assert_non_null(text);
    if (!strstr(text, "FAILED s1-cot-full-r0") || !strstr(text, "its model server failed"))
        fail_msg("the grid does not say the cell failed for its server: %s", text);
    free(text);
    int rc = pcg_test_sh(out, sizeof out, "%s grid --out %s --list", pcg_test_binary(), dir);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "stopped: its model server failed"));
    json_t *sum = load_json(dir, "summary.json");
    assert_int_equal(json_integer_value(json_object_get(sum, "cells_finished")), 0);
    assert_int_equal(json_integer_value(json_object_get(sum, "cells_server_failed")), 1);
    json_decref(sum);
    start_server(&s, "grid-dies", s.port);
    rc = pcg_test_sh(out, sizeof out, "%s", grid);
    pcg_test_srv_stop(&s);
    if (rc != 0) fail_msg("the grid with its server back exited %d: %s", rc, out);
    sum = load_json(dir, "summary.json");
    assert_int_equal(json_integer_value(json_object_get(sum, "cells_finished")), 1);
    assert_int_equal(json_integer_value(json_object_get(sum, "cells_server_failed")), 0);
    json_decref(sum);
}

/* A grid made with --quick, interrupted in its first cell, resumes: run
 * here, and by the batch script's own command line (sh runs it as Slurm
 * would, with the task id set). */
static void results_quick_grid_resumes(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    char dir[PATH_MAX], grid[4 * PATH_MAX], log[PATH_MAX + 16], path[PATH_MAX + 64];
    static char out[1 << 15];
    snprintf(dir, sizeof dir, "%s/results-quick", pcg_test_tmpdir());
    snprintf(log, sizeof log, "%s.out", dir);
    snprintf(grid, sizeof grid, "%s grid --out %s --scenarios 1,2 --ablations full --yes -- --quick --iterations 2 "
                                "--steps 2048 --envs 8 --check-envs 4 --levels 4 --quiet",
             pcg_test_binary(), dir);
    int pid = pcg_test_spawn(grid, log);
    snprintf(path, sizeof path, "%s/cells/s1-cot-full-r0/nodes/000/train.done", dir);
    wait_or_fail(path, pid, log);
    kill(pid, SIGINT);
    assert_int_equal(wait_exit(pid), 130);
    int rc = pcg_test_sh(out, sizeof out, "%s grid --out %s --cell 0 </dev/null", pcg_test_binary(), dir);
    if (rc != 0) fail_msg("the interrupted --quick cell did not resume: %d: %s", rc, out);
    assert_non_null(strstr(out, "resuming"));
    /* the second cell, started and interrupted, then resumed by the batch script */
    pid = pcg_test_spawn(grid, log);
    snprintf(path, sizeof path, "%s/cells/s2-cot-full-r0/nodes/000/train.done", dir);
    wait_or_fail(path, pid, log);
    kill(pid, SIGINT);
    assert_int_equal(wait_exit(pid), 130);
    rc = pcg_test_sh(out, sizeof out, "%s grid --out %s --slurm-script-only", pcg_test_binary(), dir);
    if (rc != 0) fail_msg("--slurm-script-only exited %d: %s", rc, out);
    rc = pcg_test_sh(out, sizeof out, "SLURM_ARRAY_TASK_ID=1 sh %s/slurm/grid.sbatch </dev/null", dir);
    if (rc != 0) fail_msg("the batch script did not resume the --quick cell: %d: %s", rc, out);
    rc = pcg_test_sh(out, sizeof out, "%s grid --out %s --list", pcg_test_binary(), dir);
    assert_int_equal(rc, 0);
    assert_int_equal(pcg_test_count_of(out, "finished, best fitness"), 2);
}

/* The same reward and seed trained at one and at two threads: the same
 * checkpoint, bit for bit (and twice at two threads), and train.json says
 * which threads each used and why. */
static void results_training_same_bits_any_threads(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    char dirs[3][PATH_MAX];
    static char out[1 << 14];
    const int threads[3] = {1, 2, 2};
    for (int i = 0; i < 3; i++) {
        snprintf(dirs[i], sizeof dirs[i], "%s/results-threads-%d", pcg_test_tmpdir(), i);
        int rc = pcg_test_sh(out, sizeof out, "%s train --reward rewards/human/scenario1.c --scenario 1 --steps 1024 "
                                              "--envs 8 --preset tiny --threads %d --quiet --out %s",
                             pcg_test_binary(), threads[i], dirs[i]);
        if (rc != 0) fail_msg("train --threads %d exited %d: %s", threads[i], rc, out);
        json_t *tj = load_json(dirs[i], "train.json");
        assert_int_equal(json_integer_value(json_object_get(tj, "threads")), threads[i]);
        char want[32];
        snprintf(want, sizeof want, "--threads %d", threads[i]);
        assert_string_equal(json_string_value(json_object_get(tj, "threads_reason")), want);
        assert_non_null(json_string_value(json_object_get(tj, "pcgrllm_version")));
        json_decref(tj);
    }
    for (int i = 1; i < 3; i++) {
        int rc = pcg_test_sh(out, sizeof out, "cmp %s/checkpoint.bin %s/checkpoint.bin", dirs[0], dirs[i]);
        if (rc != 0) fail_msg("--threads %d and --threads %d trained different weights: %s", threads[0], threads[i], out);
    }
}

/* Small things a first user meets: an --out that already holds a run is
 * refused before the warm-up; a typo of a flag is not taken for the flag
 * it abbreviates; the LLM flags in run --help line up with the others;
 * eval explains its columns; a step count that is not whole updates says
 * so. */
static void results_small_things(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    char dir[PATH_MAX];
    static char out[1 << 15];
    snprintf(dir, sizeof dir, "%s/results-held", pcg_test_tmpdir());
    int rc = pcg_test_sh(out, sizeof out, "mkdir -p %s && echo '{}' > %s/config.json && %s run --scenario 1 --out %s",
                         dir, dir, pcg_test_binary(), dir);
    assert_int_equal(rc, 1);
    one_line("an --out holding a run", out, "already holds a run", "--resume");
    rc = pcg_test_sh(out, sizeof out, "%s run --scenario 1 --iteration 3 --out %s/x", pcg_test_binary(), dir);
    assert_int_equal(rc, 2);
    one_line("an abbreviated flag", out, "unknown option '--iteration'", NULL);
    rc = pcg_test_sh(out, sizeof out, "%s levels --n 2 --see 3 --out %s/lv", pcg_test_binary(), dir);
    assert_int_equal(rc, 2);
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s run --help", pcg_test_binary()), 0);
    assert_non_null(strstr(out, "\n  --base-url URL "));
    assert_non_null(strstr(out, "\n  --llm offline|openai "));
    rc = pcg_test_sh(out, sizeof out, "%s levels --n 2 --seed 3 --out %s/lv && %s eval --scenario 1 %s/lv",
                     pcg_test_binary(), dir, pcg_test_binary(), dir);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "columns: score"));
    assert_non_null(strstr(out, "  met      BAT, SCORPION, SPIDER met"));
    rc = pcg_test_sh(out, sizeof out, "%s train --reward rewards/human/scenario1.c --scenario 1 --steps 300 --envs 2 "
                                      "--preset tiny --out %s/t",
                     pcg_test_binary(), dir);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "300 steps is not a whole number of updates of 256"));
    assert_non_null(strstr(out, "training 512 steps"));
}

PCG_TESTS(results, cmocka_unit_test(results_small_things), cmocka_unit_test(results_run_server_dies), cmocka_unit_test(results_grid_server_down_then_up),
          cmocka_unit_test(results_grid_server_dies), cmocka_unit_test(results_quick_grid_resumes),
          cmocka_unit_test(results_training_same_bits_any_threads))
