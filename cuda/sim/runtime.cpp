/* The runtime and driver calls of the simulation: memory is host memory,
 * the stream runs everything at once, the device is one CPU with an H200's
 * launch limits, and a reward module's kernel is the host function the
 * trainer registered (the same reward source, compiled for the CPU in the
 * confined worker: host/learn, docs/cuda.md). */
#include "cuda.h"
#include "cuda_runtime.h"
#include "sim.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>

int pcg_sim_take_launch_error(int clear);

/* ---- memory ---- */

/* Allocating and freeing are capture-unsafe calls: during a capture a
 * device refuses them and ends the capture invalidated, as here. */
cudaError_t cudaMalloc(void **p, size_t bytes)
{
    /* 256-byte aligned, as a device allocation */
    *p = NULL;
    if (cudaError_t e = pcg_sim_capture_sync()) return e;
    if (posix_memalign(p, 256, bytes ? bytes : 1)) {
        *p = NULL;
        return cudaErrorMemoryAllocation;
    }
    pcg_sim_count_alloc(*p, bytes);
    return cudaSuccess;
}

cudaError_t cudaFree(void *p)
{
    if (cudaError_t e = pcg_sim_capture_sync()) return e;
    pcg_sim_count_free(p);
    free(p);
    return cudaSuccess;
}

cudaError_t cudaMallocHost(void **p, size_t bytes)
{
    *p = NULL;
    if (cudaError_t e = pcg_sim_capture_sync()) return e;
    *p = malloc(bytes ? bytes : 1);
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t cudaFreeHost(void *p)
{
    if (cudaError_t e = pcg_sim_capture_sync()) return e;
    free(p);
    return cudaSuccess;
}

static void copy_now(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind)
{
    if (bytes) memmove(dst, src, bytes);
    if (kind == cudaMemcpyDeviceToDevice) pcg_sim_work_add(PCG_WORK_COPY, 0, bytes, bytes, 0);
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind, cudaStream_t)
{
    if (bytes && (!dst || !src)) return cudaErrorInvalidValue;
    if (pcg_sim::capturing())
        pcg_sim::record([=] { copy_now(dst, src, bytes, kind); });
    else
        copy_now(dst, src, bytes, kind);
    return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind)
{
    if (cudaError_t e = pcg_sim_capture_sync()) return e;
    pcg_sim_work_sync();
    return cudaMemcpyAsync(dst, src, bytes, kind, 0);
}

static void set_now(void *dst, int value, size_t bytes)
{
    if (bytes) memset(dst, value, bytes);
    pcg_sim_work_add(PCG_WORK_SET, 0, 0, bytes, 0);
}

cudaError_t cudaMemsetAsync(void *dst, int value, size_t bytes, cudaStream_t)
{
    if (bytes && !dst) return cudaErrorInvalidValue;
    if (pcg_sim::capturing())
        pcg_sim::record([=] { set_now(dst, value, bytes); });
    else
        set_now(dst, value, bytes);
    return cudaSuccess;
}

/* ---- the stream and errors ---- */

struct pcg_sim_stream {
    int unused;
};

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned)
{
    static pcg_sim_stream one;
    pcg_sim_pool_start(); /* every device object starts with the stream */
    *s = &one;
    return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t)
{
    if (cudaError_t e = pcg_sim_capture_sync()) return e;
    pcg_sim_work_sync();
    return cudaSuccess;
}

cudaError_t cudaStreamQuery(cudaStream_t)
{
    return pcg_sim_capture_sync();
}

cudaError_t cudaDeviceSynchronize(void)
{
    if (cudaError_t e = pcg_sim_capture_sync()) return e;
    pcg_sim_work_sync();
    return cudaSuccess;
}

cudaError_t cudaGetLastError(void)
{
    return (cudaError_t)pcg_sim_take_launch_error(1);
}

cudaError_t cudaPeekAtLastError(void)
{
    return (cudaError_t)pcg_sim_take_launch_error(0);
}

static const char *plain_error_string(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
    case cudaErrorIllegalState: return "the operation cannot be performed in the present state";
    case cudaErrorStreamCaptureUnsupported: return "operation not permitted when stream is capturing";
    case cudaErrorStreamCaptureInvalidated: return "operation failed due to a previous error during capture";
    }
    return "unknown error";
}

int pcg_sim_conv_env(void)
{
    const char *c = getenv("PCGRLLM_SIM_CONV");
    if (!c || !*c || !strcmp(c, "auto")) return PCG_CONV_AUTO;
    if (!strcmp(c, "im2col")) return PCG_CONV_IM2COL;
    if (!strcmp(c, "tensor")) return PCG_CONV_TENSOR;
    return !strcmp(c, "implicit") ? PCG_CONV_IMPLICIT : -1;
}

int pcg_sim_sms_env(void)
{
    const char *env = getenv("PCGRLLM_SIM_SMS");
    if (!env || !*env) return PCG_SIM_SMS;
    char *end;
    errno = 0;
    long n = strtol(env, &end, 10);
    return *end || errno || n < 1 || n > PCG_SIM_SMS ? -1 : (int)n;
}

