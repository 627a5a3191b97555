#define _GNU_SOURCE
#include "child.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <omp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* Frames on the pipe: one type byte, a 4-byte length, the payload. */
enum { FRAME_RESULT = 'R', FRAME_FAIL = 'E', FRAME_BEAT = 'H', FRAME_DATA = 'D' };
#define FRAME_MAX (256u << 20)
/* How long the reaper gets to clean up after the watcher asked it to stop. */
#define REAPER_GRACE_S 2.0

static int g_fd = -1;

int child_fd(void) { return g_fd; }
void child_attach(int fd) { g_fd = fd; }

static int write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

static int send_frame(int type, const void *data, size_t len)
{
    if (g_fd < 0 || len > FRAME_MAX) return -1;
    unsigned char small[PIPE_BUF];
    uint32_t n = (uint32_t)len;
    /* a frame that fits in PIPE_BUF goes out in one write, which the pipe
     * keeps whole even when several threads (say, crashing at once) send */
    if (len + 5 <= sizeof small) {
        small[0] = (unsigned char)type;
        memcpy(small + 1, &n, 4);
        if (len) memcpy(small + 5, data, len);
        return write_all(g_fd, small, len + 5);
    }
    unsigned char hdr[5];
    hdr[0] = (unsigned char)type;
    memcpy(hdr + 1, &n, 4);
    if (write_all(g_fd, hdr, 5)) return -1;
    return write_all(g_fd, data, len);
}

int child_send(const void *data, size_t len) { return send_frame(FRAME_RESULT, data, len); }
int child_send_data(const void *data, size_t len) { return send_frame(FRAME_DATA, data, len); }
int child_fail(const char *reason) { return send_frame(FRAME_FAIL, reason, strlen(reason)); }
int child_heartbeat(void) { return send_frame(FRAME_BEAT, NULL, 0); }

const char *child_signal_name(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV (invalid memory access)";
    case SIGBUS: return "SIGBUS (bad memory access)";
    case SIGFPE: return "SIGFPE (arithmetic error, e.g. integer division by zero)";
    case SIGILL: return "SIGILL (illegal instruction)";
    case SIGABRT: return "SIGABRT (aborted)";
    case SIGTRAP: return "SIGTRAP (trap)";
    case SIGSYS: return "SIGSYS (forbidden system call)";
    case SIGKILL: return "SIGKILL (killed)";
    case SIGTERM: return "SIGTERM (terminated)";
    case SIGXCPU: return "SIGXCPU (CPU time limit exceeded)";
    case SIGXFSZ: return "SIGXFSZ (file size limit exceeded)";
    case SIGPIPE: return "SIGPIPE (broken pipe)";
    case SIGINT: return "SIGINT (interrupted)";
    default: {
        static __thread char buf[32];
        snprintf(buf, sizeof buf, "signal %d", sig);
        return buf;
    }
    }
}

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int child_exec(const char *path, char *const argv[], char *const envp[], int keep_fd, int keep_pipe)
{
    /* whatever the caller had open (log files, sockets, run state) stays
     * behind; close_range is the one call that covers every descriptor */
    if (syscall(SYS_close_range, 3u, ~0u, CLOSE_RANGE_CLOEXEC) != 0) {
        long max = sysconf(_SC_OPEN_MAX);
        for (long fd = 3; fd < (max > 0 && max < 65536 ? max : 65536); fd++) fcntl((int)fd, F_SETFD, FD_CLOEXEC);
    }
    if (g_fd >= 0 && keep_pipe) fcntl(g_fd, F_SETFD, 0);
    if (keep_fd >= 0) fcntl(keep_fd, F_SETFD, 0);
    execve(path, argv, envp);
    return -1;
}

/* ---- the reaper (async-signal-safe calls only: it is forked from a
 * process that may have other threads) ---- */

/* Parent pid from /proc/PID/stat ("pid (comm) state ppid ..."); -1 if gone. */
static pid_t stat_ppid(const char *pid)
{
    char path[64] = "/proc/", buf[512];
    size_t k = strlen(path);
    for (const char *s = pid; *s && k < sizeof path - 8; s++) path[k++] = *s;
    memcpy(path + k, "/stat", 6);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return -1;
    buf[n] = 0;
    char *close_paren = NULL;
    for (char *p = buf; *p; p++) /* the command name may itself hold ')' */
        if (*p == ')') close_paren = p;
    if (!close_paren || close_paren[1] != ' ' || !close_paren[2] || close_paren[3] != ' ') return -1;
    return (pid_t)strtol(close_paren + 4, NULL, 10);
}

