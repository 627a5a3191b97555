/* Backend selection: probe the CUDA driver for a device, load the CUDA
 * backend library at run time, fall back to the CPU for "auto". */
#include "backend.h"
#include "child.h"
#include "cuda_libs.h"
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const pcg_cuda_api *cuda_api;
static char cuda_path[PATH_MAX + 64];

const char *backend_name(int backend)
{
    return backend == BACKEND_CUDA ? "cuda" : backend == BACKEND_CPU ? "cpu" : "none";
}

static const char *const math_names[] = {"fp32", "tf32", "bf16"};
enum { N_MATH_NAMES = (int)(sizeof math_names / sizeof math_names[0]) };

const char *backend_math_name(int math)
{
    return math >= 0 && math < N_MATH_NAMES ? math_names[math] : "none";
}

int backend_math_from_name(const char *name)
{
    for (int m = 0; m < N_MATH_NAMES; m++)
        if (!strcmp(name, math_names[m])) return m;
    return -1;
}

int backend_cuda_devices(char *why, int whylen)
{
    typedef int (*init_fn)(unsigned);
    typedef int (*count_fn)(int *);
    typedef int (*errstr_fn)(int, const char **);
    static int probed = 0, count = 0;
    static char reason[256];
    if (!probed) {
        probed = 1;
        void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            snprintf(reason, sizeof reason, "no CUDA driver (libcuda.so.1 not found)");
        } else {
            init_fn cu_init = (init_fn)dlsym(h, "cuInit");
            count_fn cu_count = (count_fn)dlsym(h, "cuDeviceGetCount");
            errstr_fn cu_err = (errstr_fn)dlsym(h, "cuGetErrorString");
            int rc = cu_init && cu_count ? cu_init(0) : -1;
            if (rc != 0) {
                const char *s = NULL;
                if (cu_err && rc > 0) cu_err(rc, &s);
                snprintf(reason, sizeof reason, "CUDA driver found but cuInit failed: %s (%d)",
                         s ? s : "symbol missing", rc);
            } else if (cu_count(&count) != 0 || count <= 0) {
                count = 0;
                snprintf(reason, sizeof reason, "CUDA driver found but it reports no device");
            }
            /* the driver stays loaded: the backend library uses it next */
        }
    }
    if (!count && why && whylen > 0) snprintf(why, (size_t)whylen, "%s", reason);
    return count;
}

static void exe_dir(char *dir, size_t len)
{
    ssize_t n = readlink("/proc/self/exe", dir, len - 1);
    if (n <= 0) {
        snprintf(dir, len, ".");
        return;
    }
    dir[n] = 0;
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
}

/* The first of nc candidates (paths, or a bare name for the loader's path)
 * that loads and has this binary's ABI; NULL with the first failure in
 * first_err ("" when none of them exists). */
static const pcg_cuda_api *load_first(char (*cand)[PATH_MAX + 64], int nc, char *first_err, size_t errlen)
{
    first_err[0] = 0;
    for (int i = 0; i < nc; i++) {
        /* a candidate that exists but fails to load is the error to report */
        int is_path = strchr(cand[i], '/') != NULL;
        if (is_path && access(cand[i], F_OK) != 0 && errno == ENOENT) continue;
        char why[400];
        if (cuda_lib_file_ok(cand[i], why, sizeof why)) {
            if (!first_err[0]) snprintf(first_err, errlen, "%s", why);
            continue;
        }
        void *h = dlopen(cand[i], RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            if (!first_err[0] && (is_path || nc == 1)) snprintf(first_err, errlen, "%.400s", dlerror());
            continue;
        }
        pcg_cuda_entry_fn entry = (pcg_cuda_entry_fn)dlsym(h, PCG_CUDA_ENTRY);
        const pcg_cuda_api *api = entry ? entry() : NULL;
        if (!api || api->abi_version != PCG_CUDA_ABI_VERSION || api->size != (int)sizeof(pcg_cuda_api)) {
            snprintf(first_err, errlen, "%.300s is not a matching CUDA backend (ABI %d expected)", cand[i],
                     PCG_CUDA_ABI_VERSION);
            dlclose(h);
            continue;
        }
        cuda_api = api;
        snprintf(cuda_path, sizeof cuda_path, "%.4100s", cand[i]);
        return api;
    }
    return NULL;
}

