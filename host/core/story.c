/* Stories -> targets: the paper's scenarios, rule-based extraction, JSON. */
#include "story.h"
#include "dungeon.h"
#include "level.h"
#include <ctype.h>
#include <stdarg.h>
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

static void target_encounter(target_t *t, int bat, int scorpion, int spider)
{
    memset(t, 0, sizeof *t);
    t->kind = TARGET_ENCOUNTER;
    t->enemies[0] = bat;
    t->enemies[1] = scorpion;
    t->enemies[2] = spider;
    t->variant = VARIANT_DUNGEON;
}

static void target_pathlength(target_t *t, int length, int tolerance)
{
    memset(t, 0, sizeof *t);
    t->kind = TARGET_PATHLENGTH;
    t->length = length;
    t->tolerance = tolerance;
    t->variant = VARIANT_DUNGEON;
}

int target_default_tolerance(int length)
{
    int t = (length + 5) / 10;
    return t > 0 ? t : 1;
}

static void target_keydoor(target_t *t, int gate)
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

static void say(char *buf, int len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *buf, int len, const char *fmt, ...)
{
    if (!buf || len <= 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, (size_t)len, fmt, ap);
    va_end(ap);
}

int target_validate(const target_t *t, char *reason, int len)
{
    if (!t) {
        say(reason, len, "no target");
        return -1;
    }
    if (t->kind != TARGET_PATHLENGTH && (t->length || t->tolerance)) {
        say(reason, len, "only a path-length target has a length and a tolerance");
        return -1;
    }
    if (t->kind == TARGET_PATHLENGTH) {
        if (t->length < TARGET_LENGTH_MIN || t->length > TARGET_LENGTH_MAX) {
            say(reason, len, "path-length target: the length must be %d..%d steps", TARGET_LENGTH_MIN,
                TARGET_LENGTH_MAX);
            return -1;
        }
        if (t->tolerance < 0 || t->tolerance >= t->length) {
            say(reason, len, "path-length target: the tolerance must be 0..%d steps (less than the length)",
                t->length - 1);
            return -1;
        }
        for (int e = 0; e < TARGET_N_ENEMIES; e++)
            if (t->enemies[e]) {
                say(reason, len, "path-length target: no enemy set");
                return -1;
            }
        if (t->gate != 0 || t->variant != VARIANT_DUNGEON) {
            say(reason, len, "path-length target: no gate, dungeon variant");
            return -1;
        }
        return 0;
    }
    if (t->kind == TARGET_ENCOUNTER) {
        for (int e = 0; e < TARGET_N_ENEMIES; e++)
            if (t->enemies[e] != 0 && t->enemies[e] != 1) {
                say(reason, len, "encounter target: enemy flags must be 0 or 1");
                return -1;
            }
        if (t->gate != 0 || t->variant != VARIANT_DUNGEON) {
            say(reason, len, "encounter target: no gate, dungeon variant");
            return -1;
        }
        return 0;
    }
    if (t->kind == TARGET_KEYDOOR) {
        if (t->gate != TILE_KEY && t->gate != TILE_BAT) {
            say(reason, len, "key-door target: the gate must be KEY or BAT");
            return -1;
        }
        for (int e = 0; e < TARGET_N_ENEMIES; e++)
            if (t->enemies[e]) {
                say(reason, len, "key-door target: no enemy set");
                return -1;
            }
        if (t->variant != VARIANT_TREASURE) {
            say(reason, len, "key-door target: treasure variant");
            return -1;
        }
        return 0;
    }
    say(reason, len, "unknown target kind %d", t->kind);
    return -1;
}

int target_equal(const target_t *a, const target_t *b)
{
    if (a->kind != b->kind || a->gate != b->gate || a->variant != b->variant || a->length != b->length ||
        a->tolerance != b->tolerance)
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
        say(buf, len, "invalid target");
        return;
    }
    if (t->kind == TARGET_KEYDOOR) {
        say(buf, len, "key-door: Player -> %s -> Door -> Treasure (treasure variant)", target_tile_name(t->gate));
        return;
    }
    if (t->kind == TARGET_PATHLENGTH) {
        say(buf, len, "path length: the route Player -> Key -> Door %d steps long, give or take %d (dungeon variant)",
            t->length, t->tolerance);
        return;
    }
    list_enemies(t->enemies, 1, yes, sizeof yes);
    list_enemies(t->enemies, 0, no, sizeof no);
    if (!yes[0])
        say(buf, len, "encounter: meet no enemy on the route Player -> Key -> Door (dungeon variant)");
    else if (!no[0])
        say(buf, len, "encounter: meet %s on the route Player -> Key -> Door (dungeon variant)", yes);
    else
        say(buf, len, "encounter: meet %s, not %s, on the route Player -> Key -> Door (dungeon variant)", yes, no);
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
        out->flow = flows[0];
    } else {
        out->kind = EVAL_ENCOUNTER;
        for (int e = 0; e < TARGET_N_ENEMIES; e++) out->enemies[e] = t->enemies[e];
        out->flow = flows[0];
    }
}