/* Variable name's value as the line quotes it: 40 bytes at most, control
 * characters as '?', so that the line stays one. */
static const char *shown(const char *name)
{
    static char buf[41];
    const char *v = getenv(name);
    int n = 0;
    for (; v && v[n] && n < 40; n++) buf[n] = (unsigned char)v[n] < 32 || v[n] == 127 ? '?' : v[n];
    buf[n] = 0;
    return buf;
}

/* The simulation's variables, checked where a device would be counted:
 * NULL when all are usable, else the line saying which is not. */
static const char *env_error(void)
{
    static char line[200];
    if (pcg_sim_threads_env() < 0)
        snprintf(line, sizeof line, "PCGRLLM_SIM_THREADS=%s: not a number of threads (a whole number, 1 to %d)",
                 shown("PCGRLLM_SIM_THREADS"), (int)PCG_SIM_MAX_THREADS);
    else if (pcg_sim_order_env() < 0)
        snprintf(line, sizeof line, "PCGRLLM_SIM_ORDER=%s: not an order (forward or reverse)",
                 shown("PCGRLLM_SIM_ORDER"));
    else if (pcg_sim_conv_env() < 0)
        snprintf(line, sizeof line, "PCGRLLM_SIM_CONV=%s: not a convolution path (auto, im2col, implicit or tensor)",
                 shown("PCGRLLM_SIM_CONV"));
    else if (pcg_sim_sms_env() < 0)
        snprintf(line, sizeof line, "PCGRLLM_SIM_SMS=%s: not a number of multiprocessors (a whole number, 1 to %d)",
                 shown("PCGRLLM_SIM_SMS"), (int)PCG_SIM_SMS);
    else
        return NULL;
    return line;
}

/* A launch error's string carries what the simulation found (which kernel,
 * which limit), where a device would say only the first half. */
const char *cudaGetErrorString(cudaError_t e)
{
    static thread_local char line[640];
    const char *env = e == cudaErrorNoDevice ? env_error() : NULL;
    if (env) return env;
    const char *detail = pcg_sim_launch_detail();
    if ((e == cudaErrorInvalidConfiguration || e == cudaErrorLaunchFailure) && *detail) {
        snprintf(line, sizeof line, "%s (simulated %s)", plain_error_string(e), detail);
        return line;
    }
    return plain_error_string(e);
}

/* ---- the device ---- */

cudaError_t cudaGetDeviceCount(int *n)
{
    *n = env_error() ? 0 : 1;
    return *n ? cudaSuccess : cudaErrorNoDevice;
}

cudaError_t cudaGetDevice(int *dev)
{
    *dev = 0;
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int dev)
{
    return dev == 0 ? cudaSuccess : cudaErrorInvalidDevice;
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
    /* the host's memory: the arena is sized from it */
    struct sysinfo si;
    if (sysinfo(&si)) return cudaErrorInvalidValue;
    *total_bytes = (size_t)si.totalram * si.mem_unit;
    *free_bytes = (size_t)si.freeram * si.mem_unit;
    return cudaSuccess;
}

/* No system call: the trainer asks it inside the confined worker. */
cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr attr, int dev)
{
    if (dev != 0) return cudaErrorInvalidDevice;
    if (attr == cudaDevAttrComputeCapabilityMajor) *value = 9;
    else if (attr == cudaDevAttrMultiProcessorCount) *value = pcg_sim_sms_env() > 0 ? pcg_sim_sms_env() : PCG_SIM_SMS;
    else return cudaErrorInvalidValue;
    return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int dev)
{
    if (dev != 0) return cudaErrorInvalidDevice;
    const pcg_sim_limits &L = pcg_sim_device_limits;
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "simulated device (CPU, an H200's launch limits)");
    p->major = 9;
    p->minor = 0;
    p->multiProcessorCount = pcg_sim_sms_env() > 0 ? pcg_sim_sms_env() : PCG_SIM_SMS;
    p->warpSize = 32;
    p->maxThreadsPerBlock = (int)L.max_threads_per_block;
    for (int a = 0; a < 3; a++) {
        p->maxThreadsDim[a] = (int)L.max_block[a];
        p->maxGridSize[a] = (int)L.max_grid[a];
    }
    size_t free_bytes;
    cudaMemGetInfo(&free_bytes, &p->totalGlobalMem);
    p->sharedMemPerBlock = L.max_shared_per_block;
    return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int *v)
{
    *v = 0; /* no driver: the simulation */
    return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int *v)
{
    *v = CUDART_VERSION;
    return cudaSuccess;
}

/* ---- reward modules ---- */

static pcg_host_reward_fn host_reward;
static void *host_reward_ctx;

int pcg_sim_set_host_reward(pcg_host_reward_fn fn, void *ctx)
{
    host_reward = fn;
    host_reward_ctx = ctx;
    return 0;
}

struct pcg_sim_module {
    int unused;
};
struct pcg_sim_function {
    int unused;
};
static pcg_sim_function reward_function;

