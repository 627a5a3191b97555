/* pcgrllm-human: engine-design */
/* Human-written reward, scenario 1 (dungeon): the player meets a BAT, picks
 * up the KEY and leaves through the DOOR.
 *
 * The reward is the decrease of a loss between two consecutive levels:
 * tile counts outside their target ranges (one key, one to three bats, no
 * scorpions or spiders), and path terms (the door, the key and a bat
 * reachable from the player).  The path is rewarded for being long, as in
 * PCGRL's dungeon problem, so that the agent builds corridors. */

static float outside(int n, int lo, int hi)
{
    if (n < lo) return (float)(lo - n);
    if (n > hi) return (float)(n - hi);
    return 0.0f;
}

static float loss(const level_t *l)
{
    float s = 0.0f;
    s += 2.0f * outside(count_tiles(l, KEY), 1, 1);
    s += 2.0f * outside(count_tiles(l, BAT), 1, 3);
    s += 1.0f * outside(count_tiles(l, SCORPION), 0, 0);
    s += 1.0f * outside(count_tiles(l, SPIDER), 0, 0);
    int pr[1], pc[1], dr[1], dc[1];
    if (find_tiles(l, PLAYER, pr, pc, 1) < 1 || find_tiles(l, DOOR, dr, dc, 1) < 1) return s + 10.0f;
    int to_door = path_length(l, pr[0], pc[0], dr[0], dc[0]);
    if (to_door < 0) s += 5.0f;
    else s -= 0.05f * (float)to_door;
    if (nearest_tile_distance(l, pr[0], pc[0], KEY) < 0) s += 3.0f;
    if (nearest_tile_distance(l, pr[0], pc[0], BAT) < 0) s += 3.0f;
    return s;
}

float compute_reward(const level_t *prev, const level_t *curr)
{
    return loss(prev) - loss(curr);
}
