/* What a training job will cost, measured before it starts: a short
 * warm-up of the CPU trainer at the job's settings (a few rollout steps
 * and minibatches, with a stand-in reward of trusted code; the reward's own
 * cost comes from its validation), scaled to the job's rollout length and
 * epochs.  Used by train, run and grid to say the projected wall time up
 * front and to ask before a job of many hours on the CPU. */
#ifndef PCG_TRAIN_ESTIMATE_H
#define PCG_TRAIN_ESTIMATE_H
#include "ppo.h"

/* CPU training steps/s at cfg; reward_us: the reward's time per call
 * (validation statistics; 0 if unknown).  -1 if the trainer cannot be
 * built.  Takes about a second (the paper preset at 600 environments: a
 * few). */
double train_estimate_sps(const ppo_config *cfg, double reward_us);

/* "3 min 20 s", "4.4 h", "2.1 days" */
void train_format_duration(double seconds, char *buf, int len);

/* Jobs projected over this many seconds on the CPU go on only when asked. */
#define TRAIN_ASK_ABOVE_S (3 * 3600.0)

/* The question for such a job: on a terminal, ask (y/N) on stderr; elsewhere
 * never block: no.  what: "train", "run", "grid". 1 to go on. */
int train_confirm_long_job(const char *what, double seconds, const char *advice);

#endif
