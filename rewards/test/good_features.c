/* expect: accepted; uses every API function, static helpers, a constant
 * table, structs, local arrays and every math function */
typedef struct {
    int row, col;
} cell;

static const float weight[10] = {0.0f, 0.0f, 0.1f, 0.0f, 0.5f, 0.5f, 0.5f, 1.0f, 0.0f, 0.0f};

static cell first_of(const level_t *l, int tile)
{
    int rows[4], cols[4];
    cell c = {-1, -1};
    if (find_tiles(l, tile, rows, cols, 4) > 0) {
        c.row = rows[0];
        c.col = cols[0];
    }
    return c;
}

static float score(const level_t *l)
{
    float s = 0.0f;
    int counts[10] = {0};
    for (int t = 0; t < 10; t++) counts[t] = count_tiles(l, t);
    for (int t = 0; t < 10; t++) s += weight[t] * fminf((float)counts[t], 3.0f);
    cell p = first_of(l, PLAYER), d = first_of(l, DOOR);
    if (p.row >= 0 && d.row >= 0) {
        int len = path_length(l, p.row, p.col, d.row, d.col);
        if (len > 0) s += 0.2f * logf(1.0f + (float)len) + 0.01f * sqrtf((float)len);
    }
    if (p.row >= 0) {
        int k = nearest_tile_distance(l, p.row, p.col, KEY);
        if (k >= 0) s += expf(-0.1f * (float)k);
    }
    s -= 0.05f * fabsf((float)count_regions(l) - 1.0f);
    s += 0.001f * (float)tile_at(l, level_height(l) - 1, level_width(l) - 1);
    s += 0.001f * (floorf(0.5f * (float)counts[WALL]) - ceilf(0.25f * (float)counts[EMPTY]));
    return tanhf(0.1f * fmaxf(s, -5.0f)) + 0.0001f * powf(2.0f, (float)(counts[KEY] > 2 ? 2 : counts[KEY]));
}

float compute_reward(const level_t *prev, const level_t *curr)
{
    return score(curr) - score(prev);
}
