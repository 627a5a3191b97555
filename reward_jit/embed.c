/* The headers that reward code is compiled against, embedded in the binary
 * so that the JIT needs no source tree at run time.  The #includes make the
 * build's dependency files track them; the assembler copies their bytes
 * (paths are relative to the source root, where make runs). */
#include "hd.h"
#include "bitrows.h"
#include "level.h"
#include "reward_api.h"

#define PCG_EMBED(sym, path)                                                                             \
    __asm__(".section .rodata\n"                                                                         \
            ".global " #sym "\n"                                                                         \
            ".type " #sym ", @object\n" #sym ":\n"                                                       \
            ".incbin \"" path "\"\n"                                                                     \
            ".byte 0\n"                                                                                  \
            ".previous\n")

PCG_EMBED(pcg_embed_hd_h, "host/core/hd.h");
PCG_EMBED(pcg_embed_bitrows_h, "host/core/bitrows.h");
PCG_EMBED(pcg_embed_level_h, "host/core/level.h");
PCG_EMBED(pcg_embed_reward_api_h, "reward_jit/reward_api.h");
