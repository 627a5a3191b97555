/* Data folders beside the binary: see datadir.h. */
#include "datadir.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int has_marker(const datadir_spec *d, const char *dir)
{
    char p[PATH_MAX];
    if (snprintf(p, sizeof p, "%s/%s", dir, d->marker) >= (int)sizeof p) return 0;
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

int datadir_for_exe(const datadir_spec *d, const char *exe, char *out, size_t outlen, char *err, int errlen)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", exe);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    else snprintf(dir, sizeof dir, ".");
    static const char *const rel[] = {"", "../", "../share/pcgrllm/"};
    char tried[3 * PATH_MAX / 4] = "";
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        char cand[PATH_MAX];
        if (snprintf(cand, sizeof cand, "%s/%s%s", dir, rel[i], d->sub) >= (int)sizeof cand) continue;
        if (has_marker(d, cand)) {
            char real[PATH_MAX];
            const char *use = realpath(cand, real) ? real : cand;
            if (strlen(use) >= outlen) break;
            snprintf(out, outlen, "%s", use);
            return 0;
        }
        size_t tl = strlen(tried), cl = strlen(cand);
        if (tl + cl + 3 < sizeof tried) {
            if (tl) memcpy(tried + tl, ", ", 2), tl += 2;
            memcpy(tried + tl, cand, cl + 1);
        }
    }
    snprintf(err, (size_t)errlen, "%s not found beside the binary (looked in %s); set %s to the %s/ directory of the source tree",
             d->what, tried, d->env, d->sub);
    return -1;
}

int datadir_find(const datadir_spec *d, char *out, size_t outlen, char *err, int errlen)
{
    const char *env = getenv(d->env);
    if (env && *env) {
        if (!has_marker(d, env)) {
            snprintf(err, (size_t)errlen, "%s=%s does not hold the %s (no %s there)", d->env, env, d->what, d->marker);
            return -1;
        }
        if (strlen(env) >= outlen) {
            snprintf(err, (size_t)errlen, "%s is too long", d->env);
            return -1;
        }
        snprintf(out, outlen, "%s", env);
        return 0;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        snprintf(err, (size_t)errlen, "cannot find this binary's path to locate %s/; set %s", d->sub, d->env);
        return -1;
    }
    exe[n] = 0;
    return datadir_for_exe(d, exe, out, outlen, err, errlen);
}
