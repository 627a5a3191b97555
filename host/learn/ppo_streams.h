/* The trainer's random streams and its action sampling, written once for
 * the CPU trainer (host/learn/ppo.c) and the device kernels (cuda/ppo.cu,
 * cuda/play.cu), so that both backends draw the same actions and the same
 * minibatches from a seed.  Every stream is Philox4x32-10 (host/core/philox.h)
 * on its own subsequence: environment maps use the low subsequences
 * (host/core/env.c), then: */
#ifndef PCG_PPO_STREAMS_H
#define PCG_PPO_STREAMS_H
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include "hd.h"
#include "philox.h"

/* environment e's policy actions: subsequence PPO_STREAM_ACTIONS + e */
#define PPO_STREAM_ACTIONS (3ull << 32)
/* minibatch shuffles: subsequence PPO_STREAM_SHUFFLE + update * epochs + epoch */
#define PPO_STREAM_SHUFFLE (4ull << 32)

/* The uniform draw in [0, 1) for environment e's n-th policy action. */
PCG_HD float ppo_stream_draw(pcg_u64 seed, int e, pcg_u64 n)
{
    pcg_u32x4 b = philox_block(seed, PPO_STREAM_ACTIONS + (pcg_u64)e, n >> 2);
    return philox_unit(b.v[n & 3]);
}

/* The action of softmax(z[A]) at the uniform draw u (inverse CDF, in
 * double); its log-probability into *logp. */
PCG_HD int ppo_stream_sample(const float *z, int A, float u, float *logp)
{
    double mx = z[0], sum = 0;
    for (int j = 1; j < A; j++)
        if (z[j] > mx) mx = z[j];
    for (int j = 0; j < A; j++) sum += exp(z[j] - mx);
    double target = u * sum, acc = 0;
    int a = A - 1;
    for (int j = 0; j < A; j++) {
        acc += exp(z[j] - mx);
        if (target < acc) {
            a = j;
            break;
        }
    }
    *logp = (float)(z[a] - mx - log(sum));
    return a;
}

/* perm = a uniformly shuffled 0..N-1 (Fisher-Yates on the stream). */
PCG_HD void ppo_stream_shuffle(uint32_t *perm, size_t N, pcg_u64 seed, pcg_u64 subseq)
{
    philox_stream s;
    philox_stream_init(&s, seed, subseq, 0);
    for (size_t i = 0; i < N; i++) perm[i] = (uint32_t)i;
    for (size_t i = N - 1; i > 0; i--) {
        size_t j = philox_below(philox_next(&s), (pcg_u32)(i + 1));
        uint32_t tmp = perm[i];
        perm[i] = perm[j];
        perm[j] = tmp;
    }
}

#endif
