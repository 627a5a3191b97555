#include "util.h"
#include "dirguard.h"
#include <dirent.h>
#include <limits.h>
#include <errno.h>
#include <jansson.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Writes s with its control bytes escaped: an error quotes file names,
 * replies and flags that someone else chose, and one of them holding a
 * newline or a terminal escape must not make the error two lines or
 * drive the terminal.  Bytes past 0x7f pass (UTF-8 names stay legible). */
static void put_escaped(FILE *f, const char *s)
{
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '\n') fputs("\\n", f);
        else if (*c == '\r') fputs("\\r", f);
        else if (*c == '\t') fputs("\\t", f);
        else if (*c < 0x20 || *c == 0x7f) fprintf(f, "\\x%02x", *c);
        else fputc(*c, f);
    }
}

void die_msg(const char *fmt, ...)
{
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    char *msg = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (msg) vsnprintf(msg, (size_t)n + 1, fmt, again);
    va_end(again);
    va_end(ap);
    fputs("pcgrllm: ", stderr);
    if (msg) put_escaped(stderr, msg);
    else fputs("(the message could not be formatted)", stderr);
    fputc('\n', stderr);
    free(msg);
}

void say_to(char *buf, int len, const char *fmt, ...)
{
    if (!buf || len <= 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, (size_t)len, fmt, ap);
    va_end(ap);
}

void vsay_and_log(FILE *log, int stamped, const char *fmt, va_list ap)
{
    char line[2048];
    vsnprintf(line, sizeof line, fmt, ap);
    printf("%s\n", line);
    fflush(stdout);
    if (!log) return;
    if (stamped) {
        time_t now = time(NULL);
        struct tm tm;
        char ts[32];
        localtime_r(&now, &tm);
        strftime(ts, sizeof ts, "%Y-%m-%d %H:%M:%S", &tm);
        fprintf(log, "[%s] ", ts);
    }
    fprintf(log, "%s\n", line);
    fflush(log);
}

/* "a FIFO", "a directory", ...: what a path is, for one-line refusals. */
const char *file_kind(unsigned mode)
{
    if (S_ISREG(mode)) return "a regular file";
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISLNK(mode)) return "a symbolic link";
    return "not a regular file";
}

