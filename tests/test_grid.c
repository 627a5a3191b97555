/* `pcgrllm grid`: the slot scheduler, cells (shared zero-shot and +SA
 * cells, the axes, names, seeds, the flags of their runs), grid.json, and
 * end to end: a grid of offline cells two at a time whose summary is
 * checked against its rows, a rerun that does nothing, --list, --cell K, a
 * refused change of definition, the Human row and the model axis, --gpus
 * without a GPU, flag errors.  Cells are tiny (256 steps on 2
 * environments, 4 levels): these tests check the orchestration and the
 * arithmetic, not what the cells learn. */
#include "harness.h"
#include "grid_check.h"
#include "backend.h"
#include "grid.h"
#include "grid_exec.h"
#include "grid_rows.h"
#include "graph.h"
#include "run.h"
#include "stats.h"
#include "util.h"
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/file.h>

#define TINY_BUDGET "--preset small --steps 256 --envs 2 --align 0 --check-envs 4 --levels 4 --iterations 1"
#define TINY_CELL "--llm offline " TINY_BUDGET



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
    /* per repeat and scenario: one zero-shot cell for both methods, and
     * a full cell for each: 3 x 2 x 3 */
    grid_cell *c;
    int n = grid_cells(&d, &c);
    assert_int_equal(n, 18);
    const char *first[] = {"s1-zs-r0", "s1-tot-full-r0", "s1-got-full-r0", "s3-zs-r0", "s3-tot-full-r0",
                           "s3-got-full-r0", "s1-zs-r1"};
    for (int k = 0; k < 7; k++) {
        assert_string_equal(c[k].name, first[k]);
        assert_int_equal(c[k].index, k);
        assert_int_equal(c[k].seed, 7 + (k == 6 ? GRID_SEED_STRIDE : 0)); /* one seed per repeat, in every cell */
    }
    assert_int_equal(c[0].pe, -1);
    assert_string_equal(c[17].name, "s3-got-full-r2");
    assert_int_equal(c[17].seed, 7 + 2 * GRID_SEED_STRIDE);
    for (int a = 0; a < n; a++) /* names are unique */
        for (int b = a + 1; b < n; b++) assert_string_not_equal(c[a].name, c[b].name);
    /* the run of a shared cell, and of a full one */
    char *argv[GRID_MAX_ARGV];
    grid_argv_buf buf;
    int argc = grid_cell_argv(&d, &c[0], "D/cells/s1-zs-r0", 0, 0, 0, &buf, argv);
    char line[8192] = "";
    for (int i = 1; i < argc; i++) strcat(line, " "), strcat(line, argv[i]);
    assert_string_equal(line, " run --scenario 1 --pe cot --ablation zs --out D/cells/s1-zs-r0 --yes --steps 1000 "
                              "--threads 2 --seed 7");
    free(c);
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
    assert_int_equal(grid_def_from_json("{\"format\": 2}", &e, err, sizeof err), -1);
    assert_non_null(strstr(err, "scenarios"));
    assert_int_equal(grid_def_from_json("{\"format\": 1}", &e, err, sizeof err), -1);
    assert_non_null(strstr(err, "earlier version"));
    assert_int_equal(grid_def_from_json("[1", &e, err, sizeof err), -1);
    grid_def_free(&d);
    /* lists and run flags the grid refuses */
    memset(&d, 0, sizeof d);
    assert_int_equal(grid_parse_scenarios("1,5", &d, err, sizeof err), -1);
    assert_int_equal(grid_parse_scenarios("2,2", &d, err, sizeof err), -1);
    assert_int_equal(grid_parse_pe("cot,", &d, err, sizeof err), -1);
    assert_int_equal(grid_parse_ablations("zero", &d, err, sizeof err), -1);
    assert_int_equal(grid_parse_feedbacks("specific,loud", &d, err, sizeof err), -1);
    assert_int_equal(grid_parse_got_best("5", &d, err, sizeof err), -1);
    assert_int_equal(grid_parse_models("a,a", &d, err, sizeof err), -1);
    assert_int_equal(grid_parse_models("a:1,a_1", &d, err, sizeof err), -1); /* the same in cell names */
    assert_int_equal(grid_parse_models("offline@http://x", &d, err, sizeof err), -1);
    char *bad1[] = {"--out", "x"}, *bad2[] = {"--sce", "2"}, *bad3[] = {"--seed", "-1"}, *bad4[] = {"--init-reward", "f"};
    char *ok[] = {"--backend=cuda"};
    assert_int_equal(grid_set_run_flags(&d, 2, bad1, &st, &sb, err, sizeof err), -1);
    assert_int_equal(grid_set_run_flags(&d, 2, bad2, &st, &sb, err, sizeof err), -1);
    assert_int_equal(grid_set_run_flags(&d, 2, bad3, &st, &sb, err, sizeof err), -1);
    assert_int_equal(grid_set_run_flags(&d, 2, bad4, &st, &sb, err, sizeof err), -1);
    assert_int_equal(grid_set_run_flags(&d, 1, ok, &st, &sb, err, sizeof err), 0);
    assert_int_equal(sb, 1);
    grid_def_free(&d);
}

