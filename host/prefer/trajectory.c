/* Trajectory files read back (trajectory.h). */
#include "trajectory.h"
#include "levelio.h"
#include "play.h"
#include "util.h"
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* Does the window (an array of strings) show character ch? */
static int window_shows(const json_t *sees, const char *chars)
{
    size_t i;
    json_t *row;
    json_array_foreach(sees, i, row) {
        const char *s = json_string_value(row);
        if (s && strpbrk(s, chars)) return 1;
    }
    return 0;
}

static int event_count(const json_t *events, const char *name)
{
    int n = 0;
    size_t i;
    json_t *ev;
    json_array_foreach(events, i, ev) n += !strcmp(json_string_value(json_object_get(ev, "event")) ?: "", name);
    return n;
}

/* One step line into f.  seen[] marks cells stood on. */
static int read_step(const json_t *o, play_features *f, unsigned char *seen, char *err, int errlen)
{
    json_t *pos = json_object_get(o, "pos"), *sees = json_object_get(o, "sees"), *moves = json_object_get(o, "moves"),
           *events = json_object_get(o, "events");
    json_int_t r = json_integer_value(json_array_get(pos, 0)), c = json_integer_value(json_array_get(pos, 1));
    if (!json_is_array(pos) || json_array_size(pos) != 2 || r < 0 || c < 0 || r >= 256 || c >= 256 ||
        !json_is_array(sees) || !json_is_array(moves) || json_array_size(moves) > 4 || !json_is_array(events)) {
        say_to(err, errlen, "a step needs pos [row, col], sees, moves (at most 4) and events");
        return -1;
    }
    if (f->h > 0 && (r >= f->h || c >= f->w)) {
        say_to(err, errlen, "a step at (%lld,%lld) lies outside the header's %dx%d map", (long long)r, (long long)c,
               f->h, f->w);
        return -1;
    }
    if (!seen[r * 256 + c]) f->visited++;
    seen[r * 256 + c] = 1;
    int at = f->positions++;
    f->mean_moves += (double)json_array_size(moves);
    f->junctions += json_array_size(moves) >= 3;
    f->backtracks += event_count(events, "backtrack");
    f->dead_ends += event_count(events, "dead_end");
    f->enemies_seen += event_count(events, "enemy");
    int tense = window_shows(sees, "bsx");
    f->tense += tense;
    if (f->key_step < 0 && event_count(events, "key")) {
        f->key_step = at;
        f->key_guarded = tense;
    }
    if (f->door_step < 0 && event_count(events, "door")) f->door_step = at;
    if (f->key_seen_step < 0 && window_shows(sees, "k")) f->key_seen_step = at;
    if (f->door_seen_step < 0 && window_shows(sees, "D")) f->door_seen_step = at;
    return 0;
}

static int read_end(const json_t *o, play_features *f, char *err, int errlen)
{
    const char *end = json_string_value(json_object_get(o, "end"));
    for (int e = 0; end && e <= PLAY_END_INVALID; e++)
        if (!strcmp(end, play_end_name(e))) {
            f->end = e;
            return 0;
        }
    say_to(err, errlen, "the summary's end must be door, no_route, stuck, step_limit or invalid");
    return -1;
}

/* The header's map: rows of tile characters, all of one width. */
static int read_map(const json_t *map, play_features *f, char *err, int errlen)
{
    size_t h = json_array_size(map), w = h ? strlen(json_string_value(json_array_get(map, 0)) ?: "") : 0;
    if (!json_is_array(map) || h < 1 || h > PCG_MAX_SIDE || w < 1 || w > PCG_MAX_SIDE || h * w > PCG_MAX_CELLS) {
        say_to(err, errlen, "the header's map must be 1..%d rows of 1..%d tiles", PCG_MAX_SIDE, PCG_MAX_SIDE);
        return -1;
    }
    for (size_t r = 0; r < h; r++) {
        const char *row = json_string_value(json_array_get(map, r));
        for (size_t c = 0; c < w; c++) {
            int t = row && strlen(row) == w ? tile_of_char(row[c]) : -1;
            if (t < TILE_EMPTY) {
                say_to(err, errlen, "the header's map: row %zu is not %zu tile characters", r, w);
                return -1;
            }
            f->map[r * w + c] = (unsigned char)t;
        }
    }
    f->h = (int)h;
    f->w = (int)w;
    return 0;
}

const level_t *traj_level(const play_features *f, level_t *l)
{
    if (f->h <= 0) return NULL;
    l->h = f->h;
    l->w = f->w;
    l->t = (unsigned char *)f->map;
    return l;
}

static int read_header(const json_t *o, play_features *f, char *err, int errlen)
{
    const char *lv = json_string_value(json_object_get(o, "level"));
    const char *pl = json_string_value(json_object_get(o, "player"));
    if (!lv || !pl) {
        say_to(err, errlen, "the header needs level and player");
        return -1;
    }
    snprintf(f->level, sizeof f->level, "%s", lv);
    snprintf(f->player, sizeof f->player, "%s", pl);
    const json_t *map = json_object_get(o, "map");
    return map ? read_map(map, f, err, errlen) : 0;
}

/* Header, steps, summary: each line checked in turn. */
typedef struct {
    play_features *f;
    unsigned char *seen;
    int lines, have_end;
} traj_reader;

