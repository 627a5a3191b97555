/* The three row-major sgemm wrappers every matmul of the backend goes
 * through, and the matmul mode: plain fp32, TF32 tensor cores, or bf16
 * tensor cores.  Storage stays fp32 in every mode.
 *
 * cuBLAS is loaded when first needed, not linked: libcublas and
 * libcublasLt are over 500 MB, which a GPU machine lent with only the
 * driver does not have and a kit cannot carry.  Without it (or with
 * PCGRLLM_CUBLAS=off) every sgemm runs the built-in tiled kernel of
 * cuda/sgemm_tiled.cu.  cuBLAS is column-major: a row-major C = A*B is the
 * column-major C^T = B^T * A^T, so the operands swap. */
#include "common.cuh"
#include <cublas_v2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef PCG_SIM
#include <dlfcn.h>
extern "C" {
#include "cuda_libs.h"
}
#ifndef PCG_CUBLAS_MAJOR
#error "PCG_CUBLAS_MAJOR (the cuBLAS soname's major version) comes from the Makefile"
#endif
#endif

/* cublasGemmEx is overloaded in C++ (an inline form taking the old
 * cudaDataType compute type): the exported one, spelled out */
typedef cublasStatus_t (*gemm_ex_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                     const void *, const void *, cudaDataType, int, const void *, cudaDataType, int,
                                     const void *, void *, cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);

/* The cuBLAS entry points the backend calls, by their _v2 names. */
struct blas_fns {
    decltype(&cublasCreate_v2) create;
    decltype(&cublasDestroy_v2) destroy;
    decltype(&cublasSetStream_v2) set_stream;
    decltype(&cublasSetWorkspace_v2) set_workspace;
    decltype(&cublasSetMathMode) set_math_mode;
    decltype(&cublasGetStatusString) status_string;
    decltype(&cublasSgemm_v2) sgemm;
    gemm_ex_fn gemm_ex;
    decltype(&cublasGetVersion_v2) get_version;
};

static blas_fns cb;
static int cb_state; /* 0 not tried, 1 loaded, -1 not loadable (cb_why) */
static char cb_why[600];
static cublasHandle_t handle;
static int math_mode = PCG_MATH_FP32;

#ifdef PCG_SIM
/* The simulation's cuBLAS is linked in: the table is its functions. */
static int fill_fns(blas_fns *t, char *, size_t)
{
    *t = {cublasCreate_v2,       cublasDestroy_v2, cublasSetStream_v2,  cublasSetWorkspace_v2, cublasSetMathMode,
          cublasGetStatusString, cublasSgemm_v2,   cublasGemmEx,        cublasGetVersion_v2};
    return 0;
}
#else
/* libcublas.so.N by the search host code uses for NVIDIA's libraries,
 * then each entry point. */
static int fill_fns(blas_fns *t, char *why, size_t whylen)
{
    char path[4096];
    void *h = cuda_open_cublas(PCG_CUBLAS_MAJOR, path, sizeof path, why, whylen);
    if (!h) return -1;
    struct {
        void **slot;
        const char *name;
    } syms[] = {{(void **)&t->create, "cublasCreate_v2"},
                {(void **)&t->destroy, "cublasDestroy_v2"},
                {(void **)&t->set_stream, "cublasSetStream_v2"},
                {(void **)&t->set_workspace, "cublasSetWorkspace_v2"},
                {(void **)&t->set_math_mode, "cublasSetMathMode"},
                {(void **)&t->status_string, "cublasGetStatusString"},
                {(void **)&t->sgemm, "cublasSgemm_v2"},
                {(void **)&t->gemm_ex, "cublasGemmEx"},
                {(void **)&t->get_version, "cublasGetVersion_v2"}};
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++)
        if (!(*syms[i].slot = dlsym(h, syms[i].name))) {
            snprintf(why, whylen, "%.300s has no %s", path, syms[i].name);
            dlclose(h);
            return -1;
        }
    return 0;
}
#endif

/* The loaded table, or NULL when the built-in sgemm stands in (loaded
 * once; PCGRLLM_CUBLAS=off skips cuBLAS in both builds). */
static const blas_fns *cublas_fns(void)
{
    if (!cb_state) {
        const char *env = getenv("PCGRLLM_CUBLAS");
        if (env && !strcmp(env, "off")) snprintf(cb_why, sizeof cb_why, "turned off by PCGRLLM_CUBLAS=off");
        cb_state = cb_why[0] || fill_fns(&cb, cb_why, sizeof cb_why) ? -1 : 1;
    }
    return cb_state > 0 ? &cb : NULL;
}

static cublasMath_t cublas_math(int mode)
{
    return mode == PCG_MATH_TF32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH;
}

