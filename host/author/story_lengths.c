/* Route lengths in a story: the total "the route about 30 steps" or the
 * two legs "the key about 20 steps from the player and the door 30 beyond"
 * (docs/offline-author.md, "Route lengths").  Each number of steps is read
 * with the words of its own phrase; a number whose leg those words do not
 * settle is refused, never guessed. */
#include "story_read.h"
#include "util.h"
#include <string.h>

static const char *const w_steps[] = {"step", "steps", "tile", "tiles", "cell", "cells", "move", "moves",
                                      "square", "squares", NULL};
static const char *const w_exact[] = {"exactly", "precisely", NULL};
static const char *const w_bound[] = {"least", "most", "more", "less", "fewer", "over", "under", "minimum",
                                      "maximum", "max", "min", "than", "below", "above", "beyond", "within",
                                      NULL};
const char *const story_w_route[] = {"route", "routes", "path", "paths", "way", "walk", "distance", "journey",
                                      "trip", NULL};
/* after a leg: "the door 30 beyond", "30 steps after the key" */
static const char *const w_after[] = {"after", "beyond", "further", "farther", "more", "past", "later", "on",
                                      "onward", "onwards", NULL};
/* through the key: the whole route, not a leg */
static const char *const w_via[] = {"by", "via", "through", "past", NULL};
static const char *const w_total[] = {"total", "altogether", "overall", "whole", "entire", "combined", NULL};
static const char *const w_start[] = {"start", "beginning", "spawn", "entrance", NULL};
static const char *const w_split[] = {"and", "then", "while", "whereas", NULL};

enum { LEG_NONE, LEG_KEY, LEG_DOOR, LEG_TOTAL, LEG_PLAYER_DOOR };

typedef struct {
    int s, e; /* the phrase of the number: tokens s..e-1 */
    int has_key, has_door, has_player, has_route, has_after, has_total, from_key, from_door, via_key, key_to_door;
} phrase;

static int is_unit_number(const story_token *tok, int nt, int i)
{
    if (tok[i].kind != T_WORD || story_count_value(tok[i].w) < 0) return 0;
    if (story_word_at(tok, nt, i + 1, w_steps)) return 1;
    return story_word_at(tok, nt, i + 2, w_steps) && !story_word_at(tok, nt, i + 1, (const char *const[]){"and", "to", NULL});
}

/* A number given as the tolerance ("give or take 4", "plus or minus 4 steps"). */
static int is_tolerance_number(const story_token *tok, int nt, int i)
{
    return story_word_at(tok, nt, i - 1, (const char *const[]){"take", "minus", NULL});
}

/* The numbers of steps, in order; "the door 30 beyond" counts once some
 * number has its unit. */
static int find_numbers(const story_token *tok, int nt, int *at, int max)
{
    int n = 0, unit = 0;
    for (int i = 0; i < nt; i++) unit |= is_unit_number(tok, nt, i) && !is_tolerance_number(tok, nt, i);
    for (int i = 0; i < nt && n < max; i++) {
        if (tok[i].kind != T_WORD || story_count_value(tok[i].w) < 0 || is_tolerance_number(tok, nt, i)) continue;
        if (story_word_at(tok, nt, i + 1, (const char *const[]){"and", "to", NULL}) && is_unit_number(tok, nt, i + 2))
            continue; /* the lower end of "between 20 and 30 steps" */
        if (is_unit_number(tok, nt, i) || (unit && story_word_at(tok, nt, i + 1, w_after))) at[n++] = i;
    }
    return n;
}

static int is_delim(const story_token *tok, int nt, int i, int split)
{
    if (tok[i].kind != T_WORD) return 1;
    if (!split || !story_in_list(tok[i].w, w_split)) return 0;
    /* "between 20 and 30 steps" is one phrase */
    return !(!strcmp(tok[i].w, "and") && i >= 2 && story_count_value(tok[i - 1].w) >= 0 &&
             story_word_at(tok, nt, i - 2, (const char *const[]){"between", "from", NULL}));
}

