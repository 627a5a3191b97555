/* Recorded playthroughs (play.h). */
#include "play.h"
#include "eval.h"
#include "levelio.h"
#include "philox.h"
#include <stdlib.h>
#include <string.h>

static const char *const move_names[4] = {"up", "left", "right", "down"};

typedef struct {
    const level_t *l;
    const play_opts *o;
    json_t *steps;
    play_summary *s;
    int pos, door, have_key;
    int reachable;                        /* cells the start reaches, walls blocking */
    unsigned char visited[PCG_MAX_CELLS]; /* stood on */
    unsigned char known[PCG_MAX_CELLS];   /* has been inside the window */
    philox_stream rng;
} play_state;

void play_opts_default(play_opts *o)
{
    memset(o, 0, sizeof *o);
    o->player = PLAY_ROUTE;
    o->curiosity = 0.5;
}

const char *play_end_name(int end)
{
    static const char *const names[] = {"door", "no_route", "stuck", "step_limit", "invalid"};
    return end >= 0 && end <= PLAY_END_INVALID ? names[end] : "?";
}

static int open_cell(const level_t *l, int r, int c)
{
    return r >= 0 && c >= 0 && r < l->h && c < l->w && l->t[r * l->w + c] != TILE_WALL &&
           l->t[r * l->w + c] != TILE_BORDER;
}

/* The neighbour of cell in direction k, or -1 when it is blocked. */
static int step_to(const level_t *l, int cell, int k)
{
    int r = cell / l->w + PCG_DR(k), c = cell % l->w + PCG_DC(k);
    return open_cell(l, r, c) ? r * l->w + c : -1;
}

static json_t *cell_json(const level_t *l, int cell) { return json_pack("[i, i]", cell / l->w, cell % l->w); }

/* The window as text rows, one tile character a cell, ' ' off the map. */
static json_t *window_json(const level_t *l, int cell)
{
    json_t *rows = json_array();
    int r0 = cell / l->w, c0 = cell % l->w;
    for (int r = r0 - PLAY_WINDOW; r <= r0 + PLAY_WINDOW; r++) {
        char row[2 * PLAY_WINDOW + 2];
        int n = 0;
        for (int c = c0 - PLAY_WINDOW; c <= c0 + PLAY_WINDOW; c++)
            row[n++] = r >= 0 && c >= 0 && r < l->h && c < l->w ? tile_char(l->t[r * l->w + c]) : ' ';
        row[n] = 0;
        json_array_append_new(rows, json_string(row));
    }
    return rows;
}

/* Mark the window known; an enemy seen for the first time is an event. */
static void look(play_state *p, json_t *events)
{
    const level_t *l = p->l;
    int r0 = p->pos / l->w, c0 = p->pos % l->w;
    for (int r = r0 - PLAY_WINDOW; r <= r0 + PLAY_WINDOW; r++)
        for (int c = c0 - PLAY_WINDOW; c <= c0 + PLAY_WINDOW; c++) {
            if (r < 0 || c < 0 || r >= l->h || c >= l->w) continue;
            int cell = r * l->w + c;
            if (p->known[cell]) continue;
            p->known[cell] = 1;
            int t = l->t[cell];
            if (t < TILE_BAT || t > TILE_SPIDER) continue;
            p->s->enemies_seen++;
            json_array_append_new(events, json_pack("{s:s, s:s, s:o}", "event", "enemy", "tile", tile_name(t), "at",
                                                    cell_json(l, cell)));
        }
}

/* Arrive at cell: the events of the step, and one record. */
static void arrive(play_state *p, int cell, json_t **record)
{
    const level_t *l = p->l;
    json_t *events = json_array();
    if (p->visited[cell]) {
        p->s->backtracks++;
        json_array_append_new(events, json_pack("{s:s}", "event", "backtrack"));
    } else {
        p->s->visited++;
    }
    p->pos = cell;
    p->visited[cell] = 1;
    look(p, events);
    if (l->t[cell] == TILE_KEY && !p->have_key) {
        p->have_key = 1;
        p->s->key_step = p->s->steps;
        json_array_append_new(events, json_pack("{s:s}", "event", "key"));
    }
    int open = 0;
    json_t *moves = json_array();
    for (int k = 0; k < 4; k++)
        if (step_to(l, cell, k) >= 0) {
            open++;
            json_array_append_new(moves, json_string(move_names[k]));
        }
    int at_goal = cell == p->door && p->have_key;
    if (at_goal) {
        p->s->door_step = p->s->steps;
        json_array_append_new(events, json_pack("{s:s}", "event", "door"));
    } else if (open == 1 && l->t[cell] != TILE_KEY && cell != p->door && p->s->steps > 0) {
        p->s->dead_ends++;
        json_array_append_new(events, json_pack("{s:s}", "event", "dead_end"));
    }
    *record = json_pack("{s:i, s:o, s:o, s:o, s:o, s:b}", "step", p->s->steps, "pos", cell_json(l, cell), "sees",
                        window_json(l, cell), "moves", moves, "events", events, "has_key", p->have_key);
    json_array_append_new(p->steps, *record);
}