/* A definition of these scenarios, search methods and ablations, one
 * repeat. */
static void def_axes(grid_def *d, const char *scen, const char *pe, const char *abl)
{
    char err[256];
    memset(d, 0, sizeof *d);
    assert_int_equal(grid_parse_scenarios(scen, d, err, sizeof err), 0);
    assert_int_equal(grid_parse_pe(pe, d, err, sizeof err), 0);
    assert_int_equal(grid_parse_ablations(abl, d, err, sizeof err), 0);
    d->repeats = 1;
}

/* The axes: models (each with its server), feedback types, reference
 * counts for GoT only, the Human row; their names and flags. */
static void grid_axes_cells_and_flags(void **state)
{
    (void)state;
    grid_def d;
    char err[256];
    def_axes(&d, "2", "cot,got", "sa,fb");
    assert_int_equal(grid_parse_models("gpt-4o,qwen2.5:7b@http://127.0.0.1:8080/v1", &d, err, sizeof err), 0);
    assert_string_equal(d.models[1].name, "qwen2.5:7b");
    assert_string_equal(d.models[1].base_url, "http://127.0.0.1:8080/v1");
    assert_int_equal(grid_parse_feedbacks("specific,none", &d, err, sizeof err), 0);
    assert_int_equal(grid_parse_got_best("0,2", &d, err, sizeof err), 0);
    assert_int_equal(grid_set_human(&d, "rewards/human", err, sizeof err), 0);
    assert_int_equal(grid_set_human(&d, "/nonexistent", err, sizeof err), -1);
    int st, sb;
    /* the axes' flags are the grid's; --feedback-input is not an axis here */
    char *model[] = {"--model", "x"}, *fbk[] = {"--feedback", "none"}, *fbi[] = {"--feedback-input", "image"};
    char *abbrev[] = {"--feedback-in", "image"};
    assert_int_equal(grid_set_run_flags(&d, 2, model, &st, &sb, err, sizeof err), -1);
    assert_non_null(strstr(err, "set by the grid"));
    assert_int_equal(grid_set_run_flags(&d, 2, fbk, &st, &sb, err, sizeof err), -1);
    assert_int_equal(grid_set_run_flags(&d, 2, fbi, &st, &sb, err, sizeof err), 0);
    assert_int_equal(grid_set_run_flags(&d, 2, abbrev, &st, &sb, err, sizeof err), 0); /* run itself judges it */
    grid_def_free(&d);
    grid_cell *c;
    int n = grid_cells(&d, &c);
    /* per model: sa once; fb: cot x 2 feedbacks, got x 2 feedbacks x 2 best counts; the Human cell */
    assert_int_equal(n, 2 * (1 + 2 + 4 + 1));
    assert_string_equal(c[0].name, "s2-sa-gpt-4o-r0");
    assert_string_equal(c[1].name, "s2-cot-fb-specific-gpt-4o-r0");
    assert_string_equal(c[3].name, "s2-got-fb-specific-b0-gpt-4o-r0");
    assert_string_equal(c[7].name, "s2-human-gpt-4o-r0");
    assert_string_equal(c[8].name, "s2-sa-qwen2.5_7b-r0");
    assert_int_equal(c[1].gb, -1); /* references only for GoT */
    char *argv[GRID_MAX_ARGV];
    grid_argv_buf buf;
    char line[8192] = "";
    int argc = grid_cell_argv(&d, &c[12], "D", 0, 1, 0, &buf, argv);
    for (int i = 1; i < argc; i++) strcat(line, " "), strcat(line, argv[i]);
    assert_string_equal(c[12].name, "s2-got-fb-specific-b2-qwen2.5_7b-r0");
    assert_string_equal(line, " run --scenario 2 --pe got --ablation fb --feedback specific --got-best 2 --llm openai "
                              "--model qwen2.5:7b --base-url http://127.0.0.1:8080/v1 --threads 1 --out D --yes --seed 0");
    line[0] = 0;
    argc = grid_cell_argv(&d, &c[7], "D", 0, 0, 1, &buf, argv);
    for (int i = 1; i < argc; i++) strcat(line, " "), strcat(line, argv[i]);
    char human[PATH_MAX], want[2 * PATH_MAX];
    assert_non_null(realpath("rewards/human", human));
    snprintf(want, sizeof want, " run --scenario 2 --pe cot --ablation full --init-reward %s/scenario2.c --llm openai "
             "--model gpt-4o --backend cuda --out D --yes --seed 0", human);
    assert_string_equal(line, want);
    line[0] = 0;
    argc = grid_cell_argv(&d, &c[7], "D", 1, 0, 1, &buf, argv);
    for (int i = 1; i < argc; i++) strcat(line, " "), strcat(line, argv[i]);
    assert_string_equal(line, " run --resume --llm openai --model gpt-4o --out D --yes");
    free(c);
    /* grid.json keeps every axis */
    grid_def e;
    char *js = grid_def_json(&d);
    assert_int_equal(grid_def_from_json(js, &e, err, sizeof err), 0);
    assert_true(grid_def_equal(&d, &e));
    assert_string_equal(e.models[1].base_url, "http://127.0.0.1:8080/v1");
    assert_string_equal(e.human, human);
    free(js);
    grid_def_free(&e);
    grid_def_free(&d);
}

