/* Host rewards for the simulation library: see sim_reward.h. */
#include "sim_reward.h"
#include "confine.h"
#include <stdio.h>

typedef struct {
    sim_level_reward fn;
    void *ctx;
} host_reward;

/* one registration per process: the library holds a single host reward */
static host_reward current;

static int batch(void *ctx, int n, int h, int w, const unsigned char *prev, const unsigned char *curr, float *rewards)
{
    const host_reward *r = ctx;
    size_t cells = (size_t)h * w;
    for (int i = 0; i < n; i++) {
        level_t p = {h, w, (unsigned char *)prev + (size_t)i * cells};
        level_t c = {h, w, (unsigned char *)curr + (size_t)i * cells};
        rewards[i] = r->fn(&p, &c, r->ctx);
    }
    return 0;
}

int sim_reward_use(const pcg_cuda_api *api, sim_level_reward fn, void *ctx)
{
    if (!api->simulated) return 0;
    current.fn = fn;
    current.ctx = ctx;
    return api->set_host_reward(fn ? batch : NULL, &current);
}

static float call_prog(const level_t *prev, const level_t *curr, void *prog)
{
    return reward_prog_call(prev, curr, prog);
}

int sim_reward_confined(const pcg_cuda_api *api, const char *src, int fd, reward_prog **prog, char *err, int errlen)
{
    *prog = NULL;
    if (!api->simulated) return 0;
    if (confine_seccomp(CONFINE_COMPILE, fd, 1))
        return snprintf(err, (size_t)errlen, "the reward's confinement could not be set up"), -1;
    if (!(*prog = reward_compile_cpu(src, err, errlen))) return -1;
    if (sim_reward_use(api, call_prog, *prog)) {
        snprintf(err, (size_t)errlen, "%s", api->last_error());
        return -1;
    }
    if (confine_seccomp(CONFINE_RUN, fd, 1))
        return snprintf(err, (size_t)errlen, "the reward's confinement could not be set up"), -1;
    return 0;
}