/* ------------------------------------------------------------------ */
/* Rule-based extraction                                              */

enum { T_WORD, T_BREAK, T_SOFT };
#define MAX_TOKENS 1200
#define WORD_MAX 24

typedef struct {
    int kind;
    char w[WORD_MAX];
} token;

static int in_list(const char *w, const char *const *list)
{
    for (int i = 0; list[i]; i++)
        if (!strcmp(w, list[i])) return 1;
    return 0;
}

static const char *const w_bat[] = {"bat", "bats", NULL};
static const char *const w_scorpion[] = {"scorpion", "scorpions", NULL};
static const char *const w_spider[] = {"spider", "spiders", NULL};
static const char *const w_monster[] = {"monster", "monsters", "enemy", "enemies", "creature", "creatures",
                                        "foe", "foes", "beast", "beasts", NULL};
static const char *const w_key[] = {"key", "keys", NULL};
static const char *const w_door[] = {"door", "doors", "exit", "exits", NULL};
static const char *const w_treasure[] = {"treasure", "treasures", "chest", "chests", NULL};
static const char *const w_player[] = {"player", "players", "hero", "heroes", NULL};
static const char *const w_neg[] = {"not", "never", "no", "without", "nor", "neither", "none", "except",
                                    "don't", "dont", "doesn't", "doesnt", "cannot", "can't", "cant",
                                    "mustn't", "shouldn't", "won't", "isn't", "aren't", NULL};
static const char *const w_pos[] = {"meet", "meets", "meeting", "met", "encounter", "encounters",
                                    "encountered", "encountering", "face", "faces", "faced", "facing",
                                    "fight", "fights", "fighting", "fought", "defeat", "defeats",
                                    "defeated", "defeating", "kill", "kills", "killed", "killing", "slay",
                                    "slays", "slaying", "slain", "battle", "battles", "confront",
                                    "confronts", "confronted", "pass", "passes", "passed", "passing",
                                    "past", "cross", "crosses", "visit", "visits", "see", "sees", "seen",
                                    "near", "beside", NULL};
static const char *const w_avoid[] = {"avoid", "avoids", "avoided", "avoiding", "evade", "evades", "evaded",
                                      "evading", "dodge", "dodges", "dodged", "dodging", "bypass",
                                      "bypasses", "bypassing", "shun", "shuns", "elude", "eludes", NULL};
/* "X from" reads as avoiding: "away from", "escape from", "far from". */
static const char *const w_from_avoid[] = {"away", "far", "escape", "escapes", "flee", "flees", "run",
                                           "runs", "hide", "hides", "safe", "clear", NULL};
static const char *const w_break[] = {"but", "however", "whereas", "while", "yet", "although", "though",
                                      NULL};
static const char *const w_be[] = {"be", "is", "are", "was", "were", "been", "being", "get", "gets", NULL};
static const char *const w_or[] = {"or", "either", NULL};
static const char *const w_all[] = {"all", "every", "each", NULL};
static const char *const w_hold[] = {"hold", "holds", "holding", "has", "have", "carry", "carries",
                                     "carrying", "own", "owns", "keep", "keeps", "possess", "possesses",
                                     "drop", "drops", NULL};
static const char *const w_held[] = {"held", "carried", "kept", "owned", "possessed", "dropped", NULL};
static const char *const w_guard[] = {"guard", "guards", "guarding", "protect", "protects", "protecting",
                                      "block", "blocks", "blocking", NULL};
static const char *const w_guarded[] = {"guarded", "protected", "blocked", NULL};
static const char *const w_numbers[] = {"two", "three", "four", "five", "six", "seven", "eight", "nine",
                                        "ten", "eleven", "twelve", "couple", "pair", "dozen", "second",
                                        "third", "twice", "double", NULL};
static const char *const w_creatures[] = {
    "dragon", "dragons", "goblin", "goblins", "orc", "orcs", "troll", "trolls", "zombie", "zombies",
    "skeleton", "skeletons", "ghost", "ghosts", "ghoul", "ghouls", "snake", "snakes", "rat", "rats",
    "wolf", "wolves", "slime", "slimes", "boss", "bosses", "wizard", "wizards", "witch", "witches",
    "demon", "demons", "vampire", "vampires", "golem", "golems", "ogre", "ogres", "imp", "imps",
    "knight", "knights", "guardian", "guardians", "bear", "bears", "spirit", "spirits", "npc", "npcs",
    "villager", "villagers", "merchant", "merchants", "princess", NULL};
static const char *const w_things[] = {
    "lava", "water", "river", "rivers", "lake", "trap", "traps", "spike", "spikes", "potion", "potions",
    "sword", "swords", "shield", "shields", "coin", "coins", "gem", "gems", "lever", "levers", "switch",
    "switches", "bridge", "bridges", "stairs", "staircase", "ladder", "ladders", "portal", "portals",
    "teleporter", "torch", "torches", "shop", "weapon", "weapons", "armor", "armour", "tree", "trees",
    "grass", "sand", "ice", "fire", "pit", "pits", NULL};
