/* Qualifier for code shared by gcc (CPU backend), nvcc (kernels) and NVRTC
 * (runtime reward kernels).  Everything in the level core is written once
 * and marked PCG_HD. */
#ifndef PCG_HD_H
#define PCG_HD_H

#if defined(__CUDACC_RTC__)
#define PCG_HD static __device__ inline
#elif defined(__CUDACC__)
#define PCG_HD static __host__ __device__ inline
#else
#define PCG_HD static inline
#endif

typedef unsigned int pcg_u32;
typedef unsigned long long pcg_u64;

#endif
