/* Small host helpers: files, errors, flags. */
#ifndef PCG_UTIL_H
#define PCG_UTIL_H
#include <stddef.h>
#include <stdint.h>

/* Exit codes */
enum { EXIT_USAGE = 2, EXIT_REFUSED = 3 };

/* Print "pcgrllm: message" to stderr. */
void die_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Read a whole file (at most max bytes) into a NUL-terminated buffer. */
char *read_file(const char *path, long max, long *len, char *err, int errlen);
/* Write via a temporary file in the same directory, fsync, rename. */
int write_file_atomic(const char *path, const void *data, size_t len);
/* mkdir -p */
int make_dirs(const char *path);
double now_seconds(void);
/* Strict number parsing for flags: return 0 on success. */
int parse_int(const char *s, long lo, long hi, long *out);
int parse_u64(const char *s, uint64_t *out);
int parse_double(const char *s, double lo, double hi, double *out);
int stdout_is_tty(void);

#endif