static cublasHandle_t blas(void)
{
    if (!handle) {
        cublasStatus_t s = cb.create(&handle);
        if (s != CUBLAS_STATUS_SUCCESS) {
            pcg_cuda_set_error("cublasCreate: %s", cb.status_string(s));
            handle = NULL;
            return NULL;
        }
        /* each step's failure is reported as itself, once */
        size_t ws_bytes = 0;
        const char *what = NULL;
        if (pcg_cuda_stream_check()) {
            what = ""; /* the stream's own reason is recorded */
        } else if ((s = cb.set_stream(handle, pcg_cuda_stream())) != CUBLAS_STATUS_SUCCESS) {
            what = "cublasSetStream";
        } else {
            void *ws = pcg_arena_blas_workspace(&ws_bytes);
            if (!ws) what = ""; /* the arena's reason is recorded */
            else if ((s = cb.set_workspace(handle, ws, ws_bytes)) != CUBLAS_STATUS_SUCCESS) what = "cublasSetWorkspace";
            else if ((s = cb.set_math_mode(handle, cublas_math(math_mode))) != CUBLAS_STATUS_SUCCESS)
                what = "cublasSetMathMode";
        }
        if (what) {
            if (*what) pcg_cuda_set_error("%s: %s", what, cb.status_string(s));
            cb.destroy(handle);
            handle = NULL;
            return NULL;
        }
    }
    return handle;
}

#define BLAS_CK(call, name)                                                                \
    do {                                                                                   \
        cublasStatus_t s_ = (call);                                                        \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                 \
            pcg_cuda_set_error("%s: %s", name, cb.status_string(s_));                      \
            return -1;                                                                     \
        }                                                                                  \
    } while (0)

/* "cuBLAS X.Y.Z", or the built-in sgemm and why cuBLAS is not loaded.  A
 * handle of its own for the version: the backend's handle would take the
 * arena before a trainer could size it. */
extern "C" const char *pcg_blas_in_use(void)
{
    static char line[700];
    if (!cublas_fns()) {
        snprintf(line, sizeof line, "built-in tiled sgemm (cuBLAS not loaded: %s)", cb_why);
        return line;
    }
#ifdef PCG_SIM
    return "cuBLAS (simulated: OpenBLAS, TF32 and bf16 by input rounding)";
#endif
    int v = 0;
    cublasHandle_t h = handle;
    if (!h && cb.create(&h) != CUBLAS_STATUS_SUCCESS) h = NULL;
    if (h && cb.get_version(h, &v) == CUBLAS_STATUS_SUCCESS)
        snprintf(line, sizeof line, "cuBLAS %d.%d.%d", v / 10000, v / 100 % 100, v % 100);
    else
        snprintf(line, sizeof line, "cuBLAS (version unknown)");
    if (h && h != handle) cb.destroy(h);
    return line;
}

extern "C" int pcg_blas_set_math(int mode)
{
    if (mode != PCG_MATH_FP32 && mode != PCG_MATH_TF32 && mode != PCG_MATH_BF16) {
        pcg_cuda_set_error("blas_set_math: unknown matmul mode %d", mode);
        return -1;
    }
    math_mode = mode;
    if (handle) BLAS_CK(cb.set_math_mode(handle, cublas_math(mode)), "cublasSetMathMode");
    return 0;
}

int pcg_blas_prepare(void)
{
    return cublas_fns() && !blas() ? -1 : 0;
}

int pcg_blas_math(int *cublas)
{
    if (cublas) *cublas = cublas_fns() != NULL;
    return math_mode;
}

/* Row-major C[m,n] = alpha op(A) op(B) + beta C in the current mode, A
 * m x k (trans_a: stored k x m), B k x n (trans_b: stored n x k).  With
 * cuBLAS: cublasSgemm for fp32 and TF32 (the handle's math mode),
 * cublasGemmEx with fp32 storage and bf16 tensor-core products for bf16. */
static int gemm(int trans_a, int trans_b, int m, int n, int k, float alpha, const float *A, const float *B,
                float beta, float *C)
{
    if (!cublas_fns()) return pcg_sgemm_tiled(trans_a, trans_b, m, n, k, alpha, A, B, beta, C, math_mode);
    cublasHandle_t h = blas();
    if (!h) return -1;
    /* column-major: B's op first, then A's, each with its leading dimension */
    cublasOperation_t op_b = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, op_a = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    int ld_b = trans_b ? k : n, ld_a = trans_a ? m : k;
    if (math_mode == PCG_MATH_BF16)
        BLAS_CK(cb.gemm_ex(h, op_b, op_a, n, m, k, &alpha, B, CUDA_R_32F, ld_b, A, CUDA_R_32F, ld_a, &beta, C,
                           CUDA_R_32F, n, CUBLAS_COMPUTE_32F_FAST_16BF, CUBLAS_GEMM_DEFAULT),
                "cublasGemmEx");
    else
        BLAS_CK(cb.sgemm(h, op_b, op_a, n, m, k, &alpha, B, ld_b, A, ld_a, &beta, C, n), "cublasSgemm");
    return 0;
}

/* C[m,n] = alpha * A[m,k] B[k,n] + beta * C */
extern "C" int pcg_sgemm_nn(int m, int n, int k, float alpha, const float *A, const float *B, float beta, float *C)
{
    return gemm(0, 0, m, n, k, alpha, A, B, beta, C);
}

/* C[m,n] = alpha * A[m,k] B[n,k]^T + beta * C */
extern "C" int pcg_sgemm_nt(int m, int n, int k, float alpha, const float *A, const float *B, float beta, float *C)
{
    return gemm(0, 1, m, n, k, alpha, A, B, beta, C);
}

/* C[m,n] = alpha * A[k,m]^T B[k,n] + beta * C */
extern "C" int pcg_sgemm_tn(int m, int n, int k, float alpha, const float *A, const float *B, float beta, float *C)
{
    return gemm(1, 0, m, n, k, alpha, A, B, beta, C);
}
