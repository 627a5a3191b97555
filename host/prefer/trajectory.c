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
static int read_lines(char *text, play_features *f, unsigned char *seen, char *err, int errlen)
{
    int line = 0, have_end = 0;
    for (char *s = text, *nl; s && *s; s = nl ? nl + 1 : NULL) {
        nl = strchr(s, '\n');
        if (nl) *nl = 0;
        line++;
        if (!*s) continue;
        if (have_end) {
            say_to(err, errlen, "line %d: text after the summary", line);
            return -1;
        }
        json_error_t jerr;
        json_t *o = json_loads(s, JSON_REJECT_DUPLICATES, &jerr);
        char why[200] = "";
        int rc = 0;
        if (!json_is_object(o)) {
            say_to(why, sizeof why, "not a JSON object");
            rc = -1;
        } else if (line == 1) {
            rc = read_header(o, f, why, sizeof why);
        } else if (json_object_get(o, "end")) {
            rc = read_end(o, f, why, sizeof why);
            have_end = 1;
        } else {
            rc = read_step(o, f, seen, why, sizeof why);
        }
        json_decref(o);
        if (rc) {
            say_to(err, errlen, "line %d: %s", line, why);
            return -1;
        }
    }
    if (!have_end) say_to(err, errlen, "no summary line: the record is cut short");
    return have_end ? 0 : -1;
}

int traj_read(const char *path, play_features *f, char *err, int errlen)
{
    memset(f, 0, sizeof *f);
    f->key_step = f->door_step = f->key_seen_step = f->door_seen_step = -1;
    long len;
    char why[1200];
    char *text = read_file(path, TRAJ_MAX_BYTES, &len, why, sizeof why);
    if (!text) return say_to(err, errlen, "%s", why), -1;
    unsigned char *seen = calloc(256 * 256, 1);
    int rc = -1;
    if (!seen) say_to(why, sizeof why, "out of memory");
    else if (memchr(text, 0, (size_t)len)) say_to(why, sizeof why, "holds a NUL byte");
    else rc = read_lines(text, f, seen, why, sizeof why);
    free(seen);
    free(text);
    if (rc) {
        say_to(err, errlen, "%s: %s", path, why);
        return -1;
    }
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

char *traj_render(const char *path, int max_steps, char *err, int errlen)
{
    long len;
    char why[1200];
    char *text = read_file(path, TRAJ_MAX_BYTES, &len, why, sizeof why), *out = NULL;
    size_t outlen = 0;
    if (!text) {
        say_to(err, errlen, "%s", why);
        return NULL;
    }
    FILE *f = open_memstream(&out, &outlen);
    int shown = 0, hidden = 0;
    char end[160] = "";
    for (char *s = text, *nl; f && s && *s; s = nl ? nl + 1 : NULL) {
        nl = strchr(s, '\n');
        if (nl) *nl = 0;
        json_t *o = json_loads(s, 0, NULL);
        if (json_object_get(o, "level")) {
            fprintf(f, "level %s, played by the %s player (the window is 5x5 around the player: @ player, # wall, "
                       ". floor, k key, D door, b bat, s scorpion, x spider)\n",
                    json_string_value(json_object_get(o, "level")) ?: "?",
                    json_string_value(json_object_get(o, "player")) ?: "?");
        } else if (json_object_get(o, "end")) {
            snprintf(end, sizeof end, "end: %s after %lld steps\n", json_string_value(json_object_get(o, "end")) ?: "?",
                     (long long)json_integer_value(json_object_get(o, "steps")));
        } else if (json_is_object(o) && shown < max_steps) {
            render_step(f, o);
            shown++;
        } else if (json_is_object(o)) {
            hidden++;
        }
        json_decref(o);
    }
    if (f && hidden) fprintf(f, "(%d further steps not shown)\n", hidden);
    if (f) fputs(end, f);
    free(text);
    if (!f || fclose(f)) {
        free(out);
        say_to(err, errlen, "out of memory");
        return NULL;
    }
    return out;
}
