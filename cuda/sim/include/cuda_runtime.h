/* The CUDA runtime as the simulation build of the files of cuda/ sees it
 * (`make cuda-sim`: g++ -x c++ -DPCG_SIM, docs/cuda.md).  "Device" memory is
 * host memory, the one stream runs everything at once (a launch returns
 * when its grid is done), and a launch is a loop over the grid's blocks
 * (cuda/sim/pool.cpp) and each block's threads (cuda/sim/launch.cpp), after checking
 * it against the limits of a device.  Only what the backend's kernels and
 * host code use is here. */
#ifndef PCG_SIM_CUDA_RUNTIME_H
#define PCG_SIM_CUDA_RUNTIME_H
#include <stddef.h>
#include <stdint.h>
#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
/* one block at a time per CPU thread, all of its threads on that thread */
#define __shared__ static thread_local

struct uint3 {
    unsigned x, y, z;
};
struct dim3 {
    unsigned x, y, z;
    dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
};

/* the runtime's own numbers, so that messages read as a device's would */
enum cudaError {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorNoDevice = 100,
    cudaErrorInvalidDevice = 101,
    cudaErrorInvalidResourceHandle = 400,
    cudaErrorIllegalState = 401,
    cudaErrorNotReady = 600,
    cudaErrorLaunchFailure = 719,
    cudaErrorStreamCaptureUnsupported = 900,
    cudaErrorStreamCaptureInvalidated = 901,
};
typedef enum cudaError cudaError_t;

enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4,
};

typedef struct pcg_sim_stream *cudaStream_t;
#define cudaStreamNonBlocking 0x01

struct cudaDeviceProp {
    char name[256];
    int major, minor, multiProcessorCount, warpSize, maxThreadsPerBlock;
    int maxThreadsDim[3], maxGridSize[3];
    size_t totalGlobalMem, sharedMemPerBlock;
};

enum cudaDriverEntryPointQueryResult { cudaDriverEntryPointSuccess = 0, cudaDriverEntryPointSymbolNotFound = 1 };
#define cudaEnableDefault 0x0

#define CUDART_VERSION 12080

/* The attributes the kernels' callers ask for (CUDA's own values). */
enum cudaDeviceAttr { cudaDevAttrMultiProcessorCount = 16, cudaDevAttrComputeCapabilityMajor = 75 };
cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr attr, int dev);
cudaError_t cudaMalloc(void **p, size_t bytes);
template <class T> static inline cudaError_t cudaMalloc(T **p, size_t bytes)
{
    return cudaMalloc((void **)p, bytes);
}
cudaError_t cudaFree(void *p);
/* Page-locked host memory: plain host memory here (copies are synchronous). */
cudaError_t cudaMallocHost(void **p, size_t bytes);
cudaError_t cudaFreeHost(void *p);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind, cudaStream_t s = 0);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaMemsetAsync(void *dst, int value, size_t bytes, cudaStream_t s = 0);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags);

/* Stream capture and graphs: while the stream captures, launches, copies,
 * sets and cuBLAS calls are recorded instead of run (a host
 * synchronisation ends the capture in an error, as on a device); a graph
 * launch runs the records in order, and the work counters count their
 * launches as a graph's. */
enum cudaStreamCaptureMode {
    cudaStreamCaptureModeGlobal = 0,
    cudaStreamCaptureModeThreadLocal = 1,
    cudaStreamCaptureModeRelaxed = 2
};
typedef struct pcg_sim_graph *cudaGraph_t;
typedef struct pcg_sim_graph *cudaGraphExec_t;
cudaError_t cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode mode);
cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *graph);
cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph, unsigned long long flags = 0);
cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t s);
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec);
cudaError_t cudaGraphDestroy(cudaGraph_t graph);
cudaError_t cudaStreamSynchronize(cudaStream_t s);
cudaError_t cudaStreamQuery(cudaStream_t s);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
const char *cudaGetErrorString(cudaError_t e);
cudaError_t cudaGetDeviceCount(int *n);
cudaError_t cudaGetDevice(int *dev);
cudaError_t cudaSetDevice(int dev);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int dev);
cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes);
cudaError_t cudaDriverGetVersion(int *v);
cudaError_t cudaRuntimeGetVersion(int *v);
cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **fn, unsigned version,
                                             unsigned long long flags, cudaDriverEntryPointQueryResult *status);

