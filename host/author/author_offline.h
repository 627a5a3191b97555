/* The offline author: a deterministic, rule-based baseline reward designer
 * (not a language model) used by `run --llm offline`.
 *
 * A reward is a list of weighted terms over one level, S(l) = sum w_i f_i(l),
 * written as C in the reward API (docs/reward-api.md) as the delta
 *     compute_reward(prev, curr) = scale * (S(curr) - S(prev)).
 * The terms are kept as a struct and also written into the header comment of
 * the generated code, so a reward can be regenerated from its source alone
 * (author_parse).  Self-alignment rescales or densifies terms from random-play
 * statistics; feedback names the one measured failure affecting the most of
 * the generated levels; refinement changes the weight or the form of the
 * term behind it.  docs/offline-author.md describes every term and rule. */
#ifndef PCG_AUTHOR_OFFLINE_H
#define PCG_AUTHOR_OFFLINE_H
#include "level.h"
#include "target.h"
#include <stddef.h>

/* Term kinds.  Presence features are 0/1 (or in [-1, 1] when shaped); count
 * features cost 1/4 per tile off target, up to cells/4 tiles; "route" is
 * Player -> Key -> Door
 * (or Player -> Door when there is no reachable key). */
enum {
    AT_KEY_COUNT,      /* -min(|keys - 1|, cells/4)/4 */
    AT_PLAYER_KEY,     /* a key is reachable from the player */
    AT_KEY_DOOR,       /* the door is reachable from that key */
    AT_ENEMY_COUNT,    /* required enemy: -min(|count - param|, cells/4)/4 */
    AT_ENEMY_NEAR,     /* required enemy within detour param of the route */
    AT_ENEMY_NONE,     /* unwanted enemy: -min(count, cells/4)/4 */
    AT_ENEMY_AWAY,     /* unwanted enemy: penalty within detour param of the route */
    AT_GATE_COUNT,     /* key-door: -min(|gates - 1|, cells/4)/4 */
    AT_DOOR_COUNT,     /* key-door: -min(|doors - 1|, cells/4)/4 */
    AT_PLAYER_GATE,    /* key-door: a gate reachable, nearer than the door */
    AT_GATE_DOOR,      /* key-door: a door reachable from that gate */
    AT_DOOR_SEPARATES, /* key-door: the way to the treasure runs through the door */
    AT_ROUTE_LENGTH,   /* path length: the route Player -> Key -> Door within the tolerance */
    /* experience terms (author_experience.h): signed weights, features in [0, 1] */
    AT_EXP_FORKS,      /* floor cells with three or more ways on, per eighth of the map */
    AT_EXP_DEAD_ENDS,  /* floor cells with one way out, per 32nd of the map */
    AT_EXP_OPEN,       /* the share of the map that is not wall */
    AT_EXP_GUARD,      /* enemy types with one within 3 steps of the key */
    AT_N_KINDS
};
/* Forms: binary features, or shaped ones that also reward getting closer
 * (fewer regions, smaller detours). */
enum { AF_BINARY = 0, AF_SHAPED = 1 };

#define AUTHOR_MAX_TERMS 16
#define AUTHOR_WEIGHT_MAX 64.0f

typedef struct {
    int kind;     /* AT_* */
    int tile;     /* the enemy or gate tile it is about, 0 if none */
    float weight;
    int form;     /* AF_BINARY or AF_SHAPED */
    int param;    /* wanted count (ENEMY_COUNT) or detour radius (NEAR/AWAY) */
    int changes;  /* refinements applied to this term so far */
} author_term;

typedef struct {
    target_t target;
    float scale;  /* global multiplier tuned by self-alignment */
    int revision; /* bumped by every change */
    int n;
    author_term term[AUTHOR_MAX_TERMS];
} author_reward;

/* Self-alignment statistics of a reward on random play (the reward JIT's
 * reward_stats, copied field by field). */
