/* Bit-row searches: the level core's 4-connected searches on 64-bit words
 * of whole map rows (64 / w rows to a word, the cells in row-major order),
 * shared by the CPU backend, the CUDA kernels and NVRTC like the rest of
 * the level core (every function is PCG_HD; no allocation, no libc).
 *
 * A search keeps `seen`, the cells reached so far, and grows it one BFS
 * layer at a time: a cell joins layer d+1 when it is passable, not seen and
 * next to a seen cell (left/right: the word shifted by one, up/down: by the
 * width within a word and across to the words around it).  The cells that
 * join at step d are exactly those at distance d, so distances are the
 * queue BFS's (lv_bfs in level.h, kept as the reference);
 * tests/test_bitrows.c compares the two.  Only the words next to the last
 * layer can change, so each step visits those words alone.  Passable masks
 * never hold bits past the level's cells, and a shift across a row's end
 * is masked off, so no cell is carried over the map's edge. */
#ifndef PCG_BITROWS_H
#define PCG_BITROWS_H
#include "hd.h"

#ifndef PCG_MAX_SIDE
#define PCG_MAX_SIDE 64
#endif
#if PCG_MAX_SIDE > 64
#error "bit rows hold at most 64 columns: PCG_MAX_SIDE must be 64 or less"
#endif

/* Work hooks for the device model's counts (reward_jit/api_count.c): a
 * translation unit that defines BR_WORK(kind, n) before it includes this
 * header gets its own copies of these functions (all static inline) that
 * report their work by kind; everywhere else a hook is nothing, so the
 * searches compile exactly as before. */
enum {
    BR_WORK_LOADS,       /* eight tile bytes read as one word (br_load at an address that is a multiple of 8) */
    BR_WORK_SPLIT_LOADS, /* tile bytes read in pieces (fewer than eight, or an address off a multiple of 8) */
    BR_WORK_COMPARES,    /* byte-wise tile tests of a word (br_bytes_eq) */
    BR_WORK_ROUNDS,      /* frontier expansion rounds (br_step, a pass of br_regions' flood) */
    BR_WORK_STEP_WORDS,  /* words a round visits */
    BR_WORK_SCAN_WORDS,  /* frontier words tested against a target (br_nearest) */
    BR_WORK_KEPT_WORDS,  /* distance-plane words a kept search writes or reads (br_kept_*) */
    BR_WORK_TRANSPOSES,  /* eight cells' ids bit-transposed (br_planes_build) */
    BR_WORK_PLANE_BYTES, /* a transpose's plane bytes shifted into place one by one (short words) */
    BR_WORK_PLANE_FULL,  /* a whole word's planes from its eight transposes at once (br_planes_full) */
    BR_WORK_PLANE_WORDS, /* words of a tile's cells read off the tile planes (br_planes_tile) */
    BR_WORK_KINDS
};
#ifndef BR_WORK
#define BR_WORK(kind, n) ((void)0)
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

/* Word-sized views of tile bytes.  Where the compiler honours it they may
 * alias any object, so reading a level's bytes through them is defined on
 * the host too (the tests run the device's load there). */
#if defined(__GNUC__) && !defined(__CUDA_ARCH__)
typedef pcg_u64 __attribute__((may_alias)) br_alias_u64;
typedef pcg_u32 __attribute__((may_alias)) br_alias_u32;
typedef unsigned short __attribute__((may_alias)) br_alias_u16;
#else
typedef pcg_u64 br_alias_u64;
typedef pcg_u32 br_alias_u32;
typedef unsigned short br_alias_u16;
#endif

/* Bytes i < n of p one by one, byte i at bits 8i..8i+7, the rest 0. */
PCG_HD pcg_u64 br_load_bytes(const unsigned char *p, int n)
{
    pcg_u64 v = 0;
    for (int i = 0; i < n; i++) v |= (pcg_u64)p[i] << (8 * i);
    return v;
}

/* The eight bytes at p in the widest loads p's alignment allows, never a
 * byte outside them: a GPU has no unaligned wide load, and one load
 * instead of eight is most of the cost of building a mask word there (the
 * engine's levels start at multiples of 8, so a row word always takes the
 * first branch).  Little-endian, as every device is. */