/* Where to look for lib: $PCGRLLM_CUDA_LIB alone (*env), else the binary's
 * directory + each of under, then (bare) the loader's path.  Their number. */
static int candidates(char (*cand)[PATH_MAX + 64], const char *const *under, int n_under, const char *lib, int bare,
                      const char **env)
{
    int nc = 0;
    *env = getenv("PCGRLLM_CUDA_LIB");
    if (*env && **env) {
        snprintf(cand[nc++], sizeof cand[0], "%s", *env);
        return nc;
    }
    char dir[PATH_MAX];
    exe_dir(dir, sizeof dir);
    for (int i = 0; i < n_under; i++) snprintf(cand[nc++], sizeof cand[0], "%s/%s%s", dir, under[i], lib);
    if (bare) snprintf(cand[nc++], sizeof cand[0], "%s", lib);
    return nc;
}

/* Why no candidate loaded: the first failure, a PCGRLLM_CUDA_LIB that does
 * not exist, or not_found. */
static void load_error(char *err, int errlen, const char *what, const char *first_err, const char *env,
                       const char *not_found)
{
    if (first_err[0]) snprintf(err, (size_t)errlen, "%s could not be loaded: %s", what, first_err);
    else if (env && *env) snprintf(err, (size_t)errlen, "%s %.300s (PCGRLLM_CUDA_LIB) does not exist", what, env);
    else snprintf(err, (size_t)errlen, "%s", not_found);
}

const pcg_cuda_api *backend_cuda_load(char *err, int errlen)
{
    if (cuda_api) return cuda_api;
    static const char *const under[] = {"", "build/"};
    char cand[4][PATH_MAX + 64];
    const char *env;
    int nc = candidates(cand, under, 2, PCG_CUDA_LIB, 1, &env);
    char first_err[512];
    const pcg_cuda_api *api = load_first(cand, nc, first_err, sizeof first_err);
    if (!api)
        load_error(err, errlen, "CUDA backend library", first_err, env,
                   "CUDA backend library " PCG_CUDA_LIB " not found beside the binary (build it with `make cuda`, "
                   "or set PCGRLLM_CUDA_LIB)");
    return api;
}

const pcg_cuda_api *backend_sim_load(char *err, int errlen)
{
    if (cuda_api && cuda_api->simulated) return cuda_api;
    if (cuda_api) {
        snprintf(err, (size_t)errlen, "%.300s, already loaded, is the device library", cuda_path);
        return NULL;
    }
    /* the counting variant first, the plain one so that its lack of byte
     * counts is the error rather than "not found" */
    static const char *const under[] = {"build/sim-count/", "sim-count/", "", "build/sim/", "sim/"};
    char cand[5][PATH_MAX + 64];
    const char *env;
    int nc = candidates(cand, under, 5, PCG_CUDA_SIM_LIB, 0, &env);
    char first_err[512];
    const pcg_cuda_api *api = load_first(cand, nc, first_err, sizeof first_err);
    if (api && !api->simulated) {
        snprintf(err, (size_t)errlen, "%.300s is the device library, not the simulation", cuda_path);
        return NULL;
    }
    if (!api)
        load_error(err, errlen, "the simulation library", first_err, env,
                   "the simulation library " PCG_CUDA_SIM_LIB " not found under build/sim-count/ beside the binary "
                   "(build it with `make cuda-sim COUNT=1`, or set PCGRLLM_CUDA_LIB)");
    return api;
}

const pcg_cuda_api *backend_cuda(void)
{
    return cuda_api;
}

const char *backend_cuda_path(void)
{
    return cuda_path;
}