/* Move one step to neighbour next (already checked open). */
static void move(play_state *p, int next, json_t **record)
{
    for (int k = 0; k < 4; k++)
        if (step_to(p->l, p->pos, k) == next) json_object_set_new(*record, "move", json_string(move_names[k]));
    p->s->steps++;
    arrive(p, next, record);
}

/* ---- the route player ---- */

typedef struct {
    short to_key[PCG_MAX_CELLS], to_door[PCG_MAX_CELLS];
    short cand[PCG_MAX_CELLS];
    int n_key, n_door, n_cand, best;
} route_pick;

/* The shortest solution: legs come in pairs (player -> key, key -> door). */
static int pick_leg(void *ctx, const eval_leg_t *leg)
{
    route_pick *r = ctx;
    if (leg->kind == EVAL_LEG_PLAYER_KEY) {
        memcpy(r->cand, leg->cells, sizeof(short) * (size_t)leg->n);
        r->n_cand = leg->n;
    } else if (leg->kind == EVAL_LEG_KEY_DOOR) {
        int total = r->n_cand + leg->n;
        if (r->best < 0 || total < r->best) {
            r->best = total;
            memcpy(r->to_key, r->cand, sizeof(short) * (size_t)r->n_cand);
            r->n_key = r->n_cand;
            memcpy(r->to_door, leg->cells, sizeof(short) * (size_t)leg->n);
            r->n_door = leg->n;
        }
    }
    return 0;
}

static void play_route(play_state *p, json_t **record)
{
    route_pick *r = malloc(sizeof *r);
    if (!r) return;
    r->best = -1;
    r->n_cand = 0;
    eval_routes(eval_scenario(1), p->l, pick_leg, r);
    if (r->best < 0) {
        p->s->end = PLAY_END_NO_ROUTE;
    } else {
        for (int i = 1; i < r->n_key; i++) move(p, r->to_key[i], record);
        for (int i = 1; i < r->n_door; i++) move(p, r->to_door[i], record);
        p->s->end = PLAY_END_DOOR;
    }
    free(r);
}

/* ---- the explorer ---- */

/* The first step of the BFS path (dist from the player's cell) to cell. */
static int first_step(play_state *p, const short *dist, int cell, short *path)
{
    int len = lv_path(p->l, dist, cell, path);
    return len >= 2 ? path[1] : -1;
}

/* Where the explorer heads: the nearest key it has seen (the door once it
 * holds one) when curiosity is spent; else an unvisited neighbour drawn
 * at random, else the nearest unvisited cell, else the goal.  -1: nowhere. */
static int explorer_next(play_state *p, short *dist, short *queue, short *path)
{
    const level_t *l = p->l;
    int reached = lv_bfs(l, p->pos, PCG_BLOCK_DEFAULT, -1, dist, queue), goal = -1, unvisited = -1;
    for (int i = 0; i < reached; i++) {
        int c = queue[i];
        if (goal < 0 && p->known[c] && (p->have_key ? c == p->door : l->t[c] == TILE_KEY)) goal = c;
        if (unvisited < 0 && !p->visited[c]) unvisited = c;
    }
    int curious = p->s->visited < p->o->curiosity * p->reachable;
    if (!curious && goal >= 0) return first_step(p, dist, goal, path);
    int fresh[4], n = 0;
    for (int k = 0; k < 4; k++) {
        int c = step_to(l, p->pos, k);
        if (c >= 0 && !p->visited[c]) fresh[n++] = c;
    }
    if (n) return fresh[philox_below(philox_next(&p->rng), (pcg_u32)n)];
    if (unvisited >= 0) return first_step(p, dist, unvisited, path);
    return goal >= 0 ? first_step(p, dist, goal, path) : -1;
}

/* The chooser's player: corridors and dead ends by rule, junctions asked. */
static int chooser_next(play_state *p, json_t *record, int previous, short *dist, short *queue, short *path)
{
    play_question q = {p->l, p->pos, p->have_key, p->s->steps, 0, {0}, {0}, record};
    int ahead = 0;
    for (int k = 0; k < 4; k++) {
        int c = step_to(p->l, p->pos, k);
        if (c < 0) continue;
        q.moves[q.n] = move_names[k];
        q.cells[q.n++] = c;
        ahead += c != previous;
    }
    if (ahead == 0) return previous; /* a dead end: back the way it came */
    if (ahead == 1)
        for (int i = 0; i < q.n; i++)
            if (q.cells[i] != previous) return q.cells[i];
    int pick = p->o->chooser ? p->o->chooser(p->o->chooser_ctx, &q) : -1;
    return pick >= 0 && pick < q.n ? q.cells[pick] : explorer_next(p, dist, queue, path);
}

