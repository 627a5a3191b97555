/* Philox4x32-10 counter-based generator, laid out exactly as cuRAND's
 * curandStatePhilox4_32_10 so that the CPU and GPU backends draw the same
 * numbers:  draw k of subsequence s under seed K is
 *     philox(ctr = {k/4 lo, k/4 hi, s lo, s hi}, key = {K lo, K hi})[k % 4]
 * which is what curand_init(K, s, 0, &st) followed by k+1 calls to curand()
 * returns last. */
#ifndef PCG_PHILOX_H
#define PCG_PHILOX_H
#include "hd.h"

typedef struct { pcg_u32 v[4]; } pcg_u32x4;

PCG_HD pcg_u32x4 philox4x32_10(pcg_u32x4 c, pcg_u32 k0, pcg_u32 k1)
{
    for (int round = 0; round < 10; round++) {
        pcg_u64 p0 = (pcg_u64)0xD2511F53u * c.v[0];
        pcg_u64 p1 = (pcg_u64)0xCD9E8D57u * c.v[2];
        pcg_u32 hi0 = (pcg_u32)(p0 >> 32), lo0 = (pcg_u32)p0;
        pcg_u32 hi1 = (pcg_u32)(p1 >> 32), lo1 = (pcg_u32)p1;
        pcg_u32x4 r;
        r.v[0] = hi1 ^ c.v[1] ^ k0;
        r.v[1] = lo1;
        r.v[2] = hi0 ^ c.v[3] ^ k1;
        r.v[3] = lo0;
        c = r;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    return c;
}

/* The block of four draws that holds draw k of subsequence s. */
PCG_HD pcg_u32x4 philox_block(pcg_u64 seed, pcg_u64 subseq, pcg_u64 block)
{
    pcg_u32x4 c;
    c.v[0] = (pcg_u32)block;
    c.v[1] = (pcg_u32)(block >> 32);
    c.v[2] = (pcg_u32)subseq;
    c.v[3] = (pcg_u32)(subseq >> 32);
    return philox4x32_10(c, (pcg_u32)seed, (pcg_u32)(seed >> 32));
}

/* A sequential reader over one subsequence, cheap for runs of draws. */
typedef struct {
    pcg_u64 seed, subseq, pos; /* pos = index of the next draw */
    pcg_u32x4 buf;             /* block holding draw pos (valid when pos%4 != 0) */
} philox_stream;

PCG_HD void philox_stream_init(philox_stream *s, pcg_u64 seed, pcg_u64 subseq, pcg_u64 pos)
{
    s->seed = seed;
    s->subseq = subseq;
    s->pos = pos;
    if (pos & 3) s->buf = philox_block(seed, subseq, pos >> 2);
}

PCG_HD pcg_u32 philox_next(philox_stream *s)
{
    if ((s->pos & 3) == 0) s->buf = philox_block(s->seed, s->subseq, s->pos >> 2);
    return s->buf.v[s->pos++ & 3];
}

/* Uniform integer in [0, n) from one 32-bit draw (multiply-shift, exact in
 * integer arithmetic on every backend). */
PCG_HD pcg_u32 philox_below(pcg_u32 r, pcg_u32 n)
{
    return (pcg_u32)(((pcg_u64)r * n) >> 32);
}

/* Uniform float in [0, 1) with 24 bits. */
PCG_HD float philox_unit(pcg_u32 r)
{
    return (float)(r >> 8) * (1.0f / 16777216.0f);
}

#endif
