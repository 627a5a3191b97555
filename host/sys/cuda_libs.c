#include "cuda_libs.h"
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Python library folders: system, /usr/local, virtual environments under
 * /opt (the usual home of a framework's venv), the user's own, and the
 * active venv or conda environment. */
static int site_dirs(char out[][512], int max)
{
    static const char *const fixed[] = {"/usr/lib/python3*/site-packages", "/usr/lib/python3/dist-packages",
                                        "/usr/local/lib/python3*/site-packages",
                                        "/usr/local/lib/python3*/dist-packages",
                                        "/opt/*/.venv/lib/python3*/site-packages", "/opt/*/lib/python3*/site-packages"};
    int n = 0;
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0] && n < max; i++) snprintf(out[n++], 512, "%s", fixed[i]);
    const char *roots[] = {getenv("VIRTUAL_ENV"), getenv("CONDA_PREFIX")};
    for (int i = 0; i < 2 && n < max; i++)
        if (roots[i] && *roots[i] && strlen(roots[i]) < 400)
            snprintf(out[n++], 512, "%s/lib/python3*/site-packages", roots[i]);
    const char *home = getenv("HOME");
    if (home && *home && strlen(home) < 400 && n < max) snprintf(out[n++], 512, "%s/.local/lib/python3*/site-packages", home);
    return n;
}

int cuda_find_library(const char *pattern, const char *const *parts, char *path, size_t len)
{
    char sites[12][512], pat[1600];
    int n_sites = site_dirs(sites, 12);
    glob_t g;
    memset(&g, 0, sizeof g);
    int flags = 0;
    const char *toolkit[] = {"/usr/local/cuda/lib64", "/usr/local/cuda-*/lib64", "/usr/lib/x86_64-linux-gnu"};
    for (size_t i = 0; i < sizeof toolkit / sizeof toolkit[0]; i++) {
        snprintf(pat, sizeof pat, "%s/%.200s", toolkit[i], pattern);
        if (glob(pat, flags, NULL, &g) == 0) flags = GLOB_APPEND;
    }
    for (int s = 0; s < n_sites; s++) {
        for (int p = 0; parts && parts[p]; p++) {
            snprintf(pat, sizeof pat, "%.511s/nvidia/%.100s/lib/%.200s", sites[s], parts[p], pattern);
            if (glob(pat, flags, NULL, &g) == 0) flags = GLOB_APPEND;
        }
        snprintf(pat, sizeof pat, "%.511s/nvidia/cu[0-9]*/lib/%.200s", sites[s], pattern);
        if (glob(pat, flags, NULL, &g) == 0) flags = GLOB_APPEND;
    }
    int found = -1;
    /* the newest: the longest version suffix, then the greatest name */
    for (size_t i = 0; i < g.gl_pathc; i++) {
        const char *c = g.gl_pathv[i], *base = strrchr(c, '/');
        base = base ? base + 1 : c;
        if (strlen(c) >= len) continue;
        if (found >= 0) {
            const char *b = strrchr(path, '/');
            b = b ? b + 1 : path;
            if (strlen(base) < strlen(b) || (strlen(base) == strlen(b) && strcmp(base, b) <= 0)) continue;
        }
        snprintf(path, len, "%s", c);
        found = 0;
    }
    globfree(&g);
    return found;
}