static void play_explore(play_state *p, json_t **record)
{
    short dist[PCG_MAX_CELLS], queue[PCG_MAX_CELLS], path[PCG_MAX_CELLS];
    int limit = p->o->max_steps > 0 ? p->o->max_steps : 4 * p->l->h * p->l->w;
    p->reachable = lv_bfs(p->l, p->pos, PCG_BLOCK_DEFAULT, -1, dist, queue);
    int previous = -1;
    while (!(p->pos == p->door && p->have_key)) {
        if (p->s->steps >= limit) {
            p->s->end = PLAY_END_STEP_LIMIT;
            return;
        }
        int next = p->o->player == PLAY_CHOOSER ? chooser_next(p, *record, previous, dist, queue, path)
                                                : explorer_next(p, dist, queue, path);
        previous = p->pos;
        if (next < 0) {
            p->s->end = PLAY_END_STUCK;
            return;
        }
        move(p, next, record);
    }
    p->s->end = PLAY_END_DOOR;
}

int play_level(const level_t *l, const play_opts *o, json_t *steps, play_summary *sum)
{
    memset(sum, 0, sizeof *sum);
    sum->key_step = sum->door_step = -1;
    play_state *p = calloc(1, sizeof *p);
    if (!p) return -1;
    p->l = l;
    p->o = o;
    p->steps = steps;
    p->s = sum;
    p->door = lv_first(l, TILE_DOOR);
    int start = lv_first(l, TILE_PLAYER);
    philox_stream_init(&p->rng, o->seed, 0x706c6179u, 0);
    if (start < 0 || l->h * l->w > PCG_MAX_CELLS) {
        sum->end = PLAY_END_INVALID;
        free(p);
        return 0;
    }
    json_t *record = NULL;
    arrive(p, start, &record);
    if (o->player == PLAY_ROUTE) play_route(p, &record);
    else play_explore(p, &record);
    free(p);
    return 0;
}

json_t *play_map_json(const level_t *l)
{
    json_t *map = json_array();
    for (int r = 0; r < l->h; r++) {
        char row[PCG_MAX_SIDE + 1];
        for (int c = 0; c < l->w; c++) row[c] = tile_char(l->t[r * l->w + c]);
        row[l->w] = 0;
        json_array_append_new(map, json_string(row));
    }
    return map;
}

json_t *play_header_json(const char *level_name, const level_t *l, const play_opts *o)
{
    json_t *h = json_pack("{s:s, s:s, s:i, s:i, s:i}", "level", level_name, "player",
                          o->player == PLAY_ROUTE      ? "route"
                          : o->player == PLAY_EXPLORER ? "explorer"
                                                       : (o->chooser_name ? o->chooser_name : "chooser"),
                          "height", l->h, "width", l->w, "window",
                          2 * PLAY_WINDOW + 1);
    json_object_set_new(h, "map", play_map_json(l)); /* the level played, so that a record stands alone */
    if (o->player == PLAY_EXPLORER) {
        json_object_set_new(h, "seed", json_integer(o->seed));
        json_object_set_new(h, "curiosity", json_real(o->curiosity));
    }
    return h;
}

json_t *play_summary_json(const play_summary *s)
{
    return json_pack("{s:s, s:i, s:i, s:i, s:i, s:i, s:o, s:o}", "end", play_end_name(s->end), "steps", s->steps,
                     "visited", s->visited, "backtracks", s->backtracks, "dead_ends", s->dead_ends, "enemies_seen",
                     s->enemies_seen, "key_step", s->key_step >= 0 ? json_integer(s->key_step) : json_null(),
                     "door_step", s->door_step >= 0 ? json_integer(s->door_step) : json_null());
}

static int write_line(FILE *f, const json_t *o)
{
    return json_dumpf(o, f, JSON_COMPACT | JSON_PRESERVE_ORDER) || fputc('\n', f) == EOF ? -1 : 0;
}

int play_write_record(FILE *f, const char *level_name, const level_t *l, const play_opts *o, play_summary *sum)
{
    json_t *steps = json_array();
    if (!steps || play_level(l, o, steps, sum)) {
        json_decref(steps);
        return -1;
    }
    json_t *head = play_header_json(level_name, l, o), *tail = play_summary_json(sum), *line;
    int rc = write_line(f, head);
    size_t i;
    json_array_foreach(steps, i, line) rc |= write_line(f, line);
    rc |= write_line(f, tail);
    json_decref(head);
    json_decref(tail);
    json_decref(steps);
    return rc;
}
