#include "bench_util.h"
#include "util.h"
#include <getopt.h>
#include <omp.h>
#include <string.h>

void bench_print_machine(FILE *f)
{
    char model[256] = "unknown CPU";
    FILE *c = fopen("/proc/cpuinfo", "r");
    if (c) {
        char line[512];
        while (fgets(line, sizeof line, c)) {
            if (strncmp(line, "model name", 10)) continue;
            char *p = strchr(line, ':');
            if (!p) break;
            p += 2;
            p[strcspn(p, "\n")] = 0;
            snprintf(model, sizeof model, "%s", p);
            break;
        }
        fclose(c);
    }
    fprintf(f, "machine: %s, %d hardware threads (OpenMP max %d), gcc %s\n", model, omp_get_num_procs(),
            omp_get_max_threads(), __VERSION__);
}

int bench_seconds_opts(int argc, char **argv, const char *name, double *seconds)
{
    static const struct option opts[] = {{"seconds", required_argument, 0, 's'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int c;
    *seconds = 1.0;
    optind = 1;
    while ((c = getopt_full(argc, argv, "", opts, NULL)) != -1) {
        if (c == 's') {
            if (parse_double(optarg, 0.01, 600, seconds)) return die_msg("bench %s: --seconds must be 0.01..600", name), 2;
        } else if (c == 'h') {
            printf("usage: pcgrllm bench %s [--seconds S]   (time per cell, default 1)\n", name);
            return 0;
        } else
            return 2;
    }
    return -1;
}
