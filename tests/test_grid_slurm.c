/* `pcgrllm grid --slurm` against a real Slurm: tests/slurm_cluster.sh
 * starts a one-node cluster (munged, slurmctld, slurmd on loopback, its
 * own key and configuration), the grid submits its batch array and the
 * summary job, every cell runs as one array task, and the summary the
 * summary job writes is checked against its rows.  The cluster is stopped
 * whatever happens.  Without Slurm installed the test is skipped with one
 * line (scripts/test-deps.sh installs it).  Also --slurm-script-only, the
 * array syntax and the refusal of bad #SBATCH values, which need no
 * cluster. */
#include "harness.h"
#include "grid_check.h"
#include "grid_slurm.h"
#include "util.h"
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TINY "--llm offline --preset small --steps 256 --envs 2 --align 0 --check-envs 4 --levels 4 --iterations 2"

static char cluster[PATH_MAX];

static int stop_cluster(void **state)
{
    (void)state;
    char out[4096];
    if (cluster[0]) pcg_test_sh(out, sizeof out, "sh tests/slurm_cluster.sh stop %s", cluster);
    unsetenv("SLURM_CONF");
    return 0;
}

/* 1 once the queue is empty and the summary job has summarised every
 * cell. */
static int summary_done(const char *dir, int cells)
{
    char path[PATH_MAX + 32], out[4096];
    if (pcg_test_sh(out, sizeof out, "squeue -h") != 0 || out[0]) return 0;
    snprintf(path, sizeof path, "%s/summary.json", dir);
    json_t *j = json_load_file(path, 0, NULL);
    int done = json_integer_value(json_object_get(j, "cells_finished")) == cells;
    json_decref(j);
    return done;
}

static void grid_slurm_end_to_end(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    static char out[1 << 16];
    char dir[PATH_MAX], path[PATH_MAX + 64];
    snprintf(cluster, sizeof cluster, "%s/slurm-cluster", pcg_test_tmpdir());
    int rc = pcg_test_sh(out, sizeof out, "sh tests/slurm_cluster.sh start %s", cluster);
    if (rc == 77) {
        cluster[0] = 0;
        fprintf(stderr, "grid_slurm_end_to_end skipped: %s", out);
        skip();
    }
    if (rc != 0) fail_msg("the one-node cluster did not start: %s", out);
    char conf[PATH_MAX + 32];
    snprintf(conf, sizeof conf, "%s/slurm.conf", cluster);
    setenv("SLURM_CONF", conf, 1);
    /* 4 cells: zero-shot and full (2 iterations), two seeds; two at once */
    snprintf(dir, sizeof dir, "%s/grid-slurm", pcg_test_tmpdir());
    rc = pcg_test_sh(out, sizeof out, "%s grid --out %s --scenarios 1 --ablations zs,full --repeats 2 --slurm "
                     "--max-parallel 2 --cpus-per-task 1 --time 10:00 -- " TINY, pcg_test_binary(), dir);
    if (rc != 0) fail_msg("grid --slurm exited %d: %s", rc, out);
    long job = 0;
    const char *sub = strstr(out, "submitted batch job ");
    assert_non_null(sub);
    assert_int_equal(sscanf(sub, "submitted batch job %ld", &job), 1);
    assert_non_null(strstr(out, "runs `pcgrllm grid --out"));
    snprintf(path, sizeof path, "%s/slurm/grid.sbatch", dir);
    char *script = pcg_test_slurp(path);
    assert_non_null(script);
    assert_non_null(strstr(script, "#SBATCH --array=0-3%2\n"));
    assert_non_null(strstr(script, "#SBATCH --cpus-per-task=1\n"));
    assert_non_null(strstr(script, "--cell \"$SLURM_ARRAY_TASK_ID\""));
    free(script);
    /* the array and the summary job run; give them a few minutes */
    for (int i = 0; i < 600 && !summary_done(dir, 4); i++) usleep(500 * 1000);
    if (!summary_done(dir, 4)) {
        pcg_test_sh(out, sizeof out, "squeue; tail -3 %s/slurm/logs/*", dir);
        fail_msg("the summary job did not summarise 4 finished cells: %s", out);
    }
    grid_check_summary(dir, 4);
    for (int task = 0; task < 4; task++) { /* a log per task */
        snprintf(path, sizeof path, "%s/slurm/logs/%ld_%d.out", dir, job, task);
        char *log = pcg_test_slurp(path);
        if (!log) fail_msg("%s is missing", path);
        assert_non_null(strstr(log, "done s1-"));
        free(log);
    }
    /* resubmitting a finished grid submits nothing */
    rc = pcg_test_sh(out, sizeof out, "%s grid --out %s --slurm", pcg_test_binary(), dir);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "every cell is finished or running; nothing to submit"));
}

