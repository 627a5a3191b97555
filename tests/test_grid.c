/* `pcgrllm grid`: the slot scheduler, cells and their seeds, grid.json,
 * and end to end: two offline cells at once, a rerun that does nothing,
 * --list, --cell K, a refused change of definition, --gpus without a GPU,
 * flag errors.  Cells are tiny (one zero-shot node, 256 steps on 2
 * environments, 4 levels): these tests check the orchestration. */
#include "harness.h"
#include "backend.h"
#include "grid.h"
#include "graph.h"
#include "util.h"
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TINY_CELL                                                                                            \
    "--llm offline --preset small --steps 256 --envs 2 --align 0 --check-envs 4 --levels 4 --iterations 1"



static int count_of(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle)) n++;
    return n;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

/* ---- the scheduler ---- */

/* Run m cells on n slots, ending a pseudo-random running cell each round. */
static void simulate(int n_slots, int m, unsigned seed)
{
    int *queue = malloc(sizeof(int) * (size_t)(m + 1)), *starts = calloc((size_t)(m + 1), sizeof(int));
    int *slot_uses = calloc((size_t)n_slots, sizeof(int)), *occupant = malloc(sizeof(int) * (size_t)n_slots);
    assert_non_null(queue);
    assert_non_null(starts);
    assert_non_null(slot_uses);
    assert_non_null(occupant);
    for (int i = 0; i < m; i++) queue[i] = 100 + i; /* cell ids need not be 0..m-1 */
    for (int i = 0; i < n_slots; i++) occupant[i] = -1;
    grid_sched s;
    assert_int_equal(grid_sched_init(&s, n_slots, queue, m), 0);
    int ended = 0, rounds = 0;
    while (ended < m) {
        int slot, cell;
        while ((cell = grid_sched_next(&s, &slot)) >= 0) {
            assert_true(slot >= 0 && slot < n_slots);
            assert_int_equal(occupant[slot], -1); /* never two cells on one slot */
            assert_true(cell >= 100 && cell < 100 + m);
            occupant[slot] = cell;
            starts[cell - 100]++;
            slot_uses[slot]++;
        }
        int busy = 0;
        for (int i = 0; i < n_slots; i++) busy += occupant[i] >= 0;
        assert_int_equal(busy, s.running);
        assert_true(busy <= n_slots);
        assert_true(busy > 0); /* cells left means something runs */
        seed = seed * 1103515245u + 12345u;
        int pick = (int)((seed >> 8) % (unsigned)n_slots);
        while (occupant[pick] < 0) pick = (pick + 1) % n_slots;
        assert_int_equal(grid_sched_done(&s, pick), occupant[pick]);
        assert_int_equal(grid_sched_done(&s, pick), -1); /* already free */
        occupant[pick] = -1;
        ended++;
        assert_true(++rounds <= m);
    }
    int slot;
    assert_int_equal(grid_sched_next(&s, &slot), -1);
    assert_int_equal(s.running, 0);
    for (int i = 0; i < m; i++) assert_int_equal(starts[i], 1); /* every cell exactly once */
    if (m > n_slots) {
        int reused = 0;
        for (int i = 0; i < n_slots; i++) reused |= slot_uses[i] > 1;
        assert_true(reused);
    }
    grid_sched_free(&s);
    free(queue);
    free(starts);
    free(slot_uses);
    free(occupant);
}

static void grid_scheduler_each_cell_once_one_per_slot(void **state)
{
    (void)state;
    int slots[] = {1, 2, 3, 8};
    int cells[] = {0, 1, 2, 7, 25};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 5; j++)
            for (unsigned seed = 1; seed <= 3; seed++) simulate(slots[i], cells[j], seed);
    /* the lowest free slot is taken first; stop ends the queue */
    int q[] = {5, 6, 7};
    grid_sched s;
    int slot;
    assert_int_equal(grid_sched_init(&s, 2, q, 3), 0);
    assert_int_equal(grid_sched_next(&s, &slot), 5);
    assert_int_equal(slot, 0);
    assert_int_equal(grid_sched_next(&s, &slot), 6);
    assert_int_equal(slot, 1);
    assert_int_equal(grid_sched_next(&s, &slot), -1);
    assert_int_equal(grid_sched_done(&s, 0), 5);
    grid_sched_stop(&s);
    assert_int_equal(grid_sched_next(&s, &slot), -1);
    assert_int_equal(grid_sched_done(&s, 1), 6);
    assert_int_equal(grid_sched_done(&s, 7), -1);
    grid_sched_free(&s);
    assert_int_equal(grid_sched_init(&s, 0, q, 3), -1);
}

