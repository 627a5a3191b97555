/* pcgrllm bench harness: the execution harness's benchmark
 * (docs/harness.md#the-benchmark).  Each two-leg target of the set is
 * edited from its starting level by one editor under each mode of the
 * study, and the deterministic builder is run on the same targets as a
 * reference row; a table like the harness paper's, then the 2x2 of
 * acceptance and early stop. */
#include "bench.h"
#include "bench_util.h"
#include "build.h"
#include "datadir.h"
#include "edit.h"
#include "env.h"
#include "feasible.h"
#include "harness_set.h"
#include "llm.h"
#include "util.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MODE_OPEN, MODE_RECOVERY, MODE_ACCEPT, MODE_EARLY, MODE_BOTH, MODE_FULL, N_MODES };
static const char *const mode_names[N_MODES] = {"open", "recovery", "accept", "early", "both", "full"};
static const char *const mode_labels[N_MODES] = {"open loop", "+ recovery", "+ acceptance", "+ early stop",
                                                 "acceptance + early stop", "full harness"};

static void mode_switches(int mode, edit_switches *s)
{
    if (mode == MODE_FULL) {
        edit_switches_full(s);
        return;
    }
    edit_switches_open(s);
    s->recovery = mode == MODE_RECOVERY;
    s->accept = mode == MODE_ACCEPT || mode == MODE_BOTH;
    s->early_stop = mode == MODE_EARLY || mode == MODE_BOTH;
}

typedef struct {
    int n, perfect, valid, recovered;
    long calls, tokens;
    double seconds;
} mode_row;

typedef struct {
    const char *targets, *set;
    int n, steps, modes[N_MODES], builder;
    edit_editor editor;
    llm_config llm;
    char editor_arg[64];
} harness_args;

static void harness_usage(FILE *f)
{
    fprintf(f,
            "usage: pcgrllm bench harness [--editor offline|noisy:P|openai] [--modes LIST] [--set fixed|reserved|all]\n"
            "                             [--n N] [--steps N] [--targets FILE] [--no-builder] [llm flags]\n"
            "  Edits each two-leg target of the benchmark set from its starting level (the\n"
            "  generator's reset map for the case's seed) under each mode, and builds each with\n"
            "  the deterministic builder as a reference row; prints perfect and valid final maps,\n"
            "  model calls, tokens, recovered replies and wall time per mode, then the 2x2 of\n"
            "  acceptance and early stop (docs/harness.md#the-benchmark).\n"
            "  --editor E     offline (default; rule-based), noisy:P (rule-based with random calls\n"
            "                 at probability P), openai (a model server, llm flags below)\n"
            "  --modes LIST   comma-separated of open, recovery, accept, early, both, full (default all)\n"
            "  --set S        fixed (the 64, default), reserved (the rest) or all\n"
            "  --n N          the first N cases of the set only\n"
            "  --steps N      editing steps per episode (default 8)\n"
            "  --targets FILE another set file (default: bench/harness_targets.json beside the binary)\n"
            "%s\n",
            llm_flags_help());
}

/* --modes LIST into a->modes. */
static int parse_modes(const char *list, int *modes)
{
    memset(modes, 0, sizeof(int) * N_MODES);
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        int m = -1;
        for (int k = 0; k < N_MODES; k++)
            if (!strcmp(tok, mode_names[k])) m = k;
        if (m < 0) return -1;
        modes[m] = 1;
    }
    int any = 0;
    for (int k = 0; k < N_MODES; k++) any |= modes[k];
    return any ? 0 : -1; /* "" or ",,": a benchmark of the builder alone, not what was asked */
}

/* One --flag VALUE (or --no-builder).  1 when it took the value, 0 when not,
 * or -(exit status + 1). */
