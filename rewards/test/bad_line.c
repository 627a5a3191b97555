/* expect: line 3: #line is not allowed */
/* #line would make messages point at lines the model did not write */
#line 100 "api.h"
float compute_reward(const level_t *prev, const level_t *curr)
{
    return 0.0f;
}
