/* cuRAND's Philox4_32_10 device generator as the simulation build sees it:
 * the engine's own reader of the same stream (host/core/philox.h, laid out
 * as cuRAND's).  So in the simulation the test that cuRAND and philox.h
 * agree compares philox.h with itself; only a device tests that agreement
 * (docs/cuda.md). */
#ifndef PCG_SIM_CURAND_KERNEL_H
#define PCG_SIM_CURAND_KERNEL_H
#include "philox.h"

struct curandStatePhilox4_32_10 {
    philox_stream s;
};
typedef struct curandStatePhilox4_32_10 curandStatePhilox4_32_10_t;

static inline void curand_init(unsigned long long seed, unsigned long long subsequence, unsigned long long offset,
                               curandStatePhilox4_32_10_t *state)
{
    philox_stream_init(&state->s, seed, subsequence, offset);
}

static inline unsigned int curand(curandStatePhilox4_32_10_t *state)
{
    return philox_next(&state->s);
}

#endif
