/* The harness benchmark's target set (harness_set.h). */
#include "harness_set.h"
#include "feasible.h"
#include "philox.h"
#include "util.h"
#include <stdio.h>
#include <string.h>

/* the full set written out is about 300 bytes a case at most */
#define HARNESS_SET_FILE_MAX ((long)HARNESS_SET_MAX * 300)

void harness_case_target(const harness_case *c, target_t *t)
{
    target_pathlegs(t, c->leg_key, c->leg_door, 0);
    t->enemy_count = HARNESS_ENEMIES;
}

static int case_feasible(const harness_case *c, char *why, int len)
{
    target_t t;
    target_map_t map;
    harness_case_target(c, &t);
    target_map_default(&map, PCG_DEFAULT_SIDE, PCG_DEFAULT_SIDE);
    return target_feasible(&t, &map, why, len);
}

int harness_set_make(unsigned seed, harness_case *out)
{
    int n = 0;
    for (int a = HARNESS_LEG_MIN; a <= HARNESS_LEG_MAX; a++)
        for (int b = HARNESS_LEG_MIN; b <= HARNESS_LEG_MAX; b++) {
            harness_case c = {a, b, 0};
            if (case_feasible(&c, NULL, 0) == 0) out[n++] = c;
        }
    /* Fisher-Yates on one Philox stream: the same set on every machine */
    philox_stream s;
    philox_stream_init(&s, seed, 0, 0);
    for (int i = n - 1; i > 0; i--) {
        int j = (int)philox_below(philox_next(&s), (pcg_u32)(i + 1));
        harness_case tmp = out[i];
        out[i] = out[j];
        out[j] = tmp;
    }
    for (int i = 0; i < n; i++) out[i].level_seed = philox_next(&s);
    return n;
}

json_t *harness_set_json(unsigned seed, const harness_case *cases, int n)
{
    json_t *arr = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(arr, json_pack("{s:i, s:i, s:I}", "player_key", cases[i].leg_key, "key_door",
                                             cases[i].leg_door, "level_seed", (json_int_t)cases[i].level_seed));
    return json_pack("{s:I, s:i, s:o}", "seed", (json_int_t)seed, "fixed", n < HARNESS_FIXED ? n : HARNESS_FIXED,
                     "cases", arr);
}

static int read_case(const json_t *o, int i, harness_case *c, char *err, int errlen)
{
    json_int_t a = -1, b = -1, s = -1;
    json_error_t jerr;
    if (json_unpack_ex((json_t *)o, &jerr, JSON_STRICT, "{s:I, s:I, s:I}", "player_key", &a, "key_door", &b,
                       "level_seed", &s)) {
        say_to(err, errlen, "case %d: %s", i, jerr.text);
        return -1;
    }
    if (a < 1 || a > TARGET_LENGTH_MAX || b < 1 || b > TARGET_LENGTH_MAX || s < 0 || s > 0xffffffffLL) {
        say_to(err, errlen, "case %d: legs must be 1..%d and level_seed 0..4294967295", i, TARGET_LENGTH_MAX);
        return -1;
    }
    c->leg_key = (int)a;
    c->leg_door = (int)b;
    c->level_seed = (unsigned)s;
    char why[300];
    if (case_feasible(c, why, sizeof why)) {
        say_to(err, errlen, "case %d (%d, %d): %s", i, c->leg_key, c->leg_door, why);
        return -1;
    }
    return 0;
}

int harness_set_read(const char *path, harness_case *out, int max, int *fixed, char *err, int errlen)
{
    json_error_t jerr;
    char why[1400];
    /* bounded, and a regular file only: a set file from elsewhere may be a
     * FIFO that never ends or gigabytes of blanks */
    json_t *doc = read_json_file(path, HARNESS_SET_FILE_MAX, why, sizeof why);
    if (!doc) {
        say_to(err, errlen, "%s", why);
        return -1;
    }
    json_t *cases = NULL;
    json_int_t seed = 0, nfixed = 0;
    int n = -1;
    if (json_unpack_ex(doc, &jerr, JSON_STRICT, "{s:I, s:I, s:o}", "seed", &seed, "fixed", &nfixed, "cases", &cases) ||
        !json_is_array(cases)) {
        say_to(err, errlen, "%s: expected {\"seed\", \"fixed\", \"cases\": [...]}", path);
    } else if ((int)json_array_size(cases) > max || json_array_size(cases) == 0 || nfixed < 1 ||
               nfixed > (json_int_t)json_array_size(cases)) {
        say_to(err, errlen, "%s: 1..%d cases and a fixed part of 1..cases", path, max);
    } else {
        n = (int)json_array_size(cases);
        for (int i = 0; i < n && n >= 0; i++)
            if (read_case(json_array_get(cases, (size_t)i), i, &out[i], err, errlen)) n = -1;
        *fixed = (int)nfixed;
    }
    json_decref(doc);
    return n;
}
