/* The sample reward as a reward module with the entry point the CUDA
 * backend launches (PCG_REWARD_KERNEL in host/gpu/backend.h), built by
 * `make cuda` into BUILD/cuda/reward_sample.fatbin. */
#include "reward_sample.h"

extern "C" __global__ void pcg_reward_kernel(int n, int h, int w, const unsigned char *prev,
                                             const unsigned char *curr, float *rewards)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    size_t off = (size_t)i * h * w;
    level_t p = {h, w, (unsigned char *)prev + off}, c = {h, w, (unsigned char *)curr + off};
    rewards[i] = sample_reward(&p, &c);
}
