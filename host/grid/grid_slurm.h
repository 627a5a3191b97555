/* A grid as a Slurm batch array: one array task per unfinished cell, each
 * running `pcgrllm grid --out DIR --cell K` (resumable: a task that finds
 * its cell finished does nothing, one that finds it started resumes it),
 * and a summary job that runs after the array.  See docs/grid.md. */
#ifndef PCG_GRID_SLURM_H
#define PCG_GRID_SLURM_H
#include "grid.h"
#include <stddef.h>

#define GRID_SLURM_MAX_LINES 16
typedef struct {
    char partition[128], time[64], gres[128], mem[64];  /* "" : the cluster's default */
    char account[128], qos[128];
    char summary_partition[128];  /* the summary job's ("" : --partition's) */
    int n_lines;                  /* --sbatch: more #SBATCH lines, as given */
    char lines[GRID_SLURM_MAX_LINES][256];
    char *prologue;               /* --prologue FILE's text (malloc'd), or NULL */
    int cpus_per_task;         /* 0: the cluster's default */
    int max_parallel;          /* at most this many tasks at once; 0: no limit */
    int script_only;           /* write the scripts, do not submit them */
    int value_best;            /* the summary job's --value best */
    /* what each task is told of the grid's requests (host/llm/trust.h): the
     * servers the submitter named or confirmed, and the key's variable */
    int n_servers;
    const char *servers[GRID_MAX_MODELS + 1];
    const char *api_key_env;
} grid_slurm_opts;

/* Check one sbatch option's value (letters, digits and : . _ , = / + -).
 * 0, or -1 with one line in err. */
int grid_slurm_check_value(const char *flag, const char *v, char *err, int errlen);
/* --sbatch OPTION: one more #SBATCH line ("--constraint=a100"); printable
 * text without quotes or newlines.  0, or -1 with err. */
int grid_slurm_add_line(grid_slurm_opts *o, const char *v, char *err, int errlen);
/* --prologue FILE: shell lines for the scripts (a regular text file of at
 * most 64 KiB).  0, or -1 with err. */
int grid_slurm_read_prologue(grid_slurm_opts *o, const char *path, char *err, int errlen);
/* "0-3,7,9-12": the task ids (ascending) in Slurm's array syntax, into buf. */
void grid_slurm_ranges(const int *ids, int n, char *buf, size_t len);
/* Write DIR/slurm/grid.sbatch and summary.sbatch for the unfinished cells
 * ids[0..n-1] and (unless script_only) submit them.  The process exit
 * code: 0, or 1 (printed). */
int grid_slurm(const char *out, const int *ids, int n, int total, const grid_slurm_opts *o);

#endif
