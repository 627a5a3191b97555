/* `pcgrllm device --libraries`: the C library and every library the CUDA
 * backend would use here, each with the file it comes from, found the way
 * the backend finds them (no device needed, none initialised).  A GPU
 * check prints this first, so that its log says what it ran against. */
#include "device_bench.h"
#include "backend.h"
#include "cuda_libs.h"
#include "reward_jit.h"
_Static_assert(PCG_REWARD_BLOCK == REWARD_KERNEL_BLOCK, "the reward kernel is launched with the block it is built for");
#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <stdio.h>

#ifndef PCG_CUBLAS_MAJOR
#error "PCG_CUBLAS_MAJOR (the cuBLAS soname's major version) comes from the Makefile"
#endif

int device_libraries(void)
{
    char path[4096], why[700];
    printf("glibc: %s\n", gnu_get_libc_version());
    void *h = cuda_open_file("libcuda.so.1", path, sizeof path, why, sizeof why);
    if (h) printf("driver: %s\n", path);
    else printf("driver: not found: %s\n", why);
    const pcg_cuda_api *api = backend_cuda_load(why, sizeof why);
    if (api)
        printf("backend: %s (%s library, ABI %d)\n", backend_cuda_path(), api->simulated ? "simulation" : "device",
               api->abi_version);
    else
        printf("backend: not loaded: %s\n", why);
    h = cuda_open_cublas(PCG_CUBLAS_MAJOR, path, sizeof path, why, sizeof why);
    if (h) {
        printf("cuBLAS: %s\n", path);
        dlclose(h);
    } else {
        printf("cuBLAS: not found: %s; the built-in tiled sgemm stands in\n", why);
    }
    if (reward_nvrtc_available(why, sizeof why))
        printf("NVRTC: %s (%s)\n", reward_nvrtc_path(), reward_nvrtc_version());
    else
        printf("NVRTC: not found: %s\n", why);
    return 0;
}
