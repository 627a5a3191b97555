/* The three row-major sgemm wrappers every matmul of the backend goes
 * through (cuBLAS is column-major: a row-major C = A*B is the column-major
 * C^T = B^T * A^T, so the operands swap), and the matmul mode: plain fp32,
 * TF32 tensor cores, or bf16 tensor cores.  Storage stays fp32 in every
 * mode; only the products inside cuBLAS are rounded. */
#include "common.cuh"
#include <cublas_v2.h>
#include <stdio.h>

static cublasHandle_t handle;
static int math_mode = PCG_MATH_FP32;

static cublasHandle_t blas(void)
{
    if (!handle) {
        cublasStatus_t s = cublasCreate(&handle);
        if (s != CUBLAS_STATUS_SUCCESS) {
            pcg_cuda_set_error("cublasCreate: %s", cublasGetStatusString(s));
            handle = NULL;
            return NULL;
        }
        /* each step's failure is reported as itself, once */
        size_t ws_bytes = 0;
        const char *what = NULL;
        if (pcg_cuda_stream_check()) {
            what = ""; /* the stream's own reason is recorded */
        } else if ((s = cublasSetStream(handle, pcg_cuda_stream())) != CUBLAS_STATUS_SUCCESS) {
            what = "cublasSetStream";
        } else {
            void *ws = pcg_arena_blas_workspace(&ws_bytes);
            if (!ws) what = ""; /* the arena's reason is recorded */
            else if ((s = cublasSetWorkspace(handle, ws, ws_bytes)) != CUBLAS_STATUS_SUCCESS) what = "cublasSetWorkspace";
            else if ((s = cublasSetMathMode(handle, math_mode == PCG_MATH_TF32 ? CUBLAS_TF32_TENSOR_OP_MATH
                                                                                 : CUBLAS_DEFAULT_MATH)) !=
                     CUBLAS_STATUS_SUCCESS)
                what = "cublasSetMathMode";
        }
        if (what) {
            if (*what) pcg_cuda_set_error("%s: %s", what, cublasGetStatusString(s));
            cublasDestroy(handle);
            handle = NULL;
            return NULL;
        }
    }
    return handle;
}

#define BLAS_CK(call)                                                                      \
    do {                                                                                   \
        cublasStatus_t s_ = (call);                                                        \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                 \
            pcg_cuda_set_error("%s: %s", #call, cublasGetStatusString(s_));                \
            return -1;                                                                     \
        }                                                                                  \
    } while (0)

extern "C" const char *pcg_blas_in_use(void)
{
#ifdef PCG_SIM
    return "simulated cuBLAS (OpenBLAS, TF32 and bf16 by input rounding)";
#endif
    static char line[64];
    int v = 0;
    cublasHandle_t h = blas();
    if (!h || cublasGetVersion(h, &v) != CUBLAS_STATUS_SUCCESS) return "cuBLAS (version unknown)";
    snprintf(line, sizeof line, "cuBLAS %d.%d.%d", v / 10000, v / 100 % 100, v % 100);
    return line;
}

extern "C" int pcg_blas_set_math(int mode)
{
    if (mode != PCG_MATH_FP32 && mode != PCG_MATH_TF32 && mode != PCG_MATH_BF16) {
        pcg_cuda_set_error("blas_set_math: unknown matmul mode %d", mode);
        return -1;
    }
    math_mode = mode;
    if (handle)
        BLAS_CK(cublasSetMathMode(handle, mode == PCG_MATH_TF32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
    return 0;
}

/* Column-major C = op(A) op(B) in the current mode: cublasSgemm for fp32
 * and TF32 (the handle's math mode), cublasGemmEx with fp32 storage and
 * bf16 tensor-core products for bf16. */
static int gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, float alpha,
                const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc)
{
    if (math_mode == PCG_MATH_BF16)
        BLAS_CK(cublasGemmEx(h, ta, tb, m, n, k, &alpha, A, CUDA_R_32F, lda, B, CUDA_R_32F, ldb, &beta, C, CUDA_R_32F,
                             ldc, CUBLAS_COMPUTE_32F_FAST_16BF, CUBLAS_GEMM_DEFAULT));
    else
        BLAS_CK(cublasSgemm(h, ta, tb, m, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc));
    return 0;
}

/* C[m,n] = alpha * A[m,k] B[k,n] + beta * C */
extern "C" int pcg_sgemm_nn(int m, int n, int k, float alpha, const float *A, const float *B, float beta, float *C)
{
    cublasHandle_t h = blas();
    if (!h) return -1;
    return gemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, alpha, B, n, A, k, beta, C, n);
}

/* C[m,n] = alpha * A[m,k] B[n,k]^T + beta * C */
extern "C" int pcg_sgemm_nt(int m, int n, int k, float alpha, const float *A, const float *B, float beta, float *C)
{
    cublasHandle_t h = blas();
    if (!h) return -1;
    return gemm(h, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, alpha, B, k, A, k, beta, C, n);
}

/* C[m,n] = alpha * A[k,m]^T B[k,n] + beta * C */
extern "C" int pcg_sgemm_tn(int m, int n, int k, float alpha, const float *A, const float *B, float beta, float *C)
{
    cublasHandle_t h = blas();
    if (!h) return -1;
    return gemm(h, CUBLAS_OP_N, CUBLAS_OP_T, n, m, k, alpha, B, n, A, m, beta, C, n);
}
