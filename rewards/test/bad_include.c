/* expect: line 2: #include is not allowed */
#include <stdio.h>
float compute_reward(const level_t *prev, const level_t *curr)
{
    return 0.0f;
}
