/* Internal to reward_jit/: the compilers as they run inside a worker
 * process (reward_jit/sandbox.c starts the workers). */
#ifndef PCG_JIT_INTERNAL_H
#define PCG_JIT_INTERNAL_H
#include <stddef.h>

/* NVRTC in this process (reward_compile_nvrtc_ex's contract).  Only a
 * confined worker calls it. */
int nvrtc_compile_here(const char *src, const char *arch, int max_side, char **cubin, size_t *cubin_len, char *err,
                       int errlen);

#endif
