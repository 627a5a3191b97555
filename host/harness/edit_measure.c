/* The editing loop's measurements and the texts made of them: feedback,
 * history and path guidance.  Every text the editor is shown is a
 * template of prompts/harness/. */
#include "edit_internal.h"
#include "eval.h"
#include "feasible.h"
#include "levelio.h"
#include "prompts.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The distance a missing leg counts for: beyond any leg a map can hold. */
#define LEG_MISSING 10000L

static long leg_off(int got, int want) { return got < 0 ? LEG_MISSING : labs((long)got - want); }

/* What target_level_valid checks, counted: a level two tiles short of
 * its fix is nearer to valid than one five short, though neither is. */
static int validity_defects(const target_t *t, const level_t *l)
{
    static const int once[3] = {TILE_PLAYER, TILE_DOOR, TILE_KEY};
    int n = 0;
    for (int i = 0; i < 3; i++) n += abs(lv_count(l, once[i]) - 1);
    int enemies = lv_count(l, TILE_BAT) + lv_count(l, TILE_SCORPION) + lv_count(l, TILE_SPIDER);
    if (t->enemy_count) n += abs(enemies - t->enemy_count);
    int regions = lv_regions(l);
    return n + (regions > 1 ? regions - 1 : 0);
}

void edit_measure(const target_t *t, const level_t *l, edit_measure_t *m)
{
    memset(m, 0, sizeof *m);
    m->valid = target_level_valid(t, l, m->reason, sizeof m->reason) == 0;
    m->defects = m->valid ? 0 : validity_defects(t, l);
    eval_scenario_t s;
    target_to_scenario(t, NULL, &s);
    eval_level_t e;
    eval_level(&s, l, &e);
    m->route_key = e.route_key;
    m->route_door = e.route_door;
    m->route = e.route;
    m->perfect = m->valid && e.perfect;
    if (target_is_two_leg(t)) m->distance = leg_off(e.route_key, t->leg_key) + leg_off(e.route_door, t->leg_door);
    else m->distance = leg_off(e.route, t->length);
}

int edit_better(const edit_measure_t *a, const edit_measure_t *b)
{
    if (a->valid != b->valid) return a->valid > b->valid;
    if (a->defects != b->defects) return a->defects < b->defects;
    return a->distance < b->distance;
}

char *edit_level_text(const level_t *l)
{
    char *s = malloc((size_t)(l->h * (l->w + 1) + 1));
    if (!s) return NULL;
    int j = 0;
    for (int r = 0; r < l->h; r++) {
        for (int c = 0; c < l->w; c++) s[j++] = tile_char(lv_get(l, r, c));
        s[j++] = '\n';
    }
    s[j] = 0;
    return s;
}

static void leg_text(char *buf, int len, const char *name, int got, int want)
{
    if (got < 0) snprintf(buf, (size_t)len, "%s: no path (wanted %d)", name, want);
    else snprintf(buf, (size_t)len, "%s %d steps (wanted %d)", name, got, want);
}

void edit_legs_text(const target_t *t, const edit_measure_t *m, char *buf, int len)
{
    char a[80], b[80];
    if (target_is_two_leg(t)) {
        leg_text(a, sizeof a, "player -> key", m->route_key, t->leg_key);
        leg_text(b, sizeof b, "key -> door", m->route_door, t->leg_door);
        snprintf(buf, (size_t)len, "%s, %s", a, b);
    } else {
        leg_text(buf, len, "route player -> key -> door", m->route, t->length);
    }
}

static void validity_text(const edit_measure_t *m, char *buf, int len)
{
    if (m->valid) snprintf(buf, (size_t)len, "valid");
    else snprintf(buf, (size_t)len, "not valid: %s", m->reason);
}

char *edit_feedback_text(const target_t *t, const edit_measure_t *m, char *err, int errlen)
{
    char legs[200], validity[240];
    edit_legs_text(t, m, legs, sizeof legs);
    validity_text(m, validity, sizeof validity);
    prompt_var v[] = {{"legs", legs}, {"validity", validity}};
    return prompt_render("harness", "edit_feedback", v, 2, err, errlen);
}