/* SIGKILL every process whose parent is this one; how many were found. */
static int kill_own_children(void)
{
    struct linux_dirent64 {
        uint64_t ino;
        int64_t off;
        unsigned short reclen;
        unsigned char type;
        char name[];
    };
    pid_t self = getpid();
    int fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC), found = 0;
    if (fd < 0) return 0;
    char buf[8192] __attribute__((aligned(8)));
    long n;
    while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
        for (long off = 0; off < n;) {
            struct linux_dirent64 *d = (struct linux_dirent64 *)(buf + off);
            off += d->reclen;
            if (d->name[0] < '1' || d->name[0] > '9') continue;
            if (stat_ppid(d->name) == self) {
                kill((pid_t)strtol(d->name, NULL, 10), SIGKILL);
                found++;
            }
        }
    }
    close(fd);
    return found;
}

/* End the reaper the way the child ended. */
static void exit_like(int status)
{
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        struct rlimit none = {0, 0};
        setrlimit(RLIMIT_CORE, &none);
        signal(sig, SIG_DFL);
        sigset_t s;
        sigemptyset(&s);
        sigaddset(&s, sig);
        sigprocmask(SIG_UNBLOCK, &s, NULL);
        raise(sig);
        _exit(128 + sig);
    }
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 127);
}

static void reset_signals(void)
{
    for (int sig = 1; sig < 32; sig++)
        if (sig != SIGKILL && sig != SIGSTOP) signal(sig, SIG_DFL);
}

typedef struct {
    int (*fn)(void *);
    void *arg;
    int wfd, single_thread;
} child_start;

static void reaper_main(const child_start *cs)
{
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    sigset_t waitset, none;
    sigemptyset(&waitset);
    sigaddset(&waitset, SIGCHLD);
    sigaddset(&waitset, SIGTERM);
    sigaddset(&waitset, SIGINT);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &waitset, NULL); /* taken with sigtimedwait below */
    pid_t reaper = getpid();
    pid_t w = fork();
    if (w < 0) {
        g_fd = cs->wfd;
        child_fail("cannot fork the child process");
        _exit(1);
    }
    if (w == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != reaper) _exit(127);
        sigprocmask(SIG_SETMASK, &none, NULL);
        g_fd = cs->wfd;
        if (cs->single_thread) omp_set_num_threads(1);
        int st = cs->fn(cs->arg);
        fflush(NULL);
        _exit(st & 0xff);
    }
    close(cs->wfd); /* the pipe is the child's alone: EOF when it is gone */
    int status = 0, child_done = 0;
    for (;;) {
        siginfo_t si;
        struct timespec tick = {0, 20000000};
        int sig = sigtimedwait(&waitset, &si, child_done ? &tick : NULL);
        if (sig == SIGINT && !child_done) kill(w, SIGINT);
        if (sig == SIGTERM && !child_done) kill(w, SIGKILL);
        int st;
        pid_t p;
        while ((p = waitpid(-1, &st, WNOHANG)) > 0)
            if (p == w) status = st, child_done = 1;
        int none_left = p < 0 && errno == ECHILD;
        if (!child_done) continue;
        if (none_left) break;
        /* orphans of the child were re-parented to us: kill until none is left */
        kill_own_children();
    }
    exit_like(status);
}

/* ---- the watcher ---- */

typedef struct {
    unsigned char *buf;
    size_t len, cap, max_frame;
    void *result;
    size_t result_len;
    int have_result;
    char fail[1024];
    int failed;
    int bad_frame;
    const child_opts *o;
    int stopped;  /* on_data asked to stop */
    int progress; /* a frame since the last look showed progress */
    char stop_why[1024];
} reader;

static void take_frame(reader *r, int type, const unsigned char *data, uint32_t n)
{
    if (type == FRAME_BEAT) {
        r->progress |= !r->o->untrusted; /* anybody can send a heartbeat */
        return;
    }
    if (type == FRAME_DATA && r->o->on_data) {
        if (r->stopped) return;
        int v = r->o->on_data(r->o->data_ctx, data, n, r->stop_why, (int)sizeof r->stop_why);
        if (v == CHILD_DATA_PROGRESS || (v == CHILD_DATA_OK && !r->o->untrusted)) r->progress = 1;
        else if (v != CHILD_DATA_OK) r->stopped = 1;
        return;
    }
    r->progress |= !r->o->untrusted;
    if (r->o->untrusted || type == FRAME_DATA) { /* not part of this child's protocol */
        r->bad_frame = 1;
        return;
    }
    if (type == FRAME_RESULT) {
        free(r->result);
        r->result = malloc(n ? n : 1);
        if (r->result) {
            memcpy(r->result, data, n);
            r->result_len = n;
            r->have_result = 1;
        }
    } else if (type == FRAME_FAIL && !r->failed) {
        size_t k = n < sizeof r->fail - 1 ? n : sizeof r->fail - 1;
        memcpy(r->fail, data, k);
        r->fail[k] = 0;
        r->failed = 1;
    } else if (type != FRAME_FAIL) {
        r->bad_frame = 1;
    }
}

