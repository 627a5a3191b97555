/* Targets: the paper's scenarios, the checks, the evaluator's scenario, JSON. */
#include "target.h"
#include "dungeon.h"
#include "level.h"
#include "util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const paper_stories[4] = {
    "The 'Player' needs to obtain the Key and escape through the 'Door'. To pick up the key, the player must "
    "encounter one of monsters: BAT.",
    "The 'Player' needs to obtain the Key and escape through the 'Door'. To pick up the key, the player must "
    "encounter both of monsters: BAT, SCORPION.",
    "The player must pick up the KEY to unlock the door and discover the treasure inside.",
    "The BAT holds the key, and only by defeating it can the player open the door and reach the treasure.",
};

const char *story_scenario_text(int scenario)
{
    return scenario >= 1 && scenario <= 4 ? paper_stories[scenario - 1] : NULL;
}

void target_encounter(target_t *t, int bat, int scorpion, int spider)
{
    memset(t, 0, sizeof *t);
    t->kind = TARGET_ENCOUNTER;
    t->enemies[0] = bat;
    t->enemies[1] = scorpion;
    t->enemies[2] = spider;
    t->variant = VARIANT_DUNGEON;
}

void target_pathlength(target_t *t, int length, int tolerance)
{
    memset(t, 0, sizeof *t);
    t->kind = TARGET_PATHLENGTH;
    t->length = length;
    t->tolerance = tolerance;
    t->variant = VARIANT_DUNGEON;
}

void target_pathlegs(target_t *t, int leg_key, int leg_door, int tolerance)
{
    target_pathlength(t, leg_key + leg_door, tolerance);
    t->leg_key = leg_key;
    t->leg_door = leg_door;
}

int target_default_tolerance(int length)
{
    int t = (length + 5) / 10;
    return t > 0 ? t : 1;
}

void target_keydoor(target_t *t, int gate)
{
    memset(t, 0, sizeof *t);
    t->kind = TARGET_KEYDOOR;
    t->gate = gate;
    t->variant = VARIANT_TREASURE;
}

int target_scenario(int scenario, target_t *out)
{
    switch (scenario) {
    case 1: target_encounter(out, 1, 0, 0); return 0;
    case 2: target_encounter(out, 1, 1, 0); return 0;
    case 3: target_keydoor(out, TILE_KEY); return 0;
    case 4: target_keydoor(out, TILE_BAT); return 0;
    default: return -1;
    }
}

const char *target_tile_name(int tile)
{
    static const char *const names[N_TILES] = {"BORDER", "EMPTY", "WALL", "PLAYER", "BAT",
                                               "SCORPION", "SPIDER", "KEY", "DOOR", "TREASURE"};
    return tile >= 0 && tile < N_TILES ? names[tile] : "?";
}

/* The lengths of a path-length target, in either form. */
static int pathlength_validate(const target_t *t, char *reason, int len)
{
    if (t->leg_key || t->leg_door) {
        if (t->leg_key < 1 || t->leg_door < 1 || t->leg_key > TARGET_LENGTH_MAX || t->leg_door > TARGET_LENGTH_MAX) {
            say_to(reason, len, "path-length target: each leg must be 1..%d steps", TARGET_LENGTH_MAX);
            return -1;
        }
        if (t->length != t->leg_key + t->leg_door) {
            say_to(reason, len, "path-length target: the length of a two-leg target is the sum of its legs");
            return -1;
        }
        int shorter = t->leg_key < t->leg_door ? t->leg_key : t->leg_door;
        if (t->tolerance < 0 || (t->tolerance && t->tolerance >= shorter)) {
            say_to(reason, len, "path-length target: the tolerance must be 0..%d steps (less than the shorter leg)",
                shorter - 1);
            return -1;
        }
    } else {
        if (t->length < TARGET_LENGTH_MIN || t->length > TARGET_LENGTH_MAX) {
            say_to(reason, len, "path-length target: the length must be %d..%d steps", TARGET_LENGTH_MIN,
                TARGET_LENGTH_MAX);
            return -1;
        }
        if (t->tolerance < 0 || t->tolerance >= t->length) {
            say_to(reason, len, "path-length target: the tolerance must be 0..%d steps (less than the length)",
                t->length - 1);
            return -1;
        }
    }
    if (t->enemy_count < 0 || t->enemy_count > TARGET_ENEMY_COUNT_MAX) {
        say_to(reason, len, "path-length target: the enemy count must be 0..%d", TARGET_ENEMY_COUNT_MAX);
        return -1;
    }
    return 0;
}

