/* expect: line 3: the digraph %: is not allowed */
/* %: is # spelled as a digraph */
%:include <stdio.h>
float compute_reward(const level_t *prev, const level_t *curr)
{
    return 0.0f;
}
