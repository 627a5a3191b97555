/* Bit-row searches on small levels: those whose cells fit four words of
 * bitrows.h's layout (64 / w rows to a word), the default 16x16 map among
 * them.  With the word count fixed the loops unroll and a search's sets
 * stay in registers, and a search can keep every layer (at most 256
 * cells, so at most 256 layers of four words) where lv_bfs_rows writes a
 * distance per cell.  A path is rebuilt from those layers with lv_path's
 * rule, and the evaluator's score-only pass (eval_score.c) uses them.
 * tests/test_bitrows.c compares each function with the queue BFS. */
#ifndef PCG_BITROWS4_H
#define PCG_BITROWS4_H
#include "level.h"

#define BR4_WORDS 4
#define BR4_CELLS 256 /* the most cells four words hold (w = 1, 64 rows each) */

typedef struct {
    int h, w, per, span, words;
    int edge, vert;          /* the first bit of a word's last row; w when a word holds two rows or more, else 0 */
    pcg_u64 first, last;     /* the bits of column 0 and of column w-1 in a word */
    pcg_u64 valid[BR4_WORDS]; /* the level's cells */
    unsigned char row_word[BR4_CELLS], row_shift[BR4_CELLS]; /* where row r lies: its word, its column 0's bit */
} br4_shape;

/* 1 when an h x w level fits four words (and the bit-row searches of the
 * level core take it: both sides at most PCG_MAX_SIDE). */
PCG_HD int br4_fits(int h, int w)
{
    return h >= 1 && w >= 1 && h <= PCG_MAX_SIDE && w <= PCG_MAX_SIDE && w <= 64 && h <= BR4_WORDS * (64 / w);
}

/* The layout of a level that br4_fits: br_mask's, with the rows' places. */
PCG_HD void br4_shape_init(br4_shape *g, int h, int w)
{
    br_mask m;
    br_mask_init(&m, 0, h, w, 0, -1);
    g->h = h;
    g->w = w;
    g->per = m.per;
    g->span = m.span;
    g->words = m.words;
    g->edge = m.edge;
    g->vert = m.per > 1 ? w : 0;
    g->first = m.first;
    g->last = m.last;
    pcg_u64 row_bits = w == 64 ? ~(pcg_u64)0 : ((pcg_u64)1 << w) - 1;
    for (int j = 0; j < BR4_WORDS; j++) g->valid[j] = 0;
    for (int r = 0; r < h; r++) {
        g->row_word[r] = (unsigned char)(r / g->per);
        g->row_shift[r] = (unsigned char)(r % g->per * w);
        g->valid[r / g->per] |= row_bits << g->row_shift[r];
    }
}

/* 1 when cell (r, c) is set in x; br4_set sets it. */
PCG_HD int br4_has(const br4_shape *g, const pcg_u64 *x, int r, int c)
{
    return (int)((x[g->row_word[r]] >> (g->row_shift[r] + c)) & 1u);
}

PCG_HD void br4_set(const br4_shape *g, pcg_u64 *x, int r, int c)
{
    x[g->row_word[r]] |= (pcg_u64)1 << (g->row_shift[r] + c);
}

#if defined(__SSE2__) && !defined(__CUDACC__)
#define BR4_SSE2 1
#include <emmintrin.h>

/* br4_masks where the words hold the cells one after another (span 64)
 * and they come in whole blocks of 16: a byte compare and a move of the
 * sixteen top bits per tile and block. */
static inline void br4_masks16(const unsigned char *t, int cells, pcg_u64 *pass, const unsigned char *tiles, int n,
                               pcg_u64 (*out)[BR4_WORDS])
{
    for (int j = 0; j < BR4_WORDS; j++) {
        if (pass) pass[j] = 0;
        for (int i = 0; i < n; i++) out[i][j] = 0;
    }
    const __m128i high = _mm_set1_epi8((char)0xE0), zero = _mm_setzero_si128();
    const __m128i wall = _mm_set1_epi8(TILE_WALL), border = _mm_set1_epi8(TILE_BORDER);
    for (int c = 0; c < cells; c += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(t + c));
        int j = c / 64, at = c % 64;
        if (pass) {
            unsigned low = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_and_si128(v, high), zero));
            unsigned blocked = (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, wall), _mm_cmpeq_epi8(v, border)));
            pass[j] |= (pcg_u64)(low & ~blocked) << at;
        }
        for (int i = 0; i < n; i++)
            out[i][j] |= (pcg_u64)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8((char)tiles[i]))) << at;
    }
}