PCG_HD pcg_u64 br_load_aligned8(const unsigned char *p)
{
    pcg_u64 at = (pcg_u64)p;
    if (!(at & 7u)) return *(const br_alias_u64 *)(const void *)p;
    if (!(at & 3u)) {
        const br_alias_u32 *q = (const br_alias_u32 *)(const void *)p;
        return (pcg_u64)q[0] | (pcg_u64)q[1] << 32;
    }
    if (!(at & 1u)) {
        const br_alias_u16 *q = (const br_alias_u16 *)(const void *)p;
        return (pcg_u64)q[0] | (pcg_u64)q[1] << 16 | (pcg_u64)q[2] << 32 | (pcg_u64)q[3] << 48;
    }
    return br_load_bytes(p, 8);
}

/* Bytes i < n of p (n <= 8) as a word, byte i at bits 8i..8i+7, the rest 0. */
PCG_HD pcg_u64 br_load(const unsigned char *p, int n)
{
    BR_WORK(n == 8 && !((pcg_u64)p & 7u) ? BR_WORK_LOADS : BR_WORK_SPLIT_LOADS, 1);
    if (n != 8) return br_load_bytes(p, n);
#if defined(__CUDA_ARCH__)
    return br_load_aligned8(p);
#elif defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    pcg_u64 v; /* one unaligned load: the compiler does not merge byte loads */
    __builtin_memcpy(&v, p, 8);
    return v;
#else
    return br_load_bytes(p, 8);
#endif
}

/* Top bit of each byte of v that equals b (exact: no borrow between bytes). */
PCG_HD pcg_u64 br_bytes_eq(pcg_u64 v, unsigned b)
{
    BR_WORK(BR_WORK_COMPARES, 1);
    pcg_u64 x = v ^ (BR_ONES * b);
    return ~(((x & BR_LOW7) + BR_LOW7) | x | BR_LOW7);
}

/* The top bits of the eight bytes as bits 0..7. */
PCG_HD pcg_u64 br_gather(pcg_u64 tops)
{
    return ((tops >> 7) * 0x0102040810204080ull) >> 56;
}

/* Number of bytes of a br_bytes_eq answer that hold their top bit: one
 * multiply sums the eight 0/1 bytes into the top byte (a bit count would
 * be a library call where the target has no popcount instruction). */
PCG_HD int br_tops_count(pcg_u64 tops)
{
    return (int)(((tops >> 7) * BR_ONES) >> 56);
}

/* br_bytes_eq over bytes i < n of p (n <= 8): the bytes past n, which
 * br_load leaves 0, never answer. */
PCG_HD pcg_u64 br_bytes_eq_at(const unsigned char *p, int n, unsigned b)
{
    pcg_u64 tops = br_bytes_eq(br_load(p, n), b);
    return n == 8 ? tops : tops & ((((pcg_u64)1) << (8 * n)) - 1);
}

/* Number of the n bytes of t equal to tile, eight at a time. */
PCG_HD int br_count(const unsigned char *t, int n, int tile)
{
    int count = 0, i = 0;
    if (tile < 0 || tile > 255) return 0;
    for (; i + 8 <= n; i += 8) count += br_tops_count(br_bytes_eq(br_load(t + i, 8), (unsigned)tile));
    for (; i < n; i++) count += t[i] == tile;
    return count;
}

/* The cells of a level whose tile is in a set, as words of whole rows: a
 * word holds per = 64 / w rows (span = per * w bits), bit b of word j is
 * cell j * span + b, so the cells stay in row-major order and a 16-wide
 * level fits in four words.  A search builds only the words it reaches
 * (built: bit j when word[j] holds word j). */
typedef struct {
    const unsigned char *t;
    int h, w, per, span, words;
    int edge; /* the first bit of a word's last row: span - w */
    int allow, nt, invert;
    unsigned char tiles[16]; /* the set, or its complement when invert */
    pcg_u64 first, last;     /* the bits of column 0 and of column w-1 in a word */
    pcg_u64 built;
    pcg_u64 word[PCG_MAX_SIDE];
} br_mask;

/* The tiles whose bit is set in open (bit t = tile t; ids past 31 have
 * none), and cell allow (-1: none), on an h x w level (both 1..64).  Each
 * byte is compared with the tiles of open, or of its complement when that
 * is shorter (then ids past 31 are ruled out apart). */