static void grid_slurm_script_only_and_values(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    char dir[PATH_MAX], path[PATH_MAX + 64], out[8192], err[256], buf[128];
    snprintf(dir, sizeof dir, "%s/grid-slurm-script", pcg_test_tmpdir());
    char prologue[PATH_MAX + 16];
    snprintf(prologue, sizeof prologue, "%s/prologue.sh", pcg_test_tmpdir());
    assert_int_equal(write_file_atomic(prologue, "module load cuda/13\nexport X=1", 30), 0);
    int rc = pcg_test_sh(out, sizeof out, "%s grid --out %s --scenarios 1,2 --pe cot,tot --ablations sa,fb "
                         "--slurm-script-only --partition gpu --gres gpu:1 --mem 8G --time 1-00:00:00 --account proj1 "
                         "--qos short --sbatch --constraint=a100 --sbatch --exclusive --prologue %s "
                         "--summary-partition cheap -- " TINY,
                         pcg_test_binary(), dir, prologue);
    if (rc != 0) fail_msg("--slurm-script-only exited %d: %s", rc, out);
    assert_non_null(strstr(out, "submit with: sbatch"));
    snprintf(path, sizeof path, "%s/slurm/grid.sbatch", dir);
    char *s = pcg_test_slurp(path);
    assert_non_null(s);
    const char *want[] = {"#SBATCH --array=0-5\n", "#SBATCH --partition=gpu\n", "#SBATCH --gres=gpu:1\n",
                          "#SBATCH --mem=8G\n", "#SBATCH --time=1-00:00:00\n", " --gpus 1\n",
                          "#SBATCH --account=proj1\n", "#SBATCH --qos=short\n", "#SBATCH --constraint=a100\n",
                          "#SBATCH --exclusive\n", "module load cuda/13\nexport X=1\nexec "};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        if (!strstr(s, want[i])) fail_msg("grid.sbatch lacks %s", want[i]);
    free(s);
    snprintf(path, sizeof path, "%s/slurm/summary.sbatch", dir);
    s = pcg_test_slurp(path);
    assert_non_null(s);
    assert_non_null(strstr(s, " --summary\n"));
    assert_non_null(strstr(s, "#SBATCH --partition=cheap\n")); /* the summary needs no GPU */
    assert_null(strstr(s, "--gres"));
    assert_non_null(strstr(s, "#SBATCH --account=proj1\n"));
    assert_non_null(strstr(s, "module load cuda/13\n"));
    free(s);
    rc = pcg_test_sh(out, sizeof out, "%s grid --out %s --slurm-script-only --sbatch 'x' -- " TINY, pcg_test_binary(), dir);
    assert_int_equal(rc, 2);
    assert_non_null(strstr(out, "one sbatch option starting with --"));
    snprintf(path, sizeof path, "%s/grid.json", dir); /* the definition is stored for the tasks */
    assert_true(pcg_test_exists(path));
    int ids[] = {0, 1, 2, 5, 7, 8};
    grid_slurm_ranges(ids, 6, buf, sizeof buf);
    assert_string_equal(buf, "0-2,5,7-8");
    assert_int_equal(grid_slurm_check_value("--time", "12:00:00", err, sizeof err), 0);
    assert_int_equal(grid_slurm_check_value("--gres", "gpu:a100:1", err, sizeof err), 0);
    assert_int_equal(grid_slurm_check_value("--partition", "x;rm", err, sizeof err), -1);
    assert_int_equal(grid_slurm_check_value("--mem", "", err, sizeof err), -1);
}

PCG_TESTS(grid_slurm, cmocka_unit_test_teardown(grid_slurm_end_to_end, stop_cluster),
          cmocka_unit_test(grid_slurm_script_only_and_values))