/* br4_around on 16-wide rows (four rows to a word, the default map): the
 * four words as two registers, up and down one shift of two bytes across
 * them, left and right shifts within each word. */
static inline void br4_around16(const pcg_u64 *x, pcg_u64 *out)
{
    const __m128i first = _mm_set1_epi64x(0x0001000100010001ll), last = _mm_set1_epi64x((long long)0x8000800080008000ull);
    __m128i lo = _mm_loadu_si128((const __m128i *)x), hi = _mm_loadu_si128((const __m128i *)(x + 2));
    __m128i up_lo = _mm_or_si128(_mm_srli_si128(lo, 2), _mm_slli_si128(hi, 14)), up_hi = _mm_srli_si128(hi, 2);
    __m128i down_lo = _mm_slli_si128(lo, 2), down_hi = _mm_or_si128(_mm_slli_si128(hi, 2), _mm_srli_si128(lo, 14));
    __m128i n_lo = _mm_or_si128(_mm_andnot_si128(first, _mm_slli_epi64(lo, 1)), _mm_andnot_si128(last, _mm_srli_epi64(lo, 1)));
    __m128i n_hi = _mm_or_si128(_mm_andnot_si128(first, _mm_slli_epi64(hi, 1)), _mm_andnot_si128(last, _mm_srli_epi64(hi, 1)));
    _mm_storeu_si128((__m128i *)out, _mm_or_si128(n_lo, _mm_or_si128(up_lo, down_lo)));
    _mm_storeu_si128((__m128i *)(out + 2), _mm_or_si128(n_hi, _mm_or_si128(up_hi, down_hi)));
}
#else
#define BR4_SSE2 0
#endif

/* The cells next to those of x (4-connected), as br_around: left and
 * right within a row, up and down within a word and across to the words
 * around it.  Where a word holds one row the vertical shift is 0 and x
 * itself is among the answer, and bits past a word's span may be set:
 * every caller masks with passable cells or the level's. */
PCG_HD void br4_around(const br4_shape *g, const pcg_u64 *x, pcg_u64 *out)
{
#if BR4_SSE2
    if (g->w == 16) {
        br4_around16(x, out);
        return;
    }
#endif
    /* the shape and x read once: a store to out may alias them */
    const pcg_u64 not_first = ~g->first, not_last = ~g->last;
    const int vert = g->vert, edge = g->edge;
    pcg_u64 v[BR4_WORDS];
    for (int j = 0; j < BR4_WORDS; j++) v[j] = x[j];
    for (int j = 0; j < BR4_WORDS; j++) {
        pcg_u64 n = ((v[j] << 1) & not_first) | ((v[j] >> 1) & not_last) | (v[j] << vert) | (v[j] >> vert);
        if (j > 0) n |= v[j - 1] >> edge;
        if (j + 1 < BR4_WORDS) n |= v[j + 1] << edge;
        out[j] = n;
    }
}

/* One BFS layer: fresh (the last layer) becomes its passable neighbours
 * that seen lacks, and seen takes them.  0 when the new layer is empty. */
PCG_HD pcg_u64 br4_step(const br4_shape *g, const pcg_u64 *pass, pcg_u64 *seen, pcg_u64 *fresh)
{
    pcg_u64 n[BR4_WORDS], any = 0;
    br4_around(g, fresh, n);
    for (int j = 0; j < BR4_WORDS; j++) {
        n[j] &= pass[j] & ~seen[j];
        seen[j] |= n[j];
        fresh[j] = n[j];
        any |= n[j];
    }
    return any;
}

/* The layer beside a search that stays clear of the cells of stop: of
 * fresh, the cells that just joined the search at distance d, those next
 * to free_prev (the cells at distance d - 1 that a shortest path reaches
 * with no cell of stop on it) join free the same way.  Into free_out the
 * ones outside stop, returned in hit those in stop (reached at distance d
 * with no other cell of stop on the way).  So a cell of free_out is at
 * the same distance whether stop blocks or not, and a cell of hit at the
 * same distance when stop blocks but it.  0 when free_out is empty. */
