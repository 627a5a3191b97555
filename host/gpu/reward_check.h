/* The checks of `pcgrllm check-reward`, in order: the reward validated in
 * the sandbox on one episode of random play (reward_jit/sandbox.c), with an
 * NVRTC compile beside it where NVRTC is installed; with cuda, an NVRTC
 * compile for every architecture the engine builds for and, on a machine
 * with a device, the same episode on the device, every reward compared
 * with the CPU's (reward_gpu.h). */
#ifndef PCG_REWARD_CHECK_H
#define PCG_REWARD_CHECK_H
#include <stdint.h>
#include "reward_gpu.h"
#include "reward_jit.h"

typedef struct {
    int variant, envs;
    uint64_t seed;
    double timeout_s;
    int cuda; /* every architecture, and the device beside the CPU */
    /* with cuda: where to write each architecture's cubin as ARCH.cubin
     * (a module built ahead of time, for a GPU machine without NVRTC);
     * NULL: nowhere */
    const char *cubin_dir;
} reward_check_opts;

#define REWARD_CHECK_MAX_ARCHS 8

typedef struct {
    reward_stats stats;        /* the CPU's rewards */
    int gpu_checked;           /* NVRTC compiled it */
    char nv_why[300];          /* why there is no NVRTC ("" when there is) */
    double check_s;            /* wall time of the sandbox's check */
    int n_archs;               /* with cuda: the architectures compiled for */
    const char *archs[REWARD_CHECK_MAX_ARCHS];
    double arch_s[REWARD_CHECK_MAX_ARCHS]; /* NVRTC seconds per architecture */
    reward_gpu_result gpu;     /* with cuda: the device's run */
    char reason[1536];         /* why the reward is refused */
} reward_check_result;

/* 0 accepted; -1 refused, with r->reason; -2 not checked: cuda without
 * NVRTC (r->nv_why says why). */
int reward_check(const char *src, const reward_check_opts *o, reward_check_result *r);

#endif
