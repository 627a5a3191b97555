#include "commands.h"
#include <stdio.h>
int cmd_eval(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "eval: not built yet\n"); return 1; }
int cmd_bench(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "bench: not built yet\n"); return 1; }
