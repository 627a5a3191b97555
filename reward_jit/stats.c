/* Self-alignment statistics of a reward over random play (docs/method.md#reward-functions). */
#include "reward_jit.h"
#include <math.h>
#include <stdio.h>

void reward_acc_init(reward_acc *a)
{
    a->n = a->zeros = 0;
    a->mean = a->m2 = a->seconds = 0.0;
    a->min = INFINITY;
    a->max = -INFINITY;
}

void reward_acc_add(reward_acc *a, double v)
{
    a->n++;
    a->zeros += v == 0.0;
    double d = v - a->mean;
    a->mean += d / (double)a->n;
    a->m2 += d * (v - a->mean);
    if (v < a->min) a->min = v;
    if (v > a->max) a->max = v;
}

void reward_acc_finish(const reward_acc *a, reward_stats *s)
{
    s->n = a->n;
    s->mean = a->n ? a->mean : 0.0;
    s->std = a->n ? sqrt(a->m2 / (double)a->n) : 0.0;
    s->min = a->n ? a->min : 0.0;
    s->max = a->n ? a->max : 0.0;
    s->zero_share = a->n ? (double)a->zeros / (double)a->n : 0.0;
    s->us_per_call = a->n ? a->seconds * 1e6 / (double)a->n : 0.0;
}

int reward_stats_text(const reward_stats *s, char *buf, int len)
{
    return snprintf(buf, (size_t)len,
                    "over %ld steps of random play: mean %.6g, std %.6g, min %.6g, max %.6g, "
                    "zero rewards %.1f%%, %.2f us per call",
                    s->n, s->mean, s->std, s->min, s->max, 100.0 * s->zero_share, s->us_per_call);
}

int reward_stats_json(const reward_stats *s, char *buf, int len)
{
    return snprintf(buf, (size_t)len,
                    "{\"n\": %ld, \"mean\": %.9g, \"std\": %.9g, \"min\": %.9g, \"max\": %.9g, "
                    "\"zero_share\": %.9g, \"us_per_call\": %.4f}",
                    s->n, s->mean, s->std, s->min, s->max, s->zero_share, s->us_per_call);
}

int reward_stats_warning(const reward_stats *s, char *buf, int len)
{
    if (len > 0) buf[0] = 0;
    if (s->n <= 0 || s->std != 0.0) return 0;
    if (s->zero_share == 1.0)
        return snprintf(buf, (size_t)len,
                        "compute_reward returned 0 on every one of %ld steps of random play: an agent cannot learn "
                        "from a reward that is always zero; reward progress toward the goal",
                        s->n);
    return snprintf(buf, (size_t)len,
                    "compute_reward returned the same value (%.6g) on every one of %ld steps of random play (std 0): "
                    "an agent cannot learn from a constant reward; make it depend on how the level changes",
                    s->mean, s->n);
}