/* With +FB and full cells, a method's ZS and +SA columns are iteration 1
 * of its own fb and full cells (as the paper's Table II): no zero-shot or
 * +SA cells; without them they keep cells of their own.  A grid.json of
 * format 2 that had both is refused, one that had not is read. */
static void grid_cells_zs_sa_from_fb_full(void **state)
{
    (void)state;
    grid_def d;
    char err[256];
    def_axes(&d, "1", "cot,got", "zs,sa,fb,full");
    assert_int_equal(grid_set_human(&d, "rewards/human", err, sizeof err), 0);
    d.repeats = 2;
    grid_cell *c;
    int n = grid_cells(&d, &c);
    assert_int_equal(n, 2 * 5);
    const char *names[] = {"s1-cot-fb-r0", "s1-got-fb-r0", "s1-cot-full-r0", "s1-got-full-r0", "s1-human-r0"};
    for (int k = 0; k < 5; k++) assert_string_equal(c[k].name, names[k]);
    for (int k = 0; k < n; k++) assert_true(c[k].pe >= 0); /* no cell shared by the methods */
    free(c);
    assert_int_equal(grid_column_cells(d.abl, d.n_abl, ABL_ZS), ABL_FB);
    assert_int_equal(grid_column_cells(d.abl, d.n_abl, ABL_SA), ABL_FULL);
    assert_int_equal(grid_column_cells(d.abl, d.n_abl, ABL_FULL), ABL_FULL);
    /* +SA without full cells keeps its own, zero-shot takes +FB's */
    assert_int_equal(grid_parse_ablations("zs,sa,fb", &d, err, sizeof err), 0);
    n = grid_cells(&d, &c);
    assert_int_equal(n, 2 * 4);
    assert_string_equal(c[0].name, "s1-sa-r0");
    assert_int_equal(c[0].pe, -1);
    assert_string_equal(c[1].name, "s1-cot-fb-r0");
    free(c);
    assert_int_equal(grid_column_cells(d.abl, d.n_abl, ABL_ZS), ABL_FB);
    assert_int_equal(grid_column_cells(d.abl, d.n_abl, ABL_SA), ABL_SA);
    assert_int_equal(grid_column_cells(d.abl, d.n_abl, ABL_FULL), -1);
    /* format 2 made zero-shot cells beside +FB ones: refused; with sa and
     * fb only its cells are today's */
    char *js = grid_def_json(&d), *two = strstr(js, "\"format\": 3");
    assert_non_null(two);
    two[10] = '2';
    grid_def e;
    assert_int_equal(grid_def_from_json(js, &e, err, sizeof err), -1);
    assert_non_null(strstr(err, "format 2"));
    free(js);
    assert_int_equal(grid_parse_ablations("sa,fb", &d, err, sizeof err), 0);
    js = grid_def_json(&d);
    two = strstr(js, "\"format\": 3");
    two[10] = '2';
    assert_int_equal(grid_def_from_json(js, &e, err, sizeof err), 0);
    assert_true(grid_def_equal(&d, &e));
    grid_def_free(&e);
    free(js);
    grid_def_free(&d);
}

/* argv[1..] of cell c's new run, joined with spaces, into line. */
static void argv_line(const grid_def *d, const grid_cell *c, char *line, size_t len)
{
    char *argv[GRID_MAX_ARGV];
    grid_argv_buf buf;
    int argc = grid_cell_argv(d, c, "D", 0, 0, 0, &buf, argv);
    line[0] = 0;
    for (int i = 1; i < argc; i++) snprintf(line + strlen(line), len - strlen(line), " %s", argv[i]);
}

/* The axes of prompt profiles, reward APIs and fitness: cells, names and
 * the run flags they set (the argv only: what `run` makes of them is not
 * the grid's to test); --fitness only where a search is steered. */
