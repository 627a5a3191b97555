/* Small host helpers: files, errors, flags. */
#ifndef PCG_UTIL_H
#define PCG_UTIL_H
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exit codes */
enum { EXIT_USAGE = 2, EXIT_REFUSED = 3 };

/* Print "pcgrllm: message" to stderr on one line: control bytes in the
 * message (a newline in a file name) are written as escapes. */
void die_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Format a one-line reason into buf (len bytes); nothing when buf is NULL
 * or len is 0, for callers that do not want the reason. */
void say_to(char *buf, int len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* One line of progress to stdout and, when log is open, to the log too
 * (after a local-time stamp when stamped), both flushed at once: long
 * work that a terminal watches and a log file keeps. */
void vsay_and_log(FILE *log, int stamped, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));
/* The files the engine reads and writes (docs/loop.md, "Files"):
 * inputs must be regular files: a FIFO, device, socket or directory is
 * refused in one line (never waited on); outputs are written to a
 * temporary file beside the destination and renamed over it, and a
 * destination that exists as anything but a regular file or a symlink is
 * refused ("...: is a FIFO; not overwriting it").  A symlink destination
 * is replaced by the new file; its target is never written.  Beneath a
 * guarded directory (a run, a grid: host/sys/dirguard.h) every function here
 * reaches its path without following a symlink at any level, and a
 * symlink found there is refused in one line naming it, as is a file of
 * more than one name (a hard link) that would be read or appended to. */
struct json_t;
/* "a FIFO", "a directory", ... for a st_mode. */
const char *file_kind(unsigned mode);
/* Open a regular file for reading (a descriptor), or -1 with one line in err. */
int open_regular(const char *path, char *err, int errlen);
/* Read a whole regular file (at most max bytes) into a NUL-terminated buffer. */
char *read_file(const char *path, long max, long *len, char *err, int errlen);
/* read_file, then JSON (duplicate keys refused); NULL with one line in err. */
struct json_t *read_json_file(const char *path, long max, char *err, int errlen);
/* A JSON-lines file (at most max bytes): fn for each non-empty line, in
 * order, each a JSON object (duplicate keys refused), until fn returns
 * non-zero.  0, or -1 with "PATH: line N: why" in err. */
typedef int (*jsonl_fn)(const struct json_t *obj, int line, void *ctx, char *err, int errlen);
int read_jsonl_file(const char *path, long max, jsonl_fn fn, void *ctx, char *err, int errlen);
/* FNV-1a 64: fnv1a64(p, n, FNV1A64_INIT), chainable over pieces. */
#define FNV1A64_INIT 0xcbf29ce484222325ULL
uint64_t fnv1a64(const void *data, size_t n, uint64_t h);
/* FNV-1a 64 of a regular file's bytes.  0, or -1 with one line in err. */
int file_fnv1a64(const char *path, uint64_t *sum, char *err, int errlen);
/* 0 if path may be replaced (absent, a regular file or a symlink), else -1
 * with one line in err. */
int check_output_path(const char *path, char *err, int errlen);
/* Write via a temporary file in the same directory, fsync, rename.
 * 0, or -1 with errno set (_msg: and one line in err naming the path). */
int write_file_atomic(const char *path, const void *data, size_t len);
int write_file_atomic_msg(const char *path, const void *data, size_t len, char *err, int errlen);
/* The one-line reason of this thread's latest failed write_file_atomic (or
 * PNG write), for callers whose interface has no err buffer; set_write_error
 * records one. */
const char *write_error(void);
void set_write_error(const char *msg);
/* The pieces of write_file_atomic, for writers that produce their data
 * through a descriptor (PNG): a new temporary file beside path (its name
 * in tmp), every byte written, then fsync + close + rename (the temporary
 * file removed on any failure).  0 / a descriptor, or -1 with err. */
int tmp_create(const char *path, char *tmp, size_t tmplen, char *err, int errlen);
int write_all(int fd, const void *data, size_t len);
int tmp_commit(int fd, const char *tmp, const char *path, char *err, int errlen);
/* A log opened for appending: a regular file, created if absent; never a
 * FIFO, device or symlink.  NULL (-1) with one line in err. */
FILE *open_append(const char *path, char *err, int errlen);
int open_append_fd(const char *path, char *err, int errlen);
/* A lock file (a regular file, created if absent) opened read-write for
 * flock(); close-on-exec.  -1 with one line in err. */
int open_lock_file(const char *path, char *err, int errlen);
/* mkdir -p: 0, or -1 (_msg: with one line in err). */
int make_dirs(const char *path);
int make_dirs_msg(const char *path, char *err, int errlen);
/* stat(); beneath a guarded directory a symlink is not followed (it shows
 * as one).  0, or -1 with errno. */
struct stat;
int path_stat(const char *path, struct stat *st);
/* 1 when anything is at path (a symlink included, never followed). */
int path_present(const char *path);
/* 1 when path is a regular file (path_stat). */
int path_is_file(const char *path);
/* opendir(), rename(), mkdir() (0755) and unlink() by the same rules.
 * NULL / -1 with one line in err (path_unlink: with errno). */
struct __dirstream;
struct __dirstream *open_dir(const char *path, char *err, int errlen);
int path_rename(const char *from, const char *to, char *err, int errlen);
int path_mkdir(const char *path, char *err, int errlen);
int path_unlink(const char *path);
double now_seconds(void);
/* getopt_long without its abbreviations: "--iteration" is not taken for
 * --iterations (a typo must not silently become another flag).  An
 * abbreviated long option returns '?' with optind left so that
 * argv[optind - 1] is the option as written.  idx may be NULL. */
struct option;
int getopt_full(int argc, char **argv, const char *optstring, const struct option *opts, int *idx);
/* Strict number parsing for flags: return 0 on success. */
int parse_int(const char *s, long lo, long hi, long *out);
int parse_u64(const char *s, uint64_t *out);
int parse_double(const char *s, double lo, double hi, double *out);
int stdout_is_tty(void);
/* One past the bracket that closes the one at s (open, e.g. '{' or '['),
 * counting only that pair outside JSON strings; NULL when the text ends
 * first (a cut reply). */
const char *json_text_end(const char *s, char open, char close);
/* A yes/no question on the terminal ("... [y/N] " on stderr, the answer
 * from stdin): 1 yes, 0 no, -1 when stdin or stderr is not a terminal
 * (nothing asked). */
int ask_yes_no(const char *question);

#endif
