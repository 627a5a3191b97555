/* Experiment grids (`pcgrllm grid`): many independent `pcgrllm run` cells,
 * each in its own run directory.  This header holds what needs no process:
 * the grid definition (its axes and their JSON form), the cells it makes
 * (names, seeds, the flags of their runs) and the state of a cell's run
 * directory.  The other parts: grid_exec.h runs cells, grid_rows.h reads
 * their results as rows and computes the paper's tables, grid_report.h
 * writes them, grid_slurm.h writes batch arrays, grid_main.h ties them to
 * the command.  See docs/grid.md. */
#ifndef PCG_GRID_H
#define PCG_GRID_H
#include <stdint.h>

#define GRID_MAX_REPEATS 1000
#define GRID_MAX_RUN_FLAGS 64
#define GRID_MAX_MODELS 8
#define GRID_MODEL_MAX 128
#define GRID_NAME_MAX 192
/* values of the target-fitness axis */
#define GRID_MAX_TARGETS 6
/* Seeds of repeat r are base + r * GRID_SEED_STRIDE: a run trains node i
 * with its seed + i (i < 1000), so repeats never share a training seed. */
#define GRID_SEED_STRIDE 1000

typedef struct {
    char name[GRID_MODEL_MAX];   /* a model name, or "offline" for the offline author */
    char base_url[512];          /* its server ("" : the run flags' or the default) */
} grid_model;

/* The axes.  An axis with n == 0 is not varied: what the run flags say
 * holds for every cell. */
typedef struct {
    int n_scen, scen[4];         /* scenario numbers 1..4 */
    int n_models;
    grid_model models[GRID_MAX_MODELS];
    int n_pe, pe[3];             /* PE_COT, PE_TOT, PE_GOT */
    int n_abl, abl[4];           /* ABL_ZS, ABL_SA, ABL_FB, ABL_FULL */
    int n_fb, fb[3];             /* FB_SPECIFIC, FB_GENERIC, FB_NONE */
    int n_fbin, fbin[2];         /* FBIN_TEXT, FBIN_IMAGE */
    int n_gb, got_best[5];       /* GoT references, 0..4 each */
    int n_gw, got_worst[5];
    int n_pp, prompts[2];        /* prompt profiles (run --prompts): GRID_PROMPTS_* */
    int n_ra, reward_api[2];     /* reward APIs the prompt lists (run --reward-api): GRID_API_* */
    int n_fit, fitness[2];       /* what steers the search (run --fitness): FIT_HEURISTIC, FIT_LLM */
    int n_acc, accept[2];        /* which revisions the search builds on (run --accept): GRAPH_ACCEPT_* */
    int n_tf;                    /* where the search stops early (run --target-fitness) */
    double target_fitness[GRID_MAX_TARGETS]; /* each in [0, 1], or -1: never */
    char human[1024];            /* directory of scenarioN.c for the Human row ("" : none) */
    int repeats;
    uint64_t base_seed;          /* --seed of the run flags, 0 if none */
    int n_run_flags;             /* the flags after "--", as given */
    char *run_flags[GRID_MAX_RUN_FLAGS];
    /* this command line's, never stored in grid.json (host/llm/trust.h) */
    char api_key_env[128];       /* grid --api-key-env: handed to every cell ("": run's default) */
    char human_files[1100];      /* where the cells read the Human rewards: the grid's own copy
                                    (DIR/human), or "" for a grid made before it kept one */
} grid_def;

/* One cell: one `pcgrllm run`.  The zero-shot (+SA) column of a search
 * method is iteration 1 of its own +FB (full) cells, as in the paper's
 * Table II, when the grid has them.  Only without them are there zero-shot
 * and +SA cells; those do not depend on the search method, the feedback or
 * the references (one node, no feedback), so they run once per scenario,
 * model and repeat (pe == -1) and are reported under every search method. */
typedef struct {
    int index;
    int scenario, model;         /* model: index into models, -1 without that axis */
    int pe;                      /* PE_*, -1 for a cell shared by every search method */
    int ablation;
    int human;                   /* the Human row: --init-reward, CoT, full */
    int fb, fbin, gb, gw;        /* the axes' values, -1 where not varied or not applying */
    int prompts, reward_api, fitness;
    int accept;                  /* GRAPH_ACCEPT_*, -1 where not varied or not applying */
    int tf;                      /* index into target_fitness, -1 likewise */
    int repeat;
    uint64_t seed;
    char name[GRID_NAME_MAX];    /* s1-tot-full-r0, s1-zs-r0, s2-human-r1, ... */
} grid_cell;