/* ---- what a kernel sees ---- */

/* the device library's integer min and max */
static inline int min(int a, int b)
{
    return a < b ? a : b;
}
static inline int max(int a, int b)
{
    return a > b ? a : b;
}

namespace pcg_sim {

struct thread_place {
    uint3 thread, block;
    dim3 block_dim, grid_dim;
};
/* the simulated thread running on this CPU thread */
extern thread_local thread_place here;

void syncthreads(void);

/* A launch's arguments as the work counters read them (the FLOPs each
 * kernel declares, cuda/sim/work.cpp): numbers by value, every argument
 * by address and size. */
struct launch_args {
    enum { MAX = 16 };
    int n;
    double num[MAX];
    const void *bytes[MAX];
    size_t size[MAX];
};

template <class T> void take_arg(launch_args &L, const T &v)
{
    if (L.n >= launch_args::MAX) return;
    L.num[L.n] = 0;
    if constexpr (std::is_arithmetic<T>::value) L.num[L.n] = (double)v;
    L.bytes[L.n] = &v;
    L.size[L.n] = sizeof(T);
    L.n++;
}

/* Whether the stream is capturing; record appends work to the capture
 * (cuda/sim/graph.cpp). */
bool capturing(void);
void record(std::function<void()> work);

/* Check the launch against the device's limits (an error to
 * cudaGetLastError, as a device reports it, and false), then run body once
 * per simulated thread of every block. */
bool launch_ok(const char *name, dim3 grid, dim3 block, size_t shmem);
void run_grid(const char *name, dim3 grid, dim3 block, void (*body)(void *), void *ctx, const launch_args &args);

/* One launch of kernel over its converted arguments: every thread gets
 * its own copy of them, as on a device. */
template <class... P>
void run_launch(const char *name, void (*kernel)(P...), dim3 grid, dim3 block,
                std::tuple<typename std::decay<P>::type...> &params)
{
    struct call {
        void (*kernel)(P...);
        std::tuple<typename std::decay<P>::type...> *params;
        static void run(void *c)
        {
            call *k = (call *)c;
            std::tuple<typename std::decay<P>::type...> mine = *k->params;
            std::apply(k->kernel, mine);
        }
    } c = {kernel, &params};
    launch_args seen = {};
    std::apply([&seen](const auto &...x) { (take_arg(seen, x), ...); }, params);
    run_grid(name, grid, block, call::run, &c, seen);
}

/* kernel<<<grid, block, shmem, stream>>>(args...): the arguments are
 * converted to the kernel's parameter types once, as a launch copies them;
 * a captured launch keeps its copy for the graph. */
template <class... P, class... A>
void launch(const char *name, void (*kernel)(P...), dim3 grid, dim3 block, size_t shmem, cudaStream_t, A &&...args)
{
    if (!launch_ok(name, grid, block, shmem)) return;
    std::tuple<typename std::decay<P>::type...> params(std::forward<A>(args)...);
    if (capturing())
        record([=]() mutable { run_launch(name, kernel, grid, block, params); });
    else
        run_launch(name, kernel, grid, block, params);
}

} // namespace pcg_sim

#define threadIdx (pcg_sim::here.thread)
#define blockIdx (pcg_sim::here.block)
#define blockDim (pcg_sim::here.block_dim)
#define gridDim (pcg_sim::here.grid_dim)
#define __syncthreads() pcg_sim::syncthreads()

#endif
