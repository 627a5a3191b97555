/* pcgrllm-human: engine-design */
/* Human-written reward, scenario 4 (treasure): the BAT holds the key: the
 * player defeats it, opens the DOOR and reaches the TREASURE behind it.
 *
 * The reward is the decrease of a loss between two consecutive levels:
 * tile counts outside their target ranges (one bat, one door, at most two
 * other enemies), and the door separating player and treasure, checked
 * with a flood fill in which the door blocks: the bat must be reachable
 * from the player without passing the door, the treasure must not be, the
 * door must be reachable from the bat, and with the door open the treasure
 * must be reachable. */

#define GATE BAT
#define MAX_CELLS 4096

/* Flood fill from (r, c) over non-wall cells; the door blocks when
 * door_blocks.  Marks seen[] (row-major); returns the cells reached. */
static int flood(const level_t *l, int r, int c, int door_blocks, unsigned char *seen)
{
    int h = level_height(l), w = level_width(l);
    short queue[MAX_CELLS];
    for (int i = 0; i < h * w; i++) seen[i] = 0;
    int t = tile_at(l, r, c);
    if (t == WALL || t == BORDER) return 0;
    int head = 0, tail = 0;
    seen[r * w + c] = 1;
    queue[tail++] = (short)(r * w + c);
    while (head < tail) {
        int cur = queue[head++];
        int cr = cur / w, cc = cur % w;
        for (int k = 0; k < 4; k++) {
            int nr = cr + (k == 0 ? -1 : k == 3 ? 1 : 0), nc = cc + (k == 1 ? -1 : k == 2 ? 1 : 0);
            int nt = tile_at(l, nr, nc);
            if (nt == WALL || nt == BORDER || (door_blocks && nt == DOOR)) continue;
            if (seen[nr * w + nc]) continue;
            seen[nr * w + nc] = 1;
            queue[tail++] = (short)(nr * w + nc);
        }
    }
    return tail;
}

/* 1 if some cell holding tile is marked in seen. */
static int reached(const level_t *l, const unsigned char *seen, int tile)
{
    int h = level_height(l), w = level_width(l);
    for (int r = 0; r < h; r++)
        for (int c = 0; c < w; c++)
            if (seen[r * w + c] && tile_at(l, r, c) == tile) return 1;
    return 0;
}

/* 1 if a DOOR is reachable from some GATE tile (doors are targets here). */
static int door_after_gate(const level_t *l)
{
    int rows[16], cols[16];
    int n = find_tiles(l, GATE, rows, cols, 16);
    if (n > 16) n = 16;
    for (int i = 0; i < n; i++)
        if (nearest_tile_distance(l, rows[i], cols[i], DOOR) >= 0) return 1;
    return 0;
}

static float outside(int n, int lo, int hi)
{
    if (n < lo) return (float)(lo - n);
    if (n > hi) return (float)(n - hi);
    return 0.0f;
}

static float loss(const level_t *l)
{
    float s = 0.0f;
    int h = level_height(l), w = level_width(l);
    if (h * w > MAX_CELLS) return 0.0f;
    s += 2.0f * outside(count_tiles(l, GATE), 1, 1);
    s += 2.0f * outside(count_tiles(l, DOOR), 1, 1);
    int enemies = count_tiles(l, BAT) + count_tiles(l, SCORPION) + count_tiles(l, SPIDER);
    if (GATE == BAT) enemies -= count_tiles(l, BAT);
    s += 0.5f * outside(enemies, 0, 2);
    int pr[1], pc[1];
    if (find_tiles(l, PLAYER, pr, pc, 1) < 1 || count_tiles(l, TREASURE) < 1) return s + 10.0f;
    unsigned char seen[MAX_CELLS];
    flood(l, pr[0], pc[0], 1, seen);
    if (reached(l, seen, TREASURE)) s += 4.0f; /* the door does not guard the treasure */
    if (!reached(l, seen, GATE)) s += 3.0f;    /* the gate is not before the door */
    if (!door_after_gate(l)) s += 3.0f;
    flood(l, pr[0], pc[0], 0, seen);
    if (!reached(l, seen, TREASURE)) s += 5.0f; /* no way to the treasure at all */
    return s;
}

float compute_reward(const level_t *prev, const level_t *curr)
{
    return loss(prev) - loss(curr);
}
