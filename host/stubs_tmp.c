#include "commands.h"
#include "bench.h"
#include <stdio.h>
int bench_eval(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "bench eval: not built yet\n"); return 1; }