static int tile_at(const story_token *tok, int i, int e)
{
    return i < e && tok[i].kind == T_WORD ? story_noun_tile(tok[i].w) : -1;
}

/* What the words of number k's phrase say.  The phrase runs back over
 * commas to the end of the previous number's phrase or the sentence, and
 * on to the next mark. */
static void read_phrase(const story_token *tok, int nt, const int *at, int k, int split, phrase *p)
{
    memset(p, 0, sizeof *p);
    int lo = 0;
    if (k > 0) {
        lo = at[k - 1];
        while (lo < nt && !is_delim(tok, nt, lo, split)) lo++;
    }
    int s = at[k];
    while (s > lo && (tok[s - 1].kind == T_SOFT || !is_delim(tok, nt, s - 1, split))) s--;
    int e = at[k];
    while (e < nt && !is_delim(tok, nt, e, split)) e++;
    p->s = s, p->e = e;
    int key_at = -1;
    for (int i = s; i < e; i++) {
        if (tok[i].kind != T_WORD) continue;
        const char *w = tok[i].w;
        int t = story_noun_tile(w);
        int j = story_word_at(tok, nt, i + 1, (const char *const[]){"the", NULL}) ? i + 2 : i + 1;
        int before = story_in_list(w, (const char *const[]){"from", "of", NULL});
        p->has_key |= t == TILE_KEY;
        p->has_door |= t == TILE_DOOR;
        p->has_player |= t == TILE_PLAYER || story_in_list(w, w_start);
        p->has_route |= story_in_list(w, story_w_route);
        p->has_total |= story_in_list(w, w_total);
        p->has_after |= story_in_list(w, w_after); /* a bound ("more than 30") is refused by tolerance_of */
        if (before && tile_at(tok, j, e) == TILE_KEY) p->from_key = 1;
        if (before && tile_at(tok, j, e) == TILE_DOOR) p->from_door = 1;
        if (story_in_list(w, w_via) && tile_at(tok, j, e) == TILE_KEY) p->via_key = 1;
        if (t == TILE_KEY) key_at = i;
        if (t == TILE_DOOR && key_at >= 0)
            for (int m = key_at + 1; m < i; m++)
                if (tok[m].kind == T_WORD && !strcmp(tok[m].w, "to")) p->key_to_door = 1;
    }
}

/* The leg number k measures, or LEG_NONE when its words do not say. */
static int leg_of(const phrase *p, int multi, int leg_key_seen)
{
    if (p->has_key && p->has_door) {
        if (p->has_player || p->via_key) return LEG_TOTAL;
        if (p->from_key || p->from_door || p->key_to_door || p->has_after) return LEG_DOOR;
        return p->has_route || !multi ? LEG_TOTAL : LEG_NONE;
    }
    if (p->has_key) {
        if (p->has_player) return LEG_KEY;
        return p->from_key || p->has_after ? LEG_DOOR : LEG_KEY;
    }
    if (p->has_door) {
        if (p->has_player) return LEG_PLAYER_DOOR;
        if (p->has_after || (multi && leg_key_seen && !p->has_route)) return LEG_DOOR;
        return multi ? LEG_NONE : LEG_TOTAL;
    }
    if (p->has_total || p->has_route) return LEG_TOTAL;
    if (multi) return p->has_after && leg_key_seen ? LEG_DOOR : LEG_NONE;
    return p->has_player ? LEG_NONE : LEG_TOTAL;
}

enum { TOL_DEFAULT = -1 };

/* Number i's tolerance (TOL_DEFAULT for none or "about"), or -2 refused:
 * a bound on one side. */
