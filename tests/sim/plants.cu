/* Bugs planted in small kernels, for the simulation to catch (built by
 * `make cuda-sim` with the simulation's flags into BUILD/sim/sim_plants,
 * run by tests/test_cuda_sim.c).  Each case prints one line "CASE: ..."
 * saying what the simulation did with it:
 *
 *   grid-y      a launch with gridDim.y past 65535: refused, which limit
 *   block       a launch of 2048 threads per block: refused
 *   shared      48 KiB + 1 of dynamic shared memory: refused
 *   reduce      a block reduction with its barriers: the right sum
 *   no-barrier  the same without the barrier after the shared store: the
 *               sum it gives (wrong in at least one thread order)
 *   divergent   a barrier only half the block reaches: a launch failure
 *   transpose   a row-major product through cuBLAS, then with one
 *               transpose flag swapped: the error of each against a loop
 *   capture     a capture with a host synchronisation inside, and one
 *               with an allocation: that call and the capture's end fail;
 *               the legacy stream is not captured; a capture of a
 *               kernel, a set and a product: nothing runs until the graph
 *               is launched, and each launch runs all three again
 *   one-past    a kernel reading one element past its array (the
 *               sanitizer build stops here with a heap-buffer-overflow)
 */
#include "cuda_runtime.h"
#include "cublas_v2.h"
#include "common.cuh"
#include <math.h>
#include <stdio.h>
#include <string.h>

#define RED 256

__global__ static void nothing_kernel(int *x)
{
    if (x) x[0] = 1;
}

__global__ static void reduce_kernel(const float *x, float *out, int with_barrier)
{
    __shared__ float sh[RED];
    sh[threadIdx.x] = x[threadIdx.x];
    if (with_barrier) __syncthreads();
    for (int w = RED / 2; w > 0; w >>= 1) {
        if ((int)threadIdx.x < w) sh[threadIdx.x] += sh[threadIdx.x + w];
        if (with_barrier) __syncthreads();
    }
    if (threadIdx.x == 0) *out = sh[0];
}

__global__ static void divergent_kernel(int *x)
{
    if (threadIdx.x < 16) __syncthreads();
    x[threadIdx.x] = 1;
}

__global__ static void one_past_kernel(const float *x, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) out[0] += x[i]; /* <= : one past the end */
}

static void expect_refused(const char *name, dim3 g, dim3 b, size_t shmem)
{
    PCG_LAUNCH(nothing_kernel, g, b, shmem, 0, (int *)NULL);
    cudaError_t e = cudaGetLastError();
    printf("%s: %s: %s\n", name, e == cudaErrorInvalidConfiguration ? "refused" : "accepted", cudaGetErrorString(e));
}

static void reduce_case(const char *name, int with_barrier)
{
    float *x, *out;
    cudaMalloc(&x, RED * sizeof(float));
    cudaMalloc(&out, sizeof(float));
    for (int i = 0; i < RED; i++) x[i] = (float)(i + 1);
    PCG_LAUNCH(reduce_kernel, 1, RED, 0, 0, x, out, with_barrier);
    cudaError_t e = cudaGetLastError();
    printf("%s: sum %.0f of %d (%s)\n", name, *out, RED * (RED + 1) / 2, cudaGetErrorString(e));
    cudaFree(x);
    cudaFree(out);
}

static void divergent_case(void)
{
    int *x;
    cudaMalloc(&x, 32 * sizeof(int));
    PCG_LAUNCH(divergent_kernel, 1, 32, 0, 0, x);
    cudaError_t e = cudaGetLastError();
    printf("divergent: %s: %s\n", e == cudaErrorLaunchFailure ? "failed" : "ran", cudaGetErrorString(e));
    cudaFree(x);
}

/* Row-major C[m,n] = A[m,k] B[k,n] as column-major C^T = B^T A^T, once
 * right and once with the first operand's flag swapped. */