/* the device backend_select put this process on (PCGRLLM_GPU) */
static int selected_gpu;

int backend_select(const char *name, char *err, int errlen)
{
    char why[512];
    if (!name || !strcmp(name, "cpu")) return BACKEND_CPU;
    int want_cuda = !strcmp(name, "cuda");
    if (!want_cuda && strcmp(name, "auto")) {
        snprintf(err, (size_t)errlen, "unknown backend '%s' (use cpu, cuda or auto)", name);
        return -1;
    }
    /* the simulation library (PCGRLLM_CUDA_LIB, docs/cuda.md) needs no
     * driver; "auto" never takes it, it is for checking, not for speed */
    const char *lib = getenv("PCGRLLM_CUDA_LIB");
    const pcg_cuda_api *api = NULL;
    if (want_cuda && lib && *lib) {
        api = backend_cuda_load(why, sizeof why);
        if (!api) {
            snprintf(err, (size_t)errlen, "--backend cuda: %s", why);
            return -1;
        }
        if (!api->simulated) api = NULL;
    }
    if (!api && backend_cuda_devices(why, sizeof why) <= 0) {
        if (!want_cuda) return BACKEND_CPU;
        snprintf(err, (size_t)errlen, "--backend cuda: no usable CUDA device: %s (use --backend cpu or auto)", why);
        return -1;
    }
    if (!api) api = backend_cuda_load(why, sizeof why);
    if (api && api->device_count() <= 0) {
        snprintf(why, sizeof why, "%s", api->last_error());
        api = NULL;
    }
    if (!api) {
        if (!want_cuda) return BACKEND_CPU;
        snprintf(err, (size_t)errlen, "--backend cuda: %s", why);
        return -1;
    }
    /* PCGRLLM_GPU=k puts this process on device k (one training job per GPU) */
    const char *gpu = getenv("PCGRLLM_GPU");
    if (gpu && *gpu) {
        char *end;
        long k = strtol(gpu, &end, 10);
        int n = api->device_count();
        if (*end || k < 0 || k >= n) {
            snprintf(err, (size_t)errlen, "PCGRLLM_GPU=%.20s: not a device index (this machine has %d GPU%s: 0..%d)",
                     gpu, n, n == 1 ? "" : "s", n - 1);
            return -1;
        }
        if (api->set_device((int)k)) {
            snprintf(err, (size_t)errlen, "PCGRLLM_GPU=%ld: %s", k, api->last_error());
            return -1;
        }
        selected_gpu = (int)k;
    }
    return BACKEND_CUDA;
}

int backend_gpu(void)
{
    return selected_gpu;
}

static int probe_child(void *arg)
{
    char err[600];
    backend_probe_result r;
    memset(&r, 0, sizeof r);
    r.backend = backend_select((const char *)arg, err, sizeof err);
    if (r.backend < 0) {
        child_fail(err);
        return 1;
    }
    if (r.backend == BACKEND_CUDA) {
        r.gpu = backend_gpu();
        if (backend_cuda()->device_info(r.gpu, &r.info)) {
            snprintf(err, sizeof err, "GPU %d: %s", r.gpu, backend_cuda()->last_error());
            child_fail(err);
            return 1;
        }
    }
    child_send(&r, sizeof r);
    return 0;
}

int backend_probe(const char *name, backend_probe_result *r, char *err, int errlen)
{
    memset(r, 0, sizeof *r);
    if (!strcmp(name, "cpu")) return 0;
    void *blob = NULL;
    size_t blob_len = 0;
    child_opts po = {.timeout_s = 120.0};
    int rc = child_run_ex(probe_child, (void *)name, &po, &blob, &blob_len, err, errlen);
    if (rc == 0 && blob && blob_len == sizeof *r) memcpy(r, blob, sizeof *r);
    else if (rc == 0) rc = -1, snprintf(err, (size_t)errlen, "the device probe returned no result");
    free(blob);
    r->info.name[sizeof r->info.name - 1] = 0;
    return rc;
}