PCG_HD void br_mask_init(br_mask *m, const unsigned char *t, int h, int w, pcg_u32 open, int allow)
{
    m->t = t;
    m->h = h;
    m->w = w;
    m->per = 64 / w;
    m->span = m->per * w;
    m->words = (h + m->per - 1) / m->per;
    m->edge = m->span - w;
    m->allow = allow;
    m->invert = br_bit_count64(open) > 16;
    m->nt = 0;
    m->built = 0;
    m->first = 0;
    for (int i = 0; i < m->per; i++) m->first |= (pcg_u64)1 << (i * w);
    m->last = m->first << (w - 1);
    for (pcg_u32 set = m->invert ? ~open : open; set; set &= set - 1) m->tiles[m->nt++] = (unsigned char)br_low_bit(set);
}

/* The cells holding tile (any int: one outside 0..255 is nowhere). */
PCG_HD void br_mask_tile(br_mask *m, const unsigned char *t, int h, int w, int tile)
{
    br_mask_init(m, t, h, w, 0, -1);
    if (tile >= 0 && tile <= 255) m->tiles[m->nt++] = (unsigned char)tile;
}

/* Word j of the mask built from its cells' bytes, which lie one after
 * another in the level. */
PCG_HD pcg_u64 br_mask_build(br_mask *m, int j)
{
    int base = j * m->span, cells = m->h * m->w;
    int n = cells - base < m->span ? cells - base : m->span;
    pcg_u64 bits = 0;
    for (int c = 0; c < n; c += 8) {
        int k = n - c < 8 ? n - c : 8;
        pcg_u64 v = br_load(m->t + base + c, k), hit = 0;
        for (int q = 0; q < m->nt; q++) hit |= br_bytes_eq(v, m->tiles[q]);
        if (m->invert) hit = ~hit & br_bytes_eq(v & (BR_ONES * 0xE0u), 0) & (BR_ONES * 0x80u);
        bits |= (br_gather(hit) & ((1u << k) - 1u)) << c;
    }
    if (m->allow >= base && m->allow < base + n) bits |= (pcg_u64)1 << (m->allow - base);
    m->built |= (pcg_u64)1 << j;
    return m->word[j] = bits;
}

/* Word j of the mask, built on first use (the test stays small enough to
 * inline into the search loops). */
PCG_HD pcg_u64 br_mask_word(br_mask *m, int j)
{
    return (m->built >> j) & 1u ? m->word[j] : br_mask_build(m, j);
}

/* A search in progress: the cells reached, the last layer's cells and the
 * words [lo, hi] that hold them (hi < lo: the search is over). */
typedef struct {
    int lo, hi;
    pcg_u64 seen[PCG_MAX_SIDE];
    pcg_u64 fresh[PCG_MAX_SIDE];
} br_search;

/* Layer 0: the source alone, entered whether passable or not. */
PCG_HD void br_start(br_search *s, const br_mask *m, int src)
{
    for (int j = 0; j < m->words; j++) s->seen[j] = s->fresh[j] = 0;
    s->lo = s->hi = src / m->span;
    s->seen[s->lo] = s->fresh[s->lo] = (pcg_u64)1 << (src % m->span);
}

/* How a word's cells meet their neighbours, read out of the mask once per
 * step (stores into a search may alias the mask's words, so the compiler
 * would read them again for every word). */
typedef struct {
    pcg_u64 first, last;
    int edge, vert; /* vert: w when a word holds more than one row, else 0 */
} br_sides;

PCG_HD br_sides br_sides_of(const br_mask *m)
{
    br_sides d = {m->first, m->last, m->edge, m->per > 1 ? m->w : 0};
    return d;
}

/* The cells next to those of x (`above` and `below` its neighbour words):
 * left and right within a row (a shift that crosses into the next row is
 * masked off), up and down to the rows of the same word, and across the
 * word's first and last rows to the words around it. */
PCG_HD pcg_u64 br_around(br_sides d, pcg_u64 x, pcg_u64 above, pcg_u64 below)
{
    pcg_u64 n = ((x << 1) & ~d.first) | ((x >> 1) & ~d.last) | (above >> d.edge) | (below << d.edge);
    if (d.vert) n |= (x << d.vert) | (x >> d.vert); /* vert <= 32 */
    return n;
}

/* The next layer into fresh; 0 when it is empty.  seen is updated in place
 * word by word: `above` carries word j-1's value from before the step.
 * Bits past a word's span join nothing: no mask holds them. */
