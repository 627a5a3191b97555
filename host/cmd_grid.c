/* pcgrllm grid: run a grid of `pcgrllm run` cells (scenarios x pe x
 * ablations x repeats), several at once on the CPU or one per GPU, resumable,
 * and aggregate their best fitness as the paper's Table II.  See docs/grid.md. */
#define _GNU_SOURCE /* sched_getaffinity */
#include "backend.h"
#include "child.h"
#include "commands.h"
#include "graph.h"
#include "grid.h"
#include "util.h"
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static void grid_usage(FILE *f)
{
    fprintf(f,
            "usage: pcgrllm grid --out DIR [--scenarios 1,2,3,4] [--pe cot,tot,got] [--ablations zs,sa,fb,full]\n"
            "                    [--repeats R] [--jobs J | --gpus N] [--cell K] [--list] [--summary]\n"
            "                    [-- RUN FLAGS]\n"
            "  Runs one `pcgrllm run` per cell (scenario x pe x ablation x repeat) in DIR/cells/NAME\n"
            "  (NAME like s1-tot-full-r0, its output in DIR/cells/NAME.log) and aggregates each cell's\n"
            "  best fitness as mean +- std over repeats, per scenario and over scenarios (SPEC section 8).\n"
            "grid (defaults: what `run` uses, one repeat):\n"
            "  --scenarios LIST      scenario numbers (1)      --pe LIST   cot, tot, got (cot)\n"
            "  --ablations LIST      zs, sa, fb, full (full)   --repeats R  repeats of each (1)\n"
            "  -- RUN FLAGS          every further flag goes to each cell's `pcgrllm run`; its --seed K\n"
            "                        is the base seed: repeat r runs with seed K + 1000*r\n"
            "where it runs:\n"
            "  --jobs J              at most J cells at once on the CPU, each with --threads\n"
            "                        max(1, cores/J) unless the run flags set --threads (1)\n"
            "  --gpus N              one cell per GPU at once, with PCGRLLM_GPU=k and --backend cuda\n"
            "                        (unless the run flags set --backend); not with --jobs > 1\n"
            "cluster batch jobs:\n"
            "  --list                print the cells with their index and state\n"
            "  --cell K              run only cell K (e.g. --cell $SLURM_ARRAY_TASK_ID)\n"
            "  --summary             only aggregate the finished cells\n"
            "Rerunning the same command skips finished cells and resumes the others (run --resume);\n"
            "with no grid flags at all, the definition stored in DIR/grid.json is used.\n"
            "Writes DIR/grid.json, DIR/grid.log, DIR/summary.txt and DIR/summary.json.\n"
            "Exit codes: 0 every cell done, 1 a cell failed or error, 2 bad flags, 130 interrupted.\n"
            "See docs/grid.md.\n");
}

/* ---------------------------------------------------------------- output */

static FILE *g_log;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    printf("%s\n", line);
    fflush(stdout);
    if (g_log) {
        time_t now = time(NULL);
        struct tm tm;
        char ts[32];
        localtime_r(&now, &tm);
        strftime(ts, sizeof ts, "%Y-%m-%d %H:%M:%S", &tm);
        fprintf(g_log, "[%s] %s\n", ts, line);
        fflush(g_log);
    }
}

/* The last non-empty line of a log (text after the last \r of it). */
static void last_log_line(const char *path, char *out, size_t len)
{
    out[0] = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    char buf[4097];
    off_t end = lseek(fd, 0, SEEK_END);
    off_t from = end > 4096 ? end - 4096 : 0;
    ssize_t n = pread(fd, buf, 4096, from);
    close(fd);
    if (n <= 0) return;
    buf[n] = 0;
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' ')) buf[--n] = 0;
    char *line = strrchr(buf, '\n');
    line = line ? line + 1 : buf;
    char *cr = strrchr(line, '\r');
    if (cr) line = cr + 1;
    snprintf(out, len, "%.300s", line);
}

/* ---------------------------------------------------------------- summary */

static void cell_dir(const char *out, const grid_cell *c, char *buf, size_t len)
{
    snprintf(buf, len, "%s/cells/%s", out, c->name);
}

static int write_text(const char *path, const char *text) { return write_file_atomic(path, text, strlen(text)); }

