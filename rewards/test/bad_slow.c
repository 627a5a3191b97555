/* expect: too slow */
float compute_reward(const level_t *prev, const level_t *curr)
{
    /* correct, but about 5 ms per call: thousands of path searches */
    int h = level_height(curr), w = level_width(curr);
    float s = 0.0f;
    for (int k = 0; k < 10000; k++) {
        int d = path_length(curr, (k * 7) % h, (k * 5) % w, h - 1 - (k % h), w - 1 - ((k / h) % w));
        if (d > 0) s += 1.0f / (float)d;
    }
    return s * 1e-6f;
}
