#define _GNU_SOURCE
#include "cuda_libs.h"
#include <dlfcn.h>
#include <glob.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

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

/* The newest of the files g holds: the longest version suffix, then the
 * greatest name.  0 and its path, or -1. */
static int newest(const glob_t *g, char *path, size_t len)
{
    int found = -1;
    for (size_t i = 0; i < g->gl_pathc; i++) {
        const char *c = g->gl_pathv[i], *base = strrchr(c, '/');
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
    return found;
}

/* glob one pattern into g, appending after the first match. */
static void add_matches(glob_t *g, int *flags, const char *pat)
{
    if (glob(pat, *flags, NULL, g) == 0) *flags = GLOB_APPEND;
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
        add_matches(&g, &flags, pat);
    }
    for (int s = 0; s < n_sites; s++) {
        for (int p = 0; parts && parts[p]; p++) {
            snprintf(pat, sizeof pat, "%.511s/nvidia/%.100s/lib/%.200s", sites[s], parts[p], pattern);
            add_matches(&g, &flags, pat);
        }
        snprintf(pat, sizeof pat, "%.511s/nvidia/cu[0-9]*/lib/%.200s", sites[s], pattern);
        add_matches(&g, &flags, pat);
    }
    int found = newest(&g, path, len);
    globfree(&g);
    return found;
}

/* The newest file like pattern in the folders of a ':'-separated list. */
static int find_in_dirs(const char *dirs, const char *pattern, char *path, size_t len)
{
    glob_t g;
    memset(&g, 0, sizeof g);
    int flags = 0;
    char pat[1600];
    for (const char *d = dirs; *d;) {
        size_t n = strcspn(d, ":");
        if (n > 0 && n < 1000) {
            snprintf(pat, sizeof pat, "%.*s/%.200s", (int)n, d, pattern);
            add_matches(&g, &flags, pat);
        }
        d += n;
        if (*d == ':') d++;
    }
    int found = newest(&g, path, len);
    globfree(&g);
    return found;
}

int cuda_lib_file_ok(const char *file, char *why, size_t whylen)
{
    struct stat st;
    if (!strchr(file, '/')) return 0;
    if (stat(file, &st) != 0 && errno == ENOENT) return snprintf(why, whylen, "%.300s does not exist", file), -1;
    if (stat(file, &st) != 0) return snprintf(why, whylen, "%.300s: %s", file, strerror(errno)), -1;
    /* the loader would block forever opening a FIFO and fail obscurely on
     * a device: only a plain file can be a library */
    if (!S_ISREG(st.st_mode)) return snprintf(why, whylen, "%.300s: not a regular file", file), -1;
    return 0;
}

void *cuda_open_file(const char *file, char *path, size_t len, char *why, size_t whylen)
{
    if (cuda_lib_file_ok(file, why, whylen)) return NULL;
    void *h = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(why, whylen, "%s", e ? e : file);
        return NULL;
    }
    struct link_map *lm = NULL;
    if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && lm->l_name[0])
        snprintf(path, len, "%s", lm->l_name);
    else
        snprintf(path, len, "%s", file);
    return h;
}

void *cuda_open_library(const char *const *names, const char *pattern, const char *const *parts, char *path,
                        size_t len, char *why, size_t whylen)
{
    char found[4096];
    const char *dirs = getenv("PCGRLLM_CUDA_LIB_PATH");
    if (dirs) {
        if (find_in_dirs(dirs, pattern, found, sizeof found) == 0) return cuda_open_file(found, path, len, why, whylen);
        snprintf(why, whylen, "no %s in PCGRLLM_CUDA_LIB_PATH (%.300s)", pattern, *dirs ? dirs : "set empty");
        return NULL;
    }
    /* the first name's reason is the one to report: the soname asked for */
    char first[512] = "";
    for (int i = 0; names[i]; i++) {
        void *h = cuda_open_file(names[i], path, len, why, whylen);
        if (h) return h;
        if (!first[0]) snprintf(first, sizeof first, "%.500s", why);
    }
    if (cuda_find_library(pattern, parts, found, sizeof found) == 0) return cuda_open_file(found, path, len, why, whylen);
    snprintf(why, whylen, "%s", first);
    return NULL;
}

void *cuda_open_cublas(const char *major, char *path, size_t len, char *why, size_t whylen)
{
    const char *env = getenv("PCGRLLM_CUBLAS");
    if (env && !strcmp(env, "off")) {
        snprintf(why, whylen, "turned off by PCGRLLM_CUBLAS=off");
        return NULL;
    }
    if (env && *env) return cuda_open_file(env, path, len, why, whylen);
    char soname[64];
    snprintf(soname, sizeof soname, "libcublas.so.%.20s", major);
    const char *const names[] = {soname, NULL};
    static const char *const parts[] = {"cublas", NULL};
    return cuda_open_library(names, soname, parts, path, len, why, whylen);
}
