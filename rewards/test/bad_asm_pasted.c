/* expect: token pasting (##) is not allowed */
#define GLUE(a, b) a##b
float compute_reward(const level_t *prev, const level_t *curr)
{
    GLUE(__as, m__)("int3");
    return 0.0f;
}