char *edit_history_text(const edit_step_t *steps, int n, char *err, int errlen)
{
    size_t cap = 256 + (size_t)n * 400, len = 0;
    char *lines = malloc(cap);
    if (!lines) return NULL;
    lines[0] = 0;
    for (int i = 0; i < n; i++) {
        const edit_step_t *s = &steps[i];
        char step[16], calls[64], legs[200], validity[240];
        snprintf(step, sizeof step, "%d", s->step);
        snprintf(calls, sizeof calls, "%d call%s (%d refused, %d cells changed)", s->calls, s->calls == 1 ? "" : "s",
                 s->refused, s->changed);
        if (s->m.route < 0 && s->m.route_key < 0) snprintf(legs, sizeof legs, "no solution route");
        else snprintf(legs, sizeof legs, "player -> key %d, key -> door %d", s->m.route_key, s->m.route_door);
        validity_text(&s->m, validity, sizeof validity);
        prompt_var v[] = {{"step", step}, {"calls", calls}, {"outcome", s->outcome}, {"legs", legs},
                          {"validity", validity}};
        char *line = prompt_render("harness", "edit_history_step", v, 5, err, errlen);
        if (!line) {
            free(lines);
            return NULL;
        }
        size_t ll = strlen(line);
        if (len + ll + 1 < cap) {
            memcpy(lines + len, line, ll + 1);
            len += ll;
        }
        free(line);
    }
    prompt_var v[] = {{"history", lines}};
    char *s = prompt_render("harness", "edit_history", v, 1, err, errlen);
    free(lines);
    return s;
}

typedef struct {
    unsigned char *mark;
    int seen[2];
    int n;
} route_marks;

static int mark_leg(void *ctx, const eval_leg_t *leg)
{
    route_marks *r = ctx;
    int k = leg->kind == EVAL_LEG_PLAYER_KEY ? 0 : leg->kind == EVAL_LEG_KEY_DOOR ? 1 : -1;
    if (k < 0 || r->seen[k]) return 0; /* the legs of the evaluator's route: the first of each */
    r->seen[k] = 1;
    for (int i = 0; i < leg->n; i++) {
        if (!r->mark[leg->cells[i]]) r->n++;
        r->mark[leg->cells[i]] |= (unsigned char)(1 << k);
    }
    return 0;
}

int edit_route_cells(const target_t *t, const level_t *l, unsigned char *mark)
{
    memset(mark, 0, (size_t)(l->h * l->w));
    eval_scenario_t s;
    target_to_scenario(t, NULL, &s);
    route_marks r = {mark, {0, 0}, 0};
    eval_routes(&s, l, mark_leg, &r);
    return r.n;
}

/* What a wall at cell does to each leg, as one line. */
static void wall_effect(const target_t *t, const level_t *l, const edit_measure_t *now, int cell, char *buf,
                        size_t len)
{
    unsigned char tiles[PCG_MAX_CELLS];
    memcpy(tiles, l->t, (size_t)(l->h * l->w));
    tiles[cell] = TILE_WALL;
    level_t c = {l->h, l->w, tiles};
    edit_measure_t m;
    edit_measure(t, &c, &m);
    int r = cell / l->w, col = cell % l->w;
    if (m.route_key < 0 || m.route_door < 0)
        snprintf(buf, len, "(%d,%d): a wall cuts the route\n", r, col);
    else
        snprintf(buf, len, "(%d,%d): a wall makes player -> key %d (%+d), key -> door %d (%+d)%s\n", r, col,
                 m.route_key, m.route_key - now->route_key, m.route_door, m.route_door - now->route_door,
                 m.valid ? "" : ", and the level invalid");
}

#define GUIDANCE_CELLS 60

char *edit_guidance_text(const target_t *t, const level_t *l, char *err, int errlen)
{
    unsigned char mark[PCG_MAX_CELLS];
    edit_route_cells(t, l, mark);
    edit_measure_t now;
    edit_measure(t, l, &now);
    char *map = edit_level_text(l);
    size_t cap = (size_t)GUIDANCE_CELLS * 100 + 64, len = 0;
    char *cells = malloc(cap);
    if (!map || !cells) {
        free(map);
        free(cells);
        return NULL;
    }
    cells[0] = 0;
    int shown = 0;
    for (int i = 0; i < l->h * l->w; i++) {
        if (!mark[i]) continue;
        int tile = l->t[i];
        if (tile == TILE_EMPTY) map[(i / l->w) * (l->w + 1) + i % l->w] = mark[i] == 1 ? '1' : mark[i] == 2 ? '2' : '3';
        if (tile != TILE_EMPTY || shown >= GUIDANCE_CELLS) continue;
        wall_effect(t, l, &now, i, cells + len, cap - len);
        len += strlen(cells + len);
        shown++;
    }
    if (!shown) snprintf(cells, cap, "(no route: nothing to weigh)\n");
    prompt_var v[] = {{"level", map}, {"guidance", cells}};
    char *s = prompt_render("harness", "edit_guidance", v, 2, err, errlen);
    free(map);
    free(cells);
    return s;
}
