/* Finding NVIDIA's libraries (NVRTC, cuBLAS) where the loader's own search
 * does not look: the CUDA toolkit's lib64 folders and the wheels of a
 * pip-installed CUDA (nvidia/<part>/lib or nvidia/cuXY/lib inside a Python
 * environment's site-packages), as on machines whose only CUDA is the one
 * PyTorch or JAX brought.  Each library is looked for on its own: a CUDA 12
 * wheel layout keeps cuBLAS (nvidia/cublas/lib) and NVRTC
 * (nvidia/cuda_nvrtc/lib) in separate folders. */
#ifndef PCG_CUDA_LIBS_H
#define PCG_CUDA_LIBS_H
#include <stddef.h>

/* The newest file named like pattern ("libnvrtc.so.*") in those folders,
 * parts naming the wheel folders to look in ("cuda_nvrtc", "cublas").
 * 0 and its path, or -1 if none. */
int cuda_find_library(const char *pattern, const char *const *parts, char *path, size_t len);

/* Open one of them (RTLD_NOW | RTLD_LOCAL).  With PCGRLLM_CUDA_LIB_PATH
 * set, only its ':'-separated folders are searched, for the newest file
 * like pattern (set and empty: none, which hides the library from this
 * process); otherwise the loader's own search for each of names (a
 * NULL-terminated list of sonames or paths), then cuda_find_library.  The
 * handle and the file it came from in path, or NULL with one line in why. */
void *cuda_open_library(const char *const *names, const char *pattern, const char *const *parts, char *path,
                        size_t len, char *why, size_t whylen);

/* A file name with a '/' must name a regular file (following links) for
 * the loader to be given it.  0, or -1 with one line in why. */
int cuda_lib_file_ok(const char *file, char *why, size_t whylen);

/* dlopen file itself (after cuda_lib_file_ok); the path the loader took it from in path.  NULL
 * with dlerror's line in why. */
void *cuda_open_file(const char *file, char *path, size_t len, char *why, size_t whylen);

/* cuBLAS as the CUDA backend loads it (cuda/blas.cu; major: the soname's
 * version, "13"): PCGRLLM_CUBLAS=FILE names the file, PCGRLLM_CUBLAS=off
 * none, else libcublas.so.MAJOR by cuda_open_library.  Its RUNPATH
 * $ORIGIN finds libcublasLt beside it. */
void *cuda_open_cublas(const char *major, char *path, size_t len, char *why, size_t whylen);

#endif
