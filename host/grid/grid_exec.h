/* Running a grid's cells: each cell is a `pcgrllm run` child process of
 * this binary, in its own process group, on a slot (a CPU job slot or a
 * GPU).  The slot scheduler hands the queue of cells, in order, to the
 * lowest free slot; a slot never holds two running cells.  Ctrl-C and
 * SIGTERM start no more cells and are passed on to the running ones.
 * See docs/grid.md. */
#ifndef PCG_GRID_EXEC_H
#define PCG_GRID_EXEC_H
#include "grid.h"
#include <stdio.h>

/* ---- the slot scheduler: cells from a queue onto n slots ---- */
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

/* ---- progress lines ---- */
/* A line on stdout and, once grid_log_open has opened it, appended to
 * DIR/grid.log with the time. */
void grid_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void grid_log_open(const char *out);
void grid_log_close(void);

/* DIR/cells/NAME */
void grid_cell_dir(const char *out, const grid_cell *c, char *buf, size_t len);
/* A cell's run directory is worked on by one process at a time: its
 * `run` holds DIR/cells/NAME.lock (flock) for its whole life, wherever it
 * was started (a --jobs grid, a batch task).  1 when some process holds
 * it now. */
int grid_cell_busy(const char *out, const grid_cell *c);
/* The number of CPUs this process may use: inside a Slurm job what Slurm
 * allocated ($SLURM_CPUS_PER_TASK, else $SLURM_CPUS_ON_NODE: a cluster
 * without task affinity binds no CPUs), else its affinity mask. */
int grid_cpu_cores(void);

/* ---- running cells ---- */
typedef struct {
    const char *out;
    const grid_def *d;
    const grid_cell *cells;    /* every cell of the grid, by index */
    int gpus;                  /* > 0: slot k is GPU k (PCGRLLM_GPU=k) */
    int threads;               /* --threads for new cells, 0: the run flags set it */
    int add_backend;           /* --backend cuda for new cells */
} grid_exec_ctx;

/* Run the cells queue[0..nq-1] (indexes into x->cells) on n_slots slots,
 * saying each start and end; total and done_before count the cells for
 * the progress lines.  Returns the exit code: 0 every cell done, 1 a cell
 * failed, 2 `run` refused its flags (no more cells started), 130 or 143
 * interrupted. */
int grid_exec_run(const grid_exec_ctx *x, const int *queue, int nq, int n_slots, int total, int done_before);

#endif
