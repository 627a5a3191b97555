/* What the kernels of cuda/ use of CUDA's bf16 type, for the simulation:
 * the 2-byte storage and the conversions by bit pattern.  A value the
 * kernels store is already rounded to bf16 (pcg_round_operand), so moving
 * its upper 16 bits is the whole conversion. */
#ifndef PCG_SIM_CUDA_BF16_H
#define PCG_SIM_CUDA_BF16_H
#include <string.h>

struct __nv_bfloat16 {
    unsigned short bits;
};

static inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short u)
{
    __nv_bfloat16 h;
    h.bits = u;
    return h;
}

static inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 h)
{
    return h.bits;
}

static inline float __bfloat162float(__nv_bfloat16 h)
{
    unsigned u = (unsigned)h.bits << 16;
    float x;
    memcpy(&x, &u, 4);
    return x;
}

#endif
