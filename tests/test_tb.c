/* scripts/pcgrllm-tb: a run and a grid as TensorBoard event files, read
 * back (tests/tb_check.py, with tensorboardX's own Event protobuf) and
 * compared with the numbers of their metrics.jsonl and eval.json; damaged
 * and wrong directories refused in one line.  Skipped with one line where
 * tensorboardX is not installed (make test-deps installs it). */
#include "harness.h"
#include <stdio.h>
#include <string.h>

#define TINY_RUN "--llm offline --preset small --steps 256 --envs 2 --align 0 --check-envs 4 --levels 4 --iterations 2"

static int have_tensorboardx(void)
{
    char out[512];
    return pcg_test_sh(out, sizeof out, "python3 -c 'import tensorboardX' 2>&1") == 0;
}

static void tb_run_and_grid_read_back(void **state)
{
    (void)state;
    if (!have_tensorboardx()) {
        fprintf(stderr, "tb_run_and_grid_read_back skipped: no tensorboardX (make test-deps)\n");
        skip();
    }
    char run[600], grid[600], out[16384];
    snprintf(run, sizeof run, "%s/tb-run", pcg_test_tmpdir());
    snprintf(grid, sizeof grid, "%s/tb-grid", pcg_test_tmpdir());
    int rc = pcg_test_sh(out, sizeof out, "%s run --scenario 1 " TINY_RUN " --out %s", pcg_test_binary(), run);
    if (rc) fail_msg("run %d: %s", rc, out);
    rc = pcg_test_sh(out, sizeof out, "scripts/pcgrllm-tb %s --logdir %s/tb && python3 tests/tb_check.py %s %s/tb", run,
                     run, run, run);
    if (rc) fail_msg("run's events %d: %s", rc, out);
    assert_non_null(strstr(out, "scalars agree"));
    rc = pcg_test_sh(out, sizeof out, "%s grid --out %s --scenarios 1 --ablations zs -- " TINY_RUN, pcg_test_binary(),
                     grid);
    if (rc) fail_msg("grid %d: %s", rc, out);
    rc = pcg_test_sh(out, sizeof out, "scripts/pcgrllm-tb %s && python3 tests/tb_check.py %s %s/tensorboard", grid, grid,
                     grid);
    if (rc) fail_msg("grid's events %d: %s", rc, out);
    assert_non_null(strstr(out, "scalars agree"));
    /* a damaged metrics file, and a directory that is none of the three */
    rc = pcg_test_sh(out, sizeof out, "echo '{not json' >> %s/nodes/000/train/metrics.jsonl; scripts/pcgrllm-tb %s 2>&1",
                     run, run);
    assert_int_equal(rc, 1);
    assert_int_equal(pcg_test_count_lines(out), 1);
    rc = pcg_test_sh(out, sizeof out, "scripts/pcgrllm-tb %s 2>&1", pcg_test_tmpdir());
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, "not a train, run or grid directory"));
}

PCG_TESTS(tb, cmocka_unit_test(tb_run_and_grid_read_back))