static int harness_flag(harness_args *a, const char *flag, const char *v)
{
    long n;
    char err[600];
    if (!strcmp(flag, "--editor")) {
        if (edit_editor_parse(v, &a->editor, err, sizeof err)) return die_msg("bench harness: --editor: %s", err), -3;
    } else if (!strcmp(flag, "--modes")) {
        if (parse_modes(v, a->modes))
            return die_msg("bench harness: --modes takes open, recovery, accept, early, both, full"), -3;
    } else if (!strcmp(flag, "--set")) {
        if (strcmp(v, "fixed") && strcmp(v, "reserved") && strcmp(v, "all"))
            return die_msg("bench harness: --set takes fixed, reserved or all"), -3;
        a->set = v;
    } else if (!strcmp(flag, "--n")) {
        if (parse_int(v, 1, HARNESS_SET_MAX, &n)) return die_msg("bench harness: --n must be 1..%d", HARNESS_SET_MAX), -3;
        a->n = (int)n;
    } else if (!strcmp(flag, "--steps")) {
        if (parse_int(v, 1, 1000, &n)) return die_msg("bench harness: --steps must be 1..1000"), -3;
        a->steps = (int)n;
    } else if (!strcmp(flag, "--targets")) {
        a->targets = v;
    } else {
        int r = llm_config_flag(&a->llm, flag, v, err, sizeof err);
        if (r < 0) return die_msg("bench harness: %s", err), -3;
        if (r == 0) return die_msg("bench harness: unknown option %s (pcgrllm bench harness --help)", flag), -3;
    }
    return 1;
}

/* -1 to go on, else the exit status. */
static int parse_harness_args(int argc, char **argv, harness_args *a)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            harness_usage(stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--no-builder")) {
            a->builder = 0;
            continue;
        }
        if (strncmp(argv[i], "--", 2) || i + 1 >= argc) {
            die_msg("bench harness: %s: expected --flag VALUE (pcgrllm bench harness --help)", argv[i]);
            return 2;
        }
        int r = harness_flag(a, argv[i], argv[i + 1]);
        if (r < 0) return -r - 1;
        i++;
    }
    if (a->editor.kind == EDITOR_OPENAI) a->editor.llm = &a->llm;
    return -1;
}

/* The set file: --targets, else the one shipped beside the binary. */
static int load_cases(const harness_args *a, harness_case *cases, int *first, int *n)
{
    static const datadir_spec spec = {"bench", "harness_targets.json", "the harness benchmark's targets",
                                      "PCGRLLM_BENCH_DATA"};
    char dir[PATH_MAX], path[PATH_MAX + 32], err[PATH_MAX + 300];
    if (a->targets) {
        snprintf(path, sizeof path, "%s", a->targets);
    } else {
        if (datadir_find(&spec, dir, sizeof dir, err, sizeof err)) return die_msg("bench harness: %s", err), 1;
        snprintf(path, sizeof path, "%s/harness_targets.json", dir);
    }
    int fixed, total = harness_set_read(path, cases, HARNESS_SET_MAX, &fixed, err, sizeof err);
    if (total < 0) return die_msg("bench harness: %s", err), 1;
    *first = !strcmp(a->set, "reserved") ? fixed : 0;
    *n = !strcmp(a->set, "fixed") ? fixed : total - *first;
    if (a->n && a->n < *n) *n = a->n;
    if (*n <= 0) return die_msg("bench harness: %s has no %s cases", path, a->set), 1;
    return -1;
}

/* Every case edited under one mode.  0, or the exit status. */
static int run_mode(const harness_args *a, int mode, const harness_case *cases, int n, mode_row *row)
{
    memset(row, 0, sizeof *row);
    double t0 = now_seconds();
    for (int i = 0; i < n; i++) {
        unsigned char start_tiles[PCG_MAX_CELLS], final_tiles[PCG_MAX_CELLS];
        level_t start = env_start_level(cases[i].level_seed, PCG_DEFAULT_SIDE, PCG_DEFAULT_SIDE, start_tiles), final;
        target_t t;
        harness_case_target(&cases[i], &t);
        /* each case draws its own noise: the same draws for every case would
         * hit the same steps of all of them */
        edit_editor editor = a->editor;
        editor.seed = a->editor.seed ^ ((uint64_t)cases[i].level_seed << 20);
        edit_run run = {&start, &t, &editor, {0}, {a->steps, 0, 0, 0}, NULL, 0, 0};
        mode_switches(mode, &run.sw);
        edit_result res;
        char err[600];
        int rc = edit_episode(&run, &final, final_tiles, &res, err, sizeof err);
        if (rc != EDIT_OK) {
            die_msg("bench harness: case %d (%d, %d), %s: %s", i, cases[i].leg_key, cases[i].leg_door,
                    mode_names[mode], err);
            return rc == EDIT_SERVER ? 4 : 1;
        }
        row->n++;
        row->perfect += res.perfect;
        row->valid += res.valid;
        row->recovered += res.recovered;
        row->calls += res.calls;
        row->tokens += res.output_tokens;
        if (isatty(2)) fprintf(stderr, "\rbench harness: %-12s %3d/%d", mode_names[mode], i + 1, n);
    }
    if (isatty(2)) fputc('\n', stderr);
    row->seconds = now_seconds() - t0;
    return 0;
}