/* Consume whole frames from r->buf. */
static void parse_frames(reader *r)
{
    size_t off = 0;
    while (r->len - off >= 5 && !r->bad_frame) {
        uint32_t n;
        memcpy(&n, r->buf + off + 1, 4);
        if (n > r->max_frame) {
            r->bad_frame = 1;
            off = r->len;
            break;
        }
        if (r->len - off - 5 < n) break;
        take_frame(r, r->buf[off], r->buf + off + 5, n);
        off += 5 + n;
    }
    if (r->bad_frame) off = r->len;
    memmove(r->buf, r->buf + off, r->len - off);
    r->len -= off;
}

static int read_some(reader *r, int fd)
{
    if (r->cap - r->len < 65536) {
        size_t cap = r->cap ? r->cap * 2 : 131072;
        if (cap > r->max_frame + 65536) cap = r->max_frame + 65536;
        if (cap <= r->len) return -1;
        unsigned char *b = realloc(r->buf, cap);
        if (!b) return -1;
        r->buf = b;
        r->cap = cap;
    }
    ssize_t got = read(fd, r->buf + r->len, r->cap - r->len);
    if (got < 0) return errno == EINTR || errno == EAGAIN ? 1 : -1;
    if (got == 0) return 0;
    r->len += (size_t)got;
    parse_frames(r);
    return 1;
}

static void fmt_seconds(char *buf, size_t len, double s)
{
    if (s == (double)(long)s) snprintf(buf, len, "%ld s", (long)s);
    else snprintf(buf, len, "%.3g s", s);
}

/* Ask the reaper to stop the child and clean up; force it after a grace. */
static void stop_reaper(pid_t pid, int *status)
{
    kill(pid, SIGTERM);
    double until = mono_now() + REAPER_GRACE_S;
    while (mono_now() < until) {
        if (waitpid(pid, status, WNOHANG) == pid) return;
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    while (waitpid(pid, status, 0) < 0 && errno == EINTR) {
    }
}

static void explain(const reader *r, const child_opts *o, int timed_out, int idle, int status, char *reason,
                    int reason_len, int *rc)
{
    char t[32];
    *rc = -1;
    if (r->stopped) {
        snprintf(reason, (size_t)reason_len, "%s", r->stop_why);
    } else if (timed_out) {
        fmt_seconds(t, sizeof t, idle ? o->idle_timeout_s : o->timeout_s);
        snprintf(reason, (size_t)reason_len,
                 idle ? "stopped responding for %s (hung; killed)" : "timed out after %s (killed; an infinite loop?)",
                 t);
    } else if (r->failed) {
        snprintf(reason, (size_t)reason_len, "%s", r->fail);
    } else if (WIFSIGNALED(status)) {
        snprintf(reason, (size_t)reason_len, "crashed with %s", child_signal_name(WTERMSIG(status)));
    } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
        snprintf(reason, (size_t)reason_len, "exited with status %d", WEXITSTATUS(status));
    } else if (r->bad_frame) {
        snprintf(reason, (size_t)reason_len, "sent a malformed message");
    } else {
        *rc = 0;
    }
}

/* The child: its own process group, the reaper above the function.  The
 * child's pid, or -1 with reason (fds closed). */
static pid_t spawn_reaper(int (*fn)(void *arg), void *arg, const child_opts *o, int fds[2], char *reason,
                          int reason_len)
{
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(reason, (size_t)reason_len, "cannot fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        close(fds[0]);
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(127);
        /* default dispositions: a crash must end the child, not run the
         * parent's handlers (a test harness's, say) */
        reset_signals();
        child_start cs = {fn, arg, fds[1], o->single_thread};
        reaper_main(&cs);
    }
    setpgid(pid, pid); /* also done by the child; whichever runs first */
    close(fds[1]);
    return pid;
}

/* What the watch over a running child knows. */
typedef struct {
    pid_t pid;
    int fd, pipe_open, status, exited, timed_out, idle, interrupted;
    double start, last, interrupted_at;
} watch_state;