/* ---- cells, seeds, grid.json ---- */

static void grid_cells_names_seeds_json(void **state)
{
    (void)state;
    grid_def d, e;
    memset(&d, 0, sizeof d);
    char err[256];
    assert_int_equal(grid_parse_scenarios("1,3", &d, err, sizeof err), 0);
    assert_int_equal(grid_parse_pe("tot,got", &d, err, sizeof err), 0);
    assert_int_equal(grid_parse_ablations("zs,full", &d, err, sizeof err), 0);
    d.repeats = 3;
    char *flags[] = {"--steps", "1000", "--seed", "7", "--threads", "2"};
    int st, sb;
    assert_int_equal(grid_set_run_flags(&d, 6, flags, &st, &sb, err, sizeof err), 0);
    assert_int_equal(st, 1);
    assert_int_equal(sb, 0);
    assert_int_equal(d.base_seed, 7);
    assert_int_equal(grid_n_cells(&d), 24);
    grid_cell c;
    grid_cell_at(&d, 0, &c);
    assert_string_equal(c.name, "s1-tot-zs-r0");
    assert_int_equal(c.seed, 7);
    grid_cell_at(&d, 7, &c);
    assert_string_equal(c.name, "s3-got-full-r0");
    grid_cell_at(&d, 8, &c);
    assert_string_equal(c.name, "s1-tot-zs-r1");
    assert_int_equal(c.seed, 7 + GRID_SEED_STRIDE);
    grid_cell_at(&d, 23, &c);
    assert_string_equal(c.name, "s3-got-full-r2");
    assert_int_equal(c.repeat, 2);
    assert_int_equal(c.seed, 7 + 2 * GRID_SEED_STRIDE);
    /* names are unique */
    for (int a = 0; a < 24; a++)
        for (int b = a + 1; b < 24; b++) {
            grid_cell ca, cb;
            grid_cell_at(&d, a, &ca);
            grid_cell_at(&d, b, &cb);
            assert_string_not_equal(ca.name, cb.name);
        }
    /* grid.json round trip, and a changed definition differs */
    char *js = grid_def_json(&d);
    assert_non_null(js);
    assert_int_equal(grid_def_from_json(js, &e, err, sizeof err), 0);
    assert_true(grid_def_equal(&d, &e));
    e.repeats = 2;
    assert_false(grid_def_equal(&d, &e));
    e.repeats = 3;
    free(e.run_flags[1]);
    e.run_flags[1] = strdup("2000");
    assert_false(grid_def_equal(&d, &e));
    grid_def_free(&e);
    free(js);
    assert_int_equal(grid_def_from_json("{\"format\": 1}", &e, err, sizeof err), -1);
    assert_non_null(strstr(err, "scenarios"));
    assert_int_equal(grid_def_from_json("[1", &e, err, sizeof err), -1);
    grid_def_free(&d);
    /* lists and run flags the grid refuses */
    memset(&d, 0, sizeof d);
    assert_int_equal(grid_parse_scenarios("1,5", &d, err, sizeof err), -1);
    assert_int_equal(grid_parse_scenarios("2,2", &d, err, sizeof err), -1);
    assert_int_equal(grid_parse_pe("cot,", &d, err, sizeof err), -1);
    assert_int_equal(grid_parse_ablations("zero", &d, err, sizeof err), -1);
    char *bad1[] = {"--out", "x"}, *bad2[] = {"--sce", "2"}, *bad3[] = {"--seed", "-1"}, *ok[] = {"--backend=cuda"};
    assert_int_equal(grid_set_run_flags(&d, 2, bad1, &st, &sb, err, sizeof err), -1);
    assert_int_equal(grid_set_run_flags(&d, 2, bad2, &st, &sb, err, sizeof err), -1);
    assert_int_equal(grid_set_run_flags(&d, 2, bad3, &st, &sb, err, sizeof err), -1);
    assert_int_equal(grid_set_run_flags(&d, 1, ok, &st, &sb, err, sizeof err), 0);
    assert_int_equal(sb, 1);
    grid_def_free(&d);
    /* mean and population std */
    double x[] = {0.2, 0.4}, m, sd;
    grid_mean_std(x, 2, &m, &sd);
    assert_true(fabs(m - 0.3) < 1e-12 && fabs(sd - 0.1) < 1e-12);
    grid_mean_std(x, 0, &m, &sd);
    assert_true(m == 0 && sd == 0);
}