PCG_HD int br_step(br_search *s, br_mask *pass)
{
    const int words = pass->words;
    const br_sides sides = br_sides_of(pass);
    int a = s->lo > 0 ? s->lo - 1 : 0, b = s->hi + 1 < words ? s->hi + 1 : words - 1;
    pcg_u64 above = a > 0 ? s->seen[a - 1] : 0;
    int lo = words, hi = -1;
    BR_WORK(BR_WORK_ROUNDS, 1);
    BR_WORK(BR_WORK_STEP_WORDS, b - a + 1);
    for (int j = a; j <= b; j++) {
        pcg_u64 cur = s->seen[j], below = j + 1 < words ? s->seen[j + 1] : 0;
        pcg_u64 grow = br_around(sides, cur, above, below) & ~cur;
        pcg_u64 n = grow ? grow & br_mask_word(pass, j) : 0;
        s->fresh[j] = n;
        s->seen[j] = cur | n;
        above = cur;
        if (n) {
            if (lo > j) lo = j;
            hi = j;
        }
    }
    s->lo = lo;
    s->hi = hi;
    return hi >= 0;
}

/* Steps from src to dst through pass (src entered whatever it holds), -1
 * when dst is never reached. */
PCG_HD int br_distance(br_mask *pass, int src, int dst)
{
    br_search s;
    if (src == dst) return 0;
    br_start(&s, pass, src);
    int tj = dst / pass->span;
    pcg_u64 tbit = (pcg_u64)1 << (dst % pass->span);
    for (int d = 1; br_step(&s, pass); d++)
        if (s.fresh[tj] & tbit) return d;
    return -1;
}

/* Steps from src to the nearest cell whose bit is set in target, -1 when
 * none is reached. */
PCG_HD int br_nearest(br_mask *pass, int src, br_mask *target)
{
    br_search s;
    br_start(&s, pass, src);
    for (int d = 0;; d++) {
        BR_WORK(BR_WORK_SCAN_WORDS, s.hi - s.lo + 1);
        for (int j = s.lo; j <= s.hi; j++)
            if (s.fresh[j] && (s.fresh[j] & br_mask_word(target, j))) return d;
        if (!br_step(&s, pass)) return -1;
    }
}

/* ---- Tile planes ----
 *
 * The cells' tile ids once more as bit planes in the mask words' layout:
 * plane b (b < 5) holds bit b of each cell's id, plane 5 the cells whose
 * id is 32 or more (no tile mask names one); `valid` the words' cells.
 * Built in one pass over the level, eight cells a load: an 8x8 bit
 * transpose turns eight id bytes into eight bytes of plane bits.  Then a
 * tile's cells, a count, a find or a whole search mask are a few logic
 * operations a word instead of a byte-wise test of every word.  Levels
 * up to BR_KEPT_WORDS words (br_kept_fits, below). */
#define BR_PLANES 6
#define BR_KEPT_WORDS 8 /* the most words of a level planes and kept searches hold */
#define BR_KEPT_BITS 9  /* a kept search's distance planes: distances below 512 */

typedef struct {
    int span, words;
    pcg_u64 valid[BR_KEPT_WORDS];
    pcg_u64 p[BR_PLANES][BR_KEPT_WORDS];
} br_planes;

/* x as an 8x8 bit matrix, byte i its row i (bit j: column j),
 * transposed: byte b of the answer holds bit b of each byte of x. */
PCG_HD pcg_u64 br_transpose8(pcg_u64 x)
{
    pcg_u64 t;
    t = (x ^ (x >> 7)) & 0x00AA00AA00AA00AAull;
    x ^= t ^ (t << 7);
    t = (x ^ (x >> 14)) & 0x0000CCCC0000CCCCull;
    x ^= t ^ (t << 14);
    t = (x ^ (x >> 28)) & 0x00000000F0F0F0F0ull;
    x ^= t ^ (t << 28);
    return x;
}

/* One round of an 8x8 byte transpose of x[0..7] (word i: row i, byte
 * c: column c): the blocks of `bytes` bytes swapped between the words
 * `bytes` apart. */