static void grid_axes_prompts_api_fitness_argv(void **state)
{
    (void)state;
    grid_def d, e;
    char err[256], line[4096];
    def_axes(&d, "1", "got", "zs,fb");
    assert_int_equal(grid_parse_prompt_profiles("paper,rich", &d, err, sizeof err), 0);
    assert_int_equal(grid_parse_reward_apis("minimal,full", &d, err, sizeof err), 0);
    assert_int_equal(grid_parse_fitnesses("heuristic,llm", &d, err, sizeof err), 0);
    assert_int_equal(grid_set_human(&d, "rewards/human", err, sizeof err), 0);
    grid_cell *c;
    int n = grid_cells(&d, &c);
    /* per prompt profile and reward API: GoT +FB under each fitness (ZS is
     * their iteration 1), and the Human cell */
    assert_int_equal(n, 2 * 2 * (2 + 1));
    assert_string_equal(c[0].name, "s1-got-fb-heuristic-paper-api-minimal-r0");
    assert_string_equal(c[1].name, "s1-got-fb-llm-paper-api-minimal-r0");
    assert_string_equal(c[2].name, "s1-human-paper-api-minimal-r0");
    assert_string_equal(c[4].name, "s1-got-fb-llm-paper-api-full-r0");
    assert_string_equal(c[10].name, "s1-got-fb-llm-rich-api-full-r0");
    argv_line(&d, &c[10], line, sizeof line);
    assert_string_equal(line, " run --scenario 1 --pe got --ablation fb --fitness llm --prompts rich --reward-api full "
                              "--out D --yes --seed 0");
    argv_line(&d, &c[8], line, sizeof line); /* the Human cell: prompts and API, no fitness */
    assert_non_null(strstr(line, "--init-reward "));
    assert_non_null(strstr(line, " --prompts rich --reward-api minimal "));
    assert_null(strstr(line, "--fitness"));
    /* grid.json keeps the three axes */
    char *js = grid_def_json(&d);
    assert_int_equal(grid_def_from_json(js, &e, err, sizeof err), 0);
    assert_true(grid_def_equal(&d, &e));
    assert_int_equal(e.n_fit, 2);
    e.fitness[1] = FIT_HEURISTIC, e.n_fit = 1;
    assert_false(grid_def_equal(&d, &e));
    grid_def_free(&e);
    free(js);
    free(c);
    /* the axes' flags are the grid's; without the axis they are run flags */
    int st, sb;
    char *pr[] = {"--prompts", "rich"}, *ra[] = {"--reward-api", "full"}, *fi[] = {"--fitness", "llm"};
    char *ab[] = {"--fit", "llm"};
    assert_int_equal(grid_set_run_flags(&d, 2, pr, &st, &sb, err, sizeof err), -1);
    assert_non_null(strstr(err, "set by the grid"));
    assert_int_equal(grid_set_run_flags(&d, 2, ra, &st, &sb, err, sizeof err), -1);
    assert_int_equal(grid_set_run_flags(&d, 2, fi, &st, &sb, err, sizeof err), -1);
    assert_int_equal(grid_set_run_flags(&d, 2, ab, &st, &sb, err, sizeof err), -1);
    assert_non_null(strstr(err, "write it in full"));
    grid_def_free(&d);
    def_axes(&d, "1", "cot", "zs,sa");
    assert_int_equal(grid_set_run_flags(&d, 2, pr, &st, &sb, err, sizeof err), 0);
    assert_int_equal(grid_parse_fitnesses("heuristic,llm", &d, err, sizeof err), 0);
    /* cells of one node are not run once per fitness: nothing steers them */
    n = grid_cells(&d, &c);
    assert_int_equal(n, 2);
    assert_string_equal(c[0].name, "s1-zs-r0");
    argv_line(&d, &c[0], line, sizeof line);
    assert_null(strstr(line, "--fitness"));
    free(c);
    grid_def_free(&d);
    memset(&d, 0, sizeof d);
    assert_int_equal(grid_parse_prompt_profiles("paper,loud", &d, err, sizeof err), -1);
    assert_int_equal(grid_parse_reward_apis("full,full", &d, err, sizeof err), -1);
    assert_int_equal(grid_parse_fitnesses("oracle", &d, err, sizeof err), -1);
}

/* A finished cell made by hand: config.json as given, a graph of n nodes
 * of CoT with the given fitness, summary.txt. */
static void fake_cell(const char *dir, const char *config, const double *fitness, int n)
{
    char path[PATH_MAX + 64];
    assert_int_equal(make_dirs(dir), 0);
    snprintf(path, sizeof path, "%s/config.json", dir);
    assert_int_equal(write_file_atomic(path, config, strlen(config)), 0);
    thought_graph g;
    assert_int_equal(graph_init(&g, PE_COT, 1), 0);
    for (int i = 0; i < n; i++) {
        assert_int_equal(graph_add(&g, i + 1, i - 1), i);
        snprintf(g.nodes[i].reward_path, sizeof g.nodes[i].reward_path, "nodes/%03d/reward.c", i);
        assert_int_equal(graph_finish(&g, i, NODE_OK, fitness[i]), 0);
    }
    snprintf(path, sizeof path, "%s/graph.json", dir);
    assert_int_equal(graph_save(&g, path), 0);
    graph_free(&g);
    snprintf(path, sizeof path, "%s/summary.txt", dir);
    assert_int_equal(write_file_atomic(path, "done\n", 5), 0);
}

/* The rows of +FB and full cells: each cell's first node is also its
 * method's ZS (+SA) row, marked a duplicate, and Table II reads it; the
 * rows' prompts and reward API are config.json's, the defaults without. */
