/* Finding NVIDIA's libraries (NVRTC, cuBLAS) where the loader's own search
 * does not look: the CUDA toolkit's lib64 folders and the wheels of a
 * pip-installed CUDA (nvidia/<part>/lib or nvidia/cuXY/lib inside a Python
 * environment's site-packages), as on machines whose only CUDA is the one
 * PyTorch or JAX brought. */
#ifndef PCG_CUDA_LIBS_H
#define PCG_CUDA_LIBS_H
#include <stddef.h>

/* The newest file named like pattern ("libnvrtc.so.*") in those folders,
 * parts naming the wheel folders to look in ("cuda_nvrtc", "cublas").
 * 0 and its path, or -1 if none. */
int cuda_find_library(const char *pattern, const char *const *parts, char *path, size_t len);

#endif
