/* expect: line 3: #pragma is not allowed */
/* tcc reads #pragma comment(option) as compiler options; a vertical tab is whitespace */
#pragma comment(option, "-run")
float compute_reward(const level_t *prev, const level_t *curr)
{
    return 0.0f;
}