static void grid_rows_zs_sa_from_fb_full_cells(void **state)
{
    (void)state;
    grid_def d;
    char dir[PATH_MAX], cell[PATH_MAX + 256];
    def_axes(&d, "1", "cot", "zs,sa,fb,full");
    snprintf(dir, sizeof dir, "%s/grid-rows-first", pcg_test_tmpdir());
    grid_cell *c;
    int n = grid_cells(&d, &c);
    assert_int_equal(n, 2);
    const double fb[] = {0.2, 0.5, 0.7}, full[] = {0.4, 0.6, 0.9};
    for (int k = 0; k < 2; k++) {
        char config[256];
        snprintf(config, sizeof config, "{\"author\": \"offline\", \"ablation\": \"%s\", \"iterations\": 3}",
                 run_ablation_name(c[k].ablation));
        grid_cell_dir(dir, &c[k], cell, sizeof cell);
        fake_cell(cell, config, c[k].ablation == ABL_FB ? fb : full, 3);
    }
    grid_rows R;
    assert_int_equal(grid_rows_read(dir, &d, c, n, &R), 0);
    assert_int_equal(R.n, 2 * (3 + 1));
    int zs = 0, sa = 0;
    for (int i = 0; i < R.n; i++) {
        const grid_row *w = &R.rows[i];
        if (w->ablation == ABL_ZS) zs++, assert_true(w->duplicate), assert_true(fabs(w->fitness - 0.2) < 1e-12);
        else if (w->ablation == ABL_SA) sa++, assert_true(w->duplicate), assert_true(fabs(w->fitness - 0.4) < 1e-12);
        else assert_false(w->duplicate);
        assert_string_equal(w->key.pe, "cot");
        /* config.json names no prompts or reward API: the runs' defaults */
        assert_string_equal(w->key.prompts, "paper");
        assert_string_equal(w->key.reward_api, "minimal");
        assert_string_equal(w->key.search_fitness, "heuristic");
    }
    assert_int_equal(zs, 1);
    assert_int_equal(sa, 1);
    grid_rows_free(&R);
    /* a cell whose run records its prompts and reward API */
    grid_cell_dir(dir, &c[0], cell, sizeof cell);
    fake_cell(cell, "{\"author\": \"offline\", \"ablation\": \"fb\", \"iterations\": 3, \"prompts\": \"rich\", "
                    "\"reward_api\": \"full\"}", fb, 3);
    assert_int_equal(grid_rows_read(dir, &d, c, 1, &R), 0);
    assert_int_equal(R.n, 3 + 1);
    for (int i = 0; i < R.n; i++) {
        assert_string_equal(R.rows[i].key.prompts, "rich");
        assert_string_equal(R.rows[i].key.reward_api, "full");
    }
    grid_rows_free(&R);
    grid_cell_dir(dir, &c[0], cell, sizeof cell);
    fake_cell(cell, "{\"author\": \"offline\", \"ablation\": \"fb\", \"iterations\": 3}", fb, 3);
    assert_int_equal(grid_rows_read(dir, &d, c, n, &R), 0);
    grid_tables T;
    assert_int_equal(grid_tables_compute(&R, GRID_VALUE_FINAL, &T), 0);
    assert_int_equal(T.n_t2, 1);
    const double want[4] = {0.2, 0.4, 0.7, 0.9};
    for (int a = 0; a < 4; a++) {
        assert_int_equal(T.t2[0].col[a].n, 1);
        assert_true(fabs(T.t2[0].col[a].mean - want[a]) < 1e-12);
    }
    grid_tables_free(&T);
    grid_rows_free(&R);
    free(c);
    grid_def_free(&d);
}

/* ---- end to end ---- */

static long mtime_ns(const char *path)
{
    struct stat st;
    if (stat(path, &st)) return -1;
    return (long)st.st_mtim.tv_sec * 1000000000L + st.st_mtim.tv_nsec;
}

/* Scenarios 1 and 3, CoT and GoT, zero-shot (shared) and full over two
 * iterations, two seeds, two cells at a time: 12 cells, 20 nodes. */
#define E2E_DEF "--scenarios 1,3 --pe cot,got --ablations zs,full --repeats 2"