PCG_HD void br_byte_swap(pcg_u64 *x, int bytes, pcg_u64 mask)
{
    for (int a = 0; a < 8; a++) {
        if (a & bytes) continue;
        pcg_u64 t = ((x[a] >> (8 * bytes)) ^ x[a + bytes]) & mask;
        x[a + bytes] ^= t;
        x[a] ^= t << (8 * bytes);
    }
}

/* Word j's planes where it holds 64 cells: the eight transposes x[c] (of
 * cells 8c..8c+7) hold plane b's byte c as their byte b, so an 8x8 byte
 * transpose of them leaves plane b in word b. */
PCG_HD void br_planes_full(br_planes *pl, int j, pcg_u64 *x)
{
    BR_WORK(BR_WORK_PLANE_FULL, 1);
    br_byte_swap(x, 1, 0x00FF00FF00FF00FFull);
    br_byte_swap(x, 2, 0x0000FFFF0000FFFFull);
    br_byte_swap(x, 4, 0x00000000FFFFFFFFull);
    for (int b = 0; b < 5; b++) pl->p[b][j] = x[b];
    pl->p[5][j] = x[5] | x[6] | x[7];
}

/* The planes of the h x w level t (br_kept_fits(h, w)). */
PCG_HD void br_planes_build(br_planes *pl, const unsigned char *t, int h, int w)
{
    int per = 64 / w, cells = h * w;
    pl->span = per * w;
    pl->words = (h + per - 1) / per;
    for (int j = 0; j < pl->words; j++) {
        int base = j * pl->span, n = cells - base < pl->span ? cells - base : pl->span;
        pcg_u64 x[8], p[BR_PLANES] = {0, 0, 0, 0, 0, 0};
        pl->valid[j] = n == 64 ? ~(pcg_u64)0 : (((pcg_u64)1 << n) - 1);
        for (int c = 0; c < n; c += 8) {
            int k = n - c < 8 ? n - c : 8;
            x[c / 8] = br_transpose8(br_load(t + base + c, k)); /* bytes past k are 0: outside valid */
            BR_WORK(BR_WORK_TRANSPOSES, 1);
        }
        if (n == 64) {
            br_planes_full(pl, j, x);
            continue;
        }
        for (int c = 0; c < n; c += 8) {
            BR_WORK(BR_WORK_PLANE_BYTES, 1);
            pcg_u64 v = x[c / 8];
            for (int b = 0; b < 5; b++) p[b] |= ((v >> (8 * b)) & 0xFFu) << c;
            p[5] |= (((v >> 40) | (v >> 48) | (v >> 56)) & 0xFFu) << c;
        }
        for (int b = 0; b < BR_PLANES; b++) pl->p[b][j] = p[b];
    }
}

/* Word j of the cells holding tile (0..31). */
PCG_HD pcg_u64 br_planes_tile(const br_planes *pl, int j, int tile)
{
    BR_WORK(BR_WORK_PLANE_WORDS, 1);
    pcg_u64 x = pl->valid[j] & ~pl->p[5][j];
    for (int b = 0; b < 5; b++) x &= (tile >> b) & 1 ? pl->p[b][j] : ~pl->p[b][j];
    return x;
}

/* Number of cells holding tile (0..31). */
PCG_HD int br_planes_count(const br_planes *pl, int tile)
{
    int n = 0;
    for (int j = 0; j < pl->words; j++) n += br_bit_count64(br_planes_tile(pl, j, tile));
    return n;
}

/* m (br_mask_init's, allow -1) with every word built from the planes:
 * the cells of its tiles, or of none of them and no id past 31 where it
 * holds the complement. */
PCG_HD void br_planes_mask(br_mask *m, const br_planes *pl)
{
    for (int j = 0; j < m->words; j++) {
        pcg_u64 hit = 0;
        for (int q = 0; q < m->nt; q++)
            if (m->tiles[q] < 32) hit |= br_planes_tile(pl, j, m->tiles[q]);
        m->word[j] = m->invert ? pl->valid[j] & ~pl->p[5][j] & ~hit : hit;
    }
    m->built = m->words == 64 ? ~(pcg_u64)0 : (((pcg_u64)1 << m->words) - 1);
}

/* ---- A search kept between questions ----
 *
 * A reward asks several questions of one level from one cell with one
 * passable set (scenario 1's human reward: the player to each key slot
 * and to the door).  A kept search answers them all from one BFS, grown
 * only as far as the questions so far needed, each reached cell's
 * distance in bit planes (dist[b] holds bit b of it), so a later question
 * about a nearer cell is answered without growing it.  Its arrays hold
 * levels of up to BR_KEPT_WORDS words and distances below
 * 2^BR_KEPT_BITS; br_kept_fits says whether a level's do. */
