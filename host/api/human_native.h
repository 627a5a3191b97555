/* The human rewards of rewards/human/ compiled by the C compiler into the
 * shared library (make lib), for the environment of the C ABI: libtcc,
 * which the engine otherwise compiles them with, cannot go into a shared
 * object (Debian ships it without -fPIC).  The same source, the same
 * reward API (reward_jit/reward_api.h) over the same level core. */
#ifndef PCG_HUMAN_NATIVE_H
#define PCG_HUMAN_NATIVE_H
#include "env.h"

#define HUMAN_NATIVE_SCENARIOS 4

/* The reward of scenario 1..4 as env.h's reward_fn (ctx unused); NULL for
 * any other number. */
reward_fn human_native_reward(int scenario);

#endif