int open_regular(const char *path, char *err, int errlen)
{
    dirguard_at at;
    if (dirguard_resolve(path, &at, err, errlen)) return -1;
    /* O_NONBLOCK: opening a FIFO that has no writer must not wait for one.
     * The kind is taken from the opened descriptor, not from a stat()
     * before the open, so the file cannot be swapped in between. */
    int fd = openat(at.fd, at.leaf, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | (at.guarded ? O_NOFOLLOW : 0));
    struct stat st;
    if (fd < 0) {
        int e = errno;
        /* a socket cannot be opened at all (ENXIO): name what it is */
        int known = fstatat(at.fd, at.leaf, &st, at.guarded ? AT_SYMLINK_NOFOLLOW : 0) == 0;
        if (known && at.guarded && S_ISLNK(st.st_mode)) dirguard_link_refusal(&at, path, err, errlen);
        else if (known && !S_ISREG(st.st_mode))
            snprintf(err, (size_t)errlen, "%s: is %s, not a regular file", path, file_kind(st.st_mode));
        else
            snprintf(err, (size_t)errlen, "%s: cannot open: %s", path, strerror(e));
        dirguard_release(&at);
        return -1;
    }
    dirguard_release(&at);
    if (fstat(fd, &st) != 0) {
        snprintf(err, (size_t)errlen, "%s: cannot read: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, (size_t)errlen, "%s: is %s, not a regular file", path, file_kind(st.st_mode));
        close(fd);
        return -1;
    }
    if (at.guarded && st.st_nlink > 1) {
        dirguard_hard_link_refusal(&at, path, (long)st.st_nlink, err, errlen);
        close(fd);
        return -1;
    }
    int fl = fcntl(fd, F_GETFL); /* reads of the regular file may block again */
    if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

/* read() all of n bytes or up to end of file; bytes read, or -1. */
static long read_full(int fd, char *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return -1;
        if (r == 0) break;
        got += (size_t)r;
    }
    return (long)got;
}

char *read_file(const char *path, long max, long *len, char *err, int errlen)
{
    int fd = open_regular(path, err, errlen);
    if (fd < 0) return NULL;
    /* sized by the file, not by the limit: a limit is a ceiling, not a need */
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_size > max) {
        close(fd);
        snprintf(err, (size_t)errlen, "%s: file too large (over %ld bytes)", path, max);
        return NULL;
    }
    size_t cap = st.st_size < max ? (size_t)st.st_size + 1 : (size_t)max + 1;
    char *buf = malloc(cap + 1);
    if (!buf) {
        close(fd);
        snprintf(err, (size_t)errlen, "%s: out of memory", path);
        return NULL;
    }
    long n = read_full(fd, buf, cap); /* one byte more shows a file that grew past max */
    int e = errno;
    close(fd);
    if (n < 0) {
        free(buf);
        snprintf(err, (size_t)errlen, "%s: read error: %s", path, strerror(e));
        return NULL;
    }
    if (n > max) {
        free(buf);
        snprintf(err, (size_t)errlen, "%s: file too large (over %ld bytes)", path, max);
        return NULL;
    }
    if ((size_t)n == cap) { /* more than fstat said: it is being written */
        free(buf);
        snprintf(err, (size_t)errlen, "%s: the file changed while it was read", path);
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

json_t *read_json_file(const char *path, long max, char *err, int errlen)
{
    long len;
    char *text = read_file(path, max, &len, err, errlen);
    if (!text) return NULL;
    json_error_t je;
    json_t *j = json_loadb(text, (size_t)len, JSON_REJECT_DUPLICATES, &je);
    free(text);
    if (!j) snprintf(err, (size_t)errlen, "%s: line %d: %s", path, je.line, je.text);
    return j;
}

int read_jsonl_file(const char *path, long max, jsonl_fn fn, void *ctx, char *err, int errlen)
{
    long len;
    char why[1200];
    char *text = read_file(path, max, &len, why, sizeof why);
    if (!text) {
        snprintf(err, (size_t)errlen, "%s", why);
        return -1;
    }
    int line = 0, rc = 0;
    if (memchr(text, 0, (size_t)len)) {
        snprintf(why, sizeof why, "holds a NUL byte");
        rc = -1;
    }
    for (char *s = text, *nl; !rc && s && *s; s = nl ? nl + 1 : NULL) {
        nl = strchr(s, '\n');
        if (nl) *nl = 0;
        line++;
        if (!*s) continue;
        json_t *o = json_loads(s, JSON_REJECT_DUPLICATES, NULL);
        if (!json_is_object(o)) {
            snprintf(why, sizeof why, "line %d: not a JSON object", line);
            rc = -1;
        } else {
            char e[600] = "";
            rc = fn(o, line, ctx, e, sizeof e);
            if (rc) snprintf(why, sizeof why, "line %d: %s", line, e);
        }
        json_decref(o);
    }
    free(text);
    if (rc) snprintf(err, (size_t)errlen, "%s: %s", path, why);
    return rc;
}

uint64_t fnv1a64(const void *data, size_t n, uint64_t h)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

int file_fnv1a64(const char *path, uint64_t *sum, char *err, int errlen)
{
    int fd = open_regular(path, err, errlen);
    if (fd < 0) return -1;
    uint64_t h = FNV1A64_INIT;
    char buf[65536];
    long n;
    while ((n = read_full(fd, buf, sizeof buf)) > 0) h = fnv1a64(buf, (size_t)n, h);
    int e = errno;
    close(fd);
    if (n < 0) {
        snprintf(err, (size_t)errlen, "%s: read error: %s", path, strerror(e));
        return -1;
    }
    *sum = h;
    return 0;
}

/* What lies at a destination, checked with the directory holding it
 * already open. */
static int check_output_at(const dirguard_at *at, const char *path, char *err, int errlen)
{
    struct stat st;
    if (fstatat(at->fd, at->leaf, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT) return 0;
        snprintf(err, (size_t)errlen, "%s: cannot check: %s", path, strerror(errno));
        return -1;
    }
    if (S_ISREG(st.st_mode)) return 0;
    if (S_ISLNK(st.st_mode)) {
        /* rename() replaces a symlink itself (its target is never
         * written); beneath a guarded directory a link is refused */
        if (!at->guarded) return 0;
        dirguard_link_refusal(at, path, err, errlen);
        errno = EEXIST;
        return -1;
    }
    /* anything else but a regular file would be silently swapped for one */
    snprintf(err, (size_t)errlen, "%s: is %s; not overwriting it", path, file_kind(st.st_mode));
    errno = S_ISDIR(st.st_mode) ? EISDIR : EEXIST; /* for callers that print strerror */
    return -1;
}

int check_output_path(const char *path, char *err, int errlen)
{
    if (!path[0]) { /* it would reach the write as ": cannot write" */
        snprintf(err, (size_t)errlen, "an empty path");
        errno = ENOENT;
        return -1;
    }
    dirguard_at at;
    if (dirguard_resolve(path, &at, err, errlen)) return -1;
    int rc = check_output_at(&at, path, err, errlen);
    int e = errno;
    dirguard_release(&at);
    errno = e;
    return rc;
}

int tmp_create(const char *path, char *tmp, size_t tmplen, char *err, int errlen)
{
    static unsigned counter;
    dirguard_at at;
    if (dirguard_resolve(path, &at, err, errlen)) return -1;
    for (int tries = 0; tries < 100; tries++) {
        unsigned k = __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);
        char leaf[PATH_MAX + 64];
        snprintf(leaf, sizeof leaf, "%s.tmp.%ld.%u", at.leaf, (long)getpid(), k);
        if ((size_t)snprintf(tmp, tmplen, "%s.tmp.%ld.%u", path, (long)getpid(), k) >= tmplen) {
            snprintf(err, (size_t)errlen, "%s: path too long", path);
            dirguard_release(&at);
            return -1;
        }
        /* O_EXCL | O_NOFOLLOW: never open something already lying there */
        int fd = openat(at.fd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd >= 0) {
            dirguard_release(&at);
            return fd;
        }
        if (errno != EEXIST) {
            snprintf(err, (size_t)errlen, "%s: cannot write: %s", path, strerror(errno));
            dirguard_release(&at);
            return -1;
        }
    }
    dirguard_release(&at);
    snprintf(err, (size_t)errlen, "%s: cannot create a temporary file beside it", path);
    return -1;
}

int write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return -1;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

int tmp_commit(int fd, const char *tmp, const char *path, char *err, int errlen)
{
    /* fsync and close report what a full or failing disk did to the data */
    int bad = fsync(fd) != 0;
    int e = errno;
    if (close(fd) != 0 && !bad) bad = 1, e = errno;
    dirguard_at at;
    if (dirguard_resolve(path, &at, err, errlen)) {
        e = errno;
        path_unlink(tmp);
        return errno = e, -1;
    }
    /* the temporary file lies beside path: its name in the same directory */
    const char *tmp_leaf = at.guarded && strrchr(tmp, '/') ? strrchr(tmp, '/') + 1 : tmp;
    if (!bad && check_output_at(&at, path, err, errlen) != 0) { /* again, just before replacing it */
        e = errno;
        unlinkat(at.fd, tmp_leaf, 0);
        dirguard_release(&at);
        errno = e;
        return -1;
    }
    if (!bad && renameat(at.fd, tmp_leaf, at.fd, at.leaf) != 0) bad = 1, e = errno;
    if (bad) {
        snprintf(err, (size_t)errlen, "%s: cannot write: %s", path, strerror(e));
        unlinkat(at.fd, tmp_leaf, 0);
    }
    dirguard_release(&at);
    errno = e;
    return bad ? -1 : 0;
}

int write_file_atomic_msg(const char *path, const void *data, size_t len, char *err, int errlen)
{
    if (check_output_path(path, err, errlen)) return -1;
    char tmp[4200];
    int fd = tmp_create(path, tmp, sizeof tmp, err, errlen);
    if (fd < 0) return -1;
    if (write_all(fd, data, len) != 0) {
        int e = errno; /* ENOSPC, EIO, EFBIG ... */
        snprintf(err, (size_t)errlen, "%s: cannot write: %s", path, strerror(e));
        close(fd);
        path_unlink(tmp);
        errno = e;
        return -1;
    }
    return tmp_commit(fd, tmp, path, err, errlen);
}

static __thread char last_write_error[1024];

const char *write_error(void)
{
    return last_write_error[0] ? last_write_error : "no write has failed";
}

void set_write_error(const char *msg)
{
    snprintf(last_write_error, sizeof last_write_error, "%s", msg);
}

int write_file_atomic(const char *path, const void *data, size_t len)
{
    char err[sizeof last_write_error];
    int rc = write_file_atomic_msg(path, data, len, err, sizeof err);
    if (rc) {
        int e = errno;
        set_write_error(err);
        errno = e;
    }
    return rc;
}

int open_append_fd(const char *path, char *err, int errlen)
{
    dirguard_at at;
    if (dirguard_resolve(path, &at, err, errlen)) return -1;
    /* O_NONBLOCK: a FIFO without a reader fails (ENXIO) instead of hanging;
     * O_NOFOLLOW: a log is never written through a symlink */
    int fd = openat(at.fd, at.leaf, O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0644);
    struct stat st;
    if (fd < 0) {
        int e = errno;
        int known = fstatat(at.fd, at.leaf, &st, AT_SYMLINK_NOFOLLOW) == 0;
        if (known && at.guarded && S_ISLNK(st.st_mode)) dirguard_link_refusal(&at, path, err, errlen);
        else if (known && !S_ISREG(st.st_mode))
            snprintf(err, (size_t)errlen, "%s: is %s; not appending to it", path, file_kind(st.st_mode));
        else
            snprintf(err, (size_t)errlen, "%s: cannot open: %s", path, strerror(e));
        dirguard_release(&at);
        return -1;
    }
    dirguard_release(&at);
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, (size_t)errlen, "%s: is not a regular file; not appending to it", path);
        close(fd);
        return -1;
    }
    if (at.guarded && st.st_nlink > 1) { /* its lines would reach the file's other names */
        dirguard_hard_link_refusal(&at, path, (long)st.st_nlink, err, errlen);
        close(fd);
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

int open_lock_file(const char *path, char *err, int errlen)
{
    dirguard_at at;
    if (dirguard_resolve(path, &at, err, errlen)) return -1;
    int fd = openat(at.fd, at.leaf, O_RDWR | O_CREAT | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0644);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        int e = errno;
        if (fd >= 0) close(fd);
        if (fstatat(at.fd, at.leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode) && at.guarded)
            dirguard_link_refusal(&at, path, err, errlen);
        else if (fd >= 0 || (fstatat(at.fd, at.leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode)))
            snprintf(err, (size_t)errlen, "%s: is not a regular file; not using it as a lock", path);
        else
            snprintf(err, (size_t)errlen, "%s: cannot open: %s", path, strerror(e));
        dirguard_release(&at);
        return -1;
    }
    dirguard_release(&at);
    return fd;
}

