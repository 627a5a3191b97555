/* The driver API as the simulation build sees it: only the module calls the
 * backend makes for reward kernels (cuda/env.cu), reached, as on a device,
 * through cudaGetDriverEntryPointByVersion (cuda/sim/runtime.cpp). */
#ifndef PCG_SIM_CUDA_H
#define PCG_SIM_CUDA_H
#include "cuda_runtime.h"

enum cudaError_enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_INVALID_VALUE = 1,
    CUDA_ERROR_INVALID_IMAGE = 200,
    CUDA_ERROR_INVALID_HANDLE = 400,
    CUDA_ERROR_NOT_FOUND = 500,
    CUDA_ERROR_LAUNCH_FAILED = 719,
};
typedef enum cudaError_enum CUresult;
typedef struct pcg_sim_module *CUmodule;
typedef struct pcg_sim_function *CUfunction;
typedef cudaStream_t CUstream;

#endif
