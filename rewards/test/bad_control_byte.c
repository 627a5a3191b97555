/* expect: line 4: byte 0x1b: reward code is plain text */
float compute_reward(const level_t *prev, const level_t *curr)
{
#[2J[31mOK
    return 0.0f;
}
