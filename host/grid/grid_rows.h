/* A grid's results as rows, and the paper's tables computed from them.
 *
 * A row is one finished node of one cell, under the headings it is
 * reported under: (scenario, model, search method, ablation, feedback,
 * feedback input, GoT reference counts, prompt profile, reward API, the
 * fitness that steered the search, the acceptance rule, the target
 * fitness, seed, iteration).  Where the grid
 * has +FB (full) cells, the first node of each is also its method's
 * zero-shot (+SA) row; otherwise a zero-shot or +SA cell, run once for
 * every search method, gives one row per search method.  The Human cell's
 * first node is also its zero-shot row.  Copies are marked duplicate.
 *
 * The tables (docs/grid.md states each formula):
 *   - a column's value for one seed: zero-shot and +SA the node of
 *     iteration 1, +FB and PCGRLLM the cell's last node (--value final),
 *     or the best fitness up to that node (--value best);
 *   - normalisation: per scenario s, fixed bounds: 0 is random play's
 *     fitness r_s (below), 1 a perfect score, so x maps to
 *     (x - r_s) / (1 - r_s) whatever else the grid holds (below 0: worse
 *     than random play).  The paper's own formula cannot be recovered from
 *     its numbers; this is the engine's;
 *   - the Mean row: per seed, the mean of the normalised values of every
 *     scenario of the grid; then mean and sample std over the seeds; beside
 *     it the same of the raw values.  A grid of one scenario has no Mean
 *     row, and the values by iteration and the studies use its raw values;
 *   - per-scenario rows: the raw values, mean and sample std over seeds;
 *   - p(ZS), p(SA): Welch's t-test of PCGRLLM against ZS and against +SA
 *     over the seeds, only when both columns have GRID_MIN_TEST_N seeds;
 *   - per iteration (Table IV, Table III, Fig. 6): the Mean-row value of
 *     every iteration, and its change from one iteration to the next;
 *   - Table V: +FB cells steered by the heuristic and by the model's own
 *     scores, the heuristic fitness of iteration 1 and of the last, and
 *     Welch's p of the last (model against heuristic);
 *   - random play: the fitness of the cells' evaluation levels after one
 *     episode of uniformly random actions on the fixed evaluation maps
 *     (`pcgrllm levels --policy random --seed EVAL_SEED`), per scenario. */
#ifndef PCG_GRID_ROWS_H
#define PCG_GRID_ROWS_H
#include "grid.h"
#include <stdint.h>

#define GRID_MAX_ITER 64
/* The fewest seeds per column for a t-test: with two, a test rests on
 * two values a side and an accidentally tight pair reads as significant. */
#define GRID_MIN_TEST_N 3

/* What a Table II row is about (its columns are the ablations). */
typedef struct {
    char model[GRID_MODEL_MAX];  /* "offline" for the offline author */
    char pe[8];                  /* cot, tot, got, or human (a given reward refined with CoT) */
    char feedback[16];           /* specific, generic, none */
    char feedback_input[8];      /* text, image */
    int got_best, got_worst;     /* GoT reference counts; -1 for the other methods */
    char prompts[8];             /* the prompt profile: paper, rich */
    char reward_api[8];          /* the reward API the prompt lists: minimal, full */
    char search_fitness[12];     /* what steered the search (run --fitness): heuristic, llm */
    char accept[8];              /* which revisions it built on (run --accept): always, improve */
    char target_fitness[24];     /* where it stopped early (run --target-fitness): none, 0.9, ... */
} grid_key;

