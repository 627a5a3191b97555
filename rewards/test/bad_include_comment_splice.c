/* expect: line 2: a // comment ending in a backslash */
// this comment goes on: \
/*
#include "/etc/passwd"
// */
float compute_reward(const level_t *prev, const level_t *curr)
{
    return 0.0f;
}
