/* Cost up front and progress: a job of many hours on the CPU is said and
 * refused unless asked for (run, train, grid); the threads follow the CPUs
 * a process may use; a run's report shows each node's training curve. */
#include "harness.h"
#include "cpus.h"
#include <cairo.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The paper's budget on this CPU is days: refused before anything is made. */
static void cost_long_jobs_refused_without_yes(void **state)
{
    (void)state;
    char out[8192];
    const char *bin = pcg_test_binary(), *tmp = pcg_test_tmpdir();
    pcg_test_use_source_prompts();
    int rc = pcg_test_sh(out, sizeof out, "%s run --scenario 1 --llm offline --out %s/paper-run </dev/null", bin, tmp);
    assert_int_equal(rc, 2);
    assert_non_null(strstr(out, "backend: cpu; projected: about "));
    assert_non_null(strstr(out, "or pass --yes to run it anyway"));
    assert_non_null(strstr(out, "--quick shows the method working in minutes"));
    char path[600];
    snprintf(path, sizeof path, "%s/paper-run", tmp);
    assert_false(pcg_test_exists(path));
    rc = pcg_test_sh(out, sizeof out,
                     "%s train --reward rewards/human/scenario1.c --scenario 1 --steps 50000000 --out %s/paper-train "
                     "</dev/null",
                     bin, tmp);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, "projected: about "));
    assert_non_null(strstr(out, "would take about"));
    snprintf(path, sizeof path, "%s/paper-train", tmp);
    assert_false(pcg_test_exists(path));
    rc = pcg_test_sh(out, sizeof out,
                     "%s grid --out %s/paper-grid --scenarios 1 --pe cot --ablations full --repeats 1 -- --llm offline "
                     "</dev/null",
                     bin, tmp);
    assert_int_equal(rc, 2);
    if (!strstr(out, "projected: about ") || !strstr(out, "pass --yes")) fail_msg("got: %s", out);
}

/* One CPU allowed (taskset): one thread, said. */
static void cost_threads_follow_affinity(void **state)
{
    (void)state;
    char out[8192];
    int rc = pcg_test_sh(out, sizeof out,
                         "taskset -c 0 %s train --reward rewards/human/scenario1.c --scenario 1 --steps 256 --envs 2 "
                         "--preset small --out %s/one-cpu",
                         pcg_test_binary(), pcg_test_tmpdir());
    assert_int_equal(rc, 0);
    if (!strstr(out, "cpu: 1 thread (1 CPU allowed")) fail_msg("got: %s", out);
}

static atomic_int spin_stop;

static void *spin_thread(void *arg)
{
    (void)arg;
    while (!atomic_load(&spin_stop)) continue;
    return NULL;
}

/* A core kept busy by this process's own threads (as the libraries' thread
 * pools are at start-up) is still the engine's to use; one kept busy by
 * another process is not. */
static void cost_own_threads_are_not_load(void **state)
{
    (void)state;
    pthread_t t;
    atomic_store(&spin_stop, 0);
    assert_int_equal(pthread_create(&t, NULL, spin_thread, NULL), 0);
    cpu_budget own = cpus_measure(0.3);
    atomic_store(&spin_stop, 1);
    pthread_join(t, NULL);
    pid_t other = fork();
    assert_true(other >= 0);
    if (other == 0)
        for (volatile unsigned long x = 0;; x++) continue;
    cpu_budget busy = cpus_measure(0.3);
    kill(other, SIGKILL);
    waitpid(other, NULL, 0);
    if (!(own.idle >= 0 && busy.idle >= 0)) skip(); /* no /proc/stat */
    if (own.idle - busy.idle < 0.5)
        fail_msg("idle CPUs: %.2f with a thread of ours spinning, %.2f with another process spinning", own.idle,
                 busy.idle);
    assert_true(own.threads >= busy.threads);
}