typedef struct {
    grid_key key;
    int scenario;                /* 1..4 */
    int ablation;                /* ABL_ZS .. ABL_FULL */
    int repeat;
    uint64_t seed;
    int iteration;               /* 1.. */
    int node;                    /* the node's id in its cell */
    int ok;                      /* 0: the node failed (fitness 0) */
    int final;                   /* the last node of a finished cell */
    double fitness;              /* the evaluator's (heuristic) fitness */
    double llm_score;            /* the model's own score (--fitness llm), else NAN */
    double best_so_far;          /* the highest fitness of the cell's nodes up to this one */
    double llm_best_so_far;      /* the same for llm_score */
    double playable_share, mean_solutions, mean_entropy, diversity, playable_wall_share; /* NAN if unknown */
    double wall_s, train_s;      /* the node's wall time, its training's */
    int threads;                 /* its training's CPU threads (train.json), 0 if unknown */
    char backend[8];             /* its training's backend: cpu or cuda ("" if unknown) */
    char version[48];            /* the pcgrllm release and commit that made the cell */
    int duplicate;               /* this node again, under another heading */
    int evaluator_rules;         /* the prompts stated the evaluator's rules */
    char cell[GRID_NAME_MAX];
    double norm;                 /* fitness normalised in its scenario: set by grid_tables_compute */
} grid_row;

/* A cell of the grid as the summary lists it, with its run's report. */
typedef struct {
    char name[GRID_NAME_MAX];
    int scenario, repeat;
    int state;                   /* GRID_NEW, GRID_STARTED, GRID_FINISHED */
    int best_node;               /* -1: none */
    double best_fitness;
    int report;                  /* cells/NAME/report.html exists */
} grid_cell_info;

typedef struct {
    grid_row *rows;
    int n, cap;
    int n_scen, scen[4];         /* the grid's scenarios, for the Mean row */
    int repeats;
    int n_abl, abl[4];           /* the grid's ablations, in order */
    int human;                   /* the grid has the Human row */
    int n_cells, n_finished;
    int n_halted;                /* unfinished: their model server failed (retried on the next start) */
    int n_gave_up;               /* finished early: the model wrote no reward in nodes in a row */
    int n_authors;
    char authors[4][200];
    int language_model;          /* some finished cell used a language model */
    int rules_on, rules_off;     /* cells whose prompts stated / did not state the rules */
    int fitness_llm;             /* some cell judged fitness with the model */
    int n_levels;                /* the cells' evaluation levels and their seed (config.json) */
    uint64_t eval_seed;
    int levels_read;             /* n_levels and eval_seed came from a cell */
    grid_cell_info *cell_info;   /* every cell, in index order */
    int n_cell_info;
    int human_kind[5];           /* per scenario, the marker of the grid's copy of its Human reward */
} grid_rows;

/* What the first line of a Human reward file says it is:
 *   / * pcgrllm-human: reference-port * /   a port of the reference's reward
 *   / * pcgrllm-human: engine-design * /    the engine's own design
 * (without the spaces inside the comment marks). */
enum { GRID_HUMAN_UNMARKED = 0, GRID_HUMAN_REFERENCE_PORT = 1, GRID_HUMAN_ENGINE_DESIGN = 2 };
int grid_human_marker(const char *path);
/* "reference-port", "engine-design", or NULL when unmarked. */
const char *grid_human_marker_name(int kind);
/* The kind of the grid's Human reward in scenario s, or for the Mean row
 * (s == 0) every scenario's when they agree (else unmarked). */
int grid_human_kind(const grid_rows *R, int s);

/* Read the finished nodes of every cell of DIR.  0, or -1 (out of memory). */
int grid_rows_read(const char *out, const grid_def *d, const grid_cell *cells, int n_cells, grid_rows *R);
/* Start an empty set for the grid's scenarios, repeats and ablations, and
 * add rows to it (how tests build rows with known values).  0 or -1. */
int grid_rows_init(grid_rows *R, const int *scen, int n_scen, int repeats, const int *abl, int n_abl);
int grid_rows_add(grid_rows *R, const grid_row *row);
int grid_rows_add_cell(grid_rows *R, const grid_cell_info *c);
/* "new", "started", "finished". */
const char *grid_cell_state_name(int state);
void grid_rows_free(grid_rows *R);
/* A row with every field unknown (NAN, -1, "") to fill in, its key's
 * prompts, reward API, fitness, acceptance and target the runs' defaults
 * (paper, minimal, heuristic, always, none). */
void grid_row_blank(grid_row *row);
int grid_key_equal(const grid_key *a, const grid_key *b);

/* ---- the tables ---- */
enum { GRID_VALUE_FINAL = 0, GRID_VALUE_BEST = 1 };

