/* Shared by the benchmarks: machine description for table headers. */
#ifndef PCG_BENCH_UTIL_H
#define PCG_BENCH_UTIL_H
#include <stdio.h>

/* Prints "machine: CPU model, N cores" (and the compiler) as one line. */
void bench_print_machine(FILE *f);

#endif
