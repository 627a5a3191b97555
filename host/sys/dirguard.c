/* Guarded directories: see dirguard.h. */
#define _GNU_SOURCE
#include "dirguard.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Paths are compared as lists of components, so "runs/x/", "./runs//x"
 * and "runs/x" name the same directory. */
#define MAX_COMPONENTS 256
typedef struct {
    int absolute, n;
    const char *c[MAX_COMPONENTS];
    char buf[PATH_MAX];
} components;

/* A guarded directory is known by the path it was named by and by its
 * real path (a batch script names it absolutely). */
typedef struct {
    int fd;
    char what[64];
    char path[PATH_MAX];
    components comps, real;
} guarded_dir;

static guarded_dir guards[DIRGUARD_MAX];
static int n_guards;
static int force_walk;
static int no_openat2; /* the kernel (or a seccomp filter) has no openat2 */

/* Entries a scan visits at most, and how deep it goes: a directory from
 * someone else must not keep the engine busy for ever. */
#define SCAN_MAX_ENTRIES 2000000L
#define SCAN_MAX_DEPTH 32

static int split(const char *path, components *p)
{
    if (strlen(path) >= sizeof p->buf) return errno = ENAMETOOLONG, -1;
    strcpy(p->buf, path);
    p->absolute = path[0] == '/';
    p->n = 0;
    for (char *s = strtok(p->buf, "/"); s; s = strtok(NULL, "/")) {
        if (!strcmp(s, ".")) continue;
        if (p->n == MAX_COMPONENTS) return errno = ENAMETOOLONG, -1;
        p->c[p->n++] = s;
    }
    return 0;
}

void dirguard_reset(void)
{
    for (int i = 0; i < n_guards; i++) close(guards[i].fd);
    n_guards = 0;
}

void dirguard_force_walk(int on) { force_walk = on; }

/* The guarded directory path lies beneath (the longest such), with the
 * number of path's components that name it; NULL when none. */
static const guarded_dir *guard_of(const components *p, int *depth)
{
    const guarded_dir *best = NULL;
    int best_n = -1;
    for (int i = 0; i < 2 * n_guards; i++) {
        const components *g = i % 2 ? &guards[i / 2].real : &guards[i / 2].comps;
        if (g->absolute != p->absolute || g->n > p->n || g->n <= best_n) continue;
        int k = 0;
        while (k < g->n && !strcmp(g->c[k], p->c[k])) k++;
        if (k == g->n) best = &guards[i / 2], best_n = *depth = g->n;
    }
    return best;
}

/* The directory of path's first n components, for messages. */
static void prefix(const components *p, int n, char *out, size_t len)
{
    size_t k = 0;
    out[0] = 0;
    if (p->absolute && len > 1) out[k++] = '/', out[k] = 0;
    for (int i = 0; i < n && k < len; i++)
        k += (size_t)snprintf(out + k, len - k, "%s%s", i && k && out[k - 1] != '/' ? "/" : "", p->c[i]);
}

int dirguard_link_refusal(const dirguard_at *at, const char *path, char *err, int errlen)
{
    snprintf(err, (size_t)errlen, "%s: is a symbolic link inside the %s %s; links there are not followed", path,
             at->what, at->root);
    errno = ELOOP;
    return -1;
}

static int hard_link_text(const char *what, const char *root, const char *path, long nlink, char *err, int errlen)
{
    snprintf(err, (size_t)errlen, "%s: is a hard link (one of %ld names of the file) inside the %s %s; such files "
                                  "are not used there (put a copy in its place)",
             path, nlink, what, root);
    errno = EMLINK;
    return -1;
}

int dirguard_hard_link_refusal(const dirguard_at *at, const char *path, long nlink, char *err, int errlen)
{
    return hard_link_text(at->what, at->root, path, nlink, err, errlen);
}

/* Why component name of directory fd could not be opened as a directory
 * (errno e): a link, something else, or the error itself. */