typedef struct {
    int live;   /* 0: nothing kept (the planes not cleared either) */
    int over;   /* no layer is left to grow */
    int planes; /* distance planes the search has written: bits of its last layer */
    int src, layer;
    pcg_u32 open;
    br_mask pass;
    br_search s;
    pcg_u64 dist[BR_KEPT_BITS][BR_KEPT_WORDS];
} br_kept;

PCG_HD int br_kept_fits(int h, int w)
{
    return w >= 1 && h >= 1 && w <= 64 && (h + 64 / w - 1) / (64 / w) <= BR_KEPT_WORDS &&
           h * w <= (1 << BR_KEPT_BITS);
}

/* k kept from src through the cells of open (br_mask_init's), at layer
 * 0; its mask built from planes pl, or (pl NULL) word by word as the
 * search reaches it */
PCG_HD void br_kept_start(br_kept *k, const unsigned char *t, int h, int w, pcg_u32 open, int src,
                          const br_planes *pl)
{
    br_mask_init(&k->pass, t, h, w, open, -1);
    if (pl) br_planes_mask(&k->pass, pl);
    br_start(&k->s, &k->pass, src);
    /* only the planes a search of this entry wrote hold bits (all, the
     * first time); words past the level are never read */
    int dirty = k->live ? k->planes : BR_KEPT_BITS;
    BR_WORK(BR_WORK_KEPT_WORDS, dirty * k->pass.words);
    for (int b = 0; b < dirty; b++)
        for (int j = 0; j < k->pass.words; j++) k->dist[b][j] = 0;
    k->live = 1, k->over = 0, k->planes = 0, k->src = src, k->layer = 0, k->open = open;
}

/* The next layer, its distance into the planes; 0 when there is none. */
PCG_HD int br_kept_grow(br_kept *k)
{
    if (k->over || !br_step(&k->s, &k->pass)) return k->over = 1, 0;
    int d = ++k->layer;
    while (k->planes < BR_KEPT_BITS && d >> k->planes) k->planes++;
    for (int b = 0; b < BR_KEPT_BITS; b++) {
        if (!((d >> b) & 1)) continue;
        BR_WORK(BR_WORK_KEPT_WORDS, k->s.hi - k->s.lo + 1);
        for (int j = k->s.lo; j <= k->s.hi; j++) k->dist[b][j] |= k->s.fresh[j];
    }
    return 1;
}

/* Steps from the kept source to cell dst, -1 when it is never reached
 * (br_distance's answer). */
PCG_HD int br_kept_distance(br_kept *k, int dst)
{
    int j = dst / k->pass.span, d = 0;
    pcg_u64 bit = (pcg_u64)1 << (dst % k->pass.span);
    while (!(k->s.seen[j] & bit))
        if (!br_kept_grow(k)) return -1;
    BR_WORK(BR_WORK_KEPT_WORDS, BR_KEPT_BITS);
    for (int b = 0; b < BR_KEPT_BITS; b++)
        if (k->dist[b][j] & bit) d |= 1 << b;
    return d;
}

/* The least distance among the cells of cand (seen cells, words lo..hi):
 * from the top plane down, keep the cells whose bit is 0 where any is. */
PCG_HD int br_kept_least(const br_kept *k, pcg_u64 *cand, int lo, int hi)
{
    int d = 0;
    for (int b = BR_KEPT_BITS - 1; b >= 0; b--) {
        pcg_u64 zero = 0;
        BR_WORK(BR_WORK_KEPT_WORDS, hi - lo + 1);
        for (int j = lo; j <= hi; j++) zero |= cand[j] & ~k->dist[b][j];
        if (!zero) {
            d |= 1 << b;
            continue;
        }
        BR_WORK(BR_WORK_KEPT_WORDS, hi - lo + 1);
        for (int j = lo; j <= hi; j++) cand[j] &= ~k->dist[b][j];
    }
    return d;
}

/* Steps from the kept source to the nearest cell set in target, -1 when
 * none is reached (br_nearest's answer): the nearest of those already
 * reached, since every cell not reached is farther, else the first layer
 * that meets one. */
