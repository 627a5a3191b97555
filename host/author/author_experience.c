/* The offline author's experience terms: see author_experience.h. */
#include "author_experience.h"
#include "author_offline.h"
#include "level.h"
#include "target.h"
#include "util.h"
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* Which feature moves which dimension, by the offline judge's proxies
 * (docs/prefer.md#the-offline-judge): forks give choices (autonomy,
 * decision), dead ends make wrong turns (cognitive up; ease, progress and
 * mastery down), open floor invites exploring (curiosity), an enemy by the
 * key puts danger on the way to it (emotional, meaning, immersion).
 * Goals and challenge fit hang on where the key and door lie, which the
 * story's target already decides: no lever. */
static const struct {
    const char *dim;
    int kind, sign;
} levers[] = {
    {"autonomy", AT_EXP_FORKS, +1},         {"decision", AT_EXP_FORKS, +1},
    {"cognitive", AT_EXP_DEAD_ENDS, +1},     {"ease_of_control", AT_EXP_DEAD_ENDS, -1},
    {"progress_feedback", AT_EXP_DEAD_ENDS, -1}, {"mastery", AT_EXP_DEAD_ENDS, -1},
    {"curiosity", AT_EXP_OPEN, +1},          {"emotional", AT_EXP_GUARD, +1},
    {"meaning", AT_EXP_GUARD, +1},           {"immersion", AT_EXP_GUARD, +1},
};

int author_is_experience(int kind) { return kind >= AT_EXP_FORKS && kind <= AT_EXP_GUARD; }

int author_experience_lever(const char *dim_id, int *sign)
{
    for (size_t i = 0; dim_id && i < sizeof levers / sizeof levers[0]; i++)
        if (!strcmp(levers[i].dim, dim_id)) {
            *sign = levers[i].sign;
            return levers[i].kind;
        }
    return -1;
}

int author_experience_revise(author_reward *r, const char *dim_id, int direction, float strength, char *note,
                             int len)
{
    int sign, kind = author_experience_lever(dim_id, &sign);
    if (kind < 0) {
        say_to(note, len, "the offline author has no lever for %s: it is set by the story's target", dim_id);
        return 0;
    }
    float want = (float)(direction * sign) * strength;
    for (int i = 0; i < r->n; i++) {
        author_term *t = &r->term[i];
        if (t->kind != kind) continue;
        float next = t->weight * strength;
        if ((t->weight > 0) != (want > 0)) next = want; /* steered the other way before: turn it round */
        if (!(fabsf(next) <= AUTHOR_WEIGHT_MAX)) {
            say_to(note, len, "%s is at its largest weight", author_term_name(kind));
            return 0;
        }
        say_to(note, len, "%s weight %.4g -> %.4g (%s %s)", author_term_name(kind), (double)t->weight,
               (double)next, direction > 0 ? "raise" : "lower", dim_id);
        t->weight = next;
        t->changes++;
        r->revision++;
        return 1;
    }
    if (r->n >= AUTHOR_MAX_TERMS) {
        say_to(note, len, "no room for another term");
        return 0;
    }
    r->term[r->n++] = (author_term){kind, 0, want, AF_BINARY, 0, 0};
    r->revision++;
    say_to(note, len, "added %s with weight %.4g (%s %s)", author_term_name(kind), (double)want,
           direction > 0 ? "raise" : "lower", dim_id);
    return 1;
}

/* The shape of the floor, counted once for every term that reads it. */
static void emit_shape(FILE *b)
{
    fprintf(b, "        /* experience: the floor's shape (forks, dead ends, open cells) */\n");
    fprintf(b, "        int xp_forks = 0, xp_ends = 0, xp_open = 0;\n");
    fprintf(b, "        for (int xr = 0; xr < level_height(l); xr++)\n");
    fprintf(b, "            for (int xc = 0; xc < level_width(l); xc++) {\n");
    fprintf(b, "                int xt = tile_at(l, xr, xc);\n");
    fprintf(b, "                if (xt == WALL || xt == BORDER) continue;\n");
    fprintf(b, "                int ways = 0;\n");
    fprintf(b, "                for (int m = 0; m < 4; m++) {\n");
    fprintf(b, "                    int u = tile_at(l, xr + (m == 0) - (m == 1), xc + (m == 2) - (m == 3));\n");
    fprintf(b, "                    ways += u != WALL && u != BORDER;\n");
    fprintf(b, "                }\n");
    fprintf(b, "                xp_open++;\n");
    fprintf(b, "                xp_forks += ways >= 3;\n");
    fprintf(b, "                xp_ends += ways == 1;\n");
    fprintf(b, "            }\n");
    fprintf(b, "        float xp_cells = (float)(level_height(l) * level_width(l));\n");
}

static void emit_guard(FILE *b)
{
    fprintf(b, "        /* experience: enemy types with one within 3 steps of the key */\n");
    fprintf(b, "        int xk_r[1], xk_c[1], xp_guard = 0;\n");
    fprintf(b, "        if (find_tiles(l, KEY, xk_r, xk_c, 1) > 0) {\n");
    for (int e = 0; e < TARGET_N_ENEMIES; e++) {
        fprintf(b, "            { int d = nearest_tile_distance(l, xk_r[0], xk_c[0], %s);\n",
            target_tile_name(TILE_BAT + e));
        fprintf(b, "              xp_guard += d >= 0 && d <= 3; }\n");
    }
    fprintf(b, "        }\n");
}

/* One term, added to v; every feature through fminf (libtcc's x86-64 code
 * for a bare float division added to v crashed in the sandbox's check). */
static void emit_term(FILE *b, const author_term *t)
{
    char w[40];
    c_float_literal(t->weight, w);
    switch (t->kind) {
    case AT_EXP_FORKS:
        fprintf(b, "        v += %s * fminf((float)xp_forks / (xp_cells / 8.0f), 1.0f); /* exp_forks */\n", w);
        break;
    case AT_EXP_DEAD_ENDS:
        fprintf(b, "        v += %s * fminf((float)xp_ends / (xp_cells / 32.0f), 1.0f); /* exp_dead_ends */\n", w);
        break;
    case AT_EXP_OPEN: fprintf(b, "        v += %s * fminf((float)xp_open / xp_cells, 1.0f); /* exp_open */\n", w); break;
    case AT_EXP_GUARD: fprintf(b, "        v += %s * fminf((float)xp_guard / 3.0f, 1.0f); /* exp_guard */\n", w); break;
    default: break;
    }
}

int author_experience_code(const author_reward *r, char *buf, size_t len)
{
    if (!buf || !len) return -1;
    buf[0] = 0;
    char *text = NULL;
    size_t n = 0;
    FILE *b = open_memstream(&text, &n);
    if (!b) return -1;
    int shape = 0, guard = 0;
    for (int i = 0; i < r->n; i++) {
        shape |= r->term[i].kind == AT_EXP_FORKS || r->term[i].kind == AT_EXP_DEAD_ENDS ||
                 r->term[i].kind == AT_EXP_OPEN;
        guard |= r->term[i].kind == AT_EXP_GUARD;
    }
    if (shape) emit_shape(b);
    if (guard) emit_guard(b);
    for (int i = 0; i < r->n; i++) emit_term(b, &r->term[i]);
    int bad = ferror(b);
    if (fclose(b) || bad || n >= len) {
        free(text);
        return -1;
    }
    memcpy(buf, text, n + 1);
    free(text);
    return (int)n;
}