typedef struct {
    double mean, std, min, max, zero_share;
    long n;
} author_stats;

/* What went wrong in the generated levels, counted over n levels. */
typedef struct {
    int n;
    double fitness;
    int solved;            /* encounter: levels with a solution; key-door: playable */
    /* encounter: why a level has no solution (first reason that applies) */
    int no_key;            /* no KEY at all */
    int key_unreached;     /* no key reachable from the player */
    int door_unreached;    /* no reachable key reaches the door */
    int blocked_by_keys;   /* every shortest way to a key passes another key */
    int met[TARGET_N_ENEMIES];     /* solved levels where the type is met */
    int present[TARGET_N_ENEMIES]; /* solved levels where the type is on the map */
    /* key-door: why a level is not playable (first reason that applies) */
    int no_gate, no_door, gate_unreached, gate_no_door, treasure_unreached, door_not_separating;
    int missing;           /* PLAYER, DOOR (encounter) or TREASURE missing */
    /* path length: solvable levels whose route is too short or too long;
     * two legs: levels whose player -> key leg (key_*) or key -> door leg
     * (door_*) is */
    int route_short, route_long;
    int key_short, key_long, door_short, door_long;
} author_metrics;

const char *author_term_name(int kind);

/* The initial reward for a target (iteration 1). */
void author_initial(const target_t *t, author_reward *r);
/* The reward's C source.  Returns its length, or -1 if buf is too small. */
int author_code(const author_reward *r, char *buf, size_t len);
/* Read the terms back from a source written by author_code.  0, or -1 and a
 * one-line reason (not written by the offline author, damaged header). */
int author_parse(const char *code, author_reward *r, char *err, int errlen);

/* Self-alignment: one adjustment of scale or sparsity from the statistics.
 * Returns 1 if the reward changed, 0 if not; note says what and why. */
int author_align(author_reward *r, const author_stats *s, char *note, int len);

/* Feedback naming exactly one problem (the failure affecting the most
 * levels) and the change to make.  Its last line is a tag
 * "[offline-author term=KIND:TILE levels=K/N]" that author_refine reads.
 * Returns the text length (snprintf style). */
int author_feedback(const author_reward *r, const author_metrics *m, char *buf, int len);
/* Refinement from feedback: changes the term named by the feedback's tag
 * (weight x2, or every second time its form: shaped feature, tighter radius
 * for a required enemy, wider radius for an unwanted one).  Feedback without
 * a tag (generic or none) leaves the terms as they are.  Returns 1 if the
 * reward changed, 0 if not; note says what was done. */
int author_refine(author_reward *r, const char *feedback, char *note, int len);
/* The same for the branch-th child of one parent (ToT/GoT, branch = the
 * parent's children before this one): an odd branch takes the other kind of
 * change (form first, weight second), and weights grow by 2 + branch
 * instead of 2, so siblings do not get the same reward (unless the weight is
 * already at its maximum).  Branch 0 is author_refine. */
int author_refine_branch(author_reward *r, const char *feedback, int branch, char *note, int len);

/* GoT: combine with the reference rewards (the two best other nodes).  For
 * each of r's terms, the best-scoring reference that scored above the
 * parent and refined that term further (more changes) lends it its weight,
 * form and radius.  References for another target are ignored.  Call before
 * author_refine.  Returns the number of terms taken; note says which. */
int author_merge(author_reward *r, double parent_fitness, const author_reward *refs, const double *ref_fitness,
                 int n_refs, char *note, int len);

/* Count the failures of n generated levels against the target (the rules
 * of docs/evaluator.md, through the evaluator). */
void author_metrics_compute(const target_t *t, const level_t *levels, int n, author_metrics *m);

/* v as a C float literal that round-trips ("2.0f", "0.125f", "1.5e-05f")
 * in s, which holds 40 bytes; returns s.  For the reward code the offline
 * author writes. */
const char *c_float_literal(float v, char *s);

#endif
