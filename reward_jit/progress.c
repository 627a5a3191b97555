/* Progress lines of a reward check that runs long (reward_check_progress):
 * where the check is, every few seconds, on the caller's stderr unless the
 * caller sends them elsewhere. */
#include <stdio.h>
#include <time.h>
#include "jit_internal.h"
#include "reward_jit.h"

/* Seconds between the lines, by default. */
#define PROGRESS_EVERY_S 5.0

static void progress_to_stderr(void *ctx, const char *line)
{
    (void)ctx;
    fprintf(stderr, "%s\n", line);
}

static void (*g_fn)(void *, const char *) = progress_to_stderr;
static void *g_ctx;
static double g_every = PROGRESS_EVERY_S;

void reward_check_progress(void (*fn)(void *ctx, const char *line), void *ctx, double every_s)
{
    g_fn = fn ? fn : progress_to_stderr;
    g_ctx = ctx;
    g_every = every_s;
}

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void jit_progress_start(jit_progress *p)
{
    p->t0 = mono();
    p->next = p->t0 + g_every;
}

void jit_progress_tick(jit_progress *p, const char *where)
{
    double now = mono();
    if (!(g_every > 0) || now < p->next) return;
    char line[200];
    snprintf(line, sizeof line, g_every < 1 ? "reward check: %.1f s, %s" : "reward check: %.0f s, %s", now - p->t0,
             where);
    g_fn(g_ctx, line);
    while (p->next <= now) p->next += g_every;
}
