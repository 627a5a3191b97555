/* Reading a recorded play back (docs/prefer.md#trajectory-files) into the
 * measurable facts a judge grounds its scores in.  Trajectory files are
 * untrusted: sizes are bounded, every line is checked, and the counts are
 * recomputed from the steps rather than taken from the summary line. */
#ifndef PCG_TRAJECTORY_H
#define PCG_TRAJECTORY_H
#include "level.h"

#define TRAJ_MAX_BYTES (64L << 20)

typedef struct {
    char level[128], player[16];
    int end;            /* PLAY_END_* from the summary */
    int positions;      /* step lines */
    int steps;          /* moves: positions - 1 */
    int visited;        /* distinct cells stood on */
    int backtracks, dead_ends, enemies_seen;
    int key_step, door_step;           /* -1: never */
    int key_seen_step, door_seen_step; /* first position whose window shows it, -1: never */
    int junctions;      /* positions with three or more legal moves */
    double mean_moves;  /* legal moves per position */
    int tense;          /* positions whose window shows an enemy */
    int key_guarded;    /* the window where the key was taken shows an enemy */
    int h, w;           /* the level played, from the header's map (0 x 0 when absent) */
    unsigned char map[PCG_MAX_CELLS];
} play_features;

/* The level of f (NULL when the record has no map): l->t points into f. */
const level_t *traj_level(const play_features *f, level_t *l);

/* 0, or -1 and one line naming the file and the line. */
int traj_read(const char *path, play_features *f, char *err, int errlen);
/* The play as text for a model judge: a line per step (the window at the
 * start, at events and every tenth step), at most max_steps steps, then
 * the end.  Call after traj_read accepted the file.  malloc'd, or NULL and
 * one line. */
char *traj_render(const char *path, int max_steps, char *err, int errlen);

#endif