/* The builder on the same targets, the reference row. */
static void run_builder(const harness_case *cases, int n, mode_row *row)
{
    memset(row, 0, sizeof *row);
    double t0 = now_seconds();
    static build_result_t b;
    for (int i = 0; i < n; i++) {
        target_t t;
        char why[400];
        harness_case_target(&cases[i], &t);
        row->n++;
        if (build_level(&t, PCG_DEFAULT_SIDE, cases[i].level_seed, &b, why, sizeof why) != BUILD_OK) continue;
        row->perfect += b.perfect;
        row->valid += target_level_valid(&t, &b.level, why, sizeof why) == 0;
    }
    row->seconds = now_seconds() - t0;
}

static void print_row(const char *label, const mode_row *r, int model)
{
    printf("%-26s %5d/%-3d %5d/%-3d", label, r->perfect, r->n, r->valid, r->n);
    if (model) printf(" %7ld %11ld %9d", r->calls, r->tokens, r->recovered);
    else printf(" %7s %11s %9s", "-", "-", "-");
    printf(" %8.1f\n", r->seconds);
}

static void print_tables(const harness_args *a, const mode_row *rows, const mode_row *builder, int first, int n)
{
    char label[200];
    edit_editor_label(&a->editor, label, sizeof label);
    printf("\nharness benchmark: %d two-leg targets (%s set from case %d, each leg 10..40, %d enemies, one region),"
           " editor %s, %d steps\n",
           n, a->set, first, HARNESS_ENEMIES, label, a->steps);
    bench_print_machine(stdout);
    printf("%-26s %9s %9s %7s %11s %9s %8s\n", "mode", "perfect", "valid", "calls", "out tokens", "recovered",
           "wall s");
    for (int m = 0; m < N_MODES; m++)
        if (a->modes[m]) print_row(mode_labels[m], &rows[m], 1);
    if (a->builder) print_row("builder (reference)", builder, 0);
    if (a->modes[MODE_OPEN] && a->modes[MODE_ACCEPT] && a->modes[MODE_EARLY] && a->modes[MODE_BOTH]) {
        printf("\nperfect matches, acceptance x early stop:\n%-16s %14s %14s\n", "", "no early stop", "early stop");
        printf("%-16s %10d/%-3d %10d/%-3d\n", "no acceptance", rows[MODE_OPEN].perfect, n, rows[MODE_EARLY].perfect, n);
        printf("%-16s %10d/%-3d %10d/%-3d\n", "acceptance", rows[MODE_ACCEPT].perfect, n, rows[MODE_BOTH].perfect, n);
    }
}

int bench_harness(int argc, char **argv)
{
    static harness_args a;
    memset(&a, 0, sizeof a);
    a.set = "fixed";
    a.steps = 8;
    a.builder = 1;
    for (int m = 0; m < N_MODES; m++) a.modes[m] = 1;
    llm_config_defaults(&a.llm);
    char err[600];
    edit_editor_parse("offline", &a.editor, err, sizeof err);
    int rc = parse_harness_args(argc, argv, &a);
    if (rc >= 0) return rc;
    static harness_case cases[HARNESS_SET_MAX];
    int first, n;
    if ((rc = load_cases(&a, cases, &first, &n)) >= 0) return rc;
    mode_row rows[N_MODES], builder;
    for (int m = 0; m < N_MODES; m++)
        if (a.modes[m] && (rc = run_mode(&a, m, cases + first, n, &rows[m]))) return rc;
    if (a.builder) run_builder(cases + first, n, &builder);
    print_tables(&a, rows, &builder, first, n);
    return 0;
}
