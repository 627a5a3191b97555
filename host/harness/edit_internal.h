/* What the editing loop (edit.c), its measurements and texts
 * (edit_measure.c), its records (edit_records.c) and the editors
 * (editors.c, editor_offline.c) share.  Private to host/harness/. */
#ifndef PCG_EDIT_INTERNAL_H
#define PCG_EDIT_INTERNAL_H
#include "edit.h"
#include <jansson.h>

/* A level measured against the target. */
typedef struct {
    int valid;              /* target_level_valid */
    char reason[200];       /* why not, when not */
    int defects;            /* how far from valid: tiles of each once-only kind and enemies off their count, regions beyond one */
    int route_key, route_door, route; /* the evaluator's legs and route, -1 without a solution */
    int perfect;            /* valid and the evaluator's exact match */
    long distance;          /* two legs: |route_key - A| + |route_door - B|; total: |route - L| */
} edit_measure_t;

void edit_measure(const target_t *t, const level_t *l, edit_measure_t *m);
/* The acceptance order: 1 when a candidate measured a comes before the
 * saved level measured b: valid first, between two invalid levels the
 * fewer defects, then the smaller distance; on a tie the saved level, the
 * smaller edit (no cells changed), stays. */
int edit_better(const edit_measure_t *a, const edit_measure_t *b);

/* The level as rows of tile characters (levelio's tile_char), malloc'd. */
char *edit_level_text(const level_t *l);
/* "player -> key 14 steps (wanted 20), key -> door 30 steps (wanted 30)". */
void edit_legs_text(const target_t *t, const edit_measure_t *m, char *buf, int len);
/* The guidance of a step: the map with both legs drawn and, for the cells
 * on the route, what a wall there does to each leg (malloc'd, from
 * edit_guidance.txt), or NULL with err. */
char *edit_guidance_text(const target_t *t, const level_t *l, char *err, int errlen);
/* The cells of each leg of the evaluator's route (leg 0 player -> key, 1
 * key -> door) into mark[cell] bits 1 and 2; returns the cells marked. */
int edit_route_cells(const target_t *t, const level_t *l, unsigned char *mark);

/* The builder's witness for t on l's map: build_level on l's side with
 * the seed of l's PLAYER corner, kept only when its PLAYER and DOOR are
 * l's.  0 with out viewing tiles (PCG_MAX_CELLS bytes), or -1 (nothing
 * to show: the player is not in a corner, or the builder refused). */
int edit_witness(const target_t *t, const level_t *l, level_t *out, unsigned char *tiles);
/* "A level that meets the target looks like this" (edit_witness.txt),
 * malloc'd, or NULL with err. */
char *edit_witness_text(const level_t *w, char *err, int errlen);
/* The tool calls that turn from into w (walls by rect around the PLAYER
 * and DOOR, then w's open cells by line and its other tiles by set), or
 * NULL when they differ in the PLAYER or DOOR or need more calls than a
 * reply holds. */
json_t *edit_witness_calls(const level_t *from, const level_t *w);

/* One step as the records and the history keep it. */
typedef struct {
    int step;
    int calls, refused, changed, recovered;
    int accepted;
    const char *outcome;     /* "accepted", "rejected", "saved" (open loop), "no edit", "unreadable" */
    edit_measure_t m;        /* the candidate's measurement (the saved level's for no edit) */
    long tokens;
} edit_step_t;

/* What the editor is shown at a step; the texts are "" when switched off. */
typedef struct {
    int step, steps;
    const level_t *level;
    const target_t *target;
    const edit_measure_t *m;
    const char *feedback, *history, *guidance;
    const level_t *witness;  /* the builder's level for the target, or NULL (feedback off, or refused) */
} edit_view;

/* An editor's answer.  status 0: a reply; 1: the model failed (a reply may
 * still be there); 2: the server failed (error says so). */
typedef struct {
    char *reply;
    long tokens, output_tokens;
    int status;
    char error[400];
} edit_answer;

/* The run directory's records (dir NULL: none kept). */
typedef struct {
    const char *dir;
    char label[160];
} edit_records;
/* One JSON line appended to dir/name (the object is consumed). */
void edit_record(const edit_records *r, const char *name, json_t *obj);

/* Ask the editor for a reply.  retry_error/previous: the retry of an
 * unreadable reply, or NULL.  Every request and reply is recorded. */
void editor_ask(const edit_editor *e, const edit_view *v, const char *previous, const char *retry_error,
                const edit_records *rec, edit_answer *a);
/* The rule-based editor's calls for the view (a JSON list, malloc'd),
 * greedily measured; "[]" when nothing it tries is better. */
char *editor_offline_calls(const edit_view *v);
/* One random call for a level (JSON object text into buf), drawn from r. */
void editor_random_call(const level_t *l, uint64_t r, char *buf, int len);

/* The feedback and history texts of the next request (malloc'd). */
char *edit_feedback_text(const target_t *t, const edit_measure_t *m, char *err, int errlen);
char *edit_history_text(const edit_step_t *steps, int n, char *err, int errlen);

/* The records of a resumed run: steps done, the last k steps, the saved
 * level, the totals.  0, or -1 with err. */
int edit_resume_read(const char *dir, const target_t *t, edit_step_t *last, int k, int *n_last, level_t *saved,
                     unsigned char *tiles, edit_result *res, char *err, int errlen);
/* The step line of a finished step; state.json, with "stop": "running"
 * while the episode goes on (running), else why it stopped. */
void edit_write_step(const edit_records *r, const edit_step_t *s, const json_t *calls, const json_t *refusals);
int edit_write_state(const char *dir, const target_t *t, const edit_run *run, const edit_result *res, int running,
                     char *err, int errlen);

#endif
