/* expect: writes into the level */
float compute_reward(const level_t *prev, const level_t *curr)
{
    unsigned char *tiles = ((unsigned char **)curr)[1];
    tiles[0] = (unsigned char)KEY;
    return 1.0f;
}
