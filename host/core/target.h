/* Measurable targets (docs/method.md#scenarios, docs/evaluator.md).
 *
 * A target is what the evaluator can score:
 *   encounter  dungeon variant, route Player -> Key -> Door, and the set g of
 *              enemy types (BAT, SCORPION, SPIDER) that must be met on it;
 *              the types not in g must not be met.
 *   keydoor    treasure variant, flow Player -> G -> Door -> Treasure with the
 *              gate tile G = KEY or BAT.
 *   pathlength dungeon variant, the shortest solution route Player -> Key ->
 *              Door (as the evaluator finds it) of a given length in steps,
 *              give or take a tolerance; or, in the two-leg form, each of
 *              its legs player -> key and key -> door of a given length.
 *              Either form may also ask for a number of enemy tiles.
 *
 * A target comes from a story: story_extract_offline() (host/author/story.h)
 * reads it by keywords for the offline author; target_from_json() reads it
 * from a language model's JSON reply.  Both refuse what the evaluator cannot
 * measure, with a one-line reason. */
#ifndef PCG_TARGET_H
#define PCG_TARGET_H
#include "eval.h"
#include "level.h"
#include <jansson.h>
#include <stddef.h>

enum { TARGET_ENCOUNTER = 1, TARGET_KEYDOOR = 2, TARGET_PATHLENGTH = 3 };
/* Route lengths a path-length target may ask for, in steps. */
#define TARGET_LENGTH_MIN 2
#define TARGET_LENGTH_MAX 1000
/* Enemy tiles a path-length target may ask the level to hold. */
#define TARGET_ENEMY_COUNT_MAX 64
/* Enemy types in g, indexed by tile id - TILE_BAT. */
#define TARGET_N_ENEMIES 3
#define STORY_MAX_LEN 4000

/* Result of extraction and of reading target JSON. */
enum { STORY_OK = 0, STORY_REFUSED = 1, STORY_INVALID = -1 };

typedef struct {
    int kind;                       /* TARGET_ENCOUNTER or TARGET_KEYDOOR */
    int enemies[TARGET_N_ENEMIES];  /* encounter: g_e in {0,1}; zero for keydoor */
    int gate;                       /* keydoor: TILE_KEY or TILE_BAT; 0 for encounter */
    int variant;                    /* VARIANT_DUNGEON (encounter, pathlength) or VARIANT_TREASURE (keydoor) */
    int length, tolerance;          /* pathlength: route steps wanted, and steps off allowed; 0 otherwise */
    int leg_key, leg_door;          /* two-leg pathlength: player -> key and key -> door steps (length is
                                       their sum); 0 in the total form and for other kinds */
    int enemy_count;                /* pathlength: enemy tiles the level must hold; 0: any number */
} target_t;

/* The tolerance of "about N steps": 10% of N, at least 1. */
int target_default_tolerance(int length);

/* Set *t to one target of each kind, every other field zero. */
void target_encounter(target_t *t, int bat, int scorpion, int spider);
void target_keydoor(target_t *t, int gate);
void target_pathlength(target_t *t, int length, int tolerance);
/* The two-leg form: player -> key leg_key steps, key -> door leg_door, each
 * give or take tolerance. */
void target_pathlegs(target_t *t, int leg_key, int leg_door, int tolerance);
static inline int target_is_two_leg(const target_t *t) { return t->kind == TARGET_PATHLENGTH && t->leg_key > 0; }
/* 1 for the tiles a target's enemy set can name: BAT, SCORPION, SPIDER. */
static inline int target_is_enemy(int tile) { return tile >= TILE_BAT && tile <= TILE_SPIDER; }

/* The four stories of the paper's Table I (scenario 1..4), verbatim; NULL
 * for any other number. */
const char *story_scenario_text(int scenario);
/* The target of scenario 1..4; -1 for any other number. */
int target_scenario(int scenario, target_t *out);

/* 0 if t is a well-formed target the evaluator supports, else -1 and reason. */
int target_validate(const target_t *t, char *reason, int len);
int target_equal(const target_t *a, const target_t *b);
/* "encounter: meet BAT; no SCORPION, SPIDER on the route (dungeon)" etc. */
void target_describe(const target_t *t, char *buf, int len);
/* "BAT", "SCORPION", "SPIDER", "KEY", ... for a tile id; "?" otherwise. */
const char *target_tile_name(int tile);

/* The evaluator's scenario for a target (number 0; story and flow point to
 * static or caller-owned text). */
void target_to_scenario(const target_t *t, const char *story, eval_scenario_t *out);

/* A target given as JSON on a command line: target_from_json, then
 * target_validate.  STORY_OK, or STORY_REFUSED / STORY_INVALID with the
 * reason in why. */
int target_read_json(const char *text, target_t *t, char *why, int len);
/* The evaluator's scenario for target JSON (target_read_json, then
 * target_to_scenario with an empty story).  0, or -1 with the reason (a
 * refusal included) in why. */
int target_scenario_from_json(const char *text, eval_scenario_t *out, char *why, int len);

/* JSON form, shared with the language model's target-extraction prompt:
 *   {"kind":"encounter","enemies":["BAT","SCORPION"]}
 *   {"kind":"keydoor","gate":"KEY"}
 *   {"kind":"pathlength","length":30,"tolerance":3}   (tolerance optional: 10%)
 *   {"kind":"pathlength","player_key":20,"key_door":30,"tolerance":0}
 *                      (two legs; tolerance optional: 10% of the shorter leg)
 *   either pathlength form may add "enemy_count":3
 *   {"refuse":"reason"}
 * target_json returns a new reference (NULL only if t is invalid). */
json_t *target_json(const target_t *t);
/* Compact JSON text; returns its length, or -1 if t is invalid or buf too small. */
int target_to_json(const target_t *t, char *buf, size_t len);
/* Strict reading of untrusted JSON.  text may be a bare object or wrapped in
 * prose or a ```json fence; the first {...} object is read.  Keys other than
 * kind/enemies/gate/length/tolerance/player_key/key_door/enemy_count/reason
 * (or refuse/reason) are rejected.  Returns STORY_OK,
 * STORY_REFUSED (reason = the model's refusal) or STORY_INVALID (reason says
 * what is wrong). */
int target_from_json(const char *text, target_t *out, char *reason, int len);
/* The same, from an already parsed object. */
int target_from_jsonobj(const json_t *obj, target_t *out, char *reason, int len);

#endif