static const char *const w_quality[] = {
    "beautiful", "pretty", "ugly", "nice", "symmetric", "symmetrical", "maze", "labyrinth", "long",
    "longer", "longest", "short", "shorter", "shortest", "difficult", "hard", "harder", "easy",
    "easier", "challenging", "interesting", "fun", "boring", "narrow", "wide", "big", "small", "large",
    "huge", "tiny", "many", "few", "several", "multiple", "spacious", "cramped", "winding", "balanced",
    "diverse", "varied", "random", "creative", "scary", "dark", "quick", "quickly", "fast", "faster",
    "slow", "slowly", NULL};

/* Lowercased words and punctuation.  Letters, digits and apostrophes make
 * words; '.', '!', '?', ';' end a clause; ',', ':' and other punctuation
 * separate words; anything else (other bytes) separates words. */
static int tokenize(const char *s, token *tok, int max)
{
    int n = 0;
    const unsigned char *p = (const unsigned char *)s;
    while (*p && n < max) {
        if (isalnum(*p)) {
            token *t = &tok[n++];
            t->kind = T_WORD;
            int k = 0;
            while (*p) {
                if (isalnum(*p) || *p == '\'') {
                    if (k < WORD_MAX - 1) t->w[k++] = (char)tolower(*p);
                    p++;
                } else if (p[0] == 0xe2 && p[1] == 0x80 && p[2] == 0x99) { /* U+2019 apostrophe */
                    if (k < WORD_MAX - 1) t->w[k++] = '\'';
                    p += 3;
                } else {
                    break;
                }
            }
            while (k > 0 && t->w[k - 1] == '\'') k--; /* trailing quote of 'Door' */
            t->w[k] = 0;
            if (k > 2 && !strcmp(t->w + k - 2, "'s")) t->w[k - 2] = 0; /* bat's -> bat */
        } else if (*p == '.' || *p == '!' || *p == '?' || *p == ';') {
            tok[n].kind = T_BREAK;
            tok[n++].w[0] = 0;
            p++;
        } else if (*p == ',' || *p == ':') {
            tok[n].kind = T_SOFT;
            tok[n++].w[0] = 0;
            p++;
        } else {
            p++;
        }
    }
    return n;
}

static int number_word(const char *w)
{
    if (in_list(w, w_numbers)) return 1;
    if (!isdigit((unsigned char)w[0])) return 0;
    long v = 0;
    for (const char *c = w; *c; c++) {
        if (!isdigit((unsigned char)*c)) return 0;
        if (v < 1000000) v = v * 10 + (*c - '0');
    }
    return v >= 2;
}

static int number_value(const char *w)
{
    static const char *const words[] = {"two", "three", "four", "five", "six", "seven", "eight", "nine",
                                        "ten", "eleven", "twelve", NULL};
    for (int i = 0; words[i]; i++)
        if (!strcmp(w, words[i])) return i + 2;
    if (!strcmp(w, "couple") || !strcmp(w, "pair") || !strcmp(w, "double") || !strcmp(w, "twice")) return 2;
    if (isdigit((unsigned char)w[0])) return atoi(w) > 99 ? 99 : atoi(w);
    return 99;
}

/* Tile named by a word: an enemy, KEY, DOOR, TREASURE, PLAYER; 0 generic
 * monster; -1 none. */
static int noun_tile(const char *w)
{
    if (in_list(w, w_bat)) return TILE_BAT;
    if (in_list(w, w_scorpion)) return TILE_SCORPION;
    if (in_list(w, w_spider)) return TILE_SPIDER;
    if (in_list(w, w_key)) return TILE_KEY;
    if (in_list(w, w_door)) return TILE_DOOR;
    if (in_list(w, w_treasure)) return TILE_TREASURE;
    if (in_list(w, w_player)) return TILE_PLAYER;
    if (in_list(w, w_monster)) return 0;
    return -1;
}

static int is_enemy(int tile) { return tile >= TILE_BAT && tile <= TILE_SPIDER; }

/* ------------------------------------------------------------------ */
/* Route lengths: "the route from the player to the key and on to the */
/* door should be about 30 steps"                                     */

static const char *const w_steps[] = {"step", "steps", "tile", "tiles", "cell", "cells", "move", "moves",
                                      "square", "squares", NULL};
static const char *const w_about[] = {"about", "around", "roughly", "approximately", "nearly", "some",
                                      "circa", NULL};
static const char *const w_exact[] = {"exactly", "precisely", NULL};
static const char *const w_bound[] = {"least", "most", "more", "less", "fewer", "over", "under", "minimum",
                                      "maximum", "max", "min", "than", "below", "above", "beyond", NULL};