/* Cell k and the state of its run directory. */
static void cell_state(const char *out, const grid_def *d, int k, grid_cell *c, grid_result *r)
{
    char dir[2048];
    grid_cell_at(d, k, c);
    cell_dir(out, c, dir, sizeof dir);
    grid_run_state(dir, r);
}

/* "0.333 ± 0.012 [3/5]", or "-" with no finished repeat */
static void fmt_stat(char *buf, size_t len, int n, double mean, double sd, int of)
{
    if (n == 0) snprintf(buf, len, "- [0/%d]", of);
    else snprintf(buf, len, "%.3f ± %.3f [%d/%d]", mean, sd, n, of);
}

/* Aggregate the finished cells: print the table (unless quiet) and write
 * DIR/summary.txt and DIR/summary.json.  Returns the number finished. */
static int grid_summary(const char *out, const grid_def *d, int quiet)
{
    int total = grid_n_cells(d), finished = 0, R = d->repeats;
    grid_result *res = calloc((size_t)total, sizeof *res);
    double *vals = calloc((size_t)R, sizeof *vals);
    if (!res || !vals) {
        free(res);
        free(vals);
        die_msg("grid: out of memory");
        return -1;
    }
    json_t *jcells = json_array(), *jgroups = json_array(), *jmeans = json_array(), *jauthors = json_array();
    char authors[3][200];
    int n_authors = 0, any_lm = 0;
    for (int k = 0; k < total; k++) {
        grid_cell c;
        cell_state(out, d, k, &c, &res[k]);
        const grid_result *r = &res[k];
        json_t *e = json_object();
        json_object_set_new(e, "index", json_integer(k));
        json_object_set_new(e, "name", json_string(c.name));
        json_object_set_new(e, "scenario", json_integer(c.scenario));
        json_object_set_new(e, "pe", json_string(graph_pe_name(c.pe)));
        json_object_set_new(e, "ablation", json_string(grid_ablation_name(c.ablation)));
        json_object_set_new(e, "repeat", json_integer(c.repeat));
        json_object_set_new(e, "seed", json_integer((json_int_t)c.seed));
        json_object_set_new(e, "state", json_string(r->state == GRID_FINISHED ? "finished"
                                                    : r->state == GRID_STARTED ? "started" : "new"));
        if (r->state == GRID_FINISHED) {
            finished++;
            json_object_set_new(e, "best_fitness", json_real(r->best_fitness));
            json_object_set_new(e, "best_node", json_integer(r->best_node));
            json_object_set_new(e, "nodes", json_integer(r->nodes));
            json_object_set_new(e, "author", json_string(r->author));
            json_object_set_new(e, "backend", json_string(r->backend));
            any_lm |= !r->offline;
            int seen = 0;
            for (int i = 0; i < n_authors; i++) seen |= !strcmp(authors[i], r->author);
            if (!seen && n_authors < 3) {
                snprintf(authors[n_authors++], sizeof authors[0], "%s", r->author);
                json_array_append_new(jauthors, json_string(r->author));
            }
        }
        json_array_append_new(jcells, e);
    }
    /* the table: rows scenario x pe, then the mean over scenarios per pe;
     * columns the ablations */
    size_t cap = 4096 + (size_t)(d->n_scen + 1) * (size_t)d->n_pe * (size_t)d->n_abl * 64, k = 0;
    char *txt = malloc(cap);
    if (!txt) cap = 0;
#define ADD(...) do { if (k < cap) k += (size_t)snprintf(txt + k, cap - k, __VA_ARGS__); } while (0)
    ADD("grid %s: %d cells, %d finished\n", out, total, finished);
    if (n_authors == 0) ADD("author: none yet (no finished cell)\n");
    for (int i = 0; i < n_authors; i++) ADD("author: %s\n", authors[i]);
    ADD("each entry: mean ± std (population) of the cells' best fitness over their finished repeats [n/%d]\n", R);
    ADD("mean rows: the mean over scenarios of the per-scenario means; std over the repeats finished in every "
        "scenario\n\n");
    ADD("%-9s %-4s", "scenario", "pe");
    for (int a = 0; a < d->n_abl; a++) ADD(a + 1 < d->n_abl ? " %-24s" : " %s", grid_ablation_name(d->abl[a]));
    ADD("\n");
    int per_repeat = d->n_scen * d->n_pe * d->n_abl;
    for (int si = 0; si <= d->n_scen; si++) {
        for (int pi = 0; pi < d->n_pe; pi++) {
            if (si < d->n_scen) ADD("%-9d %-4s", d->scen[si], graph_pe_name(d->pe[pi]));
            else ADD("%-9s %-4s", "mean", graph_pe_name(d->pe[pi]));
            for (int ai = 0; ai < d->n_abl; ai++) {
                char cellbuf[64];
                int n = 0;
                double mean, sd;
                json_t *g = json_object();
                json_object_set_new(g, "pe", json_string(graph_pe_name(d->pe[pi])));
                json_object_set_new(g, "ablation", json_string(grid_ablation_name(d->abl[ai])));
                if (si < d->n_scen) {
                    json_t *jv = json_array();
                    for (int r = 0; r < R; r++) {
                        int idx = r * per_repeat + (si * d->n_pe + pi) * d->n_abl + ai;
                        if (res[idx].state != GRID_FINISHED) continue;
                        vals[n++] = res[idx].best_fitness;
                        json_array_append_new(jv, json_real(res[idx].best_fitness));
                    }
                    grid_mean_std(vals, n, &mean, &sd);
                    fmt_stat(cellbuf, sizeof cellbuf, n, mean, sd, R);
                    json_object_set_new(g, "scenario", json_integer(d->scen[si]));
                    json_object_set_new(g, "values", jv);
                    json_object_set_new(g, "repeats", json_integer(R));
                } else {
                    /* mean of the scenario means (over scenarios with data);
                     * std over the repeats complete in every scenario */
                    double sum = 0, m_s, sd_s;
                    int n_s = 0, n_complete = 0;
                    double *sv = calloc((size_t)d->n_scen, sizeof *sv);
                    for (int s2 = 0; sv && s2 < d->n_scen; s2++) {
                        int m = 0;
                        for (int r = 0; r < R; r++) {
                            int idx = r * per_repeat + (s2 * d->n_pe + pi) * d->n_abl + ai;
                            if (res[idx].state == GRID_FINISHED) vals[m++] = res[idx].best_fitness;
                        }
                        if (m) {
                            grid_mean_std(vals, m, &m_s, &sd_s);
                            sum += m_s;
                            n_s++;
                        }
                    }
                    for (int r = 0; sv && r < R; r++) {
                        int all = 1;
                        double v = 0;
                        for (int s2 = 0; s2 < d->n_scen; s2++) {
                            int idx = r * per_repeat + (s2 * d->n_pe + pi) * d->n_abl + ai;
                            all &= res[idx].state == GRID_FINISHED;
                            v += res[idx].best_fitness;
                        }
                        if (all) vals[n_complete++] = v / d->n_scen;
                    }
                    free(sv);
                    grid_mean_std(vals, n_complete, &m_s, &sd);
                    mean = n_s ? sum / n_s : 0;
                    n = n_s;
                    if (n_s == 0) snprintf(cellbuf, sizeof cellbuf, "-");
                    else if (n_complete == 0) snprintf(cellbuf, sizeof cellbuf, "%.3f [%d/%d sc.]", mean, n_s, d->n_scen);
                    else snprintf(cellbuf, sizeof cellbuf, "%.3f ± %.3f [%d/%d]%s", mean, sd, n_complete, R,
                                  n_s < d->n_scen ? "*" : "");
                    json_object_set_new(g, "scenarios_with_data", json_integer(n_s));
                    json_object_set_new(g, "complete_repeats", json_integer(n_complete));
                    if (n_complete) json_object_set_new(g, "std", json_real(sd));
                    else json_object_set_new(g, "std", json_null());
                }
                json_object_set_new(g, "n", json_integer(n));
                json_object_set_new(g, "mean", n ? json_real(mean) : json_null());
                if (si < d->n_scen) json_object_set_new(g, "std", n ? json_real(sd) : json_null());
                json_array_append_new(si < d->n_scen ? jgroups : jmeans, g);
                /* '±' is two bytes: pad by bytes plus one */
                if (ai + 1 < d->n_abl) ADD(" %-*s", strstr(cellbuf, "±") ? 25 : 24, cellbuf);
                else ADD(" %s", cellbuf);
            }
            ADD("\n");
        }
    }
    ADD("(the mean row is the paper's scenario-normalised mean as docs/grid.md defines it; * some scenario has "
        "no finished cell)\n");
#undef ADD
    if (txt && !quiet) fputs(txt, stdout);
    char path[2048];
    snprintf(path, sizeof path, "%s/summary.txt", out);
    int werr = !txt || write_text(path, txt);
    json_t *o = json_object();
    json_object_set_new(o, "format", json_integer(1));
    json_object_set_new(o, "cells_total", json_integer(total));
    json_object_set_new(o, "cells_finished", json_integer(finished));
    json_object_set_new(o, "authors", jauthors);
    json_object_set_new(o, "language_model", json_boolean(any_lm));
    json_object_set_new(o, "std", json_string("population (divisor n) over finished repeats"));
    json_object_set_new(o, "mean_over_scenarios_formula",
                        json_string("mean over scenarios with a finished cell of the per-scenario mean best "
                                    "fitness; std over repeats finished in every scenario of the per-repeat "
                                    "scenario mean"));
    json_object_set_new(o, "cells", jcells);
    json_object_set_new(o, "groups", jgroups);
    json_object_set_new(o, "mean_over_scenarios", jmeans);
    char *js = json_dumps(o, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    json_decref(o);
    snprintf(path, sizeof path, "%s/summary.json", out);
    if (!js || write_text(path, js)) werr = 1;
    free(js);
    free(txt);
    free(res);
    free(vals);
    if (werr) {
        die_msg("grid: cannot write %s/summary.txt or summary.json", out);
        return -1;
    }
    return finished;
}

/* ---------------------------------------------------------------- cells */

typedef struct {
    pid_t pid;         /* 0 when not running */
    int slot;
    double t0;
} running_cell;

static volatile sig_atomic_t g_signal;

static void on_signal(int sig) { g_signal = sig; }

static int cpu_cores(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

typedef struct {
    const char *out;
    const grid_def *d;
    int gpus;            /* > 0: slot k is GPU k */
    int threads;         /* --threads for fresh cells, 0: the run flags set it */
    int add_backend;     /* --backend cuda for fresh cells */
} grid_ctx;

/* Start cell c on slot (fork + exec of this binary); its pid, or -1. */
static pid_t start_cell(const grid_ctx *x, const grid_cell *c, int slot, int resume)
{
    char dir[2048], log[2100], scen[8], seed[32], threads[16], gpu_env[32];
    cell_dir(x->out, c, dir, sizeof dir);
    snprintf(log, sizeof log, "%s.log", dir);
    snprintf(scen, sizeof scen, "%d", c->scenario);
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)c->seed);
    snprintf(threads, sizeof threads, "%d", x->threads);
    snprintf(gpu_env, sizeof gpu_env, "PCGRLLM_GPU=%d", slot);
    char *argv[24 + GRID_MAX_RUN_FLAGS];
    int n = 0;
    argv[n++] = "pcgrllm";
    argv[n++] = "run";
    if (resume) {
        argv[n++] = "--resume";
    } else {
        argv[n++] = "--scenario";
        argv[n++] = scen;
        argv[n++] = "--pe";
        argv[n++] = (char *)graph_pe_name(c->pe);
        argv[n++] = "--ablation";
        argv[n++] = (char *)grid_ablation_name(c->ablation);
        if (x->threads > 0) {
            argv[n++] = "--threads";
            argv[n++] = threads;
        }
        if (x->add_backend) {
            argv[n++] = "--backend";
            argv[n++] = "cuda";
        }
    }
    argv[n++] = "--out";
    argv[n++] = dir;
    /* the run flags, their --seed replaced by the cell's (after them, so
     * that it wins; a resumed run keeps its stored seed anyway) */
    for (int i = 0; i < x->d->n_run_flags; i++) {
        const char *f = x->d->run_flags[i];
        if (!strcmp(f, "--seed")) {
            i++;
            continue;
        }
        if (!strncmp(f, "--seed=", 7)) continue;
        argv[n++] = x->d->run_flags[i];
    }
    if (!resume) {
        argv[n++] = "--seed";
        argv[n++] = seed;
    }
    argv[n] = NULL;
    /* the environment, with PCGRLLM_GPU for GPU slots, built before fork */
    int ne = 0;
    while (environ[ne]) ne++;
    char **envp = malloc(sizeof(char *) * (size_t)(ne + 2));
    if (!envp) return -1;
    int m = 0;
    for (int i = 0; i < ne; i++)
        if (!x->gpus || strncmp(environ[i], "PCGRLLM_GPU=", 12)) envp[m++] = environ[i];
    if (x->gpus) envp[m++] = gpu_env;
    envp[m] = NULL;
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0); /* a terminal's Ctrl-C reaches the grid, which passes it on */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(127);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            if (fd > 2) close(fd);
        }
        execve("/proc/self/exe", argv, envp);
        fprintf(stderr, "grid: cannot run /proc/self/exe: %s\n", strerror(errno));
        _exit(127);
    }
    free(envp);
    if (pid > 0) setpgid(pid, pid);
    return pid;
}