static void grid_offline_jobs2_summary_matches_rows(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    char dir[PATH_MAX], path[PATH_MAX + 64];
    static char out[1 << 16];
    snprintf(dir, sizeof dir, "%s/grid-e2e", pcg_test_tmpdir());
    int rc = pcg_test_sh(out, sizeof out, "%s grid --out %s " E2E_DEF " --jobs 2 -- " TINY_CELL " --iterations 2",
                         pcg_test_binary(), dir);
    if (rc != 0) fail_msg("grid exited %d: %s", rc, out);
    assert_int_equal(count_of(out, "start s"), 12);
    assert_non_null(strstr(out, "12/12 done"));
    assert_non_null(strstr(out, "rule-based offline author (baseline, not a language model)"));
    assert_non_null(strstr(out, "| Scenario | Method | ZS | PCGRLLM | p(ZS) |"));
    /* the zero-shot cells ran once per scenario and seed */
    snprintf(path, sizeof path, "%s/cells/s3-zs-r1/summary.txt", dir);
    assert_true(pcg_test_exists(path));
    snprintf(path, sizeof path, "%s/cells/s3-cot-zs-r1", dir);
    assert_false(pcg_test_exists(path));
    grid_check_summary(dir, 12);
    /* rows: per scenario and seed, the zero-shot node under CoT and GoT
     * (once marked duplicate), and two nodes of each full cell */
    snprintf(path, sizeof path, "%s/summary.json", dir);
    json_t *j = json_load_file(path, 0, NULL);
    assert_non_null(j);
    json_t *rows = json_object_get(j, "rows"), *r;
    assert_int_equal(json_array_size(rows), 4 * 6);
    size_t i;
    int dup = 0, seeds_ok = 1;
    json_array_foreach(rows, i, r) {
        dup += json_is_true(json_object_get(r, "duplicate"));
        const char *cell = json_string_value(json_object_get(r, "cell"));
        long long seed = json_integer_value(json_object_get(r, "seed"));
        seeds_ok &= seed == (strstr(cell, "-r1") ? 1000 : 0); /* one seed per repeat in every method */
        assert_string_equal(json_string_value(json_object_get(r, "model")), "offline");
        /* the runs' defaults: what config.json records, or its absence */
        assert_string_equal(json_string_value(json_object_get(r, "prompts")), "paper");
        assert_string_equal(json_string_value(json_object_get(r, "reward_api")), "minimal");
        assert_string_equal(json_string_value(json_object_get(r, "search_fitness")), "heuristic");
    }
    assert_int_equal(dup, 4);
    assert_true(seeds_ok);
    assert_false(json_is_true(json_object_get(j, "language_model")));
    assert_string_equal(json_string_value(json_object_get(j, "value")), "final");
    json_decref(j);
    snprintf(path, sizeof path, "%s/plots/fitness_by_iteration_1.png", dir);
    assert_true(pcg_test_exists(path));
    /* the same command again: nothing new */
    snprintf(path, sizeof path, "%s/cells/s1-zs-r0/summary.txt", dir);
    long before = mtime_ns(path);
    assert_true(before > 0);
    rc = pcg_test_sh(out, sizeof out, "%s grid --out %s " E2E_DEF " --jobs 2 -- " TINY_CELL " --iterations 2",
                     pcg_test_binary(), dir);
    if (rc != 0) fail_msg("rerun exited %d: %s", rc, out);
    assert_non_null(strstr(out, "12 finished, 0 to run"));
    assert_int_equal(count_of(out, "start s"), 0);
    assert_int_equal(mtime_ns(path), before);
    /* --summary alone reads the stored definition; --value best is labelled */
    rc = pcg_test_sh(out, sizeof out, "%s grid --out %s --summary --value best", pcg_test_binary(), dir);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "12 cells, 12 finished"));
    assert_non_null(strstr(out, "--value best"));
    snprintf(path, sizeof path, "%s/summary.json", dir);
    j = json_load_file(path, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(j, "value")), "best");
    json_decref(j);
}

/* The Human row and the model axis: the human-written reward trained as it
 * is, then refined; its first node is also its zero-shot row, and its
 * label says whose design the reward is. */
static void grid_human_row_and_models(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    char dir[PATH_MAX], path[PATH_MAX + 64], marked[PATH_MAX];
    static char out[1 << 16];
    /* rewards/human/scenario3.c marked as the engine's design on its first
     * line (any marker it has replaced) */
    snprintf(marked, sizeof marked, "%s/human-marked", pcg_test_tmpdir());
    char *given = pcg_test_slurp("rewards/human/scenario3.c"), *body = given, human[1 << 16];
    assert_non_null(given);
    if (!strncmp(body, "/* pcgrllm-human:", 17)) body += strcspn(body, "\n") + 1;
    snprintf(human, sizeof human, "/* pcgrllm-human: engine-design */\n%s", body);
    free(given);
    snprintf(path, sizeof path, "%s/scenario3.c", marked);
    assert_int_equal(make_dirs(marked), 0);
    assert_int_equal(write_file_atomic(path, human, strlen(human)), 0);
    snprintf(dir, sizeof dir, "%s/grid-human", pcg_test_tmpdir());
    int rc = pcg_test_sh(out, sizeof out, "%s grid --out %s --scenarios 3 --ablations zs --models offline --human "
                         "%s --jobs 2 -- " TINY_BUDGET " --iterations 2", pcg_test_binary(), dir, marked);
    if (rc != 0) fail_msg("grid exited %d: %s", rc, out);
    /* labelled by the marker of the grid's copy */
    assert_non_null(strstr(out, "| 3 | Human (engine's design) |"));
    snprintf(path, sizeof path, "%s/cells/s3-human-r0/init_reward.c", dir);
    char *copy = pcg_test_slurp(path);
    assert_non_null(copy);
    assert_string_equal(copy, human);
    free(copy);
    grid_check_summary(dir, 2);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    json_t *j = json_load_file(path, 0, NULL), *r;
    size_t i;
    int human_zs = 0, human_full = 0;
    json_array_foreach(json_object_get(j, "rows"), i, r) {
        if (strcmp(json_string_value(json_object_get(r, "pe")), "human")) continue;
        const char *abl = json_string_value(json_object_get(r, "ablation"));
        human_zs += !strcmp(abl, "zs") && json_integer_value(json_object_get(r, "iteration")) == 1;
        human_full += !strcmp(abl, "full");
    }
    assert_int_equal(human_zs, 1);
    assert_int_equal(human_full, 2);
    assert_string_equal(json_string_value(json_object_get(json_object_get(j, "human_rewards"), "3")), "engine-design");
    json_decref(j);
}

/* A model on its own server (the scripted fake) that also judges the
 * levels: --fitnesses heuristic,llm runs the +FB cell once steered by the
 * heuristic and once by the model's scores.  Each row holds the
 * evaluator's fitness (and, steered by the model, its score) of the same
 * node; Table V compares the two cells' heuristic fitness, and the
 * model's scores stand beside the heuristic in their own table. */