typedef struct {
    double mean, sd;             /* mean NAN when n == 0, sd NAN when n < 2 */
    int n;
} grid_stat;

/* One Table II row: a key in one scenario (0: the Mean row). */
typedef struct {
    grid_key key;
    int scenario;
    grid_stat col[4];            /* by ablation: ZS, +SA, +FB, PCGRLLM */
    grid_stat llm[4];            /* the same from the model's own scores (never normalised) */
    grid_stat raw[4];            /* the Mean row: per seed the mean of the raw values (else col) */
    double p_zs, p_sa;           /* NAN when undefined, a column is missing or has too few seeds */
    int few_zs, few_sa;          /* both columns have seeds, one fewer than GRID_MIN_TEST_N: not tested */
    int dir_zs, dir_sa;          /* sign of PCGRLLM's mean minus the column's (0: equal or unknown) */
    int best;                    /* bit a set: column a holds the row's highest mean */
} grid_t2_row;

/* The Mean-row value by iteration of a key and ablation (fb or full):
 * it[y - 1] for iteration y, dy[y - 1] its change from y to y + 1 (the
 * mean and std over seeds of each seed's change). */
typedef struct {
    grid_key key;
    int ablation;
    int n_iter;
    grid_stat it[GRID_MAX_ITER], dy[GRID_MAX_ITER];
    grid_stat raw[GRID_MAX_ITER];  /* it[] of the raw values, averaged over scenarios */
} grid_t4_row;

/* Table V as the paper's: for a key (its search_fitness "") in one
 * scenario (0: the Mean row), the evaluator's fitness of +FB cells at
 * iteration 1 (Base) and at their last iteration (+FB), of the cells whose
 * search the heuristic steered ([0]) and of those the model's own scores
 * steered ([1]).  Base comes before any parent is chosen, so the two
 * differ there only by run-to-run variation. */
typedef struct {
    grid_key key;
    int scenario;
    grid_stat base[2], fb[2];
    grid_stat raw_base[2], raw_fb[2]; /* the Mean row's raw counterpart (scenario rows: the same) */
    double p;                    /* Welch: fb[1] against fb[0]; NAN when undefined or too few seeds */
    int few;                     /* both have seeds, one fewer than GRID_MIN_TEST_N: not tested */
    int dir;                     /* sign of fb[1]'s mean minus fb[0]'s */
} grid_t5_row;

typedef struct {
    int value;                   /* GRID_VALUE_FINAL or _BEST */
    int normalised;              /* more than one scenario: Mean rows of normalised values */
    int mean_scenario;           /* the summary rows' scenario: 0 (Mean), or the only one */
    double random_play[5];       /* random play's fitness per scenario (NAN: not in the grid):
                                    the 0 of its normalisation */
    double random_play_mean;     /* the same on the Mean rows' scale (0 when normalised) */
    grid_t2_row *t2;
    int n_t2;
    grid_t4_row *t4;
    int n_t4;
    grid_t5_row *t5;
    int n_t5;
} grid_tables;

/* Normalise the rows (norm) and compute Table II (scenario rows
 * then the Mean rows, keys in the order the rows first give them), the
 * per-iteration rows and Table V.  0, or -1 (out of memory). */
int grid_tables_compute(grid_rows *R, int value, grid_tables *T);
void grid_tables_free(grid_tables *T);
/* Fitness x of scenario s normalised as the Mean rows are: (x - r_s) /
 * (1 - r_s), r_s random play's fitness there.  NAN in a grid of one
 * scenario (not normalised) or when r_s is unknown. */
double grid_norm(const grid_tables *T, int scenario, double x);
/* The statistics of the finite values of x[0..n-1]. */
grid_stat grid_stat_of(const double *x, int n);
/* The fitness of n levels made by one episode of uniformly random actions
 * from the evaluation maps of eval_seed (the maps and the actions both from
 * that seed, as `pcgrllm levels --policy random --seed EVAL_SEED`), scored
 * for scenario 1..4.  NAN for another scenario or when out of memory. */
double grid_random_play_fitness(int scenario, int n, uint64_t eval_seed);

#endif