static void slot_name(const grid_ctx *x, int slot, char *buf, size_t len)
{
    snprintf(buf, len, x->gpus ? "gpu %d" : "slot %d", slot);
}

/* Run the cells of queue[0..nq-1] on n_slots slots.  Returns the exit code. */
static int run_cells(const grid_ctx *x, const int *queue, int nq, int n_slots, int total, int done_before)
{
    grid_sched s;
    running_cell *rc = calloc((size_t)n_slots, sizeof *rc);
    int *failed = calloc((size_t)(nq ? nq : 1), sizeof *failed);
    int *failed_status = calloc((size_t)(nq ? nq : 1), sizeof *failed_status);
    if (!rc || !failed || !failed_status || grid_sched_init(&s, n_slots, queue, nq)) {
        free(rc);
        free(failed);
        free(failed_status);
        die_msg("grid: out of memory");
        return 1;
    }
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    g_signal = 0;
    int done = done_before, n_failed = 0, bad_flags = 0, forwarded = 0;
    for (;;) {
        if (g_signal && !forwarded) {
            forwarded = g_signal;
            grid_sched_stop(&s);
            say("%s: starting no more cells; passing it to the %d running cell%s (their run directories stay "
                "resumable)", forwarded == SIGINT ? "interrupted" : "terminated", s.running, s.running == 1 ? "" : "s");
            for (int i = 0; i < n_slots; i++)
                if (rc[i].pid > 0) kill(-rc[i].pid, forwarded);
        }
        int slot, cell;
        while (!forwarded && !bad_flags && (cell = grid_sched_next(&s, &slot)) >= 0) {
            grid_cell c;
            char dir[2048], sn[16];
            grid_cell_at(x->d, cell, &c);
            cell_dir(x->out, &c, dir, sizeof dir);
            grid_result r;
            grid_run_state(dir, &r);
            slot_name(x, slot, sn, sizeof sn);
            pid_t pid = start_cell(x, &c, slot, r.state == GRID_STARTED);
            if (pid < 0) {
                say("FAILED %s on %s: cannot start it: %s", c.name, sn, strerror(errno));
                failed[n_failed] = cell;
                failed_status[n_failed++] = -1;
                grid_sched_done(&s, slot);
                continue;
            }
            rc[slot].pid = pid;
            rc[slot].t0 = now_seconds();
            say("start %s on %s (%s; %d/%d done)", c.name, sn, r.state == GRID_STARTED ? "resuming" : "new", done,
                total);
        }
        if (s.running == 0) break;
        int st;
        pid_t w = waitpid(-1, &st, WNOHANG);
        if (w <= 0) {
            if (w < 0 && errno == ECHILD) break;
            struct timespec ts = {0, 50 * 1000000};
            nanosleep(&ts, NULL);
            continue;
        }
        for (slot = 0; slot < n_slots && rc[slot].pid != w; slot++) {
        }
        if (slot == n_slots) continue; /* not a cell */
        double wall = now_seconds() - rc[slot].t0;
        rc[slot].pid = 0;
        cell = grid_sched_done(&s, slot);
        grid_cell c;
        char dir[2048], sn[16], why[128];
        grid_cell_at(x->d, cell, &c);
        cell_dir(x->out, &c, dir, sizeof dir);
        slot_name(x, slot, sn, sizeof sn);
        grid_result r;
        grid_run_state(dir, &r);
        int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
        /* a finished run without any reward exits 1: a result of the grid (fitness 0), not a failure */
        if ((code == 0 || (code == 1 && r.best_node < 0)) && r.state == GRID_FINISHED) {
            done++;
            if (r.best_node >= 0)
                say("done %s on %s in %.1f s: best fitness %.4f (node %d); %d/%d done", c.name, sn, wall,
                    r.best_fitness, r.best_node, done, total);
            else
                say("done %s on %s in %.1f s: no node produced a valid reward (fitness 0); %d/%d done", c.name, sn,
                    wall, done, total);
            continue;
        }
        if (forwarded && WIFSIGNALED(st)) {
            say("stopped %s on %s after %.1f s (resumable)", c.name, sn, wall);
            continue;
        }
        if (WIFSIGNALED(st)) snprintf(why, sizeof why, "killed by %s", child_signal_name(WTERMSIG(st)));
        else if (code == 0) snprintf(why, sizeof why, "exited 0 but its run is not complete");
        else snprintf(why, sizeof why, "exit status %d", code);
        char log[2100], last[320];
        snprintf(log, sizeof log, "%s.log", dir);
        last_log_line(log, last, sizeof last);
        say("FAILED %s on %s after %.1f s: %s: %s; %d/%d done", c.name, sn, wall, why, last[0] ? last : "(empty log)",
            done, total);
        failed[n_failed] = cell;
        failed_status[n_failed++] = code;
        if (code == 2 && !bad_flags) {
            /* `run` refused its flags: every other cell would too */
            bad_flags = 1;
            grid_sched_stop(&s);
            say("stopping: `pcgrllm run` refused the run flags (see %s); no more cells are started", log);
        }
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    int exit_code = 0;
    if (n_failed) {
        say("%d cell%s failed:", n_failed, n_failed == 1 ? "" : "s");
        for (int i = 0; i < n_failed; i++) {
            grid_cell c;
            char dir[2048], log[2100], last[320];
            grid_cell_at(x->d, failed[i], &c);
            cell_dir(x->out, &c, dir, sizeof dir);
            snprintf(log, sizeof log, "%s.log", dir);
            last_log_line(log, last, sizeof last);
            say("  %s: exit status %d: %s (log %s)", c.name, failed_status[i], last[0] ? last : "(empty log)", log);
        }
        exit_code = bad_flags ? 2 : 1;
    }
    if (forwarded) {
        say("stopped: %d/%d cells done; rerun the same command to continue", done, total);
        exit_code = forwarded == SIGINT ? 130 : 128 + forwarded;
    }
    grid_sched_free(&s);
    free(rc);
    free(failed);
    free(failed_status);
    return exit_code;
}

/* ---------------------------------------------------------------- the command */

int cmd_grid(int argc, char **argv)
{
    enum { O_OUT = 256, O_SCEN, O_PE, O_ABL, O_REP, O_JOBS, O_GPUS, O_CELL, O_LIST, O_SUMMARY, O_HELP };
    static const struct option opts[] = {
        {"out", required_argument, 0, O_OUT}, {"scenarios", required_argument, 0, O_SCEN},
        {"pe", required_argument, 0, O_PE}, {"ablations", required_argument, 0, O_ABL},
        {"repeats", required_argument, 0, O_REP}, {"jobs", required_argument, 0, O_JOBS},
        {"gpus", required_argument, 0, O_GPUS}, {"cell", required_argument, 0, O_CELL},
        {"list", no_argument, 0, O_LIST}, {"summary", no_argument, 0, O_SUMMARY},
        {"help", no_argument, 0, O_HELP}, {0, 0, 0, 0}};
    /* the run flags: everything after the first "--" */
    int n_grid = argc, n_run = 0;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--")) {
            n_grid = i;
            n_run = argc - i - 1;
            break;
        }
    grid_def d;
    memset(&d, 0, sizeof d);
    d.n_scen = 1, d.scen[0] = 1;
    d.n_pe = 1, d.pe[0] = PE_COT;
    d.n_abl = 1, d.abl[0] = 3; /* full */
    d.repeats = 1;
    char out[1024] = "", err[512];
    long v, jobs = 1, gpus = 0, cell_k = -1;
    int list = 0, summary = 0, def_given = 0, ch, idx;
    optind = 1;
    opterr = 0;
#define BAD(...) return grid_def_free(&d), die_msg("grid: " __VA_ARGS__), 2
    while ((ch = getopt_long(n_grid, argv, ":", opts, &idx)) != -1) {
        switch (ch) {
        case O_OUT:
            if (strlen(optarg) >= sizeof out - 64) BAD("--out path too long");
            snprintf(out, sizeof out, "%s", optarg);
            break;
        case O_SCEN:
        case O_PE:
        case O_ABL: {
            int (*parse)(const char *, grid_def *, char *, int) =
                ch == O_SCEN ? grid_parse_scenarios : ch == O_PE ? grid_parse_pe : grid_parse_ablations;
            if (parse(optarg, &d, err, sizeof err)) BAD("%s", err);
            def_given = 1;
            break;
        }
        case O_REP:
            if (parse_int(optarg, 1, GRID_MAX_REPEATS, &v)) BAD("--repeats must be 1..%d", GRID_MAX_REPEATS);
            d.repeats = (int)v;
            def_given = 1;
            break;
        case O_JOBS:
            if (parse_int(optarg, 1, 1024, &jobs)) BAD("--jobs must be 1..1024");
            break;
        case O_GPUS:
            if (parse_int(optarg, 1, 64, &gpus)) BAD("--gpus must be 1..64");
            break;
        case O_CELL:
            if (parse_int(optarg, 0, 1L << 30, &cell_k)) BAD("--cell must be a cell index (pcgrllm grid --list)");
            break;
        case O_LIST: list = 1; break;
        case O_SUMMARY: summary = 1; break;
        case O_HELP: grid_def_free(&d); grid_usage(stdout); return 0;
        case ':': BAD("%s needs a value (pcgrllm grid --help)", argv[optind - 1]);
        default: BAD("unknown option '%s' (pcgrllm grid --help; run flags go after --)", argv[optind - 1]);
        }
    }
    if (optind < n_grid) BAD("unexpected argument '%s' (run flags go after --)", argv[optind]);
    int sets_threads = 0, sets_backend = 0;
    if (n_run > 0) def_given = 1;
    if (grid_set_run_flags(&d, n_run, argv + n_grid + 1, &sets_threads, &sets_backend, err, sizeof err))
        BAD("%s", err);
    if (!out[0]) BAD("--out DIR is required");
    if (gpus && jobs > 1) BAD("--gpus and --jobs > 1 do not go together (--gpus N runs one cell per GPU)");
    if (list + summary + (cell_k >= 0) > 1) BAD("give at most one of --list, --summary, --cell K");
#undef BAD
    /* the stored definition: the same, or used when none is given */
    char path[1200];
    snprintf(path, sizeof path, "%s/grid.json", out);
    struct stat st;
    int have_stored = stat(path, &st) == 0;
    if (have_stored) {
        long len;
        char *text = read_file(path, 16L << 20, &len, err, sizeof err);
        grid_def stored;
        if (!text || grid_def_from_json(text, &stored, err, sizeof err)) {
            free(text);
            grid_def_free(&d);
            die_msg("grid: %s is unreadable: %s (move it away to start a new grid there)", path, err);
            return 1;
        }
        free(text);
        if (def_given && !grid_def_equal(&d, &stored)) {
            grid_def_free(&d);
            grid_def_free(&stored);
            die_msg("grid: %s holds a grid with another definition (see %s); give the same grid flags and run "
                    "flags, or another --out", out, path);
            return 1;
        }
        grid_def_free(&d);
        d = stored;
        /* what the stored run flags choose */
        grid_def tmp;
        memset(&tmp, 0, sizeof tmp);
        grid_set_run_flags(&tmp, d.n_run_flags, d.run_flags, &sets_threads, &sets_backend, err, sizeof err);
        grid_def_free(&tmp);
    } else if (summary) {
        grid_def_free(&d);
        die_msg("grid: %s holds no grid (no grid.json); run the grid first", out);
        return 1;
    }
    int total = grid_n_cells(&d), rc = 0;
    if (cell_k >= total) {
        grid_def_free(&d);
        die_msg("grid: --cell %ld: the grid has cells 0..%d (pcgrllm grid --list)", cell_k, total - 1);
        return 2;
    }
    if (list) {
        printf("%-6s %-18s %-20s %s\n", "index", "cell", "seed", "state");
        for (int k = 0; k < total; k++) {
            grid_cell c;
            grid_result r;
            cell_state(out, &d, k, &c, &r);
            char state[64];
            if (r.state == GRID_FINISHED) snprintf(state, sizeof state, "finished, best fitness %.4f", r.best_fitness);
            else snprintf(state, sizeof state, "%s", r.state == GRID_STARTED ? "started" : "new");
            printf("%-6d %-18s %-20llu %s\n", k, c.name, (unsigned long long)c.seed, state);
        }
        grid_def_free(&d);
        return 0;
    }
    if (summary) {
        rc = grid_summary(out, &d, 0) < 0 ? 1 : 0;
        grid_def_free(&d);
        return rc;
    }
    /* where the cells run */
    if (gpus > 0) {
        char why[256] = "";
        int n = backend_cuda_devices(why, sizeof why);
        if (n == 0) {
            grid_def_free(&d);
            die_msg("grid: --gpus %ld: this machine has no usable GPU (%s); use --jobs J to run on the CPU", gpus, why);
            return 1;
        }
        if (gpus > n) {
            grid_def_free(&d);
            die_msg("grid: --gpus %ld: this machine has only %d GPU%s", gpus, n, n == 1 ? "" : "s");
            return 1;
        }
    }
    if (make_dirs(out) || (snprintf(path, sizeof path, "%s/cells", out), make_dirs(path))) {
        grid_def_free(&d);
        die_msg("grid: cannot create %s/cells", out);
        return 1;
    }
    snprintf(path, sizeof path, "%s/grid.json", out);
    if (!have_stored) {
        char *js = grid_def_json(&d);
        if (!js || write_text(path, js)) {
            free(js);
            grid_def_free(&d);
            die_msg("grid: cannot write %s", path);
            return 1;
        }
        free(js);
    }
    int slots = gpus > 0 ? (int)gpus : (int)jobs;
    int *queue = malloc(sizeof(int) * (size_t)total);
    if (!queue) {
        grid_def_free(&d);
        die_msg("grid: out of memory");
        return 1;
    }
    int nq = 0, finished = 0;
    for (int k = 0; k < total; k++) {
        if (cell_k >= 0 && k != cell_k) continue;
        grid_cell c;
        grid_result r;
        cell_state(out, &d, k, &c, &r);
        if (r.state == GRID_FINISHED) finished++;
        else queue[nq++] = k;
    }
    int considered = cell_k >= 0 ? 1 : total;
    if (slots > nq && nq > 0) slots = nq;
    int cores = cpu_cores();
    grid_ctx x = {out, &d, (int)gpus, 0, gpus > 0 && !sets_backend};
    if (!sets_threads) x.threads = cores / slots > 1 ? cores / slots : 1;
    snprintf(path, sizeof path, "%s/grid.log", out);
    g_log = fopen(path, "ae");
    char where[128];
    if (gpus > 0) snprintf(where, sizeof where, "one per GPU on %ld GPU%s", gpus, gpus == 1 ? "" : "s");
    else snprintf(where, sizeof where, "%d at a time on the CPU", slots);
    if (cell_k >= 0)
        say("grid %s: cell %ld of %d (%s): %s", out, cell_k, total, finished ? "finished" : "to run",
            finished ? "nothing to do" : "running it");
    else
        say("grid %s: %d cells, %d finished, %d to run, %s", out, total, finished, nq, nq ? where : "nothing to do");
    if (nq && x.threads) say("each new cell: --threads %d (%d cores)", x.threads, cores);
    if (nq) rc = run_cells(&x, queue, nq, slots, considered, finished);
    free(queue);
    if (cell_k < 0 && rc != 130 && rc != 143) {
        printf("\n");
        if (grid_summary(out, &d, 0) < 0 && !rc) rc = 1;
    } else if (cell_k >= 0 && rc == 0) {
        say("aggregate the finished cells with: pcgrllm grid --out %s --summary", out);
    }
    if (g_log) fclose(g_log);
    g_log = NULL;
    grid_def_free(&d);
    return rc;
}
