/* expect: line 2: byte 0xff: reward code is plain text */
#define SCALE 1.0f ÿ
float compute_reward(const level_t *prev, const level_t *curr)
{
    return SCALE * (float)count_tiles(curr, WALL);
}
