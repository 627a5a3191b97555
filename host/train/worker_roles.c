/* The worker roles: see worker_roles.h. */
#include "worker_roles.h"
#include "reward_jit.h"
#include "train_worker.h"

const worker_role pcg_worker_roles[] = {
    {"compile-c", reward_worker_compile_c, 0},
    {"compile-cuda", reward_worker_compile_cuda, 0},
    {"validate", reward_worker_validate, 1},
    {"gpu-rewards", reward_worker_gpu_rewards, 1},
    {"train", train_worker_main, 1},
};
const int pcg_n_worker_roles = (int)(sizeof pcg_worker_roles / sizeof pcg_worker_roles[0]);