static int tolerance_of(const story_token *tok, int nt, int i, int s, int *value, char *reason, int len)
{
    int v = story_count_value(tok[i].w), tol = TOL_DEFAULT;
    const char *b = NULL;
    if (story_word_at(tok, nt, i - 1, w_bound) && i - 1 >= s) b = tok[i - 1].w;
    if (story_word_at(tok, nt, i - 1, (const char *const[]){"to", NULL}) &&
        story_word_at(tok, nt, i - 2, (const char *const[]){"up", NULL}))
        b = "up to";
    int u = story_word_at(tok, nt, i + 1, w_steps) ? i + 2 : i + 3; /* after the unit */
    if (story_word_at(tok, nt, u, (const char *const[]){"or", "at", NULL}) &&
        story_word_at(tok, nt, u + 1, (const char *const[]){"more", "less", "fewer", "least", "most", "longer", "shorter", NULL}))
        b = tok[u + 1].w;
    if (story_word_at(tok, nt, u, (const char *const[]){"minimum", "maximum", "max", "min", NULL})) b = tok[u].w;
    if (b) {
        say_to(reason, len,
               "unsupported: the story bounds a route length on one side only ('%s'); the evaluator scores a "
               "length with a tolerance, e.g. 'about 30 steps' or 'between 25 and 35 steps'",
               b);
        return -2;
    }
    for (int j = i - 1; j >= s && j >= i - 3 && tok[j].kind == T_WORD; j--)
        if (story_in_list(tok[j].w, w_exact)) tol = 0;
    if (story_word_at(tok, nt, u, w_exact)) tol = 0;
    /* "between A and B steps" */
    if (i >= 3 && story_word_at(tok, nt, i - 1, (const char *const[]){"and", "to", NULL}) &&
        story_word_at(tok, nt, i - 3, (const char *const[]){"between", "from", NULL}) &&
        story_count_value(tok[i - 2].w) >= 0 && story_count_value(tok[i - 2].w) < v) {
        int lo = story_count_value(tok[i - 2].w);
        v = (lo + v) / 2;
        tol = (story_count_value(tok[i].w) - lo + 1) / 2;
    }
    /* "30 steps, give or take 4" / "plus or minus 4" */
    for (int j = i + 1; j < nt && j <= i + 7; j++)
        if (story_word_at(tok, nt, j, (const char *const[]){"take", "minus", NULL}) && j + 1 < nt &&
            story_count_value(tok[j + 1].w) >= 0) {
            tol = story_count_value(tok[j + 1].w);
            break;
        }
    *value = v;
    return tol;
}

/* "exactly" or "give or take M" in a phrase of its own (", exactly") says
 * it of every leg: 0 or M, TOL_DEFAULT when there is none. */
static int global_tolerance(const story_token *tok, int nt, const int *at, int n)
{
    for (int i = 0; i < nt; i++) {
        int take = story_word_at(tok, nt, i, (const char *const[]){"take", "minus", NULL}) && i + 1 < nt &&
                   story_count_value(tok[i + 1].w) >= 0;
        if (!take && !story_word_at(tok, nt, i, w_exact)) continue;
        int near = 0; /* "exactly 20 steps", "20 steps exactly", "20 steps, give or take 2": that number's */
        for (int k = 0; k < n; k++) {
            int unit_end = story_word_at(tok, nt, at[k] + 1, w_steps) ? at[k] + 2 : at[k] + 3;
            near |= take ? i > at[k] && i <= at[k] + 7 : (i >= at[k] - 3 && i < at[k]) || i == unit_end;
        }
        if (!near) return take ? story_count_value(tok[i + 1].w) : 0;
    }
    return TOL_DEFAULT;
}

static const char *const leg_names[] = {"", "player -> key", "key -> door", "whole route"};

