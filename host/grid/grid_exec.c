/* Running a grid's cells as child processes.  See grid_exec.h. */
#define _GNU_SOURCE /* sched_getaffinity */
#include "grid_exec.h"
#include "run.h"
#include "train_estimate.h"
#include "child.h"
#include "util.h"
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* ---------------------------------------------------------------- scheduler */

int grid_sched_init(grid_sched *s, int n_slots, const int *queue, int n_queue)
{
    memset(s, 0, sizeof *s);
    if (n_slots < 1 || n_queue < 0) return -1;
    s->slot_cell = malloc(sizeof(int) * (size_t)n_slots);
    if (!s->slot_cell) return -1;
    for (int i = 0; i < n_slots; i++) s->slot_cell[i] = -1;
    s->n_slots = n_slots;
    s->queue = queue;
    s->n_queue = n_queue;
    return 0;
}

void grid_sched_free(grid_sched *s)
{
    free(s->slot_cell);
    s->slot_cell = NULL;
}

int grid_sched_next(grid_sched *s, int *slot)
{
    if (s->next >= s->n_queue) return -1;
    for (int i = 0; i < s->n_slots; i++)
        if (s->slot_cell[i] < 0) {
            int cell = s->queue[s->next++];
            s->slot_cell[i] = cell;
            s->running++;
            *slot = i;
            return cell;
        }
    return -1;
}

int grid_sched_done(grid_sched *s, int slot)
{
    if (slot < 0 || slot >= s->n_slots || s->slot_cell[slot] < 0) return -1;
    int cell = s->slot_cell[slot];
    s->slot_cell[slot] = -1;
    s->running--;
    return cell;
}

void grid_sched_stop(grid_sched *s) { s->next = s->n_queue; }

/* ---------------------------------------------------------------- output */

static FILE *g_log;

void grid_log_open(const char *out)
{
    char path[1200], err[1400];
    snprintf(path, sizeof path, "%s/grid.log", out);
    g_log = open_append(path, err, sizeof err); /* without it the lines still reach the terminal */
}

void grid_log_close(void)
{
    if (g_log) fclose(g_log);
    g_log = NULL;
}

void grid_say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsay_and_log(g_log, 1, fmt, ap);
    va_end(ap);
}

void grid_cell_dir(const char *out, const grid_cell *c, char *buf, size_t len)
{
    snprintf(buf, len, "%s/cells/%s", out, c->name);
}

static void lock_path(const char *out, const grid_cell *c, char *buf, size_t len)
{
    snprintf(buf, len, "%s/cells/%s.lock", out, c->name);
}

int grid_cell_busy(const char *out, const grid_cell *c)
{
    char path[2100];
    lock_path(out, c, path, sizeof path);
    char err[64];
    int fd = path_present(path) ? open_regular(path, err, sizeof err) : -1;
    if (fd < 0) return 0;
    int busy = flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    close(fd); /* releases it if we took it */
    return busy;
}

