#include "util.h"
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void die_msg(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("pcgrllm: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

char *read_file(const char *path, long max, long *len, char *err, int errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, (size_t)errlen, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        snprintf(err, (size_t)errlen, "%s: is a directory", path);
        return NULL;
    }
    char *buf = malloc((size_t)max + 1);
    if (!buf) {
        fclose(f);
        snprintf(err, (size_t)errlen, "%s: out of memory", path);
        return NULL;
    }
    size_t n = fread(buf, 1, (size_t)max + 1, f);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        snprintf(err, (size_t)errlen, "%s: read error", path);
        return NULL;
    }
    if ((long)n > max) {
        free(buf);
        snprintf(err, (size_t)errlen, "%s: file too large (over %ld bytes)", path, max);
        return NULL;
    }
    buf[n] = 0;
    *len = (long)n;
    return buf;
}

int write_file_atomic(const char *path, const void *data, size_t len)
{
    size_t pl = strlen(path);
    char *tmp = malloc(pl + 32);
    if (!tmp) return -1;
    snprintf(tmp, pl + 32, "%s.tmp.%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        free(tmp);
        return -1;
    }
    const char *p = data;
    size_t left = len;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0) {
            if (errno == EINTR) continue;
            close(fd);
            unlink(tmp);
            free(tmp);
            return -1;
        }
        p += w;
        left -= (size_t)w;
    }
    if (fsync(fd) != 0 || close(fd) != 0 || rename(tmp, path) != 0) {
        unlink(tmp);
        free(tmp);
        return -1;
    }
    free(tmp);
    return 0;
}

int make_dirs(const char *path)
{
    char buf[4096];
    if (strlen(path) >= sizeof buf) return -1;
    strcpy(buf, path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(buf, 0755) != 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    if (mkdir(buf, 0755) != 0 && errno != EEXIST) return -1;
    struct stat st;
    return stat(buf, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
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