PCG_HD int br_kept_nearest(br_kept *k, br_mask *target)
{
    pcg_u64 cand[BR_KEPT_WORDS];
    int lo = -1, hi = -1;
    BR_WORK(BR_WORK_SCAN_WORDS, k->pass.words);
    for (int j = 0; j < k->pass.words; j++) {
        cand[j] = k->s.seen[j] ? k->s.seen[j] & br_mask_word(target, j) : 0;
        if (cand[j]) hi = j, lo = lo < 0 ? j : lo;
    }
    if (hi >= 0) return br_kept_least(k, cand, lo, hi);
    while (br_kept_grow(k)) {
        BR_WORK(BR_WORK_SCAN_WORDS, k->s.hi - k->s.lo + 1);
        for (int j = k->s.lo; j <= k->s.hi; j++)
            if (k->s.fresh[j] && (k->s.fresh[j] & br_mask_word(target, j))) return k->layer;
    }
    return -1;
}

/* lv_bfs's distances: dist[i] = steps from src (-1: unreachable) for every
 * cell, the same values the queue BFS writes.  With stop >= 0 the search
 * ends after the layer holding cell stop: the cells nearer than it hold
 * their distances, the rest -1 (enough for lv_path to stop).  With keep
 * not 0 only the cells set in keep get their distance, the rest -1 (a
 * search read at a few cells skips writing the others).  Returns the
 * number of cells whose distance it wrote. */
PCG_HD int br_bfs(br_mask *pass, int src, int stop, br_mask *keep, short *dist)
{
    br_search s;
    int cells = pass->h * pass->w, span = pass->span, reached = 1;
    for (int i = 0; i < cells; i++) dist[i] = -1;
    if (src < 0 || src >= cells) return 0;
    br_start(&s, pass, src);
    dist[src] = 0;
    if (stop >= cells) stop = -1;
    if (stop == src) return reached;
    for (short d = 1; br_step(&s, pass); d++) {
        for (int j = s.lo; j <= s.hi; j++) {
            pcg_u64 bits = s.fresh[j];
            if (keep && bits) bits &= br_mask_word(keep, j);
            for (; bits; bits &= bits - 1, reached++) dist[j * span + br_low_bit(bits)] = d;
        }
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

/* Row r of a mask whose words are all built. */
PCG_HD pcg_u64 br_row(const br_mask *m, int r)
{
    pcg_u64 row_bits = m->w == 64 ? ~(pcg_u64)0 : ((pcg_u64)1 << m->w) - 1;
    return (m->word[r / m->per] >> (r % m->per * m->w)) & row_bits;
}

/* Number of 4-connected regions of the cells set in m.  Each region is
 * flooded from its first cell; whole row runs are taken at once since
 * distances do not matter here, so the flood works on rows taken out of
 * the words (a run must not carry into the next row). */
PCG_HD int br_regions(br_mask *m)
{
    pcg_u64 seen[PCG_MAX_SIDE];
    const int h = m->h;
    int regions = 0;
    for (int j = 0; j < m->words; j++) br_mask_word(m, j);
    for (int r = 0; r < h; r++) seen[r] = 0;
    for (int r0 = 0; r0 < h; r0++) {
        pcg_u64 left;
        while ((left = br_row(m, r0) & ~seen[r0]) != 0) {
            regions++;
            seen[r0] |= br_fill_row(br_row(m, r0), left & (~left + 1));
            int lo = r0, hi = r0;
            while (hi >= lo) {
                int a = lo > 0 ? lo - 1 : 0, b = hi + 1 < h ? hi + 1 : h - 1;
                pcg_u64 above = a > 0 ? seen[a - 1] : 0;
                lo = h, hi = -1;
                BR_WORK(BR_WORK_ROUNDS, 1);
                BR_WORK(BR_WORK_STEP_WORDS, b - a + 1);
                for (int r = a; r <= b; r++) {
                    pcg_u64 cur = seen[r], below = r + 1 < h ? seen[r + 1] : 0, pass = br_row(m, r);
                    pcg_u64 grow = (above | below) & pass & ~cur;
                    above = cur;
                    if (!grow) continue;
                    seen[r] = cur | br_fill_row(pass, grow);
                    if (lo > r) lo = r;
                    hi = r;
                }
            }
        }
    }
    return regions;
}

#endif
