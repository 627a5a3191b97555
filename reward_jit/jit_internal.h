/* Internal to reward_jit/: the compilers as they run inside a worker
 * process (reward_jit/sandbox.c starts the workers). */
#ifndef PCG_JIT_INTERNAL_H
#define PCG_JIT_INTERNAL_H
#include <stddef.h>
#include <stdint.h>

/* The job of the compile-cuda worker: this header, then the source (the
 * caller has scanned it: reward_scan). */
typedef struct {
    char arch[16];
    int32_t max_side;
    int32_t unscanned; /* 1: compile without reward_scan -- only the sandbox's
                        * tests set it, to show the filter alone keeps files shut */
    double timeout_s;
} nvrtc_job;

/* NVRTC in this process (reward_compile_nvrtc_ex's contract).  Only a
 * confined worker calls it. */
int nvrtc_compile_here(const char *src, const char *arch, int max_side, int scan, char **cubin, size_t *cubin_len,
                       char *err, int errlen);

#endif