/* ---- end to end ---- */

static long mtime_ns(const char *path)
{
    struct stat st;
    if (stat(path, &st)) return -1;
    return (long)st.st_mtim.tv_sec * 1000000000L + st.st_mtim.tv_nsec;
}

static void grid_two_cells_jobs2_then_rerun_skips(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    char dir[PATH_MAX], path[PATH_MAX + 64], out[16384];
    snprintf(dir, sizeof dir, "%s/grid-two", pcg_test_tmpdir());
    int rc = pcg_test_sh(out, sizeof out, "%s grid --out %s --scenarios 1,2 --ablations zs --jobs 2 -- " TINY_CELL,
                         pcg_test_binary(), dir);
    if (rc != 0) fail_msg("grid exited %d: %s", rc, out);
    assert_int_equal(count_of(out, "start s"), 2);
    assert_non_null(strstr(out, "2/2 done"));
    assert_non_null(strstr(out, "rule-based offline author (baseline, not a language model)"));
    /* both cells in summary.json with a numeric fitness */
    snprintf(path, sizeof path, "%s/summary.json", dir);
    json_t *j = json_load_file(path, 0, NULL);
    assert_non_null(j);
    assert_int_equal(json_integer_value(json_object_get(j, "cells_finished")), 2);
    assert_false(json_is_true(json_object_get(j, "language_model")));
    json_t *cells = json_object_get(j, "cells");
    assert_int_equal(json_array_size(cells), 2);
    const char *names[] = {"s1-cot-zs-r0", "s2-cot-zs-r0"};
    for (int i = 0; i < 2; i++) {
        json_t *c = json_array_get(cells, (size_t)i);
        assert_string_equal(json_string_value(json_object_get(c, "name")), names[i]);
        assert_string_equal(json_string_value(json_object_get(c, "state")), "finished");
        json_t *f = json_object_get(c, "best_fitness");
        assert_true(json_is_number(f));
        assert_true(json_number_value(f) >= 0 && json_number_value(f) <= 1);
    }
    json_t *means = json_object_get(j, "mean_over_scenarios");
    assert_int_equal(json_array_size(means), 1);
    double f0 = json_number_value(json_object_get(json_array_get(cells, 0), "best_fitness"));
    double f1 = json_number_value(json_object_get(json_array_get(cells, 1), "best_fitness"));
    assert_true(fabs(json_number_value(json_object_get(json_array_get(means, 0), "mean")) - (f0 + f1) / 2) < 1e-9);
    json_decref(j);
    snprintf(path, sizeof path, "%s/summary.txt", dir);
    long len;
    char err[256];
    char *txt = read_file(path, 1 << 20, &len, err, sizeof err);
    assert_non_null(txt);
    char row[64];
    snprintf(row, sizeof row, "1         cot  %.3f ± 0.000 [1/1]", f0);
    assert_non_null(strstr(txt, row));
    snprintf(row, sizeof row, "2         cot  %.3f ± 0.000 [1/1]", f1);
    assert_non_null(strstr(txt, row));
    assert_non_null(strstr(txt, "mean      cot"));
    free(txt);
    /* each cell's log, and the grid's own */
    snprintf(path, sizeof path, "%s/cells/s2-cot-zs-r0.log", dir);
    assert_true(pcg_test_exists(path));
    snprintf(path, sizeof path, "%s/grid.log", dir);
    assert_true(pcg_test_exists(path));
    /* the same command again: nothing new */
    snprintf(path, sizeof path, "%s/cells/s1-cot-zs-r0/summary.txt", dir);
    long before = mtime_ns(path);
    assert_true(before > 0);
    rc = pcg_test_sh(out, sizeof out, "%s grid --out %s --scenarios 1,2 --ablations zs --jobs 2 -- " TINY_CELL,
                     pcg_test_binary(), dir);
    if (rc != 0) fail_msg("rerun exited %d: %s", rc, out);
    assert_non_null(strstr(out, "2 finished, 0 to run"));
    assert_int_equal(count_of(out, "start s"), 0);
    assert_int_equal(mtime_ns(path), before);
    /* --summary alone reads the stored definition */
    rc = pcg_test_sh(out, sizeof out, "%s grid --out %s --summary", pcg_test_binary(), dir);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "2 cells, 2 finished"));
}