static const char *const w_route[] = {"route", "routes", "path", "paths", "way", "walk", "distance", "journey",
                                      "trip", NULL};
static const char *const w_vague_length[] = {"long", "longer", "longest", "short", "shorter", "shortest",
                                             "winding", NULL};

/* A count of steps, written as digits or as a small number word; -1 otherwise. */
static int count_value(const char *w)
{
    static const char *const words[] = {"zero", "one", "two", "three", "four", "five", "six", "seven", "eight",
                                        "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen",
                                        "sixteen", "seventeen", "eighteen", "nineteen", "twenty", "thirty",
                                        "forty", "fifty", "sixty", NULL};
    static const int values[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 30, 40, 50, 60};
    for (int i = 0; words[i]; i++)
        if (!strcmp(w, words[i])) return values[i];
    if (!isdigit((unsigned char)w[0])) return -1;
    long v = 0;
    for (const char *c = w; *c; c++) {
        if (!isdigit((unsigned char)*c)) return -1;
        if (v < 100000) v = v * 10 + (*c - '0');
    }
    return (int)v;
}

static int word_at(const token *tok, int nt, int i, const char *const *list)
{
    return i >= 0 && i < nt && tok[i].kind == T_WORD && in_list(tok[i].w, list);
}

/* The route length a story asks for: 1 with length and tolerance, 0 when it
 * names no number of steps, -1 refused with the reason (a bound on one
 * side only, two lengths). *at is the index of the number. */
static int route_length(const token *tok, int nt, int *length, int *tol, int *at, char *reason, int len)
{
    int found = 0;
    for (int i = 0; i < nt; i++) {
        int v = tok[i].kind == T_WORD ? count_value(tok[i].w) : -1;
        if (v < 0 || !(word_at(tok, nt, i + 1, w_steps) || word_at(tok, nt, i + 2, w_steps))) continue;
        if (found) {
            say(reason, len, "the story names more than one number of steps; the evaluator measures one route length");
            return -1;
        }
        found = 1;
        *at = i;
        *length = v;
        *tol = target_default_tolerance(v);
        for (int j = i - 1; j >= 0 && j >= i - 3 && tok[j].kind == T_WORD; j--) {
            if (in_list(tok[j].w, w_bound) || !strcmp(tok[j].w, "up")) {
                say(reason, len,
                    "the story bounds the route length on one side only ('%s'); the evaluator scores a length "
                    "with a tolerance, e.g. 'about 30 steps' or 'between 25 and 35 steps'",
                    tok[j].w);
                return -1;
            }
            if (in_list(tok[j].w, w_exact)) *tol = 0;
            if (in_list(tok[j].w, w_about)) *tol = target_default_tolerance(v);
        }
        /* "between A and B steps" */
        if (i >= 3 && word_at(tok, nt, i - 1, (const char *const[]){"and", "to", NULL}) &&
            word_at(tok, nt, i - 3, (const char *const[]){"between", "from", NULL}) && count_value(tok[i - 2].w) >= 0 &&
            count_value(tok[i - 2].w) < v) {
            int lo = count_value(tok[i - 2].w);
            *length = (lo + v) / 2;
            *tol = (v - lo + 1) / 2;
        }
        /* "30 steps, give or take 4" / "plus or minus 4" */
        for (int j = i + 1; j < nt && j <= i + 7; j++) {
            if (tok[j].kind != T_WORD) continue;
            int take = !strcmp(tok[j].w, "take") || !strcmp(tok[j].w, "minus");
            if (take && j + 1 < nt && count_value(tok[j + 1].w) >= 0) *tol = count_value(tok[j + 1].w);
        }
    }
    if (!found) return 0;
    if (*length < TARGET_LENGTH_MIN || *length > TARGET_LENGTH_MAX || *tol >= *length) {
        say(reason, len, "the story asks for a route of %d steps; the evaluator scores lengths of %d to %d steps",
            *length, TARGET_LENGTH_MIN, TARGET_LENGTH_MAX);
        return -1;
    }
    return 1;
}

#define MAX_MENTIONS 256
typedef struct {
    int tile;        /* enemy tile, or 0 for a generic monster */
    int pol;         /* +1 meet, -1 avoid */
    int clause;
    int verb_before; /* a meet/avoid verb came before it in its clause */
    int all;         /* generic with all/every/each/three */
    int count;       /* generic with a number word: that number, else 0 */
    int holder;      /* this enemy holds the key */
    int guard;       /* this enemy guards something */
} mention;

static const char *enemy_label(int tile) { return target_tile_name(tile); }

