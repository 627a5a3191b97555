/* The three row-major sgemm wrappers every matmul of the backend goes
 * through (cuBLAS is column-major: a row-major C = A*B is the column-major
 * C^T = B^T * A^T, so the operands swap), and the TF32 switch. */
#include "common.cuh"
#include <cublas_v2.h>

static cublasHandle_t handle;
static bool tf32;

static cublasHandle_t blas(void)
{
    if (!handle) {
        cublasStatus_t s = cublasCreate(&handle);
        if (s != CUBLAS_STATUS_SUCCESS) {
            pcg_cuda_set_error("cublasCreate: %s", cublasGetStatusString(s));
            handle = NULL;
            return NULL;
        }
        cublasSetStream(handle, pcg_cuda_stream());
        size_t ws_bytes = 0;
        void *ws = pcg_arena_blas_workspace(&ws_bytes);
        if (!ws || cublasSetWorkspace(handle, ws, ws_bytes) != CUBLAS_STATUS_SUCCESS) {
            if (ws) pcg_cuda_set_error("cublasSetWorkspace failed");
            cublasDestroy(handle);
            handle = NULL;
            return NULL;
        }
        cublasSetMathMode(handle, tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH);
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

extern "C" int pcg_blas_set_tf32(int on)
{
    tf32 = on != 0;
    if (handle)
        BLAS_CK(cublasSetMathMode(handle, tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
    return 0;
}

/* C[m,n] = alpha * A[m,k] B[k,n] + beta * C */
extern "C" int pcg_sgemm_nn(int m, int n, int k, float alpha, const float *A, const float *B, float beta, float *C)
{
    cublasHandle_t h = blas();
    if (!h) return -1;
    BLAS_CK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, B, n, A, k, &beta, C, n));
    return 0;
}

/* C[m,n] = alpha * A[m,k] B[n,k]^T + beta * C */
extern "C" int pcg_sgemm_nt(int m, int n, int k, float alpha, const float *A, const float *B, float beta, float *C)
{
    cublasHandle_t h = blas();
    if (!h) return -1;
    BLAS_CK(cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &alpha, B, k, A, k, &beta, C, n));
    return 0;
}

/* C[m,n] = alpha * A[k,m]^T B[k,n] + beta * C */
extern "C" int pcg_sgemm_tn(int m, int n, int k, float alpha, const float *A, const float *B, float beta, float *C)
{
    cublasHandle_t h = blas();
    if (!h) return -1;
    BLAS_CK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, n, m, k, &alpha, B, n, A, m, &beta, C, n));
    return 0;
}