static void grid_fitness_llm_rows_and_table5(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    setenv("PCG_GRID_TEST_KEY", "sk-grid-test", 1);
    pcg_fake_srv srv;
    pcg_test_srv_start(&srv, "tests/fake_openai_judge.json", "grid-judge", "PCG_GRID_TEST_KEY");
    char dir[PATH_MAX], path[PATH_MAX + 64];
    static char out[1 << 16];
    snprintf(dir, sizeof dir, "%s/grid-judge", pcg_test_tmpdir());
    int rc = pcg_test_sh(out, sizeof out, "%s grid --out %s --scenarios 1 --pe tot --ablations zs,fb --fitnesses "
                         "heuristic,llm --models fake-coder@http://127.0.0.1:%d/v1 --api-key-env PCG_GRID_TEST_KEY -- "
                         TINY_BUDGET " --iterations 2 --llm-retries 1 --llm-timeout 20", pcg_test_binary(), dir,
                         srv.port);
    pcg_test_srv_stop(&srv);
    if (rc != 0) fail_msg("grid exited %d: %s", rc, out);
    grid_check_summary(dir, 2); /* two +FB cells; their first nodes are also the zero-shot values */
    snprintf(path, sizeof path, "%s/tables.md", dir);
    char *md = pcg_test_slurp(path);
    assert_non_null(md);
    assert_non_null(strstr(md, "### Table V — heuristic fitness of +FB runs"));
    assert_non_null(strstr(md, "### Model scores vs heuristic"));
    /* the builder's level for scenario 1, measured: the ceiling of every column */
    assert_non_null(strstr(md, "Upper bound: a level the deterministic builder makes"));
    assert_non_null(strstr(md, "scenario 1 1.000"));
    free(md);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    json_t *j = json_load_file(path, 0, NULL), *r;
    assert_true(json_is_true(json_object_get(j, "language_model")));
    size_t i;
    double fit[2][2] = {{NAN, NAN}, {NAN, NAN}}; /* [steered by the model][iteration - 1] */
    /* the cells ran one after the other: only the model-steered one asked
     * for judgements; its first node (also the zero-shot row) was judged
     * 0.25, the second the mean of its scores, 0.95 */
    json_array_foreach(json_object_get(j, "rows"), i, r) {
        const char *abl = json_string_value(json_object_get(r, "ablation"));
        int it = (int)json_integer_value(json_object_get(r, "iteration"));
        int llm = !strcmp(json_string_value(json_object_get(r, "search_fitness")), "llm");
        assert_string_equal(json_string_value(json_object_get(r, "model")), "fake-coder");
        assert_true(!strcmp(abl, "zs") ? it == 1 : !strcmp(abl, "fb"));
        json_t *score = json_object_get(r, "llm_score");
        if (llm) assert_true(fabs(json_number_value(score) - (it == 1 ? 0.25 : 0.95)) < 1e-9);
        else assert_true(json_is_null(score));
        char ev[PATH_MAX + 128];
        snprintf(ev, sizeof ev, "%s/cells/%s/nodes/%03d/eval.json", dir, json_string_value(json_object_get(r, "cell")),
                 (int)json_integer_value(json_object_get(r, "node")));
        json_t *e = json_load_file(ev, 0, NULL);
        assert_non_null(e);
        double f = json_number_value(json_object_get(r, "fitness"));
        assert_true(fabs(f - json_number_value(json_object_get(e, "fitness"))) < 1e-9);
        fit[llm][it - 1] = f;
        json_decref(e);
    }
    json_t *t5 = json_object_get(j, "table5");
    assert_int_equal(json_array_size(t5), 1); /* ToT in scenario 1; one scenario has no Mean row */
    json_t *s1 = json_array_get(t5, 0);
    assert_true(fabs(json_number_value(json_object_get(s1, "heuristic_steered_base")) - fit[0][0]) < 1e-9);
    assert_true(fabs(json_number_value(json_object_get(s1, "heuristic_steered_fb")) - fit[0][1]) < 1e-9);
    assert_true(fabs(json_number_value(json_object_get(s1, "llm_steered_base")) - fit[1][0]) < 1e-9);
    assert_true(fabs(json_number_value(json_object_get(s1, "llm_steered_fb")) - fit[1][1]) < 1e-9);
    assert_true(json_is_true(json_object_get(s1, "too_few_runs"))); /* one seed */
    json_t *ms = json_object_get(j, "model_scores_vs_heuristic");
    assert_int_equal(json_array_size(ms), 1); /* the model-steered cell: the one it judged */
    json_t *m1 = json_array_get(ms, 0);
    assert_string_equal(json_string_value(json_object_get(m1, "search_fitness")), "llm");
    assert_true(fabs(json_number_value(json_object_get(m1, "llm_zs")) - 0.25) < 1e-9);
    assert_true(fabs(json_number_value(json_object_get(m1, "llm_fb")) - 0.95) < 1e-9);
    assert_true(fabs(json_number_value(json_object_get(m1, "llm_delta")) - 0.7) < 1e-9);
    json_decref(j);
    snprintf(path, sizeof path, "%s/table5.csv", dir);
    assert_true(pcg_test_exists(path));
    snprintf(path, sizeof path, "%s/model_scores_vs_heuristic.csv", dir);
    assert_true(pcg_test_exists(path));
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
    assert_non_null(strstr(out, "0      s1-zs-r0                           5 "));
    assert_non_null(strstr(out, "1      s1-zs-r1                           1005 "));
    assert_int_equal(count_of(out, " new"), 2);
    /* one cell, as one task of a batch array */
    rc = pcg_test_sh(out, sizeof out, "%s grid --out %s %s --cell 1 %s", pcg_test_binary(), dir, def, flags);
    if (rc != 0) fail_msg("--cell 1 exited %d: %s", rc, out);
    snprintf(path, sizeof path, "%s/cells/s1-zs-r1/summary.txt", dir);
    assert_true(pcg_test_exists(path));
    snprintf(path, sizeof path, "%s/cells/s1-zs-r0", dir);
    assert_false(pcg_test_exists(path));
    snprintf(path, sizeof path, "%s/cells/s1-zs-r1/config.json", dir);
    json_t *cfg = json_load_file(path, 0, NULL);
    assert_non_null(cfg);
    assert_int_equal(json_integer_value(json_object_get(cfg, "seed")), 1005);
    assert_int_equal(json_integer_value(json_object_get(cfg, "steps")), 256);
    json_decref(cfg);
    rc = pcg_test_sh(out, sizeof out, "%s grid --out %s --list", pcg_test_binary(), dir);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "s1-zs-r1                           1005                 finished, best fitness"));
    assert_int_equal(count_of(out, " new"), 1);
    /* --summary counts what is finished */
    rc = pcg_test_sh(out, sizeof out, "%s grid --out %s --summary", pcg_test_binary(), dir);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "2 cells, 1 finished"));
    assert_non_null(strstr(out, "(n=1)"));
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