int story_extract_offline(const char *story, target_t *out, char *reason, int len)
{
    static __thread token tok[MAX_TOKENS];
    mention m[MAX_MENTIONS];
    int nm = 0;
    memset(out, 0, sizeof *out);
    if (!story) {
        say(reason, len, "no story given");
        return STORY_REFUSED;
    }
    size_t slen = strlen(story);
    if (slen > STORY_MAX_LEN) {
        say(reason, len, "the story is %zu characters long; at most %d are accepted", slen, STORY_MAX_LEN);
        return STORY_REFUSED;
    }
    int nt = tokenize(story, tok, MAX_TOKENS);
    int nwords = 0;
    for (int i = 0; i < nt; i++) nwords += tok[i].kind == T_WORD;
    if (!nwords) {
        say(reason, len, "the story is empty");
        return STORY_REFUSED;
    }

    int length = 0, tolerance = 0, length_at = -1;
    int lrc = route_length(tok, nt, &length, &tolerance, &length_at, reason, len);
    if (lrc < 0) return STORY_REFUSED;
    int mentions_route = 0;
    for (int i = 0; i < nt; i++) mentions_route |= word_at(tok, nt, i, w_route);

    int clause = 0, pol = 1, pend = 0, verb_in_clause = 0;
    int mentions_key = 0, mentions_door = 0, mentions_treasure = 0;
    static __thread unsigned char choice[MAX_TOKENS + 1]; /* clauses with "or" / "one of" */
    memset(choice, 0, sizeof choice);
    int by_role = 0, by_clause = -1; /* "held by" / "guarded by" waiting for its enemy */
    int key_clause = -1;

    for (int i = 0; i < nt; i++) {
        const char *w = tok[i].w;
        if (tok[i].kind == T_BREAK || (tok[i].kind == T_WORD && in_list(w, w_break))) {
            clause++;
            pol = 1;
            pend = 0;
            verb_in_clause = 0;
            continue;
        }
        if (tok[i].kind != T_WORD) continue;

        if (in_list(w, w_creatures)) {
            say(reason, len,
                "the story mentions '%s', which the Dungeon problem does not have (its enemies are BAT, "
                "SCORPION and SPIDER)",
                w);
            return STORY_REFUSED;
        }
        if (in_list(w, w_things)) {
            say(reason, len, "the story mentions '%s', which is not a tile of the Dungeon problem", w);
            return STORY_REFUSED;
        }
        if (in_list(w, w_vague_length) && lrc == 1) continue; /* "30 steps long" */
        if (in_list(w, w_vague_length) && mentions_route) {
            say(reason, len,
                "the story asks for a '%s' route without a number of steps; the evaluator scores a route length, "
                "e.g. 'the route from the player to the key and on to the door should be about 30 steps'",
                w);
            return STORY_REFUSED;
        }
        if (in_list(w, w_quality)) {
            say(reason, len,
                "the story asks for '%s', which the evaluator does not measure (it measures the route "
                "Player -> Key -> Door and the enemies met on it, or Player -> gate -> Door -> Treasure)",
                w);
            return STORY_REFUSED;
        }
        if (number_word(w) && i != length_at) {
            /* A count of a thing: "two keys", "three bats".  A count of
             * monsters is checked against the names given. */
            for (int j = i + 1; j < nt && j <= i + 2 && tok[j].kind == T_WORD; j++) {
                int nt_tile = noun_tile(tok[j].w);
                if (nt_tile < 0) continue;
                if (nt_tile == 0) break; /* generic: handled at the noun */
                say(reason, len,
                    "the story asks for '%s %s': the evaluator measures which enemy types are met and "
                    "whether the flow is playable, not how many of a tile there are",
                    w, tok[j].w);
                return STORY_REFUSED;
            }
        }
        if (in_list(w, w_neg)) {
            pend = 1; /* "neither ... nor" stays negative; "not avoid" is a verb's job */
            continue;
        }
        int verb = 0;
        if (in_list(w, w_pos)) verb = 1;
        if (in_list(w, w_avoid)) verb = -1;
        if (!strcmp(w, "from") && i > 0 && tok[i - 1].kind == T_WORD && in_list(tok[i - 1].w, w_from_avoid))
            verb = -1;
        if (verb) {
            int base = pend ? -verb : verb;
            pend = 0;
            pol = base;
            /* Passive voice ("the spider must be avoided") applies to the
             * enemies named before the verb in this clause. */
            int passive = 0;
            for (int j = i - 1; j >= 0 && j >= i - 3 && tok[j].kind == T_WORD; j--) {
                if (in_list(tok[j].w, w_be)) passive = 1;
                if (!in_list(tok[j].w, w_be) && !in_list(tok[j].w, w_neg)) break;
            }
            if (passive)
                for (int k = 0; k < nm; k++)
                    if (m[k].clause == clause && !m[k].verb_before) m[k].pol = base;
            verb_in_clause = 1;
            continue;
        }
        if (in_list(w, w_or)) {
            choice[clause] = 1;
            continue;
        }
        if (!strcmp(w, "one") && i + 1 < nt && tok[i + 1].kind == T_WORD && !strcmp(tok[i + 1].w, "of")) {
            choice[clause] = 1;
            continue;
        }
        if (in_list(w, w_hold) || in_list(w, w_guard)) {
            /* "<enemy> holds the key", "<enemy> guards the key" */
            int role = in_list(w, w_hold) ? 1 : 2;
            for (int k = nm - 1; k >= 0 && m[k].clause == clause; k--) {
                if (!is_enemy(m[k].tile)) continue;
                int key_next = 0;
                for (int j = i + 1; j < nt && j <= i + 4 && tok[j].kind == T_WORD; j++)
                    if (noun_tile(tok[j].w) == TILE_KEY) key_next = 1;
                if (role == 1 && key_next) m[k].holder = 1;
                if (role == 2) m[k].guard = 1;
                break;
            }
            continue;
        }
        if ((in_list(w, w_held) || in_list(w, w_guarded)) && i + 1 < nt && tok[i + 1].kind == T_WORD &&
            !strcmp(tok[i + 1].w, "by")) {
            by_role = in_list(w, w_held) && key_clause == clause ? 1 : 2;
            by_clause = clause;
            continue;
        }
        int tile = noun_tile(w);
        if (tile < 0 || tile == TILE_PLAYER) continue;
        if (tile == TILE_KEY) {
            mentions_key = 1;
            key_clause = clause;
            continue;
        }
        if (tile == TILE_DOOR) {
            mentions_door = 1;
            continue;
        }
        if (tile == TILE_TREASURE) {
            mentions_treasure = 1;
            continue;
        }
        if (nm == MAX_MENTIONS) {
            say(reason, len, "the story names too many monsters to read");
            return STORY_REFUSED;
        }
        mention *x = &m[nm++];
        memset(x, 0, sizeof *x);
        x->tile = tile;
        x->pol = pend ? -pol : pol;
        x->clause = clause;
        x->verb_before = verb_in_clause;
        if (by_role && by_clause == clause && is_enemy(tile)) {
            if (by_role == 1) x->holder = 1;
            else x->guard = 1;
            by_role = 0;
        }
        if (tile == 0)
            for (int j = i - 1; j >= 0 && j >= i - 3 && tok[j].kind == T_WORD; j--) {
                if (in_list(tok[j].w, w_all)) x->all = 1;
                if (number_word(tok[j].w)) x->count = number_value(tok[j].w);
            }
    }

    /* What was asked of each enemy type. */
    int pos[TARGET_N_ENEMIES] = {0}, neg[TARGET_N_ENEMIES] = {0}, holder[TARGET_N_ENEMIES] = {0};
    int gen_pos = 0, gen_pos_all = 0, gen_neg = 0, gen_count = 0;
    for (int k = 0; k < nm; k++) {
        if (m[k].tile == 0) {
            if (m[k].pol < 0) gen_neg = 1;
            else if (m[k].all) gen_pos_all = 1;
            else gen_pos = 1;
            if (m[k].pol > 0 && m[k].count) gen_count = m[k].count;
            continue;
        }
        int e = m[k].tile - TILE_BAT;
        if (m[k].pol > 0) pos[e] = 1;
        else neg[e] = 1;
        if (m[k].holder) holder[e] = 1;
    }
    for (int e = 0; e < TARGET_N_ENEMIES; e++)
        if (pos[e] && neg[e]) {
            say(reason, len, "the story asks both to meet and to avoid the %s", enemy_label(TILE_BAT + e));
            return STORY_REFUSED;
        }
    /* "a bat or a spider", "one of: bat, spider": no single enemy set. */
    for (int c = 0; c <= clause; c++) {
        if (!choice[c]) continue;
        int seen[TARGET_N_ENEMIES] = {0}, distinct = 0;
        for (int k = 0; k < nm; k++)
            if (m[k].clause == c && m[k].tile && m[k].pol > 0 && !seen[m[k].tile - TILE_BAT]) {
                seen[m[k].tile - TILE_BAT] = 1;
                distinct++;
            }
        if (distinct >= 2) {
            say(reason, len,
                "the story offers a choice between enemies; the evaluator needs one exact set of enemy types "
                "to meet");
            return STORY_REFUSED;
        }
    }
    int n_pos = pos[0] + pos[1] + pos[2];
    int anything = nm > 0 || mentions_key || mentions_door || mentions_treasure;
    if (!anything) {
        say(reason, len,
            "the story names nothing the evaluator can measure (a KEY, the DOOR, the TREASURE, or the enemies "
            "BAT, SCORPION, SPIDER)");
        return STORY_REFUSED;
    }
    if (gen_count) {
        if (n_pos && gen_count != n_pos) {
            say(reason, len, "the story asks for %d monsters but names %d enemy type%s", gen_count, n_pos,
                n_pos == 1 ? "" : "s");
            return STORY_REFUSED;
        }
        if (!n_pos && gen_count == TARGET_N_ENEMIES) gen_pos_all = 1;
        else if (!n_pos) gen_pos = 1;
    }
    if (gen_pos && !n_pos && !gen_pos_all) {
        say(reason, len, "the story asks to meet a monster without naming which (BAT, SCORPION or SPIDER)");
        return STORY_REFUSED;
    }

    if (lrc == 1) {
        if (mentions_treasure || nm > 0) {
            say(reason, len,
                "the story asks for a route length together with %s; the evaluator scores one target at a time",
                mentions_treasure ? "a treasure" : "monsters");
            return STORY_REFUSED;
        }
        if (!mentions_key || !mentions_door) {
            say(reason, len,
                "the story asks for a route length without naming the route; the evaluator measures the route "
                "Player -> Key -> Door (say it runs by the key to the door)");
            return STORY_REFUSED;
        }
        target_pathlength(out, length, tolerance);
        char d[200];
        target_describe(out, d, sizeof d);
        say(reason, len, "%s", d);
        return STORY_OK;
    }

    if (mentions_treasure) {
        /* Key-door flow: Player -> G -> Door -> Treasure. */
        for (int e = 0; e < TARGET_N_ENEMIES; e++)
            if (neg[e] || (gen_neg && !n_pos)) {
                say(reason, len,
                    "the story asks to avoid an enemy on the way to the treasure; the key-door evaluator "
                    "does not measure enemies met on the way");
                return STORY_REFUSED;
            }
        if (gen_pos_all || n_pos > 1) {
            say(reason, len,
                "the story asks for several enemies before the treasure; the key-door evaluator measures one "
                "gate before the door (a KEY or a BAT)");
            return STORY_REFUSED;
        }
        if (n_pos == 0) {
            if (!mentions_key) {
                say(reason, len,
                    "the story does not say what opens the door to the treasure (a KEY or a BAT)");
                return STORY_REFUSED;
            }
            target_keydoor(out, TILE_KEY);
            say(reason, len, "treasure story with the KEY as the gate: Player -> KEY -> Door -> Treasure");
            return STORY_OK;
        }
        int e = pos[0] ? 0 : pos[1] ? 1 : 2;
        const char *name = enemy_label(TILE_BAT + e);
        if (mentions_key && !holder[e]) {
            say(reason, len,
                "the story asks for the %s and the KEY before the door to the treasure; the key-door "
                "evaluator measures one gate (a KEY, or a BAT that holds the key)",
                name);
            return STORY_REFUSED;
        }
        if (TILE_BAT + e != TILE_BAT) {
            say(reason, len,
                "the story makes the %s the gate to the treasure; the key-door evaluator supports a KEY or "
                "a BAT as the gate",
                name);
            return STORY_REFUSED;
        }
        target_keydoor(out, TILE_BAT);
        say(reason, len, "treasure story with the BAT as the gate: Player -> BAT -> Door -> Treasure");
        return STORY_OK;
    }

    /* Encounter on the route Player -> Key -> Door.  Types not named are
     * expected absent, as in the paper's scenarios 1 and 2. */
    int g[TARGET_N_ENEMIES];
    for (int e = 0; e < TARGET_N_ENEMIES; e++) g[e] = pos[e] || (gen_pos_all && !neg[e]);
    target_encounter(out, g[0], g[1], g[2]);
    char d[200];
    target_describe(out, d, sizeof d);
    say(reason, len, "%s", d);
    (void)mentions_door;
    return STORY_OK;
}