/* An image the driver would take: an ELF cubin, a fatbin or PTX text. */
static bool looks_like_module(const void *image)
{
    const unsigned char *b = (const unsigned char *)image;
    static const unsigned char elf[4] = {0x7f, 'E', 'L', 'F'}, fatbin[4] = {0x50, 0xed, 0x55, 0xba};
    if (!memcmp(b, elf, 4) || !memcmp(b, fatbin, 4)) return true;
    const char *t = (const char *)image;
    return strstr(t, ".version") != NULL && strstr(t, ".entry") != NULL;
}

static CUresult sim_module_load(CUmodule *m, const void *image)
{
    if (!m || !image) return CUDA_ERROR_INVALID_VALUE;
    if (!looks_like_module(image)) return CUDA_ERROR_INVALID_IMAGE;
    *m = new pcg_sim_module();
    return CUDA_SUCCESS;
}

static CUresult sim_module_get_function(CUfunction *f, CUmodule m, const char *name)
{
    if (!m || !f || !name) return CUDA_ERROR_INVALID_VALUE;
    if (strcmp(name, PCG_REWARD_KERNEL)) return CUDA_ERROR_NOT_FOUND;
    *f = &reward_function;
    return CUDA_SUCCESS;
}

static CUresult sim_module_unload(CUmodule m)
{
    delete m;
    return CUDA_SUCCESS;
}

/* The reward kernel's launch: its grid checked as any launch, its work
 * done by the host function (parameters as backend.h declares them). */
static CUresult sim_launch_kernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                  unsigned bz, unsigned shmem, CUstream, void **params, void **)
{
    if (f != &reward_function || !params) return CUDA_ERROR_INVALID_HANDLE;
    if (!pcg_sim::launch_ok(PCG_REWARD_KERNEL, dim3(gx, gy, gz), dim3(bx, by, bz), shmem)) {
        pcg_sim_take_launch_error(1);
        return CUDA_ERROR_INVALID_VALUE;
    }
    int n = *(int *)params[0], h = *(int *)params[1], w = *(int *)params[2];
    const unsigned char *prev = *(const unsigned char **)params[3], *curr = *(const unsigned char **)params[4];
    float *rewards = *(float **)params[5];
    if ((unsigned long long)gx * bx < (unsigned long long)n) {
        pcg_sim_set_launch_error(cudaErrorLaunchFailure, "launch of %s: %llu threads for %d environments",
                                 PCG_REWARD_KERNEL, (unsigned long long)gx * bx, n);
        pcg_sim_take_launch_error(1);
        return CUDA_ERROR_LAUNCH_FAILED;
    }
    if (!host_reward) {
        pcg_sim_set_launch_error(cudaErrorLaunchFailure,
                                 "launch of %s: no host reward registered (the simulation runs reward source on the "
                                 "host)",
                                 PCG_REWARD_KERNEL);
        pcg_sim_take_launch_error(1);
        return CUDA_ERROR_LAUNCH_FAILED;
    }
    size_t cells = (size_t)n * h * w;
    pcg_sim_work_add(PCG_REWARD_KERNEL " (host reward)", (uint64_t)gx * bx, 2 * cells, (size_t)n * sizeof(float),
                     0);
    return host_reward(host_reward_ctx, n, h, w, prev, curr, rewards) ? CUDA_ERROR_LAUNCH_FAILED : CUDA_SUCCESS;
}

static CUresult sim_get_error_string(CUresult r, const char **s)
{
    switch (r) {
    case CUDA_SUCCESS: *s = "no error"; break;
    case CUDA_ERROR_INVALID_VALUE: *s = "invalid argument"; break;
    case CUDA_ERROR_INVALID_IMAGE: *s = "device kernel image is invalid"; break;
    case CUDA_ERROR_INVALID_HANDLE: *s = "invalid resource handle"; break;
    case CUDA_ERROR_NOT_FOUND: *s = "named symbol not found"; break;
    case CUDA_ERROR_LAUNCH_FAILED: *s = *pcg_sim_launch_detail() ? pcg_sim_launch_detail() : "unspecified launch failure"; break;
    default: *s = NULL; return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **fn, unsigned, unsigned long long,
                                             cudaDriverEntryPointQueryResult *status)
{
    static const struct {
        const char *name;
        void *fn;
    } entries[] = {{"cuModuleLoadData", (void *)sim_module_load},
                   {"cuModuleGetFunction", (void *)sim_module_get_function},
                   {"cuModuleUnload", (void *)sim_module_unload},
                   {"cuLaunchKernel", (void *)sim_launch_kernel},
                   {"cuGetErrorString", (void *)sim_get_error_string}};
    *fn = NULL;
    for (const auto &e : entries)
        if (!strcmp(symbol, e.name)) {
            *fn = e.fn;
            if (status) *status = cudaDriverEntryPointSuccess;
            return cudaSuccess;
        }
    if (status) *status = cudaDriverEntryPointSymbolNotFound;
    return cudaSuccess;
}
