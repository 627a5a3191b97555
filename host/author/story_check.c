/* A target against the words of its story: what a target leaves out that
 * the story asks for (docs/offline-author.md, "The check of a target").
 * The language model's target and the offline reader's both pass through
 * it; a model that drops an enemy the story names is refused, not built. */
#include "story.h"
#include "story_read.h"
#include "util.h"
#include <stdio.h>
#include <string.h>

/* What the story's words name, read without judging them. */
typedef struct {
    int named[TARGET_N_ENEMIES]; /* an enemy type is named, met or avoided */
    int count;                   /* "three enemies": 3; 0 when no count */
    int steps;                   /* a number of steps */
} story_words;

static void scan(const char *story, story_words *sw)
{
    static __thread char norm[STORY_NORM_MAX];
    static __thread story_token tok[STORY_MAX_TOKENS];
    memset(sw, 0, sizeof *sw);
    if (!story || strlen(story) > STORY_MAX_LEN) return;
    story_normalize(story, norm, sizeof norm, 0, NULL, 0);
    int nt = story_tokenize(norm, tok, STORY_MAX_TOKENS);
    for (int i = 0; i < nt; i++) {
        if (tok[i].kind != T_WORD) continue;
        int t = story_noun_tile(tok[i].w);
        if (target_is_enemy(t)) sw->named[t - TILE_BAT] = 1;
        if (t != 0 || sw->count) continue;
        for (int j = i - 1; j >= 0 && j >= i - 2 && tok[j].kind == T_WORD; j--) {
            if (story_number_word(tok[j].w)) sw->count = story_number_value(tok[j].w);
            else if (story_count_value(tok[j].w) == 1) sw->count = 1;
        }
    }
    story_lengths_t L;
    char why[300];
    story_read_lengths(tok, nt, &L, why, sizeof why);
    sw->steps = L.found;
}

static int check_pathlength(const story_words *sw, const target_t *t, char *reason, int len)
{
    for (int e = 0; e < TARGET_N_ENEMIES; e++)
        if (sw->named[e]) {
            say_to(reason, len,
                   "incomplete: the story names the %s, but a path-length target cannot require a particular enemy "
                   "type (it can count enemy tiles: 'three enemies')",
                   target_tile_name(TILE_BAT + e));
            return -1;
        }
    if (sw->count && !t->enemy_count) {
        say_to(reason, len, "incomplete: the story asks for %d enemies; the target leaves the count out", sw->count);
        return -1;
    }
    if (t->enemy_count && t->enemy_count != sw->count) {
        if (sw->count)
            say_to(reason, len, "contradictory: the target asks for %d enemies, the story for %d", t->enemy_count,
                   sw->count);
        else
            say_to(reason, len, "contradictory: the target asks for %d enemies, a number the story does not give",
                   t->enemy_count);
        return -1;
    }
    return 0;
}

int story_check_target(const char *story, const target_t *t, char *reason, int len)
{
    story_words sw;
    scan(story, &sw);
    if (t->kind == TARGET_PATHLENGTH) return check_pathlength(&sw, t, reason, len);
    if (sw.steps) {
        say_to(reason, len, "incomplete: the story names a number of steps; the %s target has no route length",
               t->kind == TARGET_KEYDOOR ? "key-door" : "encounter");
        return -1;
    }
    if (t->kind == TARGET_KEYDOOR)
        for (int e = 0; e < TARGET_N_ENEMIES; e++)
            if (sw.named[e] && !(t->gate == TILE_BAT && e == TILE_BAT - TILE_BAT)) {
                say_to(reason, len, "incomplete: the story names the %s, which the key-door target leaves out",
                       target_tile_name(TILE_BAT + e));
                return -1;
            }
    return 0;
}

const char *story_refusal_category(const char *reason)
{
    static const char *const cats[] = {"incomplete", "contradictory", "ambiguous", "unsupported", NULL};
    for (int i = 0; reason && cats[i]; i++) {
        size_t n = strlen(cats[i]);
        if (!strncmp(reason, cats[i], n) && reason[n] == ':') return cats[i];
    }
    return NULL;
}