/* ------------------------------------------------------------------ */
/* JSON                                                               */

json_t *target_json(const target_t *t)
{
    if (target_validate(t, NULL, 0)) return NULL;
    if (t->kind == TARGET_KEYDOOR) return json_pack("{s:s, s:s}", "kind", "keydoor", "gate", target_tile_name(t->gate));
    if (t->kind == TARGET_PATHLENGTH)
        return json_pack("{s:s, s:i, s:i}", "kind", "pathlength", "length", t->length, "tolerance", t->tolerance);
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

int target_from_jsonobj(const json_t *obj, target_t *out, char *reason, int len)
{
    memset(out, 0, sizeof *out);
    if (!json_is_object(obj)) {
        say(reason, len, "target JSON: expected an object");
        return STORY_INVALID;
    }
    const json_t *refuse = json_object_get(obj, "refuse");
    const char *key;
    json_t *val;
    if (refuse) {
        json_object_foreach((json_t *)obj, key, val) {
            if (strcmp(key, "refuse") && strcmp(key, "reason")) {
                say(reason, len, "target JSON: unexpected field '%.40s' beside 'refuse'", key);
                return STORY_INVALID;
            }
        }
        const char *r = json_string_value(refuse);
        if (!r || !*r) {
            say(reason, len, "target JSON: 'refuse' must be a non-empty string");
            return STORY_INVALID;
        }
        /* One line: the reason goes into messages and logs. */
        char tmp[512];
        snprintf(tmp, sizeof tmp, "%s", r);
        for (char *c = tmp; *c; c++)
            if (*c == '\n' || *c == '\r' || *c == '\t') *c = ' ';
        say(reason, len, "%s", tmp);
        return STORY_REFUSED;
    }
    json_object_foreach((json_t *)obj, key, val) {
        if (strcmp(key, "kind") && strcmp(key, "enemies") && strcmp(key, "gate") && strcmp(key, "reason") &&
            strcmp(key, "length") && strcmp(key, "tolerance")) {
            say(reason, len, "target JSON: unexpected field '%.40s'", key);
            return STORY_INVALID;
        }
    }
    const json_t *r = json_object_get(obj, "reason");
    if (r && !json_is_string(r)) {
        say(reason, len, "target JSON: 'reason' must be a string");
        return STORY_INVALID;
    }
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    if (!kind) {
        say(reason, len, "target JSON: missing string field 'kind' (encounter, keydoor or pathlength), or 'refuse'");
        return STORY_INVALID;
    }
    const json_t *enemies = json_object_get(obj, "enemies");
    const json_t *gate = json_object_get(obj, "gate");
    const json_t *length = json_object_get(obj, "length"), *tolerance = json_object_get(obj, "tolerance");
    if (strcmp(kind, "pathlength") && (length || tolerance)) {
        say(reason, len, "target JSON: only a pathlength target has 'length' and 'tolerance'");
        return STORY_INVALID;
    }
    if (!strcmp(kind, "pathlength")) {
        if (enemies || gate) {
            say(reason, len, "target JSON: a pathlength target has no 'enemies' or 'gate'");
            return STORY_INVALID;
        }
        if (!json_is_integer(length) || (tolerance && !json_is_integer(tolerance))) {
            say(reason, len, "target JSON: a pathlength target needs an integer 'length' (and an integer "
                             "'tolerance', if any)");
            return STORY_INVALID;
        }
        json_int_t L = json_integer_value(length);
        json_int_t T = tolerance ? json_integer_value(tolerance) : 0;
        if (L < TARGET_LENGTH_MIN || L > TARGET_LENGTH_MAX || T < 0 || T >= L) {
            say(reason, len, "target JSON: length must be %d..%d steps and tolerance 0..length-1", TARGET_LENGTH_MIN,
                TARGET_LENGTH_MAX);
            return STORY_INVALID;
        }
        target_pathlength(out, (int)L, tolerance ? (int)T : target_default_tolerance((int)L));
        return STORY_OK;
    }
    if (!strcmp(kind, "encounter")) {
        if (gate) {
            say(reason, len, "target JSON: an encounter target has no 'gate'");
            return STORY_INVALID;
        }
        if (!json_is_array(enemies)) {
            say(reason, len, "target JSON: an encounter target needs an 'enemies' array");
            return STORY_INVALID;
        }
        int g[TARGET_N_ENEMIES] = {0};
        size_t i;
        json_array_foreach(enemies, i, val) {
            const char *name = json_string_value(val);
            int t = name ? tile_by_name(name) : -1;
            if (!is_enemy(t)) {
                say(reason, len, "target JSON: enemies must be BAT, SCORPION or SPIDER, got %s%.40s%s",
                    name ? "'" : "", name ? name : "a non-string", name ? "'" : "");
                return STORY_INVALID;
            }
            if (g[t - TILE_BAT]) {
                say(reason, len, "target JSON: %s listed twice", target_tile_name(t));
                return STORY_INVALID;
            }
            g[t - TILE_BAT] = 1;
        }
        target_encounter(out, g[0], g[1], g[2]);
        return STORY_OK;
    }
    if (!strcmp(kind, "keydoor")) {
        if (enemies) {
            say(reason, len, "target JSON: a keydoor target has no 'enemies'");
            return STORY_INVALID;
        }
        const char *name = json_string_value(gate);
        int t = name ? tile_by_name(name) : -1;
        if (t != TILE_KEY && t != TILE_BAT) {
            say(reason, len, "target JSON: a keydoor target needs 'gate' KEY or BAT");
            return STORY_INVALID;
        }
        target_keydoor(out, t);
        return STORY_OK;
    }
    say(reason, len, "target JSON: unknown kind '%.40s' (encounter, keydoor or pathlength)", kind);
    return STORY_INVALID;
}

int target_from_json(const char *text, target_t *out, char *reason, int len)
{
    memset(out, 0, sizeof *out);
    if (!text) {
        say(reason, len, "target JSON: empty reply");
        return STORY_INVALID;
    }
    size_t n = strlen(text);
    if (n > 65536) {
        say(reason, len, "target JSON: reply too long (%zu bytes)", n);
        return STORY_INVALID;
    }
    /* The first balanced {...} that parses as JSON, wherever it is: prose
     * before the object may hold braces of its own. */
    const char *start = strchr(text, '{');
    if (!start) {
        say(reason, len, "target JSON: no JSON object in the reply");
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
        say(reason, len, "target JSON: %s", first_err);
        return STORY_INVALID;
    }
    int rc = target_from_jsonobj(obj, out, reason, len);
    json_decref(obj);
    return rc;
}
