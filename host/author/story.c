/* The rule-based reading of a story: words in, a target out
 * (docs/offline-author.md lists the rules). */
#include "story.h"
#include "story_read.h"
#include "level.h"
#include "util.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int story_in_list(const char *w, const char *const *list)
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
int story_tokenize(const char *s, story_token *tok, int max)
{
    int n = 0;
    const unsigned char *p = (const unsigned char *)s;
    while (*p && n < max) {
        if (isalnum(*p)) {
            story_token *t = &tok[n++];
            t->kind = T_WORD;
            int k = 0;
            while (*p) {
                if (isalnum(*p) || *p == '\'') {
                    if (k < STORY_WORD_MAX - 1) t->w[k++] = (char)tolower(*p);
                    p++;
                } else if (p[0] == 0xe2 && p[1] == 0x80 && p[2] == 0x99) { /* U+2019 apostrophe */
                    if (k < STORY_WORD_MAX - 1) t->w[k++] = '\'';
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

int story_number_word(const char *w)
{
    if (story_in_list(w, w_numbers)) return 1;
    if (!isdigit((unsigned char)w[0])) return 0;
    long v = 0;
    for (const char *c = w; *c; c++) {
        if (!isdigit((unsigned char)*c)) return 0;
        if (v < 1000000) v = v * 10 + (*c - '0');
    }
    return v >= 2;
}

int story_number_value(const char *w)
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
int story_noun_tile(const char *w)
{
    if (story_in_list(w, w_bat)) return TILE_BAT;
    if (story_in_list(w, w_scorpion)) return TILE_SCORPION;
    if (story_in_list(w, w_spider)) return TILE_SPIDER;
    if (story_in_list(w, w_key)) return TILE_KEY;
    if (story_in_list(w, w_door)) return TILE_DOOR;
    if (story_in_list(w, w_treasure)) return TILE_TREASURE;
    if (story_in_list(w, w_player)) return TILE_PLAYER;
    if (story_in_list(w, w_monster)) return 0;
    return -1;
}

int story_word_at(const story_token *tok, int nt, int i, const char *const *list)
{
    return i >= 0 && i < nt && tok[i].kind == T_WORD && story_in_list(tok[i].w, list);
}

/* A count of steps, written as digits or as a small number word; -1 otherwise. */
int story_count_value(const char *w)
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

/* One reading of a story, word by word. */
typedef struct {
    story_token tok[STORY_MAX_TOKENS];
    int nt;
    story_lengths_t L;                    /* the route lengths it names */
    int mentions_route, mentions_key, mentions_door, mentions_treasure;
    mention m[MAX_MENTIONS];
    int nm;
    int clause, pol, pend, verb_in_clause;
    unsigned char choice[STORY_MAX_TOKENS + 1]; /* clauses with "or" / "one of" */
    int by_role, by_clause;               /* "held by" / "guarded by" waiting for its enemy */
    int key_clause;
    char *reason;
    int len;
} reading;

/* What the story asks of each enemy type, and of monsters not named. */
typedef struct {
    int pos[TARGET_N_ENEMIES], neg[TARGET_N_ENEMIES], holder[TARGET_N_ENEMIES];
    int gen_pos, gen_pos_all, gen_neg, gen_count;
    int other_count; /* a second, different count of monsters ("two enemies ... but four enemies") */
} asks;

static const char *enemy_label(int tile) { return target_tile_name(tile); }

static const char *const w_vague_length[] = {"long", "longer", "longest", "short", "shorter", "shortest",
                                             "winding", NULL};

static int is_length_number(const reading *r, int i)
{
    for (int k = 0; k < r->L.nat; k++)
        if (r->L.at[k] == i) return 1;
    return 0;
}

/* "20x20", "a 32 by 32 map", "map size 20": a map other than the
 * engine's 16x16.  -1 refused, 0 otherwise. */
static int refuse_map_size(reading *r, int i)
{
    const story_token *tok = r->tok;
    const char *w = tok[i].w;
    int a = 0, b = 0;
    char tail;
    static const char *const w_map[] = {"map", "maps", "level", "levels", "grid", "grids", "size", "board", NULL};
    if (sscanf(w, "%dx%d%c", &a, &b, &tail) != 2) {
        a = b = story_count_value(w);
        if (a < 0) return 0;
        if (story_word_at(tok, r->nt, i + 1, (const char *const[]){"by", "x", NULL}) && i + 2 < r->nt &&
            story_count_value(tok[i + 2].w) >= 0)
            b = story_count_value(tok[i + 2].w);
        else if (!story_word_at(tok, r->nt, i - 1, (const char *const[]){"size", NULL}))
            return 0;
        int map_near = story_word_at(tok, r->nt, i - 1, w_map);
        for (int j = i + 1; j <= i + 4; j++) map_near |= story_word_at(tok, r->nt, j, w_map);
        if (!map_near) return 0;
    }
    if (a == PCG_DEFAULT_SIDE && b == PCG_DEFAULT_SIDE) return 0;
    say_to(r->reason, r->len, "unsupported: the story asks for a %dx%d map; the engine's Dungeon levels are %dx%d", a,
           b, PCG_DEFAULT_SIDE, PCG_DEFAULT_SIDE);
    return -1;
}

/* Words that leave the target to be decided: "a few steps", "whatever is
 * convenient", "as long as it feels natural"; "some" before "steps" or
 * "enemies" ("some 30 steps" is "about"). */
static const char *const w_vague[] = {"few", "several", "whatever", "whichever", "convenient", "conveniently",
                                      "natural", "naturally", "feels", "feel", "reasonable", "suitable",
                                      "appropriate", "sensible", "somewhere", "somehow", NULL};

/* Words naming what the evaluator cannot measure.  -1 refused, 1 when the
 * word needs no further reading, 0 otherwise. */
static int refuse_unmeasured(reading *r, int i)
{
    const story_token *tok = r->tok;
    const char *w = tok[i].w;
    if (story_in_list(w, w_creatures)) {
        say_to(r->reason, r->len,
            "unsupported: the story mentions '%s', which the Dungeon problem does not have (its enemies are BAT, "
            "SCORPION and SPIDER)",
            w);
        return -1;
    }
    if (story_in_list(w, w_things)) {
        say_to(r->reason, r->len, "unsupported: the story mentions '%s', which is not a tile of the Dungeon problem", w);
        return -1;
    }
    if (story_in_list(w, w_vague) ||
        (!strcmp(w, "some") && i + 1 < r->nt && (story_noun_tile(tok[i + 1].w) == 0 || !strcmp(tok[i + 1].w, "steps")))) {
        say_to(r->reason, r->len,
            "ambiguous: the story leaves '%s' to be decided; a target needs the number of steps and the enemies "
            "named exactly",
            w);
        return -1;
    }
    if (refuse_map_size(r, i)) return -1;
    if (story_in_list(w, w_vague_length) && r->L.found) return 1; /* "30 steps long" */
    if (!strcmp(w, "long") && story_word_at(tok, r->nt, i - 1, (const char *const[]){"as", NULL}) &&
        story_word_at(tok, r->nt, i + 1, (const char *const[]){"as", NULL}))
        return 1; /* "as long as": the words after it say what is asked */
    if (story_in_list(w, w_vague_length) && r->mentions_route) {
        say_to(r->reason, r->len,
            "ambiguous: the story asks for a '%s' route without a number of steps; the evaluator scores a route "
            "length, e.g. 'the route from the player to the key and on to the door should be about 30 steps'",
            w);
        return -1;
    }
    if (story_in_list(w, w_quality)) {
        say_to(r->reason, r->len,
            "unsupported: the story asks for '%s', which the evaluator does not measure (it measures the route "
            "Player -> Key -> Door and the enemies met on it, or Player -> gate -> Door -> Treasure)",
            w);
        return -1;
    }
    if (story_number_word(w) && !is_length_number(r, i)) {
        /* A count of a thing: "two keys", "three bats".  A count of
         * monsters is checked against the names given. */
        for (int j = i + 1; j < r->nt && j <= i + 2 && tok[j].kind == T_WORD; j++) {
            int nt_tile = story_noun_tile(tok[j].w);
            if (nt_tile < 0) continue;
            if (nt_tile == 0) break; /* generic: handled at the noun */
            say_to(r->reason, r->len,
                "unsupported: the story asks for '%s %s': the evaluator measures which enemy types are met and "
                "whether the flow is playable, not how many of a tile there are",
                w, tok[j].w);
            return -1;
        }
    }
    return 0;
}

/* A negation or a meet/avoid verb: 1 when word i is one (read), else 0. */
static int read_verb(reading *r, int i)
{
    const story_token *tok = r->tok;
    const char *w = tok[i].w;
    if (story_in_list(w, w_neg)) {
        r->pend = 1; /* "neither ... nor" stays negative; "not avoid" is a verb's job */
        return 1;
    }
    int verb = 0;
    if (story_in_list(w, w_pos)) verb = 1;
    if (story_in_list(w, w_avoid)) verb = -1;
    if (!strcmp(w, "from") && i > 0 && tok[i - 1].kind == T_WORD && story_in_list(tok[i - 1].w, w_from_avoid))
        verb = -1;
    if (!verb) return 0;
    int base = r->pend ? -verb : verb;
    r->pend = 0;
    r->pol = base;
    /* Passive voice ("the spider must be avoided") applies to the
     * enemies named before the verb in this clause. */
    int passive = 0;
    for (int j = i - 1; j >= 0 && j >= i - 3 && tok[j].kind == T_WORD; j--) {
        if (story_in_list(tok[j].w, w_be)) passive = 1;
        if (!story_in_list(tok[j].w, w_be) && !story_in_list(tok[j].w, w_neg)) break;
    }
    if (passive)
        for (int k = 0; k < r->nm; k++)
            if (r->m[k].clause == r->clause && !r->m[k].verb_before) r->m[k].pol = base;
    r->verb_in_clause = 1;
    return 1;
}

/* A choice ("or", "one of") or an enemy's role ("holds the key", "guarded
 * by"): 1 when word i is one (read), else 0. */
static int read_choice_or_role(reading *r, int i)
{
    const story_token *tok = r->tok;
    const char *w = tok[i].w;
    if (story_in_list(w, w_or)) {
        r->choice[r->clause] = 1;
        return 1;
    }
    if (!strcmp(w, "one") && i + 1 < r->nt && tok[i + 1].kind == T_WORD && !strcmp(tok[i + 1].w, "of")) {
        r->choice[r->clause] = 1;
        return 1;
    }
    if (story_in_list(w, w_hold) || story_in_list(w, w_guard)) {
        /* "<enemy> holds the key", "<enemy> guards the key" */
        int role = story_in_list(w, w_hold) ? 1 : 2;
        for (int k = r->nm - 1; k >= 0 && r->m[k].clause == r->clause; k--) {
            if (!target_is_enemy(r->m[k].tile)) continue;
            int key_next = 0;
            for (int j = i + 1; j < r->nt && j <= i + 4 && tok[j].kind == T_WORD; j++)
                if (story_noun_tile(tok[j].w) == TILE_KEY) key_next = 1;
            if (role == 1 && key_next) r->m[k].holder = 1;
            if (role == 2) r->m[k].guard = 1;
            break;
        }
        return 1;
    }
    if ((story_in_list(w, w_held) || story_in_list(w, w_guarded)) && i + 1 < r->nt && tok[i + 1].kind == T_WORD &&
        !strcmp(tok[i + 1].w, "by")) {
        r->by_role = story_in_list(w, w_held) && r->key_clause == r->clause ? 1 : 2;
        r->by_clause = r->clause;
        return 1;
    }
    return 0;
}

/* A tile named by word i: the key, door and treasure are noted, an enemy
 * or a monster becomes a mention.  0, or -1 refused. */
static int read_noun(reading *r, int i)
{
    const story_token *tok = r->tok;
    int tile = story_noun_tile(tok[i].w);
    if (tile < 0 || tile == TILE_PLAYER) return 0;
    if (tile == TILE_KEY) {
        r->mentions_key = 1;
        r->key_clause = r->clause;
        return 0;
    }
    if (tile == TILE_DOOR) {
        r->mentions_door = 1;
        return 0;
    }
    if (tile == TILE_TREASURE) {
        r->mentions_treasure = 1;
        return 0;
    }
    if (r->nm == MAX_MENTIONS) {
        say_to(r->reason, r->len, "unsupported: the story names too many monsters to read");
        return -1;
    }
    mention *x = &r->m[r->nm++];
    memset(x, 0, sizeof *x);
    x->tile = tile;
    x->pol = r->pend ? -r->pol : r->pol;
    x->clause = r->clause;
    x->verb_before = r->verb_in_clause;
    if (r->by_role && r->by_clause == r->clause && target_is_enemy(tile)) {
        if (r->by_role == 1) x->holder = 1;
        else x->guard = 1;
        r->by_role = 0;
    }
    if (tile == 0)
        for (int j = i - 1; j >= 0 && j >= i - 3 && tok[j].kind == T_WORD; j--) {
            if (story_in_list(tok[j].w, w_all)) x->all = 1;
            if (story_number_word(tok[j].w)) x->count = story_number_value(tok[j].w);
            else if (story_count_value(tok[j].w) == 1) x->count = 1; /* "one enemy" */
        }
    return 0;
}

/* Every word in turn, clause by clause.  0, or -1 refused. */
static int read_words(reading *r)
{
    for (int i = 0; i < r->nt; i++) {
        const story_token *t = &r->tok[i];
        if (t->kind == T_BREAK || (t->kind == T_WORD && story_in_list(t->w, w_break))) {
            r->clause++;
            r->pol = 1;
            r->pend = 0;
            r->verb_in_clause = 0;
            continue;
        }
        if (t->kind != T_WORD) continue;
        int rc = refuse_unmeasured(r, i);
        if (rc < 0) return -1;
        if (rc > 0 || read_verb(r, i) || read_choice_or_role(r, i)) continue;
        if (read_noun(r, i)) return -1;
    }
    return 0;
}

/* The mentions summed up per enemy type. */
static void tally(const reading *r, asks *a)
{
    memset(a, 0, sizeof *a);
    for (int k = 0; k < r->nm; k++) {
        const mention *x = &r->m[k];
        if (x->tile == 0) {
            if (x->pol < 0) a->gen_neg = 1;
            else if (x->all) a->gen_pos_all = 1;
            else a->gen_pos = 1;
            if (x->pol > 0 && x->count && a->gen_count && x->count != a->gen_count) a->other_count = x->count;
            if (x->pol > 0 && x->count && !a->gen_count) a->gen_count = x->count;
            continue;
        }
        int e = x->tile - TILE_BAT;
        if (x->pol > 0) a->pos[e] = 1;
        else a->neg[e] = 1;
        if (x->holder) a->holder[e] = 1;
    }
}

static int refuse_two_counts(const reading *r, const asks *a)
{
    if (!a->other_count) return 0;
    say_to(r->reason, r->len, "contradictory: the story asks for %d monsters and for %d", a->gen_count, a->other_count);
    return -1;
}

/* Asks that contradict themselves or name no exact set.  A count of
 * monsters with no names becomes "all of them" or "some".  0, or -1 refused. */
static int check_asks(const reading *r, asks *a)
{
    if (refuse_two_counts(r, a)) return -1;
    for (int e = 0; e < TARGET_N_ENEMIES; e++)
        if (a->pos[e] && a->neg[e]) {
            say_to(r->reason, r->len, "contradictory: the story asks both to meet and to avoid the %s", enemy_label(TILE_BAT + e));
            return -1;
        }
    /* "a bat or a spider", "one of: bat, spider": no single enemy set. */
    for (int c = 0; c <= r->clause; c++) {
        if (!r->choice[c]) continue;
        int seen[TARGET_N_ENEMIES] = {0}, distinct = 0;
        for (int k = 0; k < r->nm; k++)
            if (r->m[k].clause == c && r->m[k].tile && r->m[k].pol > 0 && !seen[r->m[k].tile - TILE_BAT]) {
                seen[r->m[k].tile - TILE_BAT] = 1;
                distinct++;
            }
        if (distinct >= 2) {
            say_to(r->reason, r->len,
                "ambiguous: the story offers a choice between enemies; the evaluator needs one exact set of enemy types "
                "to meet");
            return -1;
        }
    }
    int n_pos = a->pos[0] + a->pos[1] + a->pos[2];
    int anything = r->nm > 0 || r->mentions_key || r->mentions_door || r->mentions_treasure;
    if (!anything) {
        say_to(r->reason, r->len,
            "unsupported: the story names nothing the evaluator can measure (a KEY, the DOOR, the TREASURE, or the enemies "
            "BAT, SCORPION, SPIDER)");
        return -1;
    }
    if (a->gen_count) {
        if (n_pos && a->gen_count != n_pos) {
            say_to(r->reason, r->len, "contradictory: the story asks for %d monsters but names %d enemy type%s", a->gen_count,
                n_pos, n_pos == 1 ? "" : "s");
            return -1;
        }
        if (!n_pos && a->gen_count == TARGET_N_ENEMIES) a->gen_pos_all = 1;
        else if (!n_pos) a->gen_pos = 1;
    }
    if (a->gen_pos && !n_pos && !a->gen_pos_all) {
        say_to(r->reason, r->len,
            "ambiguous: the story asks to meet a monster without naming which (BAT, SCORPION or SPIDER)");
        return -1;
    }
    return 0;
}

/* The enemies a path-length story may ask for: a number of them, no type.
 * 0, or -1 refused. */
static int pathlength_enemies(const reading *r, const asks *a, int *count)
{
    *count = 0;
    for (int e = 0; e < TARGET_N_ENEMIES; e++)
        if (a->pos[e] || a->neg[e]) {
            say_to(r->reason, r->len,
                "incomplete: the story names the %s, but a path-length target cannot require a particular enemy "
                "type (it can count enemy tiles: 'three enemies'); the evaluator scores one target at a time",
                enemy_label(TILE_BAT + e));
            return -1;
        }
    if (refuse_two_counts(r, a)) return -1;
    if (a->gen_neg) {
        say_to(r->reason, r->len,
            "unsupported: a path-length target cannot forbid enemies (its enemy count 0 means any number)");
        return -1;
    }
    if ((a->gen_pos || a->gen_pos_all) && !a->gen_count) {
        say_to(r->reason, r->len, "ambiguous: the story asks for enemies without saying how many ('three enemies')");
        return -1;
    }
    *count = a->gen_count;
    return 0;
}

/* A story with a number of steps: the route Player -> Key -> Door or its
 * two legs, and perhaps a number of enemies. */
static int read_pathlength(const reading *r, const asks *a, target_t *out)
{
    if (r->mentions_treasure) {
        say_to(r->reason, r->len,
            "unsupported: the story asks for a route length together with a treasure; the evaluator scores one "
            "target at a time");
        return STORY_REFUSED;
    }
    int enemies;
    if (pathlength_enemies(r, a, &enemies)) return STORY_REFUSED;
    const story_lengths_t *L = &r->L;
    if (L->total && !(r->mentions_key && r->mentions_door) && !r->mentions_route) {
        say_to(r->reason, r->len,
            "incomplete: the story asks for a route length without naming the route; the evaluator measures the "
            "route Player -> Key -> Door (say it runs by the key to the door)");
        return STORY_REFUSED;
    }
    int total = L->total ? L->total : L->leg_key + L->leg_door;
    if (total < TARGET_LENGTH_MIN || total > TARGET_LENGTH_MAX || L->tolerance >= (L->total ? total : 1 << 30)) {
        say_to(r->reason, r->len, "unsupported: the story asks for a route of %d steps; the evaluator scores lengths of %d to %d steps",
            total, TARGET_LENGTH_MIN, TARGET_LENGTH_MAX);
        return STORY_REFUSED;
    }
    if (L->total) target_pathlength(out, L->total, L->tolerance);
    else target_pathlegs(out, L->leg_key, L->leg_door, L->tolerance);
    out->enemy_count = enemies;
    char d[200];
    if (target_validate(out, d, sizeof d)) {
        say_to(r->reason, r->len, "unsupported: %s", d);
        memset(out, 0, sizeof *out);
        return STORY_REFUSED;
    }
    target_describe(out, d, sizeof d);
    say_to(r->reason, r->len, "%s", d);
    return STORY_OK;
}

/* Key-door flow: Player -> G -> Door -> Treasure. */
static int read_keydoor(const reading *r, const asks *a, target_t *out)
{
    int n_pos = a->pos[0] + a->pos[1] + a->pos[2];
    for (int e = 0; e < TARGET_N_ENEMIES; e++)
        if (a->neg[e] || (a->gen_neg && !n_pos)) {
            say_to(r->reason, r->len,
                "unsupported: the story asks to avoid an enemy on the way to the treasure; the key-door evaluator "
                "does not measure enemies met on the way");
            return STORY_REFUSED;
        }
    if (a->gen_pos_all || n_pos > 1) {
        say_to(r->reason, r->len,
            "unsupported: the story asks for several enemies before the treasure; the key-door evaluator measures one "
            "gate before the door (a KEY or a BAT)");
        return STORY_REFUSED;
    }
    if (n_pos == 0) {
        if (!r->mentions_key) {
            say_to(r->reason, r->len,
                "incomplete: the story does not say what opens the door to the treasure (a KEY or a BAT)");
            return STORY_REFUSED;
        }
        target_keydoor(out, TILE_KEY);
        say_to(r->reason, r->len, "treasure story with the KEY as the gate: Player -> KEY -> Door -> Treasure");
        return STORY_OK;
    }
    int e = a->pos[0] ? 0 : a->pos[1] ? 1 : 2;
    const char *name = enemy_label(TILE_BAT + e);
    if (r->mentions_key && !a->holder[e]) {
        say_to(r->reason, r->len,
            "unsupported: the story asks for the %s and the KEY before the door to the treasure; the key-door "
            "evaluator measures one gate (a KEY, or a BAT that holds the key)",
            name);
        return STORY_REFUSED;
    }
    if (TILE_BAT + e != TILE_BAT) {
        say_to(r->reason, r->len,
            "unsupported: the story makes the %s the gate to the treasure; the key-door evaluator supports a KEY or "
            "a BAT as the gate",
            name);
        return STORY_REFUSED;
    }
    target_keydoor(out, TILE_BAT);
    say_to(r->reason, r->len, "treasure story with the BAT as the gate: Player -> BAT -> Door -> Treasure");
    return STORY_OK;
}

int story_extract_offline(const char *story, target_t *out, char *reason, int len)
{
    /* Per thread and not on the stack: the tokens and mentions of a long
     * story are tens of kilobytes. */
    static __thread reading rd;
    static __thread char norm[STORY_NORM_MAX];
    reading *r = &rd;
    memset(out, 0, sizeof *out);
    if (!story) {
        say_to(reason, len, "incomplete: no story given");
        return STORY_REFUSED;
    }
    size_t slen = strlen(story);
    if (slen > STORY_MAX_LEN) {
        say_to(reason, len, "unsupported: the story is %zu characters long; at most %d are accepted", slen, STORY_MAX_LEN);
        return STORY_REFUSED;
    }
    memset(r, 0, sizeof *r);
    r->reason = reason;
    r->len = len;
    if (story_normalize(story, norm, sizeof norm, 1, reason, len)) return STORY_REFUSED;
    r->nt = story_tokenize(norm, r->tok, STORY_MAX_TOKENS);
    int nwords = 0;
    for (int i = 0; i < r->nt; i++) nwords += r->tok[i].kind == T_WORD;
    if (!nwords) {
        say_to(reason, len, "incomplete: the story is empty");
        return STORY_REFUSED;
    }

    /* a word the reader refuses (a vague "few", a dragon) is the better
     * reason than the lengths it leaves unread */
    char length_why[400];
    int lrc = story_read_lengths(r->tok, r->nt, &r->L, length_why, sizeof length_why);
    for (int i = 0; i < r->nt; i++) r->mentions_route |= story_word_at(r->tok, r->nt, i, story_w_route);

    r->pol = 1;
    r->by_clause = -1;
    r->key_clause = -1;
    if (read_words(r)) return STORY_REFUSED;
    if (lrc) {
        say_to(reason, len, "%s", length_why);
        return STORY_REFUSED;
    }
    asks a;
    tally(r, &a);
    if (r->L.found) return read_pathlength(r, &a, out);
    if (check_asks(r, &a)) return STORY_REFUSED;
    if (r->mentions_treasure) return read_keydoor(r, &a, out);

    /* Encounter on the route Player -> Key -> Door.  Types not named are
     * expected absent, as in the paper's scenarios 1 and 2. */
    int g[TARGET_N_ENEMIES];
    for (int e = 0; e < TARGET_N_ENEMIES; e++) g[e] = a.pos[e] || (a.gen_pos_all && !a.neg[e]);
    target_encounter(out, g[0], g[1], g[2]);
    char d[200];
    target_describe(out, d, sizeof d);
    say_to(reason, len, "%s", d);
    return STORY_OK;
}