/* One process per cell: a cell whose lock another process holds is
 * listed as running, not submitted again, and not started twice. */
static void grid_cell_lock_one_process(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    char dir[PATH_MAX], path[PATH_MAX + 64], out[8192];
    snprintf(dir, sizeof dir, "%s/grid-lock", pcg_test_tmpdir());
    int rc = pcg_test_sh(out, sizeof out, "%s grid --out %s --ablations zs --slurm-script-only -- " TINY_CELL,
                         pcg_test_binary(), dir);
    if (rc != 0) fail_msg("--slurm-script-only exited %d: %s", rc, out);
    snprintf(path, sizeof path, "%s/cells/s1-zs-r0.lock", dir);
    int fd = open(path, O_RDWR | O_CREAT, 0644);
    assert_true(fd >= 0);
    assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
    rc = pcg_test_sh(out, sizeof out, "%s grid --out %s --list", pcg_test_binary(), dir);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "s1-zs-r0                           0                    running"));
    rc = pcg_test_sh(out, sizeof out, "%s grid --out %s --slurm-script-only", pcg_test_binary(), dir);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "1 cell is running now"));
    assert_non_null(strstr(out, "nothing to submit"));
    rc = pcg_test_sh(out, sizeof out, "%s grid --out %s --cell 0", pcg_test_binary(), dir);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, "being run by another process"));
    snprintf(path, sizeof path, "%s/cells/s1-zs-r0", dir);
    assert_false(pcg_test_exists(path)); /* the run never started */
    close(fd);
}

static void grid_gpus_needs_a_gpu(void **state)
{
    (void)state;
    char out[4096], why[256];
    int n = pcg_test_cuda_devices(why, sizeof why);
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
        "--out D --models a -- --model b",     /* set by the model axis */
        "--out D --feedbacks loud",            /* unknown feedback */
        "--out D --got-worst 7",               /* out of range */
        "--out D --human /nonexistent",        /* no scenario1.c there */
        "--out D --value mean",                /* final or best */
        "--out D --time 1:00",                 /* a Slurm option without --slurm */
        "--out D --slurm --jobs 2",            /* a task per cell */
        "--out D --slurm --partition 'a b'",   /* not a Slurm value */
        "--out D --slurm --list",              /* at most one */
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
                         "%s grid --out %s --scenarios 1 --ablations full --jobs 1 --api-key-env PCG_GRID_TEST_KEY -- " TINY_CELL
                         " --llm openai --base-url http://127.0.0.1:%d/v1 --model base "
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
          cmocka_unit_test(grid_cells_names_seeds_json), cmocka_unit_test(grid_axes_cells_and_flags),
          cmocka_unit_test(grid_cells_zs_sa_from_fb_full), cmocka_unit_test(grid_rows_zs_sa_from_fb_full_cells),
          cmocka_unit_test(grid_axes_prompts_api_fitness_argv),
          cmocka_unit_test(grid_offline_jobs2_summary_matches_rows), cmocka_unit_test(grid_human_row_and_models),
          cmocka_unit_test(grid_fitness_llm_rows_and_table5),
          cmocka_unit_test(grid_list_cell_and_definition_refused), cmocka_unit_test(grid_cell_lock_one_process),
          cmocka_unit_test(grid_gpus_needs_a_gpu),
          cmocka_unit_test(grid_flag_errors_exit_2))
