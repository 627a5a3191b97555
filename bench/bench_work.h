/* Sets of work-counter entries (backend.h, pcg_cuda_work) for the work
 * model of bench/bench_model.c: copied from the simulation's counters,
 * added with a factor entry by entry (by name), printed with the H200
 * model's times. */
#ifndef PCG_BENCH_WORK_H
#define PCG_BENCH_WORK_H
#include "backend.h"

typedef struct {
    char name[64];
    double launches, threads, read, written, flops;
    double graph; /* of the launches, those a CUDA graph made */
} work_row;

typedef struct {
    work_row *r;
    int n, cap;
} work_set;

/* d += f x the simulation's counters as they stand.  0, or -1 (memory). */
int work_set_take(work_set *d, const pcg_cuda_api *api, double f);
/* d += f x s, entry by entry.  0, or -1 (memory). */
int work_set_add(work_set *d, const work_set *s, double f);
/* d = s without the entries whose names are in drop. */
int work_set_without(work_set *d, const work_set *s, const work_set *drop);
/* share of each of d's launches made by a graph: work counted outside the
 * trainer's graph, priced as the trainer runs it. */
void work_set_graph_share(work_set *d, double share);
/* The entry named name, or NULL. */
const work_row *work_set_find(const work_set *s, const char *name);
void work_set_free(work_set *s);

/* The first entry with a negative count (a composition that took away
 * more than there was), or NULL. */
const work_row *work_set_negative(const work_set *s);

/* The set as counters (counts rounded), for the model; malloc'd, *n set. */
pcg_cuda_work *work_set_counters(const work_set *s, int *n);

/* One table: every entry's counts and its time on one H200 in the matmul
 * modes first..last (PCG_MATH_*) by host/gpu/device_model.h, the total,
 * and the launches' share; those modes' totals into total_s[mode]. */
void work_set_print(const char *title, const work_set *s, int first, int last, double total_s[3]);

#endif