int target_validate(const target_t *t, char *reason, int len)
{
    if (!t) {
        say_to(reason, len, "no target");
        return -1;
    }
    if (t->kind != TARGET_PATHLENGTH && (t->length || t->tolerance)) {
        say_to(reason, len, "only a path-length target has a length and a tolerance");
        return -1;
    }
    if (t->kind != TARGET_PATHLENGTH && (t->leg_key || t->leg_door || t->enemy_count)) {
        say_to(reason, len, "only a path-length target has legs and an enemy count");
        return -1;
    }
    if (t->kind == TARGET_PATHLENGTH) {
        if (pathlength_validate(t, reason, len)) return -1;
        for (int e = 0; e < TARGET_N_ENEMIES; e++)
            if (t->enemies[e]) {
                say_to(reason, len, "path-length target: no enemy set");
                return -1;
            }
        if (t->gate != 0 || t->variant != VARIANT_DUNGEON) {
            say_to(reason, len, "path-length target: no gate, dungeon variant");
            return -1;
        }
        return 0;
    }
    if (t->kind == TARGET_ENCOUNTER) {
        for (int e = 0; e < TARGET_N_ENEMIES; e++)
            if (t->enemies[e] != 0 && t->enemies[e] != 1) {
                say_to(reason, len, "encounter target: enemy flags must be 0 or 1");
                return -1;
            }
        if (t->gate != 0 || t->variant != VARIANT_DUNGEON) {
            say_to(reason, len, "encounter target: no gate, dungeon variant");
            return -1;
        }
        return 0;
    }
    if (t->kind == TARGET_KEYDOOR) {
        if (t->gate != TILE_KEY && t->gate != TILE_BAT) {
            say_to(reason, len, "key-door target: the gate must be KEY or BAT");
            return -1;
        }
        for (int e = 0; e < TARGET_N_ENEMIES; e++)
            if (t->enemies[e]) {
                say_to(reason, len, "key-door target: no enemy set");
                return -1;
            }
        if (t->variant != VARIANT_TREASURE) {
            say_to(reason, len, "key-door target: treasure variant");
            return -1;
        }
        return 0;
    }
    say_to(reason, len, "unknown target kind %d", t->kind);
    return -1;
}

int target_equal(const target_t *a, const target_t *b)
{
    if (a->kind != b->kind || a->gate != b->gate || a->variant != b->variant || a->length != b->length ||
        a->tolerance != b->tolerance || a->leg_key != b->leg_key || a->leg_door != b->leg_door ||
        a->enemy_count != b->enemy_count)
        return 0;
    for (int e = 0; e < TARGET_N_ENEMIES; e++)
        if (a->enemies[e] != b->enemies[e]) return 0;
    return 1;
}

/* "BAT, SCORPION" from the types with flag == want. */
static void list_enemies(const int *g, int want, char *buf, size_t len)
{
    buf[0] = 0;
    for (int e = 0; e < TARGET_N_ENEMIES; e++) {
        if (g[e] != want) continue;
        size_t n = strlen(buf);
        snprintf(buf + n, len - n, "%s%s", n ? ", " : "", target_tile_name(TILE_BAT + e));
    }
}

void target_describe(const target_t *t, char *buf, int len)
{
    char yes[64], no[64];
    if (target_validate(t, NULL, 0)) {
        say_to(buf, len, "invalid target");
        return;
    }
    if (t->kind == TARGET_KEYDOOR) {
        say_to(buf, len, "key-door: Player -> %s -> Door -> Treasure (treasure variant)", target_tile_name(t->gate));
        return;
    }
    if (t->kind == TARGET_PATHLENGTH) {
        char enemies[48] = "";
        if (t->enemy_count) snprintf(enemies, sizeof enemies, ", %d enemies on the level", t->enemy_count);
        if (target_is_two_leg(t))
            say_to(buf, len, "path length: Player -> Key %d steps and Key -> Door %d, give or take %d%s (dungeon variant)",
                t->leg_key, t->leg_door, t->tolerance, enemies);
        else
            say_to(buf, len, "path length: the route Player -> Key -> Door %d steps long, give or take %d%s (dungeon variant)",
                t->length, t->tolerance, enemies);
        return;
    }
    list_enemies(t->enemies, 1, yes, sizeof yes);
    list_enemies(t->enemies, 0, no, sizeof no);
    if (!yes[0])
        say_to(buf, len, "encounter: meet no enemy on the route Player -> Key -> Door (dungeon variant)");
    else if (!no[0])
        say_to(buf, len, "encounter: meet %s on the route Player -> Key -> Door (dungeon variant)", yes);
    else
        say_to(buf, len, "encounter: meet %s, not %s, on the route Player -> Key -> Door (dungeon variant)", yes, no);
}

