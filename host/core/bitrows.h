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

/* Number of set bits of x. */
PCG_HD int br_bit_count64(pcg_u64 x)
{
#if defined(__CUDA_ARCH__)
    return __popcll(x);
#elif defined(__GNUC__) || defined(__clang__)
    return __builtin_popcountll(x);
#else
    int n = 0;
    for (; x; x &= x - 1) n++;
    return n;
#endif
}

/* Rows are built eight cells at a time: a word of eight tile bytes, byte
 * tests whose answer is the byte's top bit, and a multiply that gathers the
 * eight answers into eight mask bits. */
#define BR_ONES 0x0101010101010101ull
#define BR_LOW7 0x7F7F7F7F7F7F7F7Full

/* Bytes i < n of p as a word, byte i at bits 8i..8i+7, the rest 0. */
PCG_HD pcg_u64 br_load(const unsigned char *p, int n)
{
    if (n == 8)
        return (pcg_u64)p[0] | (pcg_u64)p[1] << 8 | (pcg_u64)p[2] << 16 | (pcg_u64)p[3] << 24 |
               (pcg_u64)p[4] << 32 | (pcg_u64)p[5] << 40 | (pcg_u64)p[6] << 48 | (pcg_u64)p[7] << 56;
    pcg_u64 v = 0;
    for (int i = 0; i < n; i++) v |= (pcg_u64)p[i] << (8 * i);
    return v;
}

/* Top bit of each byte of v that equals b (exact: no borrow between bytes). */
PCG_HD pcg_u64 br_bytes_eq(pcg_u64 v, unsigned b)
{
    pcg_u64 x = v ^ (BR_ONES * b);
    return ~(((x & BR_LOW7) + BR_LOW7) | x | BR_LOW7);
}

/* The top bits of the eight bytes as bits 0..7. */
PCG_HD pcg_u64 br_gather(pcg_u64 tops)
{
    return ((tops >> 7) * 0x0102040810204080ull) >> 56;
}

/* Number of the n bytes of t equal to tile, eight at a time. */
PCG_HD int br_count(const unsigned char *t, int n, int tile)
{
    int count = 0, i = 0;
    if (tile < 0 || tile > 255) return 0;
    for (; i + 8 <= n; i += 8) count += br_bit_count64(br_bytes_eq(br_load(t + i, 8), (unsigned)tile));
    for (; i < n; i++) count += t[i] == tile;
    return count;
}

/* The cells of a level whose tile is in a set, one row at a time: a search
 * builds only the rows it reaches (built: bit r when row[r] holds row r). */
typedef struct {
    const unsigned char *t;
    int w, allow, nt, invert;
    unsigned char tiles[16]; /* the set, or its complement when invert */
    pcg_u64 built;
    pcg_u64 row[PCG_MAX_SIDE];
} br_mask;

/* The tiles whose bit is set in open (bit t = tile t; ids past 31 have
 * none), and cell allow (-1: none).  Each byte is compared with the tiles
 * of open, or of its complement when that is shorter (then ids past 31 are
 * ruled out apart). */
PCG_HD void br_mask_init(br_mask *m, const unsigned char *t, int w, pcg_u32 open, int allow)
{
    m->t = t;
    m->w = w;
    m->allow = allow;
    m->invert = br_bit_count64(open) > 16;
    m->nt = 0;
    m->built = 0;
    for (pcg_u32 set = m->invert ? ~open : open; set; set &= set - 1) m->tiles[m->nt++] = (unsigned char)br_low_bit(set);
}

/* The cells holding tile (any int: one outside 0..255 is nowhere). */
PCG_HD void br_mask_tile(br_mask *m, const unsigned char *t, int w, int tile)
{
    br_mask_init(m, t, w, 0, -1);
    if (tile >= 0 && tile <= 255) m->tiles[m->nt++] = (unsigned char)tile;
}

/* Row r of the mask, built on first use. */
PCG_HD pcg_u64 br_mask_row(br_mask *m, int r)
{
    if ((m->built >> r) & 1u) return m->row[r];
    const unsigned char *row = m->t + r * m->w;
    pcg_u64 bits = 0;
    for (int c = 0; c < m->w; c += 8) {
        int n = m->w - c < 8 ? m->w - c : 8;
        pcg_u64 v = br_load(row + c, n), hit = 0;
        for (int k = 0; k < m->nt; k++) hit |= br_bytes_eq(v, m->tiles[k]);
        if (m->invert) hit = ~hit & br_bytes_eq(v & (BR_ONES * 0xE0u), 0) & (BR_ONES * 0x80u);
        bits |= (br_gather(hit) & ((1u << n) - 1u)) << c;
    }
    if (m->allow >= 0 && m->allow / m->w == r) bits |= (pcg_u64)1 << (m->allow % m->w);
    m->built |= (pcg_u64)1 << r;
    return m->row[r] = bits;
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
PCG_HD int br_step(br_search *s, br_mask *pass)
{
    int a = s->lo > 0 ? s->lo - 1 : 0, b = s->hi + 1 < s->h ? s->hi + 1 : s->h - 1;
    pcg_u64 above = a > 0 ? s->seen[a - 1] : 0;
    int lo = s->h, hi = -1;
    for (int r = a; r <= b; r++) {
        pcg_u64 cur = s->seen[r], below = r + 1 < s->h ? s->seen[r + 1] : 0;
        pcg_u64 grow = ((cur << 1) | (cur >> 1) | above | below) & ~cur;
        pcg_u64 n = grow ? grow & br_mask_row(pass, r) : 0;
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
PCG_HD int br_distance(int h, int w, br_mask *pass, int src, int dst)
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
PCG_HD int br_nearest(int h, int w, br_mask *pass, int src, br_mask *target)
{
    br_search s;
    br_start(&s, h, w, src);
    for (int d = 0;; d++) {
        for (int r = s.lo; r <= s.hi; r++)
            if (s.fresh[r] && (s.fresh[r] & br_mask_row(target, r))) return d;
        if (!br_step(&s, pass)) return -1;
    }
}

/* lv_bfs's distances: dist[i] = steps from src (-1: unreachable) for every
 * cell, the same values the queue BFS writes.  With stop >= 0 the search
 * ends after the layer holding cell stop: the cells nearer than it hold
 * their distances, the rest -1 (enough for lv_path to stop).  Returns the
 * number of cells reached. */
PCG_HD int br_bfs(int h, int w, br_mask *pass, int src, int stop, short *dist)
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
PCG_HD int br_regions(int h, br_mask *m)
{
    pcg_u64 seen[PCG_MAX_SIDE];
    const pcg_u64 *pass = m->row;
    int regions = 0;
    for (int r = 0; r < h; r++) seen[r] = 0, br_mask_row(m, r);
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