/* One slice of the watch: the limits, an interrupt, the tick, what the
 * pipe brings, whether the child ended.  0 to go on, 1 to stop watching. */
static int watch_slice(watch_state *w, reader *r, const child_opts *o)
{
    double now = mono_now();
    double wait = 1e9;
    if (o->timeout_s > 0) wait = w->start + o->timeout_s - now;
    if (o->idle_timeout_s > 0 && w->last + o->idle_timeout_s - now < wait) wait = w->last + o->idle_timeout_s - now;
    if (wait <= 0) {
        w->timed_out = 1;
        w->idle = !(o->timeout_s > 0 && now >= w->start + o->timeout_s);
        return 1;
    }
    if (o->interrupt && *o->interrupt && !w->interrupted) {
        kill(w->pid, SIGINT);
        w->interrupted = 1;
        w->interrupted_at = now;
    }
    if (w->interrupted && o->interrupt_grace_s > 0 && now - w->interrupted_at > o->interrupt_grace_s) {
        snprintf(r->stop_why, sizeof r->stop_why, "did not stop within %.0f s of the interrupt (killed)",
                 o->interrupt_grace_s);
        r->stopped = 1;
        return 1;
    }
    if (o->on_tick && o->on_tick(o->data_ctx, r->stop_why, (int)sizeof r->stop_why)) {
        r->stopped = 1;
        return 1;
    }
    /* short slices: the child may exit while something it started
     * still holds the pipe open */
    int ms = wait > 0.02 ? 20 : (int)(wait * 1000.0) + 1;
    if (w->pipe_open) {
        struct pollfd pf = {w->fd, POLLIN, 0};
        int pr = poll(&pf, 1, ms);
        if (pr > 0) {
            if (read_some(r, w->fd) <= 0) w->pipe_open = 0;
            if (r->progress) w->last = mono_now(), r->progress = 0;
        } else if (pr < 0 && errno != EINTR) {
            w->pipe_open = 0;
        }
    } else {
        struct timespec ts = {0, 1000000}; /* the child closed its end: wait for its exit */
        if (ms > 1) nanosleep(&ts, NULL);
    }
    if (waitpid(w->pid, &w->status, WNOHANG) == w->pid) w->exited = 1;
    return 0;
}

int child_run_ex(int (*fn)(void *arg), void *arg, const child_opts *opts, void **blob, size_t *blob_len,
                 char *reason, int reason_len)
{
    child_opts o;
    memset(&o, 0, sizeof o);
    if (opts) o = *opts;
    if (blob) *blob = NULL;
    if (blob_len) *blob_len = 0;
    if (reason && reason_len > 0) reason[0] = 0;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC)) {
        snprintf(reason, (size_t)reason_len, "cannot create a pipe: %s", strerror(errno));
        return -1;
    }
    pid_t pid = spawn_reaper(fn, arg, &o, fds, reason, reason_len);
    if (pid < 0) return -1;
    reader r;
    memset(&r, 0, sizeof r);
    r.o = &o;
    r.max_frame = o.max_frame ? o.max_frame : FRAME_MAX;
    watch_state w = {.pid = pid, .fd = fds[0], .pipe_open = 1, .start = mono_now()};
    w.last = w.start;
    while (!w.exited && !r.stopped && !(r.bad_frame && o.untrusted))
        if (watch_slice(&w, &r, &o)) break;
    if (!w.exited) stop_reaper(pid, &w.status);
    /* drain what the child wrote before it ended */
    while (w.pipe_open && !r.stopped && !r.bad_frame) {
        struct pollfd pf = {fds[0], POLLIN, 0};
        if (poll(&pf, 1, 0) <= 0 || read_some(&r, fds[0]) <= 0) break;
    }
    close(fds[0]);
    kill(-pid, SIGKILL); /* anything left in the reaper's group */
    int rc;
    explain(&r, &o, w.timed_out, w.idle, w.status, reason, reason_len, &rc);
    if (rc == 0 && r.have_result) {
        if (blob) {
            *blob = r.result;
            r.result = NULL;
        }
        if (blob_len) *blob_len = r.result_len;
    }
    free(r.result);
    free(r.buf);
    return rc;
}

int child_run(int (*fn)(void *arg), void *arg, double timeout_s, char *reason, int reason_len)
{
    child_opts o;
    memset(&o, 0, sizeof o);
    o.timeout_s = timeout_s;
    return child_run_ex(fn, arg, &o, NULL, NULL, reason, reason_len);
}