/* One line of the record: the header first, the summary last, steps between. */
static int read_line(const json_t *o, int line, void *ctx, char *err, int errlen)
{
    traj_reader *r = ctx;
    if (r->have_end) return say_to(err, errlen, "text after the summary"), -1;
    if (r->lines++ == 0) return read_header(o, r->f, err, errlen);
    if (json_object_get(o, "end")) {
        r->have_end = 1;
        return read_end(o, r->f, err, errlen);
    }
    (void)line;
    return read_step(o, r->f, r->seen, err, errlen);
}

int traj_read(const char *path, play_features *f, char *err, int errlen)
{
    memset(f, 0, sizeof *f);
    f->key_step = f->door_step = f->key_seen_step = f->door_seen_step = -1;
    traj_reader r = {f, calloc(256 * 256, 1), 0, 0};
    if (!r.seen) return say_to(err, errlen, "%s: out of memory", path), -1;
    int rc = read_jsonl_file(path, TRAJ_MAX_BYTES, read_line, &r, err, errlen);
    free(r.seen);
    if (rc) return -1;
    if (!r.have_end) return say_to(err, errlen, "%s: no summary line: the record is cut short", path), -1;
    f->steps = f->positions > 0 ? f->positions - 1 : 0;
    if (f->positions) f->mean_moves /= f->positions;
    return 0;
}

/* ---- the play as text, for a model judge ---- */

static void render_events(FILE *f, const json_t *events)
{
    size_t i;
    json_t *ev;
    json_array_foreach(events, i, ev) {
        const char *name = json_string_value(json_object_get(ev, "event"));
        if (!name) continue;
        const json_t *at = json_object_get(ev, "at");
        if (!strcmp(name, "enemy"))
            fprintf(f, "%s%s comes into view at (%lld,%lld)", i ? "; " : "  events: ",
                    json_string_value(json_object_get(ev, "tile")) ?: "an enemy",
                    (long long)json_integer_value(json_array_get(at, 0)),
                    (long long)json_integer_value(json_array_get(at, 1)));
        else fprintf(f, "%s%s", i ? "; " : "  events: ", !strcmp(name, "dead_end") ? "dead end" : name);
    }
    if (json_array_size(events)) fputc('\n', f);
}

/* One step line; the window at the start, at events and every tenth step. */
static void render_step(FILE *f, const json_t *o)
{
    const json_t *pos = json_object_get(o, "pos"), *moves = json_object_get(o, "moves");
    const json_t *events = json_object_get(o, "events"), *sees = json_object_get(o, "sees");
    json_int_t step = json_integer_value(json_object_get(o, "step"));
    fprintf(f, "step %lld at (%lld,%lld), moves", (long long)step, (long long)json_integer_value(json_array_get(pos, 0)),
            (long long)json_integer_value(json_array_get(pos, 1)));
    size_t i;
    json_t *m;
    json_array_foreach(moves, i, m) fprintf(f, "%s%s", i ? "," : " ", json_string_value(m) ?: "?");
    const char *next = json_string_value(json_object_get(o, "move"));
    fprintf(f, "%s%s\n", next ? " -> " : "", next ? next : "");
    if (step == 0 || json_array_size(events) || step % 10 == 0) {
        json_t *row;
        json_array_foreach(sees, i, row) fprintf(f, "    |%s|\n", json_string_value(row) ?: "");
    }
    render_events(f, events);
}

typedef struct {
    FILE *f;
    int shown, hidden, max_steps;
    char end[160];
} traj_text;

static int render_line(const json_t *o, int line, void *ctx, char *err, int errlen)
{
    traj_text *t = ctx;
    if (json_object_get(o, "level")) {
        fprintf(t->f, "level %s, played by the %s player (the window is 5x5 around the player: @ player, # wall, "
                      ". floor, k key, D door, b bat, s scorpion, x spider)\n",
                json_string_value(json_object_get(o, "level")) ?: "?",
                json_string_value(json_object_get(o, "player")) ?: "?");
    } else if (json_object_get(o, "end")) {
        snprintf(t->end, sizeof t->end, "end: %s after %lld steps\n", json_string_value(json_object_get(o, "end")) ?: "?",
                 (long long)json_integer_value(json_object_get(o, "steps")));
    } else if (t->shown < t->max_steps) {
        render_step(t->f, o);
        t->shown++;
    } else {
        t->hidden++;
    }
    (void)line, (void)err, (void)errlen;
    return 0;
}

char *traj_render(const char *path, int max_steps, char *err, int errlen)
{
    char *out = NULL;
    size_t outlen = 0;
    traj_text t = {open_memstream(&out, &outlen), 0, 0, max_steps, ""};
    if (!t.f) return say_to(err, errlen, "out of memory"), NULL;
    int rc = read_jsonl_file(path, TRAJ_MAX_BYTES, render_line, &t, err, errlen);
    if (t.hidden) fprintf(t.f, "(%d further steps not shown)\n", t.hidden);
    fputs(t.end, t.f);
    if (fclose(t.f) || rc) {
        if (!rc) say_to(err, errlen, "out of memory");
        free(out);
        return NULL;
    }
    return out;
}