static int walk_refusal(const guarded_dir *g, int fd, const components *p, int n, int e, char *err, int errlen)
{
    char at[PATH_MAX];
    struct stat st;
    prefix(p, n, at, sizeof at);
    if (fstatat(fd, p->c[n - 1], &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
        snprintf(err, (size_t)errlen, "%s: is a symbolic link inside the %s %s; links there are not followed", at,
                 g->what, g->path);
        errno = ELOOP;
    } else {
        snprintf(err, (size_t)errlen, "%s: cannot open the directory: %s", at, strerror(e));
        errno = e;
    }
    return -1;
}

/* Components [from, to) of p, opened one at a time beneath g without
 * following a link (created first when create): a directory descriptor,
 * or -1 with err. */
static int walk(const guarded_dir *g, const components *p, int from, int to, int create, char *err, int errlen)
{
    int fd = openat(g->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return snprintf(err, (size_t)errlen, "%s: cannot open: %s", g->path, strerror(errno)), -1;
    for (int i = from; i < to; i++) {
        if (create && mkdirat(fd, p->c[i], 0755) != 0 && errno != EEXIST) {
            int e = errno;
            char at[PATH_MAX];
            prefix(p, i + 1, at, sizeof at);
            snprintf(err, (size_t)errlen, "%s: cannot create the directory: %s", at, strerror(e));
            close(fd);
            return errno = e, -1;
        }
        int next = openat(fd, p->c[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (next < 0) {
            walk_refusal(g, fd, p, i + 1, errno, err, errlen);
            int e = errno;
            close(fd);
            return errno = e, -1;
        }
        close(fd);
        fd = next;
    }
    return fd;
}

/* The same through openat2 in one call; -2 when openat2 cannot be used
 * here, -1 when it refused (the walk then says why). */
static int beneath(const guarded_dir *g, const components *p, int from, int to)
{
    if (force_walk || no_openat2) return -2;
    char rel[PATH_MAX];
    size_t k = 0;
    rel[0] = 0;
    for (int i = from; i < to && k < sizeof rel; i++)
        k += (size_t)snprintf(rel + k, sizeof rel - k, "%s%s", i > from ? "/" : "", p->c[i]);
    if (k == 0) snprintf(rel, sizeof rel, ".");
    if (k >= sizeof rel) return -1;
    struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
                           .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    long fd = syscall(SYS_openat2, g->fd, rel, &how, sizeof how);
    if (fd >= 0) return (int)fd;
    if (errno == ENOSYS || errno == EPERM || errno == E2BIG) {
        no_openat2 = 1;
        return -2;
    }
    return -1;
}

static void outside(const char *path, dirguard_at *at)
{
    at->fd = AT_FDCWD;
    at->guarded = 0;
    at->leaf = path;
    at->what[0] = at->root[0] = 0;
}

int dirguard_resolve(const char *path, dirguard_at *at, char *err, int errlen)
{
    static __thread components p;
    outside(path, at);
    if (n_guards == 0) return 0;
    if (split(path, &p)) return snprintf(err, (size_t)errlen, "%.200s...: path too long", path), -1;
    int depth = 0;
    const guarded_dir *g = guard_of(&p, &depth);
    if (!g || depth == p.n) return 0; /* the guarded directory itself is the user's to name */
    for (int i = depth; i < p.n; i++)
        if (!strcmp(p.c[i], "..")) {
            snprintf(err, (size_t)errlen, "%s: '..' leads out of the %s %s", path, g->what, g->path);
            return errno = EXDEV, -1;
        }
    int fd = beneath(g, &p, depth, p.n - 1);
    if (fd < 0) fd = walk(g, &p, depth, p.n - 1, 0, err, errlen);
    if (fd < 0) return -1;
    at->fd = fd;
    at->guarded = 1;
    snprintf(at->name, sizeof at->name, "%s", p.c[p.n - 1]);
    at->leaf = at->name;
    snprintf(at->what, sizeof at->what, "%s", g->what);
    snprintf(at->root, sizeof at->root, "%s", g->path);
    return 0;
}

void dirguard_release(dirguard_at *at)
{
    if (at->fd >= 0) close(at->fd);
    at->fd = AT_FDCWD;
}

/* mkdir -p of an ordinary path. */
static int plain_make_dirs(const char *path, char *err, int errlen)
{
    char buf[PATH_MAX];
    if (!path[0]) return snprintf(err, (size_t)errlen, "an empty directory name"), errno = ENOENT, -1;
    if (strlen(path) >= sizeof buf) return snprintf(err, (size_t)errlen, "%.200s...: path too long", path), -1;
    strcpy(buf, path);
    for (char *s = buf + 1;; s++) {
        if (*s && *s != '/') continue;
        char c = *s;
        *s = 0;
        if (mkdir(buf, 0755) != 0 && errno != EEXIST) {
            int e = errno;
            snprintf(err, (size_t)errlen, "%s: cannot create the directory: %s", buf, strerror(e));
            return errno = e, -1;
        }
        *s = c;
        if (!c) break;
    }
    struct stat st;
    if (stat(buf, &st) == 0 && S_ISDIR(st.st_mode)) return 0;
    snprintf(err, (size_t)errlen, "%s: is not a directory", path);
    return errno = ENOTDIR, -1;
}

int dirguard_make_dirs(const char *path, char *err, int errlen)
{
    static __thread components p;
    if (n_guards == 0) return plain_make_dirs(path, err, errlen);
    if (split(path, &p)) return snprintf(err, (size_t)errlen, "%.200s...: path too long", path), -1;
    int depth = 0;
    const guarded_dir *g = guard_of(&p, &depth);
    if (!g) return plain_make_dirs(path, err, errlen);
    for (int i = depth; i < p.n; i++)
        if (!strcmp(p.c[i], "..")) {
            snprintf(err, (size_t)errlen, "%s: '..' leads out of the %s %s", path, g->what, g->path);
            return errno = EXDEV, -1;
        }
    int fd = walk(g, &p, depth, p.n, 1, err, errlen);
    if (fd < 0) return -1;
    close(fd);
    return 0;
}

/* ---------------------------------------------------------------- scan */

typedef struct {
    const guarded_dir *g;
    long entries;
    char *err;
    int errlen;
} scan_state;

static int scan_fail(scan_state *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int scan_fail(scan_state *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, (size_t)s->errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static int scan_dir(scan_state *s, int fd, char *path, size_t plen, int depth);

/* One entry (name, in the directory dfd) of a scan, at path. */
static int scan_entry(scan_state *s, int dfd, const char *name, char *path, size_t plen, int depth)
{
    struct stat st;
    if (++s->entries > SCAN_MAX_ENTRIES) return scan_fail(s, "%s holds more than %ld files", s->g->path, SCAN_MAX_ENTRIES);
    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return scan_fail(s, "%s: cannot check: %s", path, strerror(errno));
    if (S_ISLNK(st.st_mode))
        return scan_fail(s, "%s: is a symbolic link inside the %s %s; links there are not followed (remove it, or "
                            "put the file it stands for in its place)",
                         path, s->g->what, s->g->path);
    if (!S_ISDIR(st.st_mode) && st.st_nlink > 1)
        return hard_link_text(s->g->what, s->g->path, path, (long)st.st_nlink, s->err, s->errlen);
    if (!S_ISDIR(st.st_mode)) return 0;
    if (depth >= SCAN_MAX_DEPTH) return scan_fail(s, "%s: directories nested too deep", path);
    int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub < 0) return scan_fail(s, "%s: cannot read the directory: %s", path, strerror(errno));
    return scan_dir(s, sub, path, plen, depth + 1);
}

/* Every entry of the directory fd (named path) and below: a link is a
 * refusal.  fd is consumed.  0, or -1 with err. */
static int scan_dir(scan_state *s, int fd, char *path, size_t plen, int depth)
{
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return scan_fail(s, "%s: cannot read the directory: %s", path, strerror(errno));
    }
    int rc = 0;
    for (struct dirent *e; !rc && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        int n = snprintf(path + plen, PATH_MAX - plen, "/%s", e->d_name);
        if (n < 0 || plen + (size_t)n >= PATH_MAX) rc = scan_fail(s, "%.200s...: path too long", path);
        else rc = scan_entry(s, dirfd(d), e->d_name, path, plen + (size_t)n, depth);
        path[plen] = 0;
    }
    closedir(d);
    return rc;
}

/* The guarded directory named by exactly these components, or NULL. */
static const guarded_dir *guard_named(const components *p)
{
    int depth = 0;
    const guarded_dir *g = guard_of(p, &depth);
    return g && depth == p->n ? g : NULL;
}

int dirguard_add(const char *dir, const char *what, int scan, char *err, int errlen)
{
    if (n_guards == DIRGUARD_MAX) return snprintf(err, (size_t)errlen, "too many guarded directories"), -1;
    guarded_dir *g = &guards[n_guards];
    if (strlen(dir) >= sizeof g->path || split(dir, &g->comps))
        return snprintf(err, (size_t)errlen, "%.200s...: path too long", dir), -1;
    if (!scan && guard_named(&g->comps)) return 0; /* already guarded */
    g->fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (g->fd < 0) return snprintf(err, (size_t)errlen, "%s: cannot open the directory: %s", dir, strerror(errno)), -1;
    char real[PATH_MAX];
    if (!realpath(dir, real) || split(real, &g->real)) g->real = g->comps;
    snprintf(g->what, sizeof g->what, "%s", what);
    snprintf(g->path, sizeof g->path, "%s", dir);
    if (scan) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s", dir);
        size_t n = strlen(path);
        while (n > 1 && path[n - 1] == '/') path[--n] = 0;
        scan_state s = {g, 0, err, errlen};
        int fd = openat(g->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || scan_dir(&s, fd, path, n, 0)) {
            if (fd < 0) snprintf(err, (size_t)errlen, "%s: cannot read the directory: %s", dir, strerror(errno));
            close(g->fd);
            return -1;
        }
    }
    n_guards++;
    return 0;
}

int dirguard_command_dir(const char *cmd, const char *dir, const char *what, int scan)
{
    struct stat st;
    if (stat(dir, &st) != 0) return 0;
    char err[PATH_MAX + 512];
    if (dirguard_add(dir, what, scan, err, sizeof err) == 0) return 0;
    fprintf(stderr, "pcgrllm: %s: %s\n", cmd, err);
    return 1;
}