void target_to_scenario(const target_t *t, const char *story, eval_scenario_t *out)
{
    static const char *const flows[] = {"Player -> Key -> Door", "Player -> Key -> Door -> Treasure",
                                        "Player -> Bat -> Door -> Treasure"};
    memset(out, 0, sizeof *out);
    out->story = story;
    out->variant = t->variant;
    if (t->kind == TARGET_KEYDOOR) {
        out->kind = EVAL_KEYDOOR;
        out->gate = t->gate;
        out->flow = t->gate == TILE_BAT ? flows[2] : flows[1];
    } else if (t->kind == TARGET_PATHLENGTH) {
        out->kind = EVAL_PATHLENGTH;
        out->length = t->length;
        out->tolerance = t->tolerance;
        out->leg_key = t->leg_key;
        out->leg_door = t->leg_door;
        out->enemy_count = t->enemy_count;
        out->flow = flows[0];
    } else {
        out->kind = EVAL_ENCOUNTER;
        for (int e = 0; e < TARGET_N_ENEMIES; e++) out->enemies[e] = t->enemies[e];
        out->flow = flows[0];
    }
}


json_t *target_json(const target_t *t)
{
    if (target_validate(t, NULL, 0)) return NULL;
    if (t->kind == TARGET_KEYDOOR) return json_pack("{s:s, s:s}", "kind", "keydoor", "gate", target_tile_name(t->gate));
    if (t->kind == TARGET_PATHLENGTH) {
        json_t *o = target_is_two_leg(t) ? json_pack("{s:s, s:i, s:i}", "kind", "pathlength", "player_key", t->leg_key,
                                                     "key_door", t->leg_door)
                                         : json_pack("{s:s, s:i}", "kind", "pathlength", "length", t->length);
        json_object_set_new(o, "tolerance", json_integer(t->tolerance));
        if (t->enemy_count) json_object_set_new(o, "enemy_count", json_integer(t->enemy_count));
        return o;
    }
    json_t *arr = json_array();
    for (int e = 0; e < TARGET_N_ENEMIES; e++)
        if (t->enemies[e]) json_array_append_new(arr, json_string(target_tile_name(TILE_BAT + e)));
    return json_pack("{s:s, s:o}", "kind", "encounter", "enemies", arr);
}

int target_to_json(const target_t *t, char *buf, size_t len)
{
    json_t *j = target_json(t);
    if (!j) return -1;
    char *s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(j);
    if (!s) return -1;
    size_t n = strlen(s);
    int ok = n < len;
    if (ok) memcpy(buf, s, n + 1);
    free(s);
    return ok ? (int)n : -1;
}

static int tile_by_name(const char *s)
{
    for (int t = 0; t < N_TILES; t++)
        if (!strcasecmp(s, target_tile_name(t))) return t;
    return -1;
}

/* {"refuse": "..."}: the model's one-line reason, or STORY_INVALID. */
static int json_refusal(const json_t *obj, const json_t *refuse, char *reason, int len)
{
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)obj, key, val) {
        if (strcmp(key, "refuse") && strcmp(key, "reason")) {
            say_to(reason, len, "target JSON: unexpected field '%.40s' beside 'refuse'", key);
            return STORY_INVALID;
        }
    }
    const char *r = json_string_value(refuse);
    if (!r || !*r) {
        say_to(reason, len, "target JSON: 'refuse' must be a non-empty string");
        return STORY_INVALID;
    }
    /* One line: the reason goes into messages and logs. */
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s", r);
    for (char *c = tmp; *c; c++)
        if (*c == '\n' || *c == '\r' || *c == '\t') *c = ' ';
    say_to(reason, len, "%s", tmp);
    return STORY_REFUSED;
}

/* An optional integer field in lo..hi; 0 when absent. */
static int json_small_int(const json_t *v, const char *name, int lo, int hi, int *out, char *reason, int len)
{
    *out = 0;
    if (!v) return STORY_OK;
    json_int_t x = json_is_integer(v) ? json_integer_value(v) : (json_int_t)lo - 1;
    if (x < lo || x > hi) {
        say_to(reason, len, "target JSON: %s must be an integer %d..%d", name, lo, hi);
        return STORY_INVALID;
    }
    *out = (int)x;
    return STORY_OK;
}

