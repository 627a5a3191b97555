/* The level generation of docs/method.md#evaluation on either backend: n
 * environments reset from a seed (the same starting maps every time), the
 * trained policy samples its actions for one episode, and the levels it
 * leaves (cfg's rules: after 767 of the 768 edits, or after all of them
 * without the reset) are returned.  On the
 * CPU this is ppo_play_episode; on the device the CUDA backend's
 * play_episode (the same maps, draws and rules; a sampled action can differ
 * only where a float difference in the logits moves it across a sampling
 * boundary). */
#ifndef PCG_POLICY_PLAY_H
#define PCG_POLICY_PLAY_H
#include <stdint.h>
#include "nn.h"
#include "ppo.h"

/* backend: BACKEND_CPU, or BACKEND_CUDA after backend_select chose it.
 * maps: n levels of cfg's size.  0, or -1 with one line in err. */
int policy_play_episode(int backend, const nn_t *nn, const ppo_config *cfg, int n, uint64_t seed,
                        uint64_t action_seed, unsigned char *maps, char *err, int errlen);

#endif
