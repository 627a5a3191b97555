/* Bit-row searches: the level core's 4-connected searches with one 64-bit
 * word per map row (bit c = column c), shared by the CPU backend, the CUDA
 * kernels and NVRTC like the rest of the level core (every function is
 * PCG_HD; no allocation, no libc).
 *
 * A search keeps `seen`, the cells reached so far, and grows it one BFS
 * layer at a time: a cell joins layer d+1 when it is passable, not seen and
 * next to a seen cell (left/right: the row shifted by one, up/down: the
 * adjacent rows).  The cells that join at step d are exactly those at
 * distance d, so distances are the queue BFS's (lv_bfs in level.h, kept as
 * the reference); tests/test_bitrows.c compares the two.  Only the rows
 * next to the last layer can change, so each step visits those rows alone.
 * Passable masks never hold bits at or past the width, so a shift cannot
 * carry a cell across the map's edge. */
#ifndef PCG_BITROWS_H
#define PCG_BITROWS_H
#include "hd.h"

#ifndef PCG_MAX_SIDE
#define PCG_MAX_SIDE 64
#endif
#if PCG_MAX_SIDE > 64
#error "bit rows hold at most 64 columns: PCG_MAX_SIDE must be 64 or less"
#endif

/* Index of the lowest set bit of x (x != 0). */
PCG_HD int br_low_bit(pcg_u64 x)
{
#if defined(__CUDA_ARCH__)
    return __ffsll((long long)x) - 1;
#elif defined(__GNUC__) || defined(__clang__)
    return __builtin_ctzll(x);
#else
    int n = 0;
    while (!(x & 1u)) x >>= 1, n++;
    return n;
#endif
}

/* rows[r] bit c: the tile at (r,c) has its bit set in open (bit t = tile
 * t; ids past 31 have none), or (r,c) is cell `allow` (-1: none). */
PCG_HD void br_passable(int h, int w, const unsigned char *t, pcg_u32 open, int allow, pcg_u64 *rows)
{
    for (int r = 0; r < h; r++) {
        const unsigned char *row = t + r * w;
        pcg_u64 bits = 0;
        for (int c = 0; c < w; c++) {
            unsigned k = row[c];
            bits |= (pcg_u64)(k < 32u && ((open >> k) & 1u)) << c;
        }
        rows[r] = bits;
    }
    if (allow >= 0 && allow < h * w) rows[allow / w] |= (pcg_u64)1 << (allow % w);
}

/* rows[r] bit c: the tile at (r,c) is `tile`. */
PCG_HD void br_tile_rows(int h, int w, const unsigned char *t, int tile, pcg_u64 *rows)
{
    for (int r = 0; r < h; r++) {
        const unsigned char *row = t + r * w;
        pcg_u64 bits = 0;
        for (int c = 0; c < w; c++) bits |= (pcg_u64)(row[c] == tile) << c;
        rows[r] = bits;
    }
}

/* A search in progress: the cells reached, the last layer's cells and the
 * rows [lo, hi] that hold them (hi < lo: the search is over). */
typedef struct {
    int h, lo, hi;
    pcg_u64 seen[PCG_MAX_SIDE];
    pcg_u64 fresh[PCG_MAX_SIDE];
} br_search;

/* Layer 0: the source alone, entered whether passable or not. */
PCG_HD void br_start(br_search *s, int h, int w, int src)
{
    s->h = h;
    for (int r = 0; r < h; r++) s->seen[r] = s->fresh[r] = 0;
    s->lo = s->hi = src / w;
    s->seen[src / w] = s->fresh[src / w] = (pcg_u64)1 << (src % w);
}

/* The next layer into fresh; 0 when it is empty.  seen is updated in place
 * from the top down: `above` carries row r-1's value from before the step. */
PCG_HD int br_step(br_search *s, const pcg_u64 *pass)
{
    int a = s->lo > 0 ? s->lo - 1 : 0, b = s->hi + 1 < s->h ? s->hi + 1 : s->h - 1;
    pcg_u64 above = a > 0 ? s->seen[a - 1] : 0;
    int lo = s->h, hi = -1;
    for (int r = a; r <= b; r++) {
        pcg_u64 cur = s->seen[r], below = r + 1 < s->h ? s->seen[r + 1] : 0;
        pcg_u64 n = ((cur << 1) | (cur >> 1) | above | below) & pass[r] & ~cur;
        s->fresh[r] = n;
        s->seen[r] = cur | n;
        above = cur;
        if (n) {
            if (lo > r) lo = r;
            hi = r;
        }
    }
    s->lo = lo;
    s->hi = hi;
    return hi >= 0;
}

