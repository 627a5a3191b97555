/* The cuBLAS calls of cuda/blas.cu for the simulation, over OpenBLAS.
 * Column-major as cuBLAS, so a swapped operand or transpose flag in
 * blas.cu gives the wrong product here as on a device.  The tensor-core
 * modes are modelled by their input rounding: TF32 keeps 10 mantissa bits,
 * bf16 7, each rounded to nearest even, and the products accumulate in
 * fp32 (OpenBLAS) -- close to, not bit-equal with, a device's kernels. */
#include "cublas_v2.h"
#include "sim.h"
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

struct pcg_sim_cublas {
    cublasMath_t math;
};

cublasStatus_t cublasCreate_v2(cublasHandle_t *h)
{
    *h = new pcg_sim_cublas{CUBLAS_DEFAULT_MATH};
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t h)
{
    delete h;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetVersion_v2(cublasHandle_t, int *version)
{
    *version = 0;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t h, cudaStream_t)
{
    return h ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t h, void *, size_t)
{
    return h ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t h, cublasMath_t mode)
{
    if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (mode != CUBLAS_DEFAULT_MATH && mode != CUBLAS_TF32_TENSOR_OP_MATH) return CUBLAS_STATUS_INVALID_VALUE;
    h->math = mode;
    return CUBLAS_STATUS_SUCCESS;
}

const char *cublasGetStatusString(cublasStatus_t s)
{
    switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    }
    return "CUBLAS_STATUS_UNKNOWN";
}

/* x rounded to nearest even with `keep` of fp32's 23 mantissa bits. */
static float round_mantissa(float x, int keep)
{
    if (!isfinite(x)) return x;
    uint32_t u;
    memcpy(&u, &x, 4);
    int drop = 23 - keep;
    uint32_t half = 1u << (drop - 1), lsb = (u >> drop) & 1u;
    u = (u + half - 1 + lsb) & ~((1u << drop) - 1);
    memcpy(&x, &u, 4);
    return x;
}

/* op(X) of a column-major rows x cols matrix with leading dimension ld,
 * copied and rounded. */
static void rounded_copy(std::vector<float> &out, const float *X, int rows, int cols, int ld, int keep)
{
    out.resize((size_t)ld * cols);
    for (int c = 0; c < cols; c++)
        for (int r = 0; r < rows; r++) out[(size_t)c * ld + r] = round_mantissa(X[(size_t)c * ld + r], keep);
}

static void gemm_now(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, float alpha, const float *A,
                     int lda, const float *B, int ldb, float beta, float *C, int ldc, int keep);

/* A checked product, run now or kept by a capture. */
static cublasStatus_t gemm(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, float alpha,
                           const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc, int keep)
{
    if (m < 0 || n < 0 || k < 0 || (ta != CUBLAS_OP_N && ta != CUBLAS_OP_T) ||
        (tb != CUBLAS_OP_N && tb != CUBLAS_OP_T))
        return CUBLAS_STATUS_INVALID_VALUE;
    int a_rows = ta == CUBLAS_OP_N ? m : k, b_rows = tb == CUBLAS_OP_N ? k : n;
    if (lda < (a_rows > 1 ? a_rows : 1) || ldb < (b_rows > 1 ? b_rows : 1) || ldc < (m > 1 ? m : 1))
        return CUBLAS_STATUS_INVALID_VALUE;
    if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;
    if (pcg_sim::capturing()) {
        /* the scalars as a capture keeps them, by value */
        pcg_sim::record([=] { gemm_now(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, keep); });
        return CUBLAS_STATUS_SUCCESS;
    }
    gemm_now(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, keep);
    return CUBLAS_STATUS_SUCCESS;
}

/* The product of checked arguments, and its work. */
static void gemm_now(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, float alpha, const float *A,
                     int lda, const float *B, int ldb, float beta, float *C, int ldc, int keep)
{
    int a_rows = ta == CUBLAS_OP_N ? m : k, a_cols = ta == CUBLAS_OP_N ? k : m;
    int b_rows = tb == CUBLAS_OP_N ? k : n, b_cols = tb == CUBLAS_OP_N ? n : k;
    std::vector<float> ra, rb;
    if (keep < 23) {
        rounded_copy(ra, A, a_rows, a_cols, lda, keep);
        rounded_copy(rb, B, b_rows, b_cols, ldb, keep);
        A = ra.data();
        B = rb.data();
    }
    cblas_sgemm(CblasColMajor, ta == CUBLAS_OP_N ? CblasNoTrans : CblasTrans,
                tb == CUBLAS_OP_N ? CblasNoTrans : CblasTrans, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    char name[64];
    snprintf(name, sizeof name, PCG_WORK_BLAS "gemm %c%c %dx%dx%d", ta == CUBLAS_OP_N ? 'n' : 't',
             tb == CUBLAS_OP_N ? 'n' : 't', m, n, k);
    uint64_t rd = 4ull * ((uint64_t)m * k + (uint64_t)k * n + (beta != 0.0f ? (uint64_t)m * n : 0));
    pcg_sim_work_add(name, 0, rd, 4ull * m * n, 2ull * m * n * k);
}

cublasStatus_t cublasSgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                              const float *alpha, const float *A, int lda, const float *B, int ldb,
                              const float *beta, float *C, int ldc)
{
    if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
    return gemm(ta, tb, m, n, k, *alpha, A, lda, B, ldb, *beta, C, ldc,
                h->math == CUBLAS_TF32_TENSOR_OP_MATH ? 10 : 23);
}

cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                            const void *alpha, const void *A, cudaDataType Atype, int lda, const void *B,
                            cudaDataType Btype, int ldb, const void *beta, void *C, cudaDataType Ctype, int ldc,
                            cublasComputeType_t compute, cublasGemmAlgo_t)
{
    if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
    /* the backend's only use: fp32 storage, a reduced-precision product */
    if (Atype != CUDA_R_32F || Btype != CUDA_R_32F || Ctype != CUDA_R_32F) return CUBLAS_STATUS_NOT_SUPPORTED;
    int keep = compute == CUBLAS_COMPUTE_32F_FAST_16BF ? 7 : compute == CUBLAS_COMPUTE_32F_FAST_TF32 ? 10
               : compute == CUBLAS_COMPUTE_32F                                                  ? 23
                                                                                                : -1;
    if (keep < 0) return CUBLAS_STATUS_NOT_SUPPORTED;
    return gemm(ta, tb, m, n, k, *(const float *)alpha, (const float *)A, lda, (const float *)B, ldb,
                *(const float *)beta, (float *)C, ldc, keep);
}
