/* expect: an access just outside the level's tiles */
float compute_reward(const level_t *prev, const level_t *curr)
{
    /* the first transition's prev is the first level the engine passes:
     * the byte before its tiles is not the reward's to read */
    const unsigned char *tiles = ((const unsigned char *const *)prev)[1];
    return (float)tiles[-1];
}
