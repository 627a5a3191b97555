/* The editing loop's run directory: requests.jsonl, replies.jsonl,
 * steps.jsonl (a step is done once its line is there), level.txt (the
 * saved level, replaced only by rename), state.json; and reading them back
 * for --resume. */
#include "edit_internal.h"
#include "levelio.h"
#include "util.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RECORD_MAX (64L << 20)

void edit_record(const edit_records *r, const char *name, json_t *obj)
{
    if (!r || !r->dir) {
        json_decref(obj);
        return;
    }
    char path[4200], err[300];
    snprintf(path, sizeof path, "%s/%s", r->dir, name);
    char *line = json_dumps(obj, JSON_COMPACT);
    json_decref(obj);
    if (!line) return;
    int fd = open_append_fd(path, err, sizeof err);
    if (fd >= 0) {
        size_t n = strlen(line);
        line[n] = '\n'; /* json_dumps leaves room for its NUL, which becomes the line's end */
        if (write_all(fd, line, n + 1) != 0) die_msg("edit: %s: %s", path, strerror(errno));
        close(fd);
    } else {
        die_msg("edit: %s", err);
    }
    free(line);
}

static json_t *measure_json(const edit_measure_t *m)
{
    return json_pack("{s:[i,i],s:i,s:b,s:s,s:b,s:I}", "legs", m->route_key, m->route_door, "route", m->route,
                     "valid", m->valid, "reason", m->valid ? "" : m->reason, "perfect", m->perfect, "distance",
                     (json_int_t)m->distance);
}

void edit_write_step(const edit_records *r, const edit_step_t *s, const json_t *calls, const json_t *refusals)
{
    json_t *o = json_pack("{s:i,s:s,s:O,s:O,s:i,s:i,s:b,s:s,s:b,s:I}", "step", s->step, "editor", r->label, "calls",
                          calls ? calls : json_null(), "refusals", refusals ? refusals : json_null(), "changed",
                          s->changed, "recovered", s->recovered, "accepted", s->accepted, "outcome", s->outcome,
                          "perfect", s->m.perfect, "tokens", (json_int_t)s->tokens);
    json_t *m = measure_json(&s->m);
    json_object_update(o, m);
    json_decref(m);
    edit_record(r, "steps.jsonl", o);
}

static const char *stop_names[] = {"steps", "perfect", "budget", "server"};

int edit_write_state(const char *dir, const target_t *t, const edit_run *run, const edit_result *res, int running,
                     char *err, int errlen)
{
    if (!dir) return 0;
    char label[160];
    edit_editor_label(run->editor, label, sizeof label);
    const edit_switches *w = &run->sw;
    json_t *o = json_pack("{s:o,s:s,s:{s:b,s:b,s:i,s:b,s:b,s:b},s:i,s:i,s:I,s:I,s:i,s:f,s:b,s:b,s:[i,i],s:i,s:s}",
                          "target", target_json(t), "editor", label, "switches", "recovery", w->recovery, "feedback",
                          w->feedback, "history", w->history, "guidance", w->guidance, "accept", w->accept,
                          "early_stop", w->early_stop, "steps", res->steps, "accepted", res->accepted, "calls",
                          (json_int_t)res->calls, "tokens", (json_int_t)res->tokens, "recovered", res->recovered,
                          "seconds", res->seconds, "perfect", res->perfect, "valid", res->valid, "legs",
                          res->route_key, res->route_door, "route", res->route, "stop", running ? "running" : stop_names[res->stop]);
    json_object_set_new(o, "output_tokens", json_integer(res->output_tokens));
    char *text = json_dumps(o, JSON_INDENT(2));
    json_decref(o);
    char path[4200];
    snprintf(path, sizeof path, "%s/state.json", dir);
    int rc = text ? write_file_atomic_msg(path, text, strlen(text), err, errlen) : -1;
    free(text);
    return rc;
}

/* An outcome read back, as the static text the loop uses. */
static const char *outcome_of(const char *s)
{
    static const char *const known[] = {"accepted", "rejected", "saved", "no edit", "unreadable"};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (s && !strcmp(s, known[i])) return known[i];
    return "unknown";
}

static void step_of(const json_t *o, edit_step_t *s)
{
    memset(s, 0, sizeof *s);
    s->step = (int)json_integer_value(json_object_get(o, "step"));
    s->calls = (int)json_array_size(json_object_get(o, "calls"));
    s->refused = (int)json_array_size(json_object_get(o, "refusals"));
    s->changed = (int)json_integer_value(json_object_get(o, "changed"));
    s->accepted = json_is_true(json_object_get(o, "accepted"));
    s->outcome = outcome_of(json_string_value(json_object_get(o, "outcome")));
    const json_t *legs = json_object_get(o, "legs");
    s->m.route_key = (int)json_integer_value(json_array_get(legs, 0));
    s->m.route_door = (int)json_integer_value(json_array_get(legs, 1));
    s->m.route = (int)json_integer_value(json_object_get(o, "route"));
    s->m.valid = json_is_true(json_object_get(o, "valid"));
    snprintf(s->m.reason, sizeof s->m.reason, "%s", json_string_value(json_object_get(o, "reason")) ?: "");
}

/* A run killed while writing a step leaves its line cut short: that step
 * is not done, and its bytes are ended with a newline so that the next
 * step's line is not glued to them.  0, or -1 with err. */
