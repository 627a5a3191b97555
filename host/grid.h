/* Experiment grids (`pcgrllm grid`): many independent `pcgrllm run` cells,
 * scenarios x search methods x ablations x repeats, each in its own run
 * directory.  This header holds the parts that need no process: the grid
 * definition and its JSON form, the cells (names, seeds), the slot
 * scheduler, the state of a cell's run directory and the statistics.
 * host/cmd_grid.c runs the cells.  See docs/grid.md. */
#ifndef PCG_GRID_H
#define PCG_GRID_H
#include <stdint.h>

#define GRID_MAX_REPEATS 1000
#define GRID_MAX_RUN_FLAGS 64
/* Seeds of repeat r are base + r * GRID_SEED_STRIDE: a run trains node i
 * with its seed + i (i < 1000), so repeats never share a training seed. */
#define GRID_SEED_STRIDE 1000

typedef struct {
    int n_scen, scen[4];       /* scenario numbers 1..4 */
    int n_pe, pe[3];           /* PE_COT, PE_TOT, PE_GOT */
    int n_abl, abl[4];         /* 0 zs, 1 sa, 2 fb, 3 full */
    int repeats;
    uint64_t base_seed;        /* --seed of the run flags, 0 if none */
    int n_run_flags;           /* the flags after "--", as given */
    char *run_flags[GRID_MAX_RUN_FLAGS];
} grid_def;

typedef struct {
    int index;
    int scenario, pe, ablation, repeat;
    uint64_t seed;
    char name[32];             /* s1-tot-full-r0 */
} grid_cell;

const char *grid_ablation_name(int a);

/* Parse "1,2,3" / "cot,tot" / "zs,full" into def.  0, or -1 with one line
 * in err (unknown name, duplicate, empty item). */
int grid_parse_scenarios(const char *s, grid_def *d, char *err, int errlen);
int grid_parse_pe(const char *s, grid_def *d, char *err, int errlen);
int grid_parse_ablations(const char *s, grid_def *d, char *err, int errlen);
/* Take the run flags (copied).  Refuses the flags the grid sets itself
 * (--scenario, --pe, --out, ...) and abbreviations of them; reads --seed
 * into base_seed; *sets_threads / *sets_backend say whether the flags choose
 * those.  0, or -1 with one line in err. */
int grid_set_run_flags(grid_def *d, int n, char **flags, int *sets_threads, int *sets_backend, char *err,
                       int errlen);
void grid_def_free(grid_def *d);

int grid_n_cells(const grid_def *d);
/* Cell k (0 <= k < grid_n_cells): repeats outermost, then scenario, pe,
 * ablation, so that the first repeat of every combination comes first. */
void grid_cell_at(const grid_def *d, int k, grid_cell *c);

/* grid.json text of the definition (malloc'ed), and back.  The run flags
 * are stored as given; cells are listed for the reader, not read back. */
char *grid_def_json(const grid_def *d);
int grid_def_from_json(const char *text, grid_def *d, char *err, int errlen);
/* 1 when the two define the same cells with the same run flags. */
int grid_def_equal(const grid_def *a, const grid_def *b);

/* ---- the slot scheduler: cells from a queue onto n slots, at most one
 * running cell per slot, the lowest free slot first ---- */
typedef struct {
    int n_slots;
    int *slot_cell;            /* the cell running on each slot, -1 when free */
    const int *queue;          /* cells to run, in order */
    int n_queue, next;
    int running;
} grid_sched;

int grid_sched_init(grid_sched *s, int n_slots, const int *queue, int n_queue);
void grid_sched_free(grid_sched *s);
/* The next cell to start and its slot (*slot), or -1 when no slot is free
 * or the queue is empty. */
int grid_sched_next(grid_sched *s, int *slot);
/* The cell on slot has ended: the slot is free again.  Returns that cell,
 * -1 if the slot was free or out of range. */
int grid_sched_done(grid_sched *s, int slot);
/* Stop starting cells (what is running keeps running). */
void grid_sched_stop(grid_sched *s);

/* ---- a cell's run directory ---- */
enum { GRID_NEW = 0, GRID_STARTED = 1, GRID_FINISHED = 2 };

typedef struct {
    int state;                 /* GRID_NEW, GRID_STARTED, GRID_FINISHED */
    int best_node;             /* -1: no node produced a valid reward */
    double best_fitness;       /* 0 when best_node is -1 */
    int nodes;
    char author[200];          /* config.json's author_label (+ model) */
    int offline;               /* the rule-based offline author */
    char backend[16];
} grid_result;

/* GRID_NEW: no run there (no config.json).  GRID_FINISHED: the loop ended,
 * as run_main ends it: no pending node, every iteration done (one for zs
 * and sa) or the target fitness reached, and summary.txt written.
 * GRID_STARTED otherwise. */
void grid_run_state(const char *dir, grid_result *r);

/* Mean and population standard deviation (divisor n) of x[0..n-1];
 * 0 and 0 when n is 0. */
void grid_mean_std(const double *x, int n, double *mean, double *sd);

#endif
