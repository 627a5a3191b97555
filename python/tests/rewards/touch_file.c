/* A template: the test puts a path in place of TOUCHED_PATH.  It would
 * create that file; the checks refuse it before it runs anywhere. */
float compute_reward(const level_t *prev, const level_t *curr)
{
    fopen("TOUCHED_PATH", "w");
    return 0.0f;
}