FILE *open_append(const char *path, char *err, int errlen)
{
    int fd = open_append_fd(path, err, errlen);
    if (fd < 0) return NULL;
    FILE *f = fdopen(fd, "a");
    if (!f) {
        snprintf(err, (size_t)errlen, "%s: cannot open: %s", path, strerror(errno));
        close(fd);
    }
    return f;
}

int make_dirs(const char *path)
{
    char err[PATH_MAX + 256];
    return make_dirs_msg(path, err, sizeof err);
}

int make_dirs_msg(const char *path, char *err, int errlen)
{
    return dirguard_make_dirs(path, err, errlen);
}

int path_stat(const char *path, struct stat *st)
{
    char err[64];
    dirguard_at at;
    if (dirguard_resolve(path, &at, err, sizeof err)) return -1;
    int rc = fstatat(at.fd, at.leaf, st, at.guarded ? AT_SYMLINK_NOFOLLOW : 0);
    int e = errno;
    dirguard_release(&at);
    errno = e;
    return rc;
}

int path_present(const char *path)
{
    char err[64];
    struct stat st;
    dirguard_at at;
    if (dirguard_resolve(path, &at, err, sizeof err)) return errno == ELOOP || errno == EXDEV;
    int rc = fstatat(at.fd, at.leaf, &st, AT_SYMLINK_NOFOLLOW);
    dirguard_release(&at);
    return rc == 0;
}