static void transpose_case(void)
{
    enum { M = 3, N = 5, K = 4 };
    float A[M * K], B[K * N], C[M * N], want[M * N];
    for (int i = 0; i < M * K; i++) A[i] = (float)(i % 7) - 3.0f;
    for (int i = 0; i < K * N; i++) B[i] = (float)(i % 5) * 0.5f - 1.0f;
    for (int r = 0; r < M; r++)
        for (int c = 0; c < N; c++) {
            double s = 0;
            for (int j = 0; j < K; j++) s += (double)A[r * K + j] * B[j * N + c];
            want[r * N + c] = (float)s;
        }
    cublasHandle_t h;
    cublasCreate(&h);
    const float one = 1, zero = 0;
    const cublasOperation_t first[2] = {CUBLAS_OP_N, CUBLAS_OP_T};
    const char *label[2] = {"right", "swapped"};
    for (int v = 0; v < 2; v++) {
        memset(C, 0, sizeof C);
        cublasStatus_t st = cublasSgemm(h, first[v], CUBLAS_OP_N, N, M, K, &one, B, v ? K : N, A, K, &zero, C, N);
        double err = 0;
        for (int i = 0; i < M * N; i++) err = fmax(err, fabs((double)C[i] - want[i]));
        printf("transpose %s: max error %g (%s)\n", label[v], err, cublasGetStatusString(st));
    }
    cublasDestroy(h);
}

__global__ static void add_one_kernel(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}

static void capture_case(cudaStream_t s)
{
    cudaGraph_t g = NULL;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
    cudaError_t sync = cudaStreamSynchronize(s), end = cudaStreamEndCapture(s, &g);
    printf("capture-sync: synchronise %s, end %s, graph %s\n", cudaGetErrorString(sync), cudaGetErrorString(end),
           g ? "made" : "none");
    void *mem = NULL;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
    cudaError_t alloc = cudaMalloc(&mem, 64);
    end = cudaStreamEndCapture(s, &g);
    printf("capture-alloc: allocate %s, end %s, graph %s\n", cudaGetErrorString(alloc), cudaGetErrorString(end),
           g ? "made" : "none");
    printf("capture-legacy: begin %s\n",
           cudaGetErrorString(cudaStreamBeginCapture((cudaStream_t)0, cudaStreamCaptureModeThreadLocal)));
    enum { N = 4 };
    float *x, *y;
    cudaMalloc(&x, N * sizeof(float));
    cudaMalloc(&y, N * sizeof(float));
    for (int i = 0; i < N; i++) x[i] = y[i] = 0;
    cublasHandle_t h;
    cublasCreate(&h);
    const float one = 1;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
    cudaMemsetAsync(y, 0, N * sizeof(float), s);
    PCG_LAUNCH(add_one_kernel, 1, 32, 0, s, x, N);
    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, 1, 1, &one, x, N, &one, 1, &one, y, N); /* y += x */
    end = cudaStreamEndCapture(s, &g);
    printf("capture: end %s; before a launch x %.0f y %.0f\n", cudaGetErrorString(end), x[0], y[0]);
    cudaGraphExec_t exec = NULL;
    cudaGraphInstantiate(&exec, g, 0);
    for (int k = 0; k < 2; k++) cudaGraphLaunch(exec, s);
    printf("capture: after two launches x %.0f y %.0f\n", x[0], y[0]);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(g);
    cublasDestroy(h);
    cudaFree(x);
    cudaFree(y);
}

static void one_past_case(void)
{
    int n = 100;
    float *x, *out;
    cudaMalloc(&x, (size_t)n * sizeof(float));
    cudaMalloc(&out, sizeof(float));
    for (int i = 0; i < n; i++) x[i] = 1.0f;
    *out = 0;
    printf("one-past: launching\n");
    fflush(stdout);
    PCG_LAUNCH(one_past_kernel, 1, 128, 0, 0, x, out, n);
    printf("one-past: ran to the end (sum %.0f of %d)\n", *out, n);
    cudaFree(x);
    cudaFree(out);
}

int main(int argc, char **argv)
{
    const char *only = argc > 1 ? argv[1] : "";
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    if (!*only || !strcmp(only, "limits")) {
        expect_refused("grid-y", dim3(1, 70000), dim3(64), 0);
        expect_refused("block", dim3(1), dim3(2048), 0);
        expect_refused("shared", dim3(1), dim3(32), 48 * 1024 + 1);
    }
    if (!*only || !strcmp(only, "reduce")) {
        /* the planted one first: the simulation keeps shared memory between
         * blocks on a CPU thread, and a right sum left there would hide it */
        reduce_case("no-barrier", 0);
        reduce_case("reduce", 1);
        divergent_case();
    }
    if (!*only || !strcmp(only, "transpose")) transpose_case();
    if (!*only || !strcmp(only, "capture")) capture_case(s);
    if (!strcmp(only, "one-past")) one_past_case();
    return 0;
}
