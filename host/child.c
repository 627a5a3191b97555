#include "child.h"
#include <errno.h>
#include <omp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Frames on the pipe: one type byte, a 4-byte length, the payload. */
enum { FRAME_RESULT = 'R', FRAME_FAIL = 'E', FRAME_BEAT = 'H' };
#define FRAME_MAX (256u << 20)

static int g_fd = -1;

int child_fd(void) { return g_fd; }

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
    unsigned char hdr[5];
    uint32_t n = (uint32_t)len;
    hdr[0] = (unsigned char)type;
    memcpy(hdr + 1, &n, 4);
    if (write_all(g_fd, hdr, 5)) return -1;
    return len ? write_all(g_fd, data, len) : 0;
}

int child_send(const void *data, size_t len) { return send_frame(FRAME_RESULT, data, len); }
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

typedef struct {
    unsigned char *buf;
    size_t len, cap;
    void *result;
    size_t result_len;
    int have_result;
    char fail[1024];
    int failed;
    int bad_frame;
} reader;

/* Consume whole frames from r->buf. */
static void parse_frames(reader *r)
{
    size_t off = 0;
    while (r->len - off >= 5) {
        uint32_t n;
        memcpy(&n, r->buf + off + 1, 4);
        if (n > FRAME_MAX) {
            r->bad_frame = 1;
            off = r->len;
            break;
        }
        if (r->len - off - 5 < n) break;
        int type = r->buf[off];
        const unsigned char *data = r->buf + off + 5;
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
        } else if (type != FRAME_BEAT) {
            r->bad_frame = 1;
        }
        off += 5 + n;
    }
    memmove(r->buf, r->buf + off, r->len - off);
    r->len -= off;
}

static int read_some(reader *r, int fd)
{
    if (r->cap - r->len < 65536) {
        size_t cap = r->cap ? r->cap * 2 : 131072;
        if (cap > FRAME_MAX + 65536) cap = FRAME_MAX + 65536;
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

int child_run_ex(int (*fn)(void *arg), void *arg, const child_opts *opts, void **blob, size_t *blob_len,
                 char *reason, int reason_len)
{
    child_opts o = opts ? *opts : (child_opts){0, 0, 0};
    if (blob) *blob = NULL;
    if (blob_len) *blob_len = 0;
    if (reason && reason_len > 0) reason[0] = 0;
    int fds[2];
    if (pipe(fds)) {
        snprintf(reason, (size_t)reason_len, "cannot create a pipe: %s", strerror(errno));
        return -1;
    }
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
        for (int sig = 1; sig < 32; sig++)
            if (sig != SIGKILL && sig != SIGSTOP) signal(sig, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        g_fd = fds[1];
        if (o.single_thread) omp_set_num_threads(1);
        int st = fn(arg);
        fflush(NULL);
        _exit(st & 0xff);
    }
    setpgid(pid, pid); /* also done by the child; whichever runs first */
    close(fds[1]);
    reader r;
    memset(&r, 0, sizeof r);
    double start = mono_now(), last = start;
    int pipe_open = 1, status = 0, exited = 0, timed_out = 0, idle = 0;
    while (!exited) {
        double now = mono_now();
        double wait = 1e9;
        if (o.timeout_s > 0) wait = start + o.timeout_s - now;
        if (o.idle_timeout_s > 0 && last + o.idle_timeout_s - now < wait) wait = last + o.idle_timeout_s - now;
        if (wait <= 0) {
            timed_out = 1;
            idle = !(o.timeout_s > 0 && now >= start + o.timeout_s);
            break;
        }
        /* short slices: the child may exit while something it started
         * still holds the pipe open */
        int ms = wait > 0.02 ? 20 : (int)(wait * 1000.0) + 1;
        if (pipe_open) {
            struct pollfd pf = {fds[0], POLLIN, 0};
            int pr = poll(&pf, 1, ms);
            if (pr > 0) {
                int rr = read_some(&r, fds[0]);
                if (rr <= 0) pipe_open = 0;
                else last = mono_now();
            } else if (pr < 0 && errno != EINTR) {
                pipe_open = 0;
            }
        } else {
            struct timespec ts = {0, 1000000}; /* the child closed its end: wait for its exit */
            if (ms > 1) nanosleep(&ts, NULL);
        }
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) exited = 1;
    }
    if (!exited) {
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
    }
    /* drain what the child wrote before it ended */
    if (pipe_open) {
        int fl = 1;
        while (fl > 0) {
            struct pollfd pf = {fds[0], POLLIN, 0};
            if (poll(&pf, 1, 0) <= 0) break;
            fl = read_some(&r, fds[0]);
        }
    }
    close(fds[0]);
    kill(-pid, SIGKILL); /* anything the child left behind in its group */
    int rc = -1;
    char t[32];
    if (timed_out) {
        if (idle) {
            fmt_seconds(t, sizeof t, o.idle_timeout_s);
            snprintf(reason, (size_t)reason_len, "stopped responding for %s (hung; killed)", t);
        } else {
            fmt_seconds(t, sizeof t, o.timeout_s);
            snprintf(reason, (size_t)reason_len, "timed out after %s (killed; an infinite loop?)", t);
        }
    } else if (r.failed) {
        snprintf(reason, (size_t)reason_len, "%s", r.fail);
    } else if (WIFSIGNALED(status)) {
        snprintf(reason, (size_t)reason_len, "crashed with %s", child_signal_name(WTERMSIG(status)));
    } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
        snprintf(reason, (size_t)reason_len, "exited with status %d", WEXITSTATUS(status));
    } else if (r.bad_frame) {
        snprintf(reason, (size_t)reason_len, "sent a malformed result");
    } else {
        rc = 0;
    }
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
    child_opts o = {timeout_s, 0, 0};
    return child_run_ex(fn, arg, &o, NULL, NULL, reason, reason_len);
}
