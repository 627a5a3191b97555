/* Work sets and their tables: see bench_work.h. */
#include "bench_work.h"
#include "device_model.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MODEL_TAG "model, not a measurement"

static work_row *row_for(work_set *d, const char *name)
{
    for (int i = 0; i < d->n; i++)
        if (!strcmp(d->r[i].name, name)) return &d->r[i];
    if (d->n == d->cap) {
        int cap = d->cap ? 2 * d->cap : 64;
        work_row *r = realloc(d->r, sizeof *r * (size_t)cap);
        if (!r) return NULL;
        d->r = r, d->cap = cap;
    }
    work_row *r = &d->r[d->n++];
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", name);
    return r;
}

static int add_row(work_set *d, const work_row *s, double f)
{
    work_row *r = row_for(d, s->name);
    if (!r) return -1;
    r->launches += f * s->launches;
    r->threads += f * s->threads;
    r->read += f * s->read;
    r->written += f * s->written;
    r->flops += f * s->flops;
    r->graph += f * s->graph;
    return 0;
}

int work_set_take(work_set *d, const pcg_cuda_api *api, double f)
{
    int n = 0;
    const pcg_cuda_work *w = api->work_counters(&n);
    for (int i = 0; i < n; i++) {
        work_row r;
        snprintf(r.name, sizeof r.name, "%s", w[i].name);
        r.launches = (double)w[i].launches, r.threads = (double)w[i].threads;
        r.read = (double)w[i].bytes_read, r.written = (double)w[i].bytes_written, r.flops = (double)w[i].flops;
        r.graph = (double)w[i].graph_launches;
        if (add_row(d, &r, f)) return -1;
    }
    return 0;
}

int work_set_add(work_set *d, const work_set *s, double f)
{
    for (int i = 0; i < s->n; i++)
        if (add_row(d, &s->r[i], f)) return -1;
    return 0;
}

const work_row *work_set_find(const work_set *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->r[i].name, name)) return &s->r[i];
    return NULL;
}

void work_set_graph_share(work_set *d, double share)
{
    for (int i = 0; i < d->n; i++)
        if (strcmp(d->r[i].name, PCG_WORK_SYNC) && strncmp(d->r[i].name, PCG_WORK_NOTE, strlen(PCG_WORK_NOTE)))
            d->r[i].graph = d->r[i].launches * share;
}

int work_set_without(work_set *d, const work_set *s, const work_set *drop)
{
    for (int i = 0; i < s->n; i++)
        if (!work_set_find(drop, s->r[i].name) && add_row(d, &s->r[i], 1)) return -1;
    return 0;
}

void work_set_free(work_set *s)
{
    free(s->r);
    memset(s, 0, sizeof *s);
}

const work_row *work_set_negative(const work_set *s)
{
    for (int i = 0; i < s->n; i++) {
        const work_row *r = &s->r[i];
        /* a difference of equal counts may leave a rounding residue */
        if (r->launches < -0.5 || r->threads < -0.5 || r->read < -0.5 || r->written < -0.5 || r->flops < -0.5 ||
            r->graph < -0.5)
            return r;
    }
    return NULL;
}

static uint64_t count(double x)
{
    return x > 0 ? (uint64_t)llround(x) : 0;
}

pcg_cuda_work *work_set_counters(const work_set *s, int *n)
{
    pcg_cuda_work *w = calloc((size_t)(s->n > 0 ? s->n : 1), sizeof *w);
    *n = 0;
    if (!w) return NULL;
    for (int i = 0; i < s->n; i++) {
        const work_row *r = &s->r[i];
        /* an entry all of whose counts cancelled is not work */
        if (!count(r->launches) && strncmp(r->name, PCG_WORK_NOTE, strlen(PCG_WORK_NOTE))) continue;
        pcg_cuda_work *o = &w[(*n)++];
        snprintf(o->name, sizeof o->name, "%s", r->name);
        o->launches = count(r->launches), o->threads = count(r->threads);
        o->bytes_read = count(r->read), o->bytes_written = count(r->written), o->flops = count(r->flops);
        o->graph_launches = count(r->graph);
    }
    return w;
}

/* the mode by_time sorts by (qsort passes no context) */
static int sort_mode = PCG_MATH_FP32;

/* the largest modelled time in sort_mode first, notes last */
static int by_time(const void *a, const void *b)
{
    const pcg_cuda_work *x = a, *y = b;
    const device_model *m = &device_model_h200;
    int nx = device_model_kind(x) == WORK_NOTE, ny = device_model_kind(y) == WORK_NOTE;
    if (nx != ny) return nx - ny;
    double tx = device_model_seconds(m, x, sort_mode), ty = device_model_seconds(m, y, sort_mode);
    return tx < ty ? 1 : tx > ty ? -1 : strcmp(x->name, y->name);
}

void work_set_print(const char *title, const work_set *s, int first, int last, double total_s[3])
{
    const device_model *m = &device_model_h200;
    int n = 0;
    pcg_cuda_work *w = work_set_counters(s, &n);
    if (!w) return;
    sort_mode = first;
    qsort(w, (size_t)n, sizeof *w, by_time);
    printf("\n%s\ntimes on %s: %s\n", title, m->device, MODEL_TAG);
    printf("%-38s %9s %13s %12s %12s %12s", "kernel", "launches", "threads", "MB read", "MB written", "GFLOP");
    for (int k = first; k <= last; k++) printf(" %6s ms", backend_math_name(k));
    printf("\n");
    for (int i = 0; i < n; i++) {
        if (device_model_kind(&w[i]) == WORK_NOTE) {
            printf("%s\n", w[i].name);
            continue;
        }
        printf("%-38.38s %9llu %13llu %12.1f %12.1f %12.2f", w[i].name, (unsigned long long)w[i].launches,
               (unsigned long long)w[i].threads, w[i].bytes_read / 1e6, w[i].bytes_written / 1e6, w[i].flops / 1e9);
        for (int k = first; k <= last; k++) printf(" %9.3f", device_model_seconds(m, &w[i], k) * 1e3);
        printf("\n");
    }
    uint64_t launches = 0, graph = 0;
    double launch_s = 0;
    for (int k = first; k <= last; k++) total_s[k] = device_model_total(m, w, n, k, &launches);
    for (int i = 0; i < n; i++) {
        int kind = device_model_kind(&w[i]);
        if (kind == WORK_SYNC || kind == WORK_NOTE) continue;
        graph += w[i].graph_launches;
        launch_s += device_model_launch_seconds(m, &w[i]);
    }
    printf("%-38s %9llu %13s %12s %12s %12s", "total", (unsigned long long)launches, "", "", "", "");
    for (int k = first; k <= last; k++) printf(" %9.1f", total_s[k] * 1e3);
    printf("  (%s)\n", MODEL_TAG);
    printf("of which launches %.1f ms: %llu by the host at %.0f us each, %llu by CUDA graphs at %.0f us  (%s)\n",
           launch_s * 1e3, (unsigned long long)(launches - graph), m->launch_s * 1e6, (unsigned long long)graph,
           m->graph_launch_s * 1e6, MODEL_TAG);
    free(w);
}
