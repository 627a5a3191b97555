/* Reward modules in the simulation library (docs/cuda.md): no device runs
 * their kernel, so the same reward source, compiled for the CPU with libtcc
 * and confined as the CPU trainer confines it, stands in for the kernel,
 * called for every environment of each launch.  With the device library
 * these do nothing. */
#ifndef PCG_SIM_REWARD_H
#define PCG_SIM_REWARD_H
#include "backend.h"
#include "level.h"
#include "reward_jit.h"

typedef float (*sim_level_reward)(const level_t *prev, const level_t *curr, void *ctx);

/* The host reward of every reward module from now on: fn(prev, curr, ctx)
 * per environment.  0, or -1 (api->last_error() says why). */
int sim_reward_use(const pcg_cuda_api *api, sim_level_reward fn, void *ctx);

/* In the simulation: compile src for the CPU inside the confinement of the
 * CPU trainer (the compile stage, then the run stage: this process runs
 * untrusted code from here on; fd is where a confinement failure is
 * reported) and use it as above.  *prog (to free with reward_prog_free)
 * is NULL with the device library, which needs none of this.  0, or -1
 * with one line in err. */
int sim_reward_confined(const pcg_cuda_api *api, const char *src, int fd, reward_prog **prog, char *err, int errlen);

#endif