static int end_cut_line(const char *path, const char *text, long len, char *err, int errlen)
{
    if (len == 0 || text[len - 1] == '\n') return 0;
    int fd = open_append_fd(path, err, errlen);
    if (fd < 0) return -1;
    int rc = write_all(fd, "\n", 1);
    if (rc) say_to(err, errlen, "%s: %s", path, strerror(errno));
    close(fd);
    return rc ? -1 : 0;
}

/* The steps done (complete lines of steps.jsonl), the last k of them in last. */
static int read_steps(const char *dir, edit_step_t *last, int k, int *n_last, char *err, int errlen)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/steps.jsonl", dir);
    *n_last = 0;
    if (!path_present(path)) return 0;
    long len;
    char *text = read_file(path, RECORD_MAX, &len, err, errlen);
    if (!text) return -1;
    /* the lines are read as C strings: a NUL would hide every step after it */
    if (memchr(text, 0, (size_t)len) || end_cut_line(path, text, len, err, errlen)) {
        if (memchr(text, 0, (size_t)len)) say_to(err, errlen, "%s: holds a NUL byte", path);
        free(text);
        return -1;
    }
    int done = 0, lineno = 0;
    for (char *line = text, *nl; (nl = strchr(line, '\n')); line = nl + 1) {
        *nl = 0;
        lineno++;
        json_t *o = json_loads(line, 0, NULL);
        if (!json_is_object(o)) {
            json_decref(o);
            continue;
        }
        /* steps are written 1, 2, ... in order: any other number is a record from elsewhere */
        json_t *step = json_object_get(o, "step");
        if (!json_is_integer(step) || json_integer_value(step) != done + 1) {
            say_to(err, errlen, "%s: line %d: step %s where step %d was due", path, lineno,
                   json_is_integer(step) ? "out of order" : "without a number", done + 1);
            json_decref(o);
            free(text);
            return -1;
        }
        done++;
        if (k > 0) {
            if (*n_last == k) memmove(last, last + 1, sizeof *last * (size_t)(k - 1));
            else ++*n_last;
            step_of(o, &last[*n_last - 1]);
        }
        json_decref(o);
    }
    free(text);
    return done;
}

/* A total of state.json: the budgets are checked against them, so a wrong
 * type or a huge value is refused rather than read as 0 or wrapped.  An
 * absent one is 0 (a run's first state.json may predate a total). */
#define TOTAL_MAX 1000000000L
static int stored_total(const json_t *st, const char *key, long *out, char *why, int whylen)
{
    const json_t *v = json_object_get(st, key);
    json_int_t x = json_integer_value(v);
    *out = 0;
    if (!v) return 0;
    if (!json_is_integer(v) || x < 0 || x > TOTAL_MAX) {
        snprintf(why, (size_t)whylen, "'%s' must be an integer 0..%ld", key, TOTAL_MAX);
        return -1;
    }
    *out = (long)x;
    return 0;
}

int edit_resume_read(const char *dir, const target_t *t, edit_step_t *last, int k, int *n_last, level_t *saved,
                     unsigned char *tiles, edit_result *res, char *err, int errlen)
{
    char path[4200], why[600];
    snprintf(path, sizeof path, "%s/state.json", dir);
    json_t *st = read_json_file(path, 1 << 20, why, sizeof why);
    if (!st) {
        snprintf(err, (size_t)errlen, "--resume: %s", why);
        return -1;
    }
    target_t stored;
    char r2[200];
    int bad = target_from_jsonobj(json_object_get(st, "target"), &stored, r2, sizeof r2) != STORY_OK;
    if (bad || !target_equal(&stored, t)) {
        json_decref(st);
        snprintf(err, (size_t)errlen, "--resume: %s holds another target (%s); give the same --target", path,
                 bad ? r2 : "a different one");
        return -1;
    }
    long recovered = 0, accepted = 0;
    int bad_total = stored_total(st, "calls", &res->calls, why, sizeof why) ||
                    stored_total(st, "tokens", &res->tokens, why, sizeof why) ||
                    stored_total(st, "output_tokens", &res->output_tokens, why, sizeof why) ||
                    stored_total(st, "recovered", &recovered, why, sizeof why) ||
                    stored_total(st, "accepted", &accepted, why, sizeof why);
    const json_t *secs = json_object_get(st, "seconds");
    res->seconds = json_number_value(secs);
    if (!bad_total && (!json_is_number(secs) || !(res->seconds >= 0 && res->seconds <= TOTAL_MAX))) {
        snprintf(why, sizeof why, "'seconds' must be a number 0..%.0f", (double)TOTAL_MAX);
        bad_total = 1;
    }
    json_decref(st);
    if (bad_total) {
        snprintf(err, (size_t)errlen, "--resume: %s: %s", path, why);
        return -1;
    }
    res->recovered = (int)recovered;
    res->accepted = (int)accepted;
    snprintf(path, sizeof path, "%s/level.txt", dir);
    if (level_read(path, saved, tiles, why, sizeof why) != 0) {
        snprintf(err, (size_t)errlen, "--resume: %s", why);
        return -1;
    }
    int done = read_steps(dir, last, k, n_last, why, sizeof why);
    if (done < 0) {
        snprintf(err, (size_t)errlen, "--resume: %s", why);
        return -1;
    }
    res->steps = done;
    return 0;
}
