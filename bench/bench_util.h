/* Shared by the benchmarks: machine description for table headers. */
#ifndef PCG_BENCH_UTIL_H
#define PCG_BENCH_UTIL_H
#include <stdio.h>

/* Prints "machine: CPU model, N cores" (and the compiler) as one line. */
void bench_print_machine(FILE *f);

/* Options of a benchmark that only takes --seconds S (time per table cell,
 * default 1) and --help.  Returns -1 to go on, else the exit code. */
int bench_seconds_opts(int argc, char **argv, const char *name, double *seconds);

#endif
