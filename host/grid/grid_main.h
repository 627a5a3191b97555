/* `pcgrllm grid` once its flags are parsed (host/cli/cmd_grid.c parses them):
 * the stored definition, --list, --summary, --slurm, or running the cells
 * and summarising them.  See docs/grid.md. */
#ifndef PCG_GRID_MAIN_H
#define PCG_GRID_MAIN_H
#include "grid.h"
#include "grid_slurm.h"

typedef struct {
    char out[1024];
    grid_def d;                /* the definition the flags give */
    int def_given;             /* some axis or run flag was given */
    int sets_threads, sets_backend;
    int yes;                   /* go on with a grid projected at over 3 hours on the CPU */
    long jobs, gpus;
    long cell;                 /* --cell K, -1: every cell */
    int list, summary;
    int value;                 /* GRID_VALUE_FINAL or _BEST */
    int slurm;                 /* --slurm or --slurm-script-only */
    grid_slurm_opts slurm_opts;
    const char *config;        /* grid --config FILE: the definition came from it (its servers are the file's) */
    int n_named;               /* grid --base-url: servers of a stored grid.json the user names */
    char named[GRID_MAX_MODELS + 1][512];
} grid_opts;

/* Runs the command; frees o->d.  Returns the exit code. */
int grid_main(grid_opts *o);

#endif
