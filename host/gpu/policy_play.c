/* One generation episode on the backend chosen (policy_play.h). */
#include "policy_play.h"
#include "backend.h"
#include <stdio.h>

int policy_play_episode(int backend, const nn_t *nn, const ppo_config *cfg, int n, uint64_t seed,
                        uint64_t action_seed, unsigned char *maps, char *err, int errlen)
{
    if (backend == BACKEND_CUDA) {
        const pcg_cuda_api *api = backend_cuda();
        if (api->play_episode(&nn->cfg, nn->off, nn->n_params, nn->params, n, cfg->map_h, cfg->map_w, cfg->variant,
                              seed, action_seed, &cfg->rules, maps)) {
            snprintf(err, (size_t)errlen, "cuda: %s", api->last_error());
            return -1;
        }
        return 0;
    }
    if (ppo_play_episode(nn, n, cfg->map_h, cfg->map_w, cfg->variant, seed, action_seed, &cfg->rules, NULL, NULL,
                         maps, NULL)) {
        snprintf(err, (size_t)errlen, "out of memory");
        return -1;
    }
    return 0;
}