static void grid_list_cell_and_definition_refused(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    char dir[PATH_MAX], path[PATH_MAX + 64], out[16384];
    snprintf(dir, sizeof dir, "%s/grid-cell", pcg_test_tmpdir());
    const char *def = "--scenarios 1 --ablations zs --repeats 2", *flags = "-- " TINY_CELL " --seed 5";
    int rc = pcg_test_sh(out, sizeof out, "%s grid --out %s %s --list %s", pcg_test_binary(), dir, def, flags);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "0      s1-cot-zs-r0       5 "));
    assert_non_null(strstr(out, "1      s1-cot-zs-r1       1005 "));
    assert_int_equal(count_of(out, " new"), 2);
    /* one cell, as one task of a batch array */
    rc = pcg_test_sh(out, sizeof out, "%s grid --out %s %s --cell 1 %s", pcg_test_binary(), dir, def, flags);
    if (rc != 0) fail_msg("--cell 1 exited %d: %s", rc, out);
    snprintf(path, sizeof path, "%s/cells/s1-cot-zs-r1/summary.txt", dir);
    assert_true(pcg_test_exists(path));
    snprintf(path, sizeof path, "%s/cells/s1-cot-zs-r0", dir);
    assert_false(pcg_test_exists(path));
    snprintf(path, sizeof path, "%s/cells/s1-cot-zs-r1/config.json", dir);
    json_t *cfg = json_load_file(path, 0, NULL);
    assert_non_null(cfg);
    assert_int_equal(json_integer_value(json_object_get(cfg, "seed")), 1005);
    assert_int_equal(json_integer_value(json_object_get(cfg, "steps")), 256);
    json_decref(cfg);
    rc = pcg_test_sh(out, sizeof out, "%s grid --out %s --list", pcg_test_binary(), dir);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "s1-cot-zs-r1       1005                 finished, best fitness"));
    assert_int_equal(count_of(out, " new"), 1);
    /* --summary counts what is finished */
    rc = pcg_test_sh(out, sizeof out, "%s grid --out %s --summary", pcg_test_binary(), dir);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "[1/2]"));
    /* another definition into the same directory */
    rc = pcg_test_sh(out, sizeof out, "%s grid --out %s --scenarios 1 --ablations zs --repeats 3 -- " TINY_CELL
                     " --seed 5", pcg_test_binary(), dir);
    assert_int_equal(rc, 1);
    assert_int_equal(count_lines(out), 1);
    assert_non_null(strstr(out, "another definition"));
    rc = pcg_test_sh(out, sizeof out, "%s grid --out %s %s --cell 2 %s", pcg_test_binary(), dir, def, flags);
    assert_int_equal(rc, 2);
    assert_int_equal(count_lines(out), 1);
    /* an unreadable grid.json */
    snprintf(path, sizeof path, "%s/grid-bad", pcg_test_tmpdir());
    assert_int_equal(make_dirs(path), 0);
    rc = pcg_test_sh(out, sizeof out, "printf '{\"format\": 1, ' > %s/grid.json && %s grid --out %s --list", path,
                     pcg_test_binary(), path);
    assert_int_equal(rc, 1);
    assert_int_equal(count_lines(out), 1);
    assert_non_null(strstr(out, "unreadable"));
}