int grid_cpu_cores(void)
{
    /* a Slurm task's allocation: per task if asked for, else the job's CPUs on this node */
    const char *slurm = getenv("SLURM_CPUS_PER_TASK"), *on_node = getenv("SLURM_CPUS_ON_NODE");
    long v;
    if (slurm && !parse_int(slurm, 1, 4096, &v)) return (int)v;
    if (getenv("SLURM_JOB_ID") && on_node && !parse_int(on_node, 1, 4096, &v)) return (int)v;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* The last non-empty line of a log (text after the last \r of it). */
static void last_log_line(const char *path, char *out, size_t len)
{
    out[0] = 0;
    char err[64];
    int fd = open_regular(path, err, sizeof err);
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

/* ---------------------------------------------------------------- cells */

static volatile sig_atomic_t g_signal;

static void on_signal(int sig) { g_signal = sig; }

/* The exit status of a cell's process that found its run directory in
 * use by another process (it did not start the run). */
#define CELL_BUSY 75

/* Start cell c on slot (fork + exec of this binary); its pid, or -1. */
static pid_t start_cell(const grid_exec_ctx *x, const grid_cell *c, int slot, int resume)
{
    char dir[2048], log[2100], lock[2100], gpu_env[32], err[2400];
    grid_cell_dir(x->out, c, dir, sizeof dir);
    snprintf(log, sizeof log, "%s.log", dir);
    lock_path(x->out, c, lock, sizeof lock);
    /* opened here, beneath the guarded grid directory (no symlink
     * followed); after the fork only async-signal-safe calls run */
    int log_fd = open_append_fd(log, err, sizeof err), lock_fd = log_fd < 0 ? -1 : open_lock_file(lock, err, sizeof err);
    if (lock_fd < 0) {
        if (log_fd >= 0) close(log_fd);
        die_msg("grid: %s", err);
        return -1;
    }
    snprintf(gpu_env, sizeof gpu_env, "PCGRLLM_GPU=%d", slot);
    char *argv[GRID_MAX_ARGV];
    grid_argv_buf buf;
    grid_cell_argv(x->d, c, dir, resume, x->threads, x->add_backend, &buf, argv);
    /* the environment, with PCGRLLM_GPU for GPU slots, built before fork */
    int ne = 0;
    while (environ[ne]) ne++;
    char **envp = malloc(sizeof(char *) * (size_t)(ne + 2));
    if (!envp) {
        close(log_fd);
        close(lock_fd);
        return -1;
    }
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
        dup2(log_fd, 1);
        dup2(log_fd, 2);
        if (log_fd > 2) close(log_fd);
        /* the lock goes through exec with the descriptor: the run holds it */
        int lfd = lock_fd;
        if (fcntl(lfd, F_SETFD, 0) != 0 || flock(lfd, LOCK_EX | LOCK_NB) != 0) {
            fprintf(stderr, "grid: %s is being run by another process (it holds %s); not starting it twice\n",
                    c->name, lock);
            _exit(CELL_BUSY);
        }
        execve("/proc/self/exe", argv, envp);
        fprintf(stderr, "grid: cannot run /proc/self/exe: %s\n", strerror(errno));
        _exit(127);
    }
    free(envp);
    close(log_fd);
    close(lock_fd);
    if (pid > 0) setpgid(pid, pid);
    return pid;
}

static void slot_name(const grid_exec_ctx *x, int slot, char *buf, size_t len)
{
    snprintf(buf, len, x->gpus ? "gpu %d" : "slot %d", slot);
}

/* What run_cells keeps while cells run. */
typedef struct {
    const grid_exec_ctx *x;
    grid_sched s;
    pid_t *pid;        /* per slot, 0 when free */
    double *t0;
    int *failed, *failed_status, n_failed;
    int total, done, bad_flags, forwarded;
    int done_before;   /* finished before this grid started: not in its ETA */
    double started;
} exec_state;

/* "; ETA 12 min" from the cells this grid finished so far, or "". */
static void eta_text(const exec_state *e, char *buf, int len)
{
    buf[0] = 0;
    int done_here = e->done - e->done_before, left = e->total - e->done;
    if (done_here <= 0 || left <= 0) return;
    double per = (now_seconds() - e->started) / done_here; /* wall time per cell, slots included */
    char d[64];
    train_format_duration(per * left, d, sizeof d);
    snprintf(buf, (size_t)len, ", %d running, %d left; ETA %s", e->s.running, left - e->s.running, d);
}

/* Start cells while slots are free. */
static void start_ready(exec_state *e)
{
    int slot, cell;
    while (!e->forwarded && !e->bad_flags && (cell = grid_sched_next(&e->s, &slot)) >= 0) {
        const grid_cell *c = &e->x->cells[cell];
        char dir[2048], sn[16];
        grid_cell_dir(e->x->out, c, dir, sizeof dir);
        grid_result r;
        grid_run_state(dir, &r);
        slot_name(e->x, slot, sn, sizeof sn);
        pid_t pid = start_cell(e->x, c, slot, r.state == GRID_STARTED);
        if (pid < 0) {
            grid_say("FAILED %s on %s: cannot start it: %s", c->name, sn, strerror(errno));
            e->failed[e->n_failed] = cell;
            e->failed_status[e->n_failed++] = -1;
            grid_sched_done(&e->s, slot);
            continue;
        }
        e->pid[slot] = pid;
        e->t0[slot] = now_seconds();
        grid_say("start %s on %s (%s; %d/%d done)", c->name, sn, r.state == GRID_STARTED ? "resuming" : "new",
                 e->done, e->total);
    }
}

/* The cell on slot ended with wait status st: say how, count it. */
static void cell_ended(exec_state *e, int slot, int st)
{
    double wall = now_seconds() - e->t0[slot];
    e->pid[slot] = 0;
    int cell = grid_sched_done(&e->s, slot);
    const grid_cell *c = &e->x->cells[cell];
    char dir[2048], sn[16], why[128], log[2100], last[320];
    grid_cell_dir(e->x->out, c, dir, sizeof dir);
    slot_name(e->x, slot, sn, sizeof sn);
    grid_result r;
    grid_run_state(dir, &r);
    int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    /* a finished run without any reward exits 1: a result (fitness 0), not a failure */
    if ((code == 0 || (code == 1 && r.best_node < 0)) && r.state == GRID_FINISHED) {
        e->done++;
        char eta[160];
        eta_text(e, eta, sizeof eta);
        if (r.best_node >= 0)
            grid_say("done %s on %s in %.1f s: best fitness %.4f (node %d); %d/%d done%s", c->name, sn, wall,
                     r.best_fitness, r.best_node, e->done, e->total, eta);
        else
            grid_say("done %s on %s in %.1f s: no node produced a valid reward (fitness 0); %d/%d done%s", c->name,
                     sn, wall, e->done, e->total, eta);
        return;
    }
    if (e->forwarded && WIFSIGNALED(st)) {
        grid_say("stopped %s on %s after %.1f s (resumable)", c->name, sn, wall);
        return;
    }
    if (WIFSIGNALED(st)) snprintf(why, sizeof why, "killed by %s", child_signal_name(WTERMSIG(st)));
    else if (code == CELL_BUSY) snprintf(why, sizeof why, "not started");
    else if (code == RUN_EXIT_SERVER) snprintf(why, sizeof why, "its model server failed (resumed on the next start)");
    else if (code == 0) snprintf(why, sizeof why, "exited 0 but its run is not complete");
    else snprintf(why, sizeof why, "exit status %d", code);
    snprintf(log, sizeof log, "%s.log", dir);
    last_log_line(log, last, sizeof last);
    grid_say("FAILED %s on %s after %.1f s: %s: %s; %d/%d done", c->name, sn, wall, why,
             last[0] ? last : "(empty log)", e->done, e->total);
    e->failed[e->n_failed] = cell;
    e->failed_status[e->n_failed++] = code;
    if (code == 2 && !e->bad_flags) {
        /* `run` refused its flags: every other cell would too */
        e->bad_flags = 1;
        grid_sched_stop(&e->s);
        grid_say("stopping: `pcgrllm run` refused the run flags (see %s); no more cells are started", log);
    }
}

/* The failures again, at the end, and the exit code. */
static int exec_report(exec_state *e)
{
    int code = 0;
    if (e->n_failed) {
        grid_say("%d cell%s failed:", e->n_failed, e->n_failed == 1 ? "" : "s");
        for (int i = 0; i < e->n_failed; i++) {
            const grid_cell *c = &e->x->cells[e->failed[i]];
            char dir[2048], log[2100], last[320];
            grid_cell_dir(e->x->out, c, dir, sizeof dir);
            snprintf(log, sizeof log, "%s.log", dir);
            last_log_line(log, last, sizeof last);
            grid_say("  %s: exit status %d: %s (log %s)", c->name, e->failed_status[i], last[0] ? last : "(empty log)",
                     log);
        }
        code = e->bad_flags ? 2 : 1;
    }
    if (e->forwarded) {
        grid_say("stopped: %d/%d cells done; rerun the same command to continue", e->done, e->total);
        code = e->forwarded == SIGINT ? 130 : 128 + e->forwarded;
    }
    return code;
}

int grid_exec_run(const grid_exec_ctx *x, const int *queue, int nq, int n_slots, int total, int done_before)
{
    exec_state e;
    memset(&e, 0, sizeof e);
    e.x = x;
    e.total = total;
    e.done = done_before;
    e.done_before = done_before;
    e.started = now_seconds();
    e.pid = calloc((size_t)n_slots, sizeof *e.pid);
    e.t0 = calloc((size_t)n_slots, sizeof *e.t0);
    e.failed = calloc((size_t)(nq ? nq : 1), sizeof *e.failed);
    e.failed_status = calloc((size_t)(nq ? nq : 1), sizeof *e.failed_status);
    if (!e.pid || !e.t0 || !e.failed || !e.failed_status || grid_sched_init(&e.s, n_slots, queue, nq)) {
        free(e.pid), free(e.t0), free(e.failed), free(e.failed_status);
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
    for (;;) {
        if (g_signal && !e.forwarded) {
            e.forwarded = g_signal;
            grid_sched_stop(&e.s);
            grid_say("%s: starting no more cells; passing it to the %d running cell%s (their run directories stay "
                     "resumable)", e.forwarded == SIGINT ? "interrupted" : "terminated", e.s.running,
                     e.s.running == 1 ? "" : "s");
            for (int i = 0; i < n_slots; i++)
                if (e.pid[i] > 0) kill(-e.pid[i], e.forwarded);
        }
        start_ready(&e);
        if (e.s.running == 0) break;
        int st, slot;
        pid_t w = waitpid(-1, &st, WNOHANG);
        if (w <= 0) {
            if (w < 0 && errno == ECHILD) break;
            struct timespec ts = {0, 50 * 1000000};
            nanosleep(&ts, NULL);
            continue;
        }
        for (slot = 0; slot < n_slots && e.pid[slot] != w; slot++) {
        }
        if (slot < n_slots) cell_ended(&e, slot, st); /* else not a cell */
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    int code = exec_report(&e);
    grid_sched_free(&e.s);
    free(e.pid), free(e.t0), free(e.failed), free(e.failed_status);
    return code;
}
