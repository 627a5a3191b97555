#include "harness.h"
#include "cuda_check.h"
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const pcg_cuda_api *cuda_library_or_skip(const char *test)
{
    char err[600];
    const pcg_cuda_api *api = backend_cuda_load(err, sizeof err);
    if (!api) pcg_test_skip(test, err);
    return api;
}

const pcg_cuda_api *cuda_device_or_skip(const char *test)
{
    char why[300];
    char line[400];
    if (pcg_test_cuda_devices(why, sizeof why) <= 0) {
        snprintf(line, sizeof line, "no CUDA device (%s)", why);
        pcg_test_skip(test, line);
    }
    const pcg_cuda_api *api = cuda_library_or_skip(test);
    if (api->device_count() <= 0) {
        snprintf(line, sizeof line, "no CUDA device (%s)", api->last_error());
        pcg_test_skip(test, line);
    }
    return api;
}

int cuda_one_line(const char *s)
{
    size_t n = strlen(s);
    while (n && s[n - 1] == '\n') n--;
    return n > 0 && memchr(s, '\n', n) == NULL;
}

void *cuda_read_all(const char *path, long *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    *len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)*len + 1);
    if (buf && fread(buf, 1, (size_t)*len, f) != (size_t)*len) {
        free(buf);
        buf = NULL;
    }
    if (buf) buf[*len] = 0;
    fclose(f);
    return buf;
}

/* dir of path (with its slash) + rel into out */
static void beside(const char *path, const char *rel, char *out, size_t len)
{
    const char *slash = strrchr(path, '/');
    int n = slash ? (int)(slash - path + 1) : 0;
    snprintf(out, len, "%.*s%s", n, path, rel);
}

void *cuda_prebuilt_module_or_skip(const char *test, const char *rel)
{
    char self[PATH_MAX], lib_cand[PATH_MAX + 128], exe_cand[PATH_MAX + 128];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = 0;
    beside(backend_cuda_path(), rel, lib_cand, sizeof lib_cand);
    beside(self, rel, exe_cand, sizeof exe_cand);
    long len;
    void *img = cuda_read_all(lib_cand, &len);
    if (!img) img = cuda_read_all(exe_cand, &len);
    if (!img) {
        char why[2 * PATH_MAX + 300];
        snprintf(why, sizeof why, "%s not built: neither %s nor %s (make cuda)", rel, lib_cand, exe_cand);
        pcg_test_skip(test, why);
    }
    return img;
}

/* Largest |got - want| over the largest |want| of a tensor. */
double cuda_tensor_err(const float *got, const float *want, size_t n)
{
    double scale = 0, worst = 0;
    for (size_t i = 0; i < n; i++) scale = fmax(scale, fabs(want[i]));
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - want[i]);
        if (isnan(d)) return NAN; /* a NaN where a value belongs, which fmax would pass over */
        worst = fmax(worst, d);
    }
    return scale > 0 ? worst / scale : worst;
}

void *cuda_to_device(const pcg_cuda_api *api, const void *src, size_t bytes)
{
    void *d = api->arena_alloc(bytes);
    assert_non_null(d);
    assert_int_equal(api->copy_to_device(d, src, bytes), 0);
    return d;
}

void cuda_expect_close(const pcg_cuda_api *api, const float *dev, const float *host, size_t n, double tol,
                       const char *what)
{
    float *got = malloc(n * sizeof(float));
    assert_non_null(got);
    assert_int_equal(api->copy_to_host(got, dev, n * sizeof(float)), 0);
    double err = cuda_tensor_err(got, host, n);
    free(got);
    if (!(err <= tol)) fail_msg("%s: relative error %.3g > %.0g", what, err, tol);
}
