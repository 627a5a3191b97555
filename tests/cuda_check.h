/* What the device tests of the CUDA backend share: the library or the
 * device, else a skip with one line; reward modules built ahead of time;
 * the one-line check of error messages. */
#ifndef PCG_TEST_CUDA_CHECK_H
#define PCG_TEST_CUDA_CHECK_H
#include "backend.h"

/* The backend library, or skip (with one line) when it is not built. */
const pcg_cuda_api *cuda_library_or_skip(const char *test);
/* The library with a usable device, or skip with one line. */
const pcg_cuda_api *cuda_device_or_skip(const char *test);
/* 1 if s is one non-empty line (trailing newlines aside). */
int cuda_one_line(const char *s);
/* A whole file, NUL-terminated (malloc'd; its length in *len), or NULL. */
void *cuda_read_all(const char *path, long *len);
/* A module make cuda builds (rel: "cuda/reward_sample.fatbin"), looked
 * for beside the loaded library, then beside the test binary (the kit and
 * the build folder hold both), or skip with one line. */
void *cuda_prebuilt_module_or_skip(const char *test, const char *rel);
/* Largest |got - want| over the largest |want| of a tensor (host arrays). */
double cuda_tensor_err(const float *got, const float *want, size_t n);
/* An arena copy of host bytes (fails the test when it cannot). */
void *cuda_to_device(const pcg_cuda_api *api, const void *src, size_t bytes);
/* Fails the test, naming what, unless the device tensor is within tol of
 * the host one by cuda_tensor_err. */
void cuda_expect_close(const pcg_cuda_api *api, const float *dev, const float *host, size_t n, double tol,
                       const char *what);

#endif
