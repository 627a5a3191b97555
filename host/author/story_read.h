/* The pieces the story reader's files share (story.c reads enemies and
 * gates, story_lengths.c route lengths and the check of a target against
 * its story, story_zh.c the Chinese words).  Not an interface of the
 * layer: story.h is. */
#ifndef PCG_STORY_READ_H
#define PCG_STORY_READ_H
#include "target.h"

enum { T_WORD, T_BREAK, T_SOFT };
#define STORY_MAX_TOKENS 1200
#define STORY_WORD_MAX 24
/* Chinese words become English ones of at most three times their bytes. */
#define STORY_NORM_MAX (3 * STORY_MAX_LEN + 16)

typedef struct {
    int kind;
    char w[STORY_WORD_MAX];
} story_token;

int story_in_list(const char *w, const char *const *list);
int story_word_at(const story_token *tok, int nt, int i, const char *const *list);
/* Lowercased words and clause marks of an ASCII text. */
int story_tokenize(const char *s, story_token *tok, int max);
/* A count of steps written as digits or a small number word; -1 otherwise. */
int story_count_value(const char *w);
/* A count of things ("two", "3", "pair", "second"): 1 when w is one of 2
 * or more; story_number_value gives it (99 for "dozen" and the like). */
int story_number_word(const char *w);
int story_number_value(const char *w);
/* Tile named by a word (an enemy, KEY, DOOR, TREASURE, PLAYER); 0 a
 * generic monster; -1 none. */
int story_noun_tile(const char *w);

/* The story with every Chinese word the reader knows written as its
 * English keyword and Chinese numerals as digits, into out (at least
 * STORY_NORM_MAX bytes).  0, or (strict) -1 and the reason at the first
 * CJK character it does not know: what the reader cannot read, it does not
 * guess.  Not strict, such a character only separates words. */
int story_normalize(const char *story, char *out, int outlen, int strict, char *reason, int len);

/* route, path, way, ...: words that name the route being measured */
extern const char *const story_w_route[];

/* The route lengths a story asks for. */
typedef struct {
    int found;           /* 0: the story names no number of steps */
    int leg_key, leg_door, total; /* 0 where the story gives none */
    int tolerance;
    int at[8];           /* token indices of the numbers read as lengths */
    int nat;
} story_lengths_t;

/* 0 with *L filled (found 0 when no number of steps), or -1 and the reason
 * (a category first: "ambiguous: ...").  L->at lists the numbers read
 * as lengths also when the reading is refused. */
int story_read_lengths(const story_token *tok, int nt, story_lengths_t *L, char *reason, int len);

#endif