/* The values of the axes a `run` flag takes that the grid names itself:
 * --prompts paper|rich, --reward-api minimal|full (and --fitness
 * heuristic|llm, numbered as run's FIT_*). */
enum { GRID_PROMPTS_PAPER = 0, GRID_PROMPTS_RICH = 1 };
enum { GRID_API_MINIMAL = 0, GRID_API_FULL = 1 };
const char *grid_prompts_name(int v);
const char *grid_reward_api_name(int v);
const char *grid_fitness_name(int v);
/* A target fitness as cell names, keys and run's flag spell it: "none"
 * (v < 0) or the shortest decimal that reads back as v ("0.9"). */
void grid_target_name(double v, char *buf, int len);

/* Parse "1,2,3" / "cot,tot" / "zs,full" / "specific,none" / "text,image" /
 * "0,1,2" / "gpt-4o,qwen@http://host:8080/v1" / "paper,rich" /
 * "minimal,full" / "heuristic,llm" into def.  0, or -1 with one line in err
 * (unknown name, duplicate, empty item). */
int grid_parse_scenarios(const char *s, grid_def *d, char *err, int errlen);
int grid_parse_pe(const char *s, grid_def *d, char *err, int errlen);
int grid_parse_ablations(const char *s, grid_def *d, char *err, int errlen);
int grid_parse_feedbacks(const char *s, grid_def *d, char *err, int errlen);
int grid_parse_feedback_inputs(const char *s, grid_def *d, char *err, int errlen);
int grid_parse_got_best(const char *s, grid_def *d, char *err, int errlen);
int grid_parse_got_worst(const char *s, grid_def *d, char *err, int errlen);
int grid_parse_models(const char *s, grid_def *d, char *err, int errlen);
int grid_parse_prompt_profiles(const char *s, grid_def *d, char *err, int errlen);
int grid_parse_reward_apis(const char *s, grid_def *d, char *err, int errlen);
int grid_parse_fitnesses(const char *s, grid_def *d, char *err, int errlen);
/* "always,improve"; "none,0.9,1": numbers in [0, 1] or none */
int grid_parse_accept(const char *s, grid_def *d, char *err, int errlen);
int grid_parse_target_fitness(const char *s, grid_def *d, char *err, int errlen);
/* --human DIR: a directory holding scenarioN.c for each scenario of the
 * grid (call after the scenarios are known); kept as an absolute path.
 * 0, or -1 with err. */
int grid_set_human(grid_def *d, const char *dir, char *err, int errlen);
/* Take the run flags (copied).  Refuses the flags the grid sets itself
 * (--scenario, --pe, --out, ..., and those of the axes given) and
 * abbreviations of them; reads --seed into base_seed; *sets_threads /
 * *sets_backend say whether the flags choose those.  Call after the axes
 * are set.  0, or -1 with one line in err. */
int grid_set_run_flags(grid_def *d, int n, char **flags, int *sets_threads, int *sets_backend, char *err,
                       int errlen);
void grid_def_free(grid_def *d);

/* The ablation whose cells give column `column` (ABL_*) of a grid with
 * the ablations abl[0..n-1]: ABL_FB for the zero-shot column and ABL_FULL
 * for +SA when the grid has them (their iteration 1), else the column's
 * own; -1 when the column is not in the grid. */
int grid_column_cells(const int *abl, int n_abl, int column);
/* The axes a search cell (fb, full) of method pe runs once per value of,
 * in the order they vary (the last fastest): feedback, feedback input,
 * fitness, acceptance, target fitness and, for GoT, best and worst
 * references.  An axis with n == 0 is not varied (one pass, value -1);
 * value k of the others is v[k] (the index itself where v is NULL). */
enum { GRID_AX_FB, GRID_AX_FBIN, GRID_AX_FIT, GRID_AX_ACC, GRID_AX_TF, GRID_AX_GB, GRID_AX_GW, GRID_N_AXES };
typedef struct {
    int n;
    const int *v;
} grid_axis;
void grid_search_axes(const grid_def *d, int pe, grid_axis ax[GRID_N_AXES]);
/* How many combinations of the values of ax[0..n) there are, and the k-th
 * of them (the last axis varying fastest) into out[0..n). */