/* A grid's projection reads the cells' --quick profile as run does: the
 * tiny preset on 64 environments, the steps given after it. */
static void cost_grid_projects_quick_profile(void **state)
{
    (void)state;
    char out[16384];
    pcg_test_use_source_prompts();
    int rc = pcg_test_sh(out, sizeof out,
                         "%s grid --out %s/quick-grid --scenarios 1 --pe cot --ablations zs --repeats 1 -- --llm offline "
                         "--quick --steps 8192 --levels 4 --threads 1 </dev/null",
                         pcg_test_binary(), pcg_test_tmpdir());
    if (rc != 0) fail_msg("grid exited %d: %s", rc, out);
    if (!strstr(out, "1 nodes of 8192 steps (tiny preset, 64 envs")) fail_msg("got: %s", out);
}

/* The report draws each trained node's episode reward and entropy. */
/* Pixels of the first series' colour (blue, 0 0.45 0.7) in a PNG, the
 * legend's swatch (14 x 10) included. */
static int series_pixels(const char *png)
{
    cairo_surface_t *s = cairo_image_surface_create_from_png(png);
    assert_int_equal(cairo_surface_status(s), CAIRO_STATUS_SUCCESS);
    cairo_surface_flush(s);
    const unsigned char *d = cairo_image_surface_get_data(s);
    int w = cairo_image_surface_get_width(s), h = cairo_image_surface_get_height(s), n = 0;
    int stride = cairo_image_surface_get_stride(s);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint32_t p;
            memcpy(&p, d + (size_t)y * stride + 4 * (size_t)x, 4);
            int r = (p >> 16) & 255, g = (p >> 8) & 255, b = p & 255;
            n += r < 60 && b > 140 && g > 80 && g < 150;
        }
    cairo_surface_destroy(s);
    return n;
}

/* Episodes of 768 steps end in one update of six (rollouts of 128 steps):
 * the reward curve joins the updates that have a value, so with two ended
 * episodes per node it draws a line, not only the legend. */
static void cost_report_shows_training_curves(void **state)
{
    (void)state;
    char out[8192], path[600];
    pcg_test_use_source_prompts();
    snprintf(path, sizeof path, "%s/curves", pcg_test_tmpdir());
    int rc = pcg_test_sh(out, sizeof out,
                         "%s run --scenario 1 --llm offline --preset small --steps 2048 --envs 1 --threads 1 --align 1 "
                         "--check-envs 4 --levels 4 --iterations 2 --out %s",
                         pcg_test_binary(), path);
    if (rc != 0) fail_msg("run: %s", out);
    assert_non_null(strstr(out, "  generating 4 levels"));
    snprintf(path, sizeof path, "%s/curves/report.html", pcg_test_tmpdir());
    assert_int_equal(pcg_test_sh(out, sizeof out, "grep -o \"alt='[a-z ]* over training'\" %s | sort | uniq -c", path),
                     0);
    assert_non_null(strstr(out, "2 alt='entropy over training'"));
    assert_non_null(strstr(out, "2 alt='mean episode reward over training'"));
    char png[700];
    snprintf(png, sizeof png, "%s/curves/reward.png", pcg_test_tmpdir());
    assert_int_equal(pcg_test_sh(out, sizeof out, "grep -o \"alt='mean episode reward over training' src='data:image/"
                                 "png;base64,[^']*\" %s | head -n 1 | sed 's/.*base64,//' | base64 -d > %s",
                                 path, png), 0);
    int n = series_pixels(png);
    if (n < 400) fail_msg("the reward curve has %d pixels of its colour: no line drawn", n);
}

PCG_TESTS(cost, cmocka_unit_test(cost_long_jobs_refused_without_yes), cmocka_unit_test(cost_threads_follow_affinity),
          cmocka_unit_test(cost_own_threads_are_not_load),
          cmocka_unit_test(cost_grid_projects_quick_profile),
          cmocka_unit_test(cost_report_shows_training_curves))
