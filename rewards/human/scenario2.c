/* pcgrllm-human: reference-port */
/* Human-written reward of the reference implementation, scenario 2 (the
 * player meets a BAT and a SCORPION, picks up the KEY and leaves through the
 * DOOR), ported term for term with its weights:
 *
 *   1.0 * tl(KEY, 1) + 1.0 * tl(BAT, 1) + 1.0 * tl(SCORPION, 1) + 0.5 * tl(SPIDER, 0)
 *   + 0.5 * (access(curr) - access(prev))
 *   + 3 when the player-door path appears, - 3 when it disappears
 *
 * with tl(t, n) = |count(prev, t) - n| - |count(curr, t) - n|.  Only EMPTY,
 * DOOR and PLAYER can be walked through.  Every position is taken from curr
 * and used in both levels: the first PLAYER and the first DOOR (row-major,
 * (0,0) when there is none) and the first five KEY cells, the slots left
 * over filled with (0,0).  access(L) is 1 when a path of more than 0 steps
 * leads from the player to some key slot in L; the door path exists when
 * its length is 0 or more.
 *
 * Path lengths follow the reference's flood search (ref_flood): a plain
 * shortest path where start and target differ and both can be walked on,
 * and its own answers where they cannot.  On the engine's dungeon levels the
 * player and the door sit at fixed frozen cells of both levels, never at
 * (0,0), so every search starts on a walkable cell other than its target:
 * the unwalkable start and the start-is-target cases arise only on levels
 * without a player (hand-made ones), and are kept so that the port gives
 * the reference's value on any pair.  What does arise: a KEY of curr is a
 * target that cannot be walked on (never reached in curr), and the (0,0)
 * filler slots are real targets when curr holds fewer than five keys. */

#define REF_WALK ((1u << EMPTY) | (1u << DOOR) | (1u << PLAYER))
#define REF_KEY_SLOTS 5

static int ref_walkable(const level_t *l, int r, int c)
{
    int t = tile_at(l, r, c);
    return t == EMPTY || t == DOOR || t == PLAYER;
}

/* The reference's flood from (r0,c0) to (r1,c1): -1 when the target is
 * never flooded.  Its count is taken after at least one step and measured
 * from the start's own count, hence the two special cases. */
static int ref_flood(const level_t *l, int r0, int c0, int r1, int c1)
{
    if (r0 == r1 && c0 == c1) {
        if (!ref_walkable(l, r0, c0)) return 0;
        for (int k = 0; k < 4; k++) /* the first step floods a neighbour: 1, else 0 */
            if (ref_walkable(l, r0 + (k == 0) - (k == 1), c0 + (k == 2) - (k == 3))) return 1;
        return 0;
    }
    if (ref_walkable(l, r0, c0)) return path_length_through(l, r0, c0, r1, c1, REF_WALK);
    /* an unwalkable start floods its walkable neighbours in the first step
     * and then stays dry: the count comes out one less than the steps */
    int best = -1;
    for (int k = 0; k < 4; k++) {
        int d = path_length_through(l, r0 + (k == 0) - (k == 1), c0 + (k == 2) - (k == 3), r1, c1, REF_WALK);
        if (d >= 0 && (best < 0 || d < best)) best = d;
    }
    return best;
}

/* First cell of a tile in row-major order, (0,0) when there is none. */
static void ref_first(const level_t *l, int tile, int *r, int *c)
{
    int rr[1], cc[1];
    *r = 0;
    *c = 0;
    if (find_tiles(l, tile, rr, cc, 1) > 0) {
        *r = rr[0];
        *c = cc[0];
    }
}

/* 1 when some key slot is more than 0 steps from the player in l. */
static int ref_access(const level_t *l, int pr, int pc, const int *kr, const int *kc)
{
    for (int i = 0; i < REF_KEY_SLOTS; i++) {
        if (i > 0 && kr[i] == kr[i - 1] && kc[i] == kc[i - 1]) continue; /* the filler repeats (0,0) */
        if (ref_flood(l, pr, pc, kr[i], kc[i]) > 0) return 1;
    }
    return 0;
}

static float ref_tile_loss(const level_t *prev, const level_t *curr, int tile, int target)
{
    int p = count_tiles(prev, tile) - target, c = count_tiles(curr, tile) - target;
    return (float)((p < 0 ? -p : p) - (c < 0 ? -c : c));
}

float compute_reward(const level_t *prev, const level_t *curr)
{
    int pr, pc, dr, dc, kr[REF_KEY_SLOTS], kc[REF_KEY_SLOTS];
    ref_first(curr, PLAYER, &pr, &pc);
    ref_first(curr, DOOR, &dr, &dc);
    int keys = find_tiles(curr, KEY, kr, kc, REF_KEY_SLOTS);
    for (int i = keys; i < REF_KEY_SLOTS; i++) kr[i] = kc[i] = 0;
    float r = 1.0f * ref_tile_loss(prev, curr, KEY, 1);
    r += 0.5f * (float)(ref_access(curr, pr, pc, kr, kc) - ref_access(prev, pr, pc, kr, kc));
    int door_prev = ref_flood(prev, pr, pc, dr, dc), door_curr = ref_flood(curr, pr, pc, dr, dc);
    if (door_prev == -1 && door_curr >= 0) r += 3.0f;
    if (door_prev >= 0 && door_curr == -1) r -= 3.0f;
    r += 1.0f * ref_tile_loss(prev, curr, BAT, 1) + 1.0f * ref_tile_loss(prev, curr, SCORPION, 1) +
         0.5f * ref_tile_loss(prev, curr, SPIDER, 0);
    return r;
}