PCG_HD pcg_u64 br4_step_free(const br4_shape *g, const pcg_u64 *fresh, const pcg_u64 *stop, const pcg_u64 *free_prev,
                             pcg_u64 *free_out, pcg_u64 *hit)
{
    pcg_u64 near[BR4_WORDS], any = 0;
    br4_around(g, free_prev, near);
    for (int j = 0; j < BR4_WORDS; j++) {
        pcg_u64 reached = near[j] & fresh[j];
        hit[j] = reached & stop[j];
        free_out[j] = reached & ~stop[j];
        any |= free_out[j];
    }
    return any;
}

/* The path lv_path rebuilds from the cell (r, c) at distance d, as cells
 * set in out: layer[i] holds the cells at distance i that the path may
 * use (layer[0] the source), and each step goes to the first neighbour on
 * the layer below, in the order up, left, right, down.  (r, c) itself
 * need not be in layer[d].  Returns the number of cells set. */
PCG_HD int br4_path(const br4_shape *g, const pcg_u64 (*layer)[BR4_WORDS], int d, int r, int c, pcg_u64 *out)
{
    int n = 1;
    br4_set(g, out, r, c);
    for (; d > 0; d--, n++) {
        const pcg_u64 *below = layer[d - 1];
        if (r > 0 && br4_has(g, below, r - 1, c)) r--;
        else if (c > 0 && br4_has(g, below, r, c - 1)) c--;
        else if (c + 1 < g->w && br4_has(g, below, r, c + 1)) c++;
        else if (r + 1 < g->h && br4_has(g, below, r + 1, c)) r++;
        else return n; /* not a layer's cell: no path */
        br4_set(g, out, r, c);
    }
    return n;
}

/* The cells within Chebyshev distance 2 of those of x (5 x 5 windows,
 * cut at the level's edges): two king's moves, each a row's neighbours
 * and then the rows above and below. */
PCG_HD void br4_window5(const br4_shape *g, const pcg_u64 *x, pcg_u64 *out)
{
    pcg_u64 a[BR4_WORDS];
    for (int j = 0; j < BR4_WORDS; j++) out[j] = x[j];
    for (int round = 0; round < 2; round++) {
        for (int j = 0; j < BR4_WORDS; j++) {
            pcg_u64 v = out[j];
            a[j] = (v | ((v << 1) & ~g->first) | ((v >> 1) & ~g->last)) & g->valid[j];
        }
        for (int j = 0; j < BR4_WORDS; j++) {
            pcg_u64 v = a[j] | (a[j] << g->vert) | (a[j] >> g->vert);
            if (j > 0) v |= a[j - 1] >> g->edge;
            if (j + 1 < BR4_WORDS) v |= a[j + 1] << g->edge;
            out[j] = v & g->valid[j];
        }
    }
}


/* From the tile bytes t of the level: pass, the cells a search with only
 * WALL and BORDER blocking enters (as br_mask_init with
 * ~PCG_BLOCK_DEFAULT: ids past 31 block too), unless pass is 0, and
 * out[i] the cells holding tiles[i], i < n (n <= 8).  Eight cells per
 * load, as br_mask_build, or sixteen with SSE2 where the layout allows. */
PCG_HD void br4_masks(const br4_shape *g, const unsigned char *t, pcg_u64 *pass, const unsigned char *tiles, int n,
                      pcg_u64 (*out)[BR4_WORDS])
{
    const int cells = g->h * g->w;
#if BR4_SSE2
    if (g->span == 64 && cells % 16 == 0) {
        br4_masks16(t, cells, pass, tiles, n, out);
        return;
    }
#endif
    for (int j = 0; j < BR4_WORDS; j++) {
        pcg_u64 p = 0, hit[8] = {0};
        int base = j * g->span, len = cells - base < g->span ? cells - base : g->span;
        for (int c = 0; c < len; c += 8) {
            int k = len - c < 8 ? len - c : 8;
            pcg_u64 v = br_load(t + base + c, k), keep = k == 8 ? 0xFFu : (1u << k) - 1u;
            if (pass) {
                pcg_u64 open = br_bytes_eq(v & (BR_ONES * 0xE0u), 0) & ~br_bytes_eq(v, TILE_WALL) &
                               ~br_bytes_eq(v, TILE_BORDER);
                p |= (br_gather(open) & keep) << c;
            }
            for (int i = 0; i < n; i++) hit[i] |= (br_gather(br_bytes_eq(v, tiles[i])) & keep) << c;
        }
        if (pass) pass[j] = p;
        for (int i = 0; i < n; i++) out[i][j] = hit[i];
    }
}

#endif
