/* expect: line 3: compute_reward must return float and take (const level_t *prev, const level_t *curr); it returns double */
/* the same parameters, but double: both compilers would name the prelude's declaration instead */
double compute_reward(const level_t *prev, const level_t *curr)
{
    return 0.0;
}
