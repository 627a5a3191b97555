/* Every role a worker process of this binary plays (host/sys/worker.h):
 * the reward compilers and checks of reward_jit/, the device rewards and
 * the trainer.  Kept here, above all of them, so that sys/ knows none. */
#ifndef PCG_WORKER_ROLES_H
#define PCG_WORKER_ROLES_H
#include "worker.h"

extern const worker_role pcg_worker_roles[];
extern const int pcg_n_worker_roles;

#endif