static int json_pathlength(const json_t *obj, target_t *out, char *reason, int len)
{
    const json_t *length = json_object_get(obj, "length"), *tolerance = json_object_get(obj, "tolerance");
    const json_t *leg_key = json_object_get(obj, "player_key"), *leg_door = json_object_get(obj, "key_door");
    int A, B, T, E, L;
    if (json_small_int(tolerance, "tolerance", 0, TARGET_LENGTH_MAX - 1, &T, reason, len) ||
        json_small_int(json_object_get(obj, "enemy_count"), "enemy_count", 0, TARGET_ENEMY_COUNT_MAX, &E, reason,
                       len))
        return STORY_INVALID;
    if (leg_key || leg_door) {
        if (length || !leg_key || !leg_door) {
            say_to(reason, len, "target JSON: a two-leg pathlength target has both 'player_key' and 'key_door' "
                                "and no 'length'");
            return STORY_INVALID;
        }
        if (json_small_int(leg_key, "player_key", 1, TARGET_LENGTH_MAX, &A, reason, len) ||
            json_small_int(leg_door, "key_door", 1, TARGET_LENGTH_MAX, &B, reason, len))
            return STORY_INVALID;
        target_pathlegs(out, A, B, tolerance ? T : target_default_tolerance(A < B ? A : B));
    } else {
        if (!length) {
            say_to(reason, len, "target JSON: a pathlength target needs 'length', or 'player_key' and 'key_door'");
            return STORY_INVALID;
        }
        if (json_small_int(length, "length", TARGET_LENGTH_MIN, TARGET_LENGTH_MAX, &L, reason, len))
            return STORY_INVALID;
        target_pathlength(out, L, tolerance ? T : target_default_tolerance(L));
    }
    out->enemy_count = E;
    char why[160];
    if (target_validate(out, why, sizeof why)) {
        say_to(reason, len, "target JSON: %s", why);
        return STORY_INVALID;
    }
    return STORY_OK;
}

static int json_encounter(const json_t *enemies, target_t *out, char *reason, int len)
{
    if (!json_is_array(enemies)) {
        say_to(reason, len, "target JSON: an encounter target needs an 'enemies' array");
        return STORY_INVALID;
    }
    int g[TARGET_N_ENEMIES] = {0};
    size_t i;
    json_t *val;
    json_array_foreach(enemies, i, val) {
        const char *name = json_string_value(val);
        int t = name ? tile_by_name(name) : -1;
        if (!target_is_enemy(t)) {
            say_to(reason, len, "target JSON: enemies must be BAT, SCORPION or SPIDER, got %s%.40s%s",
                name ? "'" : "", name ? name : "a non-string", name ? "'" : "");
            return STORY_INVALID;
        }
        if (g[t - TILE_BAT]) {
            say_to(reason, len, "target JSON: %s listed twice", target_tile_name(t));
            return STORY_INVALID;
        }
        g[t - TILE_BAT] = 1;
    }
    target_encounter(out, g[0], g[1], g[2]);
    return STORY_OK;
}

static int json_keydoor(const json_t *gate, target_t *out, char *reason, int len)
{
    const char *name = json_string_value(gate);
    int t = name ? tile_by_name(name) : -1;
    if (t != TILE_KEY && t != TILE_BAT) {
        say_to(reason, len, "target JSON: a keydoor target needs 'gate' KEY or BAT");
        return STORY_INVALID;
    }
    target_keydoor(out, t);
    return STORY_OK;
}