/* Steps from src to dst through pass (src entered whatever it holds), -1
 * when dst is never reached. */
PCG_HD int br_distance(int h, int w, const pcg_u64 *pass, int src, int dst)
{
    br_search s;
    if (src == dst) return 0;
    br_start(&s, h, w, src);
    int tr = dst / w;
    pcg_u64 tbit = (pcg_u64)1 << (dst % w);
    for (int d = 1; br_step(&s, pass); d++)
        if (s.fresh[tr] & tbit) return d;
    return -1;
}

/* Steps from src to the nearest cell whose bit is set in target, -1 when
 * none is reached. */
PCG_HD int br_nearest(int h, int w, const pcg_u64 *pass, int src, const pcg_u64 *target)
{
    br_search s;
    br_start(&s, h, w, src);
    for (int d = 0;; d++) {
        for (int r = s.lo; r <= s.hi; r++)
            if (s.fresh[r] & target[r]) return d;
        if (!br_step(&s, pass)) return -1;
    }
}

/* lv_bfs's distances: dist[i] = steps from src (-1: unreachable) for every
 * cell, the same values the queue BFS writes.  With stop >= 0 the search
 * ends after the layer holding cell stop: the cells nearer than it hold
 * their distances, the rest -1 (enough for lv_path to stop).  Returns the
 * number of cells reached. */
PCG_HD int br_bfs(int h, int w, const pcg_u64 *pass, int src, int stop, short *dist)
{
    br_search s;
    int cells = h * w, reached = 1;
    for (int i = 0; i < cells; i++) dist[i] = -1;
    if (src < 0 || src >= cells) return 0;
    br_start(&s, h, w, src);
    dist[src] = 0;
    if (stop >= cells) stop = -1;
    if (stop == src) return reached;
    for (short d = 1; br_step(&s, pass); d++) {
        for (int r = s.lo; r <= s.hi; r++)
            for (pcg_u64 bits = s.fresh[r]; bits; bits &= bits - 1, reached++) dist[r * w + br_low_bit(bits)] = d;
        if (stop >= 0 && dist[stop] >= 0) break;
    }
    return reached;
}

/* The runs of pass that hold a bit of seed (seed within pass): the carry
 * of pass + seed runs up each seeded run; the shifts below run down it. */
PCG_HD pcg_u64 br_fill_row(pcg_u64 pass, pcg_u64 seed)
{
    pcg_u64 up = ((pass + seed) ^ pass) & pass, down = seed, p = pass;
    for (int k = 1; k < 64; k <<= 1) {
        down |= p & (down >> k);
        p &= p >> k;
    }
    return up | down;
}

/* Number of 4-connected regions of the cells set in pass.  Each region is
 * flooded from its first cell; whole row runs are taken at once since
 * distances do not matter here. */
PCG_HD int br_regions(int h, const pcg_u64 *pass)
{
    pcg_u64 seen[PCG_MAX_SIDE];
    int regions = 0;
    for (int r = 0; r < h; r++) seen[r] = 0;
    for (int r0 = 0; r0 < h; r0++) {
        pcg_u64 left;
        while ((left = pass[r0] & ~seen[r0]) != 0) {
            regions++;
            seen[r0] |= br_fill_row(pass[r0], left & (~left + 1));
            int lo = r0, hi = r0;
            while (hi >= lo) {
                int a = lo > 0 ? lo - 1 : 0, b = hi + 1 < h ? hi + 1 : h - 1;
                pcg_u64 above = a > 0 ? seen[a - 1] : 0;
                lo = h, hi = -1;
                for (int r = a; r <= b; r++) {
                    pcg_u64 cur = seen[r], below = r + 1 < h ? seen[r + 1] : 0;
                    pcg_u64 grow = (above | below) & pass[r] & ~cur;
                    above = cur;
                    if (!grow) continue;
                    seen[r] = cur | br_fill_row(pass[r], grow);
                    if (lo > r) lo = r;
                    hi = r;
                }
            }
        }
    }
    return regions;
}

#endif
