/* A language model as the player at junctions (play.h PLAY_CHOOSER):
 * prompts/prefer/player_move.txt, one bounded call per junction, at most
 * max_calls in a play; past the budget, or when an answer names no legal
 * move, the explorer's rule moves and the record says so. */
#ifndef PCG_PLAY_MODEL_H
#define PCG_PLAY_MODEL_H
#include "llm.h"
#include "play.h"

typedef struct {
    const llm_config *llm;
    const char *persona_text;
    long max_calls;           /* per play; 0: none, the explorer's rule everywhere */
    long calls, output_tokens;
    int invalid;              /* answers that named no legal move */
    int server_failed;        /* the server failed: no further calls */
    char error[400];
} play_model;

/* A play_chooser over a play_model. */
int play_model_choose(void *ctx, const play_question *q);

#endif
