#include "bench_util.h"
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