int grid_axes_count(const grid_axis *ax, int n);
void grid_axes_pick(const grid_axis *ax, int n, int k, int *out);
/* The cells, in index order: repeats outermost, then models, prompt
 * profiles, reward APIs, scenarios, ablations (a shared cell for zs and sa
 * when they have cells of their own; for fb and full every search method
 * and the values of its axes, above), and the Human cell last (once per
 * acceptance and target fitness).  *cells is malloc'd; returns the count, -1 when out
 * of memory. */
int grid_cells(const grid_def *d, grid_cell **cells);
/* The label of cell c's model: the axis value, or "" without the axis. */
const char *grid_cell_model(const grid_def *d, const grid_cell *c);
/* The run flags as every cell gets them: "--seed" and the word after it
 * (or "--seed=N") left out, since each cell gets its own seed, and for a
 * resumed cell the flags that only start a run (--quick).  Whatever judges
 * what the cells will do (where they send requests) reads these, not
 * d->run_flags.  Into out (room for d->n_run_flags); returns the count. */
int grid_cell_run_flags(const grid_def *d, int resume, char **out);
/* The argv of cell c's `pcgrllm run` (argv[0] "pcgrllm"), NULL-terminated,
 * into argv (room for GRID_MAX_ARGV), with the strings it builds in buf.
 * threads > 0 adds --threads, cuda adds --backend cuda (both for a new
 * run); resume continues the run in dir.  Returns argc. */
#define GRID_MAX_ARGV (52 + GRID_MAX_RUN_FLAGS)
typedef struct {
    char scen[8], seed[32], threads[16], gb[16], gw[16], tf[32], human[1200];
} grid_argv_buf;
int grid_cell_argv(const grid_def *d, const grid_cell *c, const char *dir, int resume, int threads, int cuda,
                   grid_argv_buf *buf, char **argv);

/* grid.json text of the definition (malloc'd), and back.  The run flags
 * are stored as given; cells are listed for the reader, not read back. */
char *grid_def_json(const grid_def *d);
int grid_def_from_json(const char *text, grid_def *d, char *err, int errlen);
/* grid --config FILE: a grid.json written by a grid or by hand, read as
 * grid_def_from_json reads one, keys it does not hold refused.  0, or -1
 * with one line naming the file. */
int grid_def_from_file(const char *path, grid_def *d, char *err, int errlen);
/* 1 when the two define the same cells with the same run flags. */
int grid_def_equal(const grid_def *a, const grid_def *b);

/* ---- a cell's run directory ---- */
enum { GRID_NEW = 0, GRID_STARTED = 1, GRID_FINISHED = 2 };

typedef struct {
    int state;                 /* GRID_NEW, GRID_STARTED, GRID_FINISHED */
    int best_node;             /* -1: no node produced a valid reward */
    double best_fitness;       /* 0 when best_node is -1 */
    int nodes;
    char author[200];          /* config.json's author_label (+ model) */
    char model[GRID_MODEL_MAX];/* the model, "offline" for the offline author */
    int offline;               /* the rule-based offline author */
    int fitness_llm;           /* --fitness llm: the graph holds the model's scores */
    int evaluator_rules;       /* the prompts stated the evaluator's rules */
    char feedback[16], feedback_input[8];
    char prompts[8], reward_api[8]; /* config.json's, paper and minimal when it has none */
    int got_best, got_worst;
    char accept[8];            /* config.json's, always when it has none */
    double target_fitness;     /* config.json's, -1: none */
    char backend[16];
    int gave_up;               /* finished early: the model wrote no reward in nodes in a row */
    char version[48];          /* config.json's pcgrllm_version (+commit), "" when not recorded */
    char halted[400];          /* the run stopped because its model server failed ("" if not):
                                  unfinished, never a result; the next start resumes it */
} grid_result;

/* GRID_NEW: no run there (no config.json).  GRID_FINISHED: the loop ended,
 * as run_main ends it: no pending node, every iteration done (one for zs
 * and sa) or the target fitness reached, and summary.txt written.
 * GRID_STARTED otherwise. */
void grid_run_state(const char *dir, grid_result *r);

#endif