/* Each number to its leg; the same leg twice must agree. */
static int assign_legs(const story_token *tok, int nt, const int *at, int n, int legs[4], int tols[4],
                       char *reason, int len)
{
    int tol_all = global_tolerance(tok, nt, at, n);
    for (int k = 0; k < n; k++) {
        phrase p;
        read_phrase(tok, nt, at, k, n > 1, &p);
        int leg = leg_of(&p, n > 1, legs[LEG_KEY] > 0);
        if (leg == LEG_PLAYER_DOOR) {
            say_to(reason, len,
                   "unsupported: the story gives %s steps from the player to the door; the evaluator measures the "
                   "route Player -> Key -> Door, or its two legs",
                   tok[at[k]].w);
            return -1;
        }
        if (leg == LEG_NONE) {
            say_to(reason, len,
                   "ambiguous: the story does not say which part of the route its %s steps are (the player -> key "
                   "leg, the key -> door leg, or the whole route)",
                   tok[at[k]].w);
            return -1;
        }
        int v, tol = tolerance_of(tok, nt, at[k], p.s, &v, reason, len);
        if (tol == -2) return -1;
        if (tol == TOL_DEFAULT) tol = tol_all;
        if (legs[leg] && (legs[leg] != v || tols[leg] != tol)) {
            say_to(reason, len, "contradictory: the story gives the %s two lengths (%d and %d steps)", leg_names[leg],
                   legs[leg], v);
            return -1;
        }
        legs[leg] = v;
        tols[leg] = tol;
    }
    return 0;
}

/* The two legs with one tolerance, from legs[] (the total may give the
 * missing one). */
static int combine(int legs[4], int tols[4], story_lengths_t *L, char *reason, int len)
{
    int a = legs[LEG_KEY], b = legs[LEG_DOOR], t = legs[LEG_TOTAL];
    if (!a && !b) {
        L->total = t;
        L->tolerance = tols[LEG_TOTAL] == TOL_DEFAULT ? target_default_tolerance(t) : tols[LEG_TOTAL];
        return 0;
    }
    if (t && a && b && a + b != t) {
        say_to(reason, len, "contradictory: the legs %d and %d steps add up to %d, but the story asks for %d in all", a,
               b, a + b, t);
        return -1;
    }
    if (t && (!a || !b)) {
        int known = a ? a : b;
        if (known >= t) {
            say_to(reason, len, "contradictory: a leg of %d steps does not fit in a route of %d", known, t);
            return -1;
        }
        if (!a) a = t - b, tols[LEG_KEY] = tols[LEG_TOTAL];
        else b = t - a, tols[LEG_DOOR] = tols[LEG_TOTAL];
    }
    if (!a || !b) {
        say_to(reason, len,
               "incomplete: the story gives the %s leg (%d steps) but not the %s leg; a two-leg target needs both",
               a ? leg_names[LEG_KEY] : leg_names[LEG_DOOR], a ? a : b, a ? leg_names[LEG_DOOR] : leg_names[LEG_KEY]);
        return -1;
    }
    int ta = tols[LEG_KEY], tb = tols[LEG_DOOR];
    if (ta != tb && (ta == TOL_DEFAULT || tb == TOL_DEFAULT)) {
        say_to(reason, len,
               "ambiguous: the story gives a tolerance ('exactly', 'give or take') for one leg only; say it of both");
        return -1;
    }
    if (ta != tb) {
        say_to(reason, len, "unsupported: the legs ask for different tolerances (%d and %d steps); a two-leg target has one",
               ta, tb);
        return -1;
    }
    L->leg_key = a, L->leg_door = b;
    L->tolerance = ta == TOL_DEFAULT ? target_default_tolerance(a < b ? a : b) : ta;
    return 0;
}

int story_read_lengths(const story_token *tok, int nt, story_lengths_t *L, char *reason, int len)
{
    memset(L, 0, sizeof *L);
    int cap = (int)(sizeof L->at / sizeof L->at[0]);
    int n = find_numbers(tok, nt, L->at, cap);
    L->nat = n;
    if (!n) return 0;
    L->found = 1;
    if (n > 4) {
        say_to(reason, len, "unsupported: the story names %d numbers of steps; a route has two legs", n);
        return -1;
    }
    int legs[4] = {0}, tols[4] = {0};
    if (assign_legs(tok, nt, L->at, n, legs, tols, reason, len)) return -1;
    return combine(legs, tols, L, reason, len);
}