int path_is_file(const char *path)
{
    struct stat st;
    return path_stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

DIR *open_dir(const char *path, char *err, int errlen)
{
    dirguard_at at;
    if (dirguard_resolve(path, &at, err, errlen)) return NULL;
    int fd = openat(at.fd, at.leaf, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (at.guarded ? O_NOFOLLOW : 0));
    if (fd < 0) {
        struct stat st;
        if (at.guarded && fstatat(at.fd, at.leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
            dirguard_link_refusal(&at, path, err, errlen);
        else
            snprintf(err, (size_t)errlen, "cannot read directory %s: %s", path, strerror(errno));
        dirguard_release(&at);
        return NULL;
    }
    dirguard_release(&at);
    DIR *d = fdopendir(fd);
    if (!d) {
        snprintf(err, (size_t)errlen, "cannot read directory %s: %s", path, strerror(errno));
        close(fd);
    }
    return d;
}

int path_rename(const char *from, const char *to, char *err, int errlen)
{
    dirguard_at a, b;
    if (dirguard_resolve(from, &a, err, errlen)) return -1;
    if (dirguard_resolve(to, &b, err, errlen)) {
        dirguard_release(&a);
        return -1;
    }
    int rc = renameat(a.fd, a.leaf, b.fd, b.leaf);
    if (rc) snprintf(err, (size_t)errlen, "cannot move %s to %s: %s", from, to, strerror(errno));
    dirguard_release(&a);
    dirguard_release(&b);
    return rc;
}

int path_mkdir(const char *path, char *err, int errlen)
{
    dirguard_at at;
    if (dirguard_resolve(path, &at, err, errlen)) return -1;
    int rc = mkdirat(at.fd, at.leaf, 0755);
    if (rc) snprintf(err, (size_t)errlen, "cannot create %s: %s", path, strerror(errno));
    dirguard_release(&at);
    return rc;
}

int path_unlink(const char *path)
{
    char err[64];
    dirguard_at at;
    if (dirguard_resolve(path, &at, err, sizeof err)) return -1;
    int rc = unlinkat(at.fd, at.leaf, 0);
    int e = errno;
    dirguard_release(&at);
    errno = e;
    return rc;
}

double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int getopt_full(int argc, char **argv, const char *optstring, const struct option *opts, int *idx)
{
    int li = -1;
    int ch = getopt_long(argc, argv, optstring, opts, &li);
    if (idx) *idx = li;
    if (ch == -1 || ch == '?' || ch == ':' || li < 0) return ch;
    /* the token the option was in: before its value when that came apart */
    int at = optarg && optind >= 2 && optarg == argv[optind - 1] ? optind - 2 : optind - 1;
    const char *tok = at >= 0 && at < argc ? argv[at] : "";
    size_t n = strcspn(tok + (tok[0] == '-' && tok[1] == '-' ? 2 : 0), "=");
    if (!strncmp(tok, "--", 2) && strlen(opts[li].name) == n && !strncmp(tok + 2, opts[li].name, n)) return ch;
    optind = at + 1;
    return '?';
}

int parse_int(const char *s, long lo, long hi, long *out)
{
    if (!s || !*s) return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

int parse_u64(const char *s, uint64_t *out)
{
    if (!s || !*s || *s == '-') return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end) return -1;
    *out = v;
    return 0;
}

int parse_double(const char *s, double lo, double hi, double *out)
{
    if (!s || !*s) return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !(v >= lo && v <= hi)) return -1;
    *out = v;
    return 0;
}

int stdout_is_tty(void)
{
    return isatty(1);
}

/* s on f with every control character shown as '?': C0, DEL and C1 (as
 * a UTF-8 pair or a byte that starts no character). */
static void put_printable(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        int more = *p >= 0xf0 && *p <= 0xf4 ? 3 : *p >= 0xe0 && *p < 0xf0 ? 2 : *p >= 0xc2 && *p < 0xe0 ? 1 : 0;
        if (*p < 0x20 || *p == 0x7f || (*p >= 0x80 && *p < 0xc2) || (*p == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0)) {
            fputc('?', f);
            p += *p == 0xc2 ? 2 : 1;
            continue;
        }
        fputc(*p++, f);
        for (; more > 0 && *p >= 0x80 && *p < 0xc0; more--) fputc(*p++, f);
    }
}

int ask_yes_no(const char *question)
{
    if (!isatty(STDIN_FILENO) || !isatty(STDERR_FILENO)) return -1;
    /* a question may quote a directory from someone else: its text must
     * not move the cursor or redraw the line the answer is about */
    put_printable(stderr, question);
    fputs(" [y/N] ", stderr);
    fflush(stderr);
    char answer[16] = "";
    if (!fgets(answer, sizeof answer, stdin)) return 0;
    return answer[0] == 'y' || answer[0] == 'Y';
}

const char *json_text_end(const char *s, char open, char close)
{
    int depth = 0, in_str = 0;
    for (const char *p = s; *p; p++) {
        if (in_str) {
            if (*p == '\\' && p[1]) p++;
            else if (*p == '"') in_str = 0;
            continue;
        }
        if (*p == '"') in_str = 1;
        else if (*p == open) depth++;
        else if (*p == close && --depth == 0) return p + 1;
    }
    return NULL;
}
