/* The worker roles: see worker_roles.h. */
#include "worker_roles.h"
#include "batch_reward.h"
#include "reward_jit.h"
#include "train_worker.h"

const worker_role pcg_worker_roles[] = {
    {"compile-c", reward_worker_compile_c, 0, NULL},
    {"compile-cuda", reward_worker_compile_cuda, 0, NULL},
    {"validate", reward_worker_validate, 1, NULL},
    {"gpu-rewards", reward_worker_gpu_rewards, 1, NULL},
    {"train", train_worker_main, 1, NULL},
    {BATCH_REWARD_ROLE, NULL, 1, reward_worker_batch},
};
const int pcg_n_worker_roles = (int)(sizeof pcg_worker_roles / sizeof pcg_worker_roles[0]);