static void grid_gpus_needs_a_gpu(void **state)
{
    (void)state;
    char out[4096], why[256];
    int n = backend_cuda_devices(why, sizeof why);
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/grid-gpus", pcg_test_tmpdir());
    int rc = pcg_test_sh(out, sizeof out, "%s grid --out %s --gpus %d", pcg_test_binary(), dir, n + 1);
    assert_int_not_equal(rc, 0);
    assert_int_equal(count_lines(out), 1);
    if (n == 0) assert_non_null(strstr(out, "no usable GPU"));
    else assert_non_null(strstr(out, "only"));
    assert_false(pcg_test_exists(dir)); /* refused before anything is written */
}

static void grid_flag_errors_exit_2(void **state)
{
    (void)state;
    const char *cases[] = {
        "",                                    /* no --out */
        "--out D --bogus",                     /* unknown flag */
        "--out D --scenarios 0",               /* unknown scenario */
        "--out D --pe cot,xot",                /* unknown pe */
        "--out D --ablations zs,half",         /* unknown ablation */
        "--out D --repeats 0",                 /* out of range */
        "--out D --jobs 2 --gpus 1",           /* exclusive */
        "--out D --jobs",                      /* missing value */
        "--out D --list --summary",            /* at most one */
        "--out D stray",                       /* positional */
        "--out D -- --pe tot",                 /* set by the grid */
        "--out D -- --thr 2",                  /* abbreviation */
    };
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/grid-flags", pcg_test_tmpdir());
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char args[256], out[4096], *p;
        snprintf(args, sizeof args, "%s", cases[i]);
        if ((p = strstr(args, " D")) != NULL) p[1] = 0; /* replaced by the scratch path below */
        int rc = pcg_test_sh(out, sizeof out, "%s grid %s%s%s", pcg_test_binary(), args, p ? dir : "",
                             p ? cases[i] + (p - args) + 2 : "");
        if (rc != 2 || count_lines(out) != 1) fail_msg("'%s': exit %d, output: %s", cases[i], rc, out);
        assert_non_null(strstr(out, "grid: "));
    }
    assert_false(pcg_test_exists(dir));
    char out[8192];
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s grid --help", pcg_test_binary()), 0);
    assert_non_null(strstr(out, "--cell K"));
}


/* A cell whose model never writes a reward: the run stops its search early
 * and exits 1, and the grid counts the cell as finished with fitness 0. */
static void grid_hopeless_model_cell_is_finished(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    char dir[PATH_MAX], script[PATH_MAX], out[16384];
    snprintf(script, sizeof script, "%s/grid-hopeless.json", pcg_test_tmpdir());
    static const char text[] =
        "{\"default\": {\"content\": \"The reward should count the keys on the map.\\n\", \"repeat\": 300, "
        "\"piece\": 16}}";
    assert_int_equal(write_file_atomic(script, text, strlen(text)), 0);
    pcg_fake_srv s;
    pcg_test_srv_start(&s, script, "grid-hopeless", "PCG_GRID_TEST_KEY");
    snprintf(dir, sizeof dir, "%s/grid-hopeless", pcg_test_tmpdir());
    int rc = pcg_test_sh(out, sizeof out,
                         "%s grid --out %s --scenarios 1 --ablations full --jobs 1 -- " TINY_CELL
                         " --llm openai --base-url http://127.0.0.1:%d/v1 --model base --api-key-env PCG_GRID_TEST_KEY "
                         "--trials 1 --iterations 4",
                         pcg_test_binary(), dir, s.port);
    pcg_test_srv_stop(&s);
    if (rc != 0) fail_msg("grid exited %d: %s", rc, out);
    assert_non_null(strstr(out, "no node produced a valid reward (fitness 0); 1/1 done"));
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/cells/s1-cot-full-r0/stopped.txt", dir);
    assert_true(pcg_test_exists(path));
}

PCG_TESTS(grid, cmocka_unit_test(grid_scheduler_each_cell_once_one_per_slot),
          cmocka_unit_test(grid_hopeless_model_cell_is_finished),
          cmocka_unit_test(grid_cells_names_seeds_json), cmocka_unit_test(grid_two_cells_jobs2_then_rerun_skips),
          cmocka_unit_test(grid_list_cell_and_definition_refused), cmocka_unit_test(grid_gpus_needs_a_gpu),
          cmocka_unit_test(grid_flag_errors_exit_2))