int target_from_jsonobj(const json_t *obj, target_t *out, char *reason, int len)
{
    memset(out, 0, sizeof *out);
    if (!json_is_object(obj)) {
        say_to(reason, len, "target JSON: expected an object");
        return STORY_INVALID;
    }
    const json_t *refuse = json_object_get(obj, "refuse");
    if (refuse) return json_refusal(obj, refuse, reason, len);
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)obj, key, val) {
        if (strcmp(key, "kind") && strcmp(key, "enemies") && strcmp(key, "gate") && strcmp(key, "reason") &&
            strcmp(key, "length") && strcmp(key, "tolerance") && strcmp(key, "player_key") &&
            strcmp(key, "key_door") && strcmp(key, "enemy_count")) {
            say_to(reason, len, "target JSON: unexpected field '%.40s'", key);
            return STORY_INVALID;
        }
    }
    const json_t *r = json_object_get(obj, "reason");
    if (r && !json_is_string(r)) {
        say_to(reason, len, "target JSON: 'reason' must be a string");
        return STORY_INVALID;
    }
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    if (!kind) {
        say_to(reason, len, "target JSON: missing string field 'kind' (encounter, keydoor or pathlength), or 'refuse'");
        return STORY_INVALID;
    }
    const json_t *enemies = json_object_get(obj, "enemies");
    const json_t *gate = json_object_get(obj, "gate");
    if (strcmp(kind, "pathlength") &&
        (json_object_get(obj, "length") || json_object_get(obj, "tolerance") || json_object_get(obj, "player_key") ||
         json_object_get(obj, "key_door") || json_object_get(obj, "enemy_count"))) {
        say_to(reason, len, "target JSON: only a pathlength target has 'length', 'player_key', 'key_door', "
                            "'tolerance' and 'enemy_count'");
        return STORY_INVALID;
    }
    if (!strcmp(kind, "pathlength")) {
        if (enemies || gate) {
            say_to(reason, len, "target JSON: a pathlength target has no 'enemies' or 'gate'");
            return STORY_INVALID;
        }
        return json_pathlength(obj, out, reason, len);
    }
    if (!strcmp(kind, "encounter")) {
        if (gate) {
            say_to(reason, len, "target JSON: an encounter target has no 'gate'");
            return STORY_INVALID;
        }
        return json_encounter(enemies, out, reason, len);
    }
    if (!strcmp(kind, "keydoor")) {
        if (enemies) {
            say_to(reason, len, "target JSON: a keydoor target has no 'enemies'");
            return STORY_INVALID;
        }
        return json_keydoor(gate, out, reason, len);
    }
    say_to(reason, len, "target JSON: unknown kind '%.40s' (encounter, keydoor or pathlength)", kind);
    return STORY_INVALID;
}

int target_from_json(const char *text, target_t *out, char *reason, int len)
{
    memset(out, 0, sizeof *out);
    if (!text) {
        say_to(reason, len, "target JSON: empty reply");
        return STORY_INVALID;
    }
    size_t n = strlen(text);
    if (n > 65536) {
        say_to(reason, len, "target JSON: too long (%zu bytes; at most 65536)", n);
        return STORY_INVALID;
    }
    /* The first balanced {...} that parses as JSON, wherever it is: prose
     * before the object may hold braces of its own. */
    const char *start = strchr(text, '{');
    if (!start) {
        say_to(reason, len, "target JSON: no JSON object in the reply");
        return STORY_INVALID;
    }
    json_t *obj = NULL;
    char first_err[200] = "";
    /* at most 16 candidates: a reply of braces cannot make this quadratic */
    for (int tries = 0; start && !obj && tries < 16; start = strchr(start + 1, '{'), tries++) {
        int depth = 0, in_str = 0, esc = 0;
        const char *end = NULL;
        for (const char *p = start; *p; p++) {
            if (in_str) {
                if (esc) esc = 0;
                else if (*p == '\\') esc = 1;
                else if (*p == '"') in_str = 0;
                continue;
            }
            if (*p == '"') in_str = 1;
            else if (*p == '{') depth++;
            else if (*p == '}' && --depth == 0) {
                end = p + 1;
                break;
            }
        }
        if (!end) {
            if (!first_err[0]) snprintf(first_err, sizeof first_err, "unterminated object");
            continue;
        }
        json_error_t err;
        obj = json_loadb(start, (size_t)(end - start), JSON_REJECT_DUPLICATES, &err);
        if (!obj && !first_err[0]) snprintf(first_err, sizeof first_err, "%s", err.text);
    }
    if (!obj) {
        say_to(reason, len, "target JSON: %s", first_err);
        return STORY_INVALID;
    }
    int rc = target_from_jsonobj(obj, out, reason, len);
    json_decref(obj);
    return rc;
}

int target_read_json(const char *text, target_t *t, char *why, int len)
{
    int rc = target_from_json(text, t, why, len);
    if (rc == STORY_OK && target_validate(t, why, len) != 0) rc = STORY_INVALID;
    return rc;
}

int target_scenario_from_json(const char *text, eval_scenario_t *out, char *why, int len)
{
    target_t t;
    if (target_read_json(text, &t, why, len) != STORY_OK) return -1;
    target_to_scenario(&t, "", out);
    return 0;
}
