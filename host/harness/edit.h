/* The level-editing loop of the execution harness (docs/harness.md, "The
 * editing loop").
 *
 * The editor (a language model, or a rule-based stand-in) only proposes:
 * each step it replies with a JSON list of tool calls (tools.h).  The
 * harness owns the rest: it recovers a reply cut short, checks and runs
 * the calls on a copy of the saved level, measures the copy with the
 * evaluator and decides whether it replaces the saved level.  Switches
 * turn each control off for ablations; a run directory keeps every
 * request, reply and step, and a resumed run never redoes a step. */
#ifndef PCG_EDIT_H
#define PCG_EDIT_H
#include "level.h"
#include "llm.h"
#include "target.h"
#include <stdint.h>

/* The harness controls.  history: the last K steps shown to the editor (0:
 * none). */
typedef struct {
    int recovery, feedback, history, guidance, accept, early_stop;
} edit_switches;
/* Every control on, history 3. */
void edit_switches_full(edit_switches *s);
/* Every control off: the open loop. */
void edit_switches_open(edit_switches *s);

enum { EDITOR_OFFLINE = 0, EDITOR_NOISY = 1, EDITOR_OPENAI = 2 };
typedef struct {
    int kind;
    double noise;     /* noisy: the probability of a random call in place of each offline one */
    uint64_t seed;    /* noisy draws, and the cave and maze tools' default seeds */
    llm_config *llm;  /* openai: the model client's config (its usage and deadline are used) */
} edit_editor;
/* "offline", "noisy:P" (0 <= P <= 1) or "openai".  0, or -1 with err. */
int edit_editor_parse(const char *s, edit_editor *e, char *err, int errlen);
/* What records and output call it: "offline (rule-based)", "noisy:0.30
 * (rule-based, random calls)", "openai MODEL". */
void edit_editor_label(const edit_editor *e, char *buf, int len);

typedef struct {
    int steps;           /* steps in all (a resumed run counts the earlier ones) */
    long max_calls;      /* requests to the model server; 0: no limit */
    long max_tokens;     /* tokens of those requests together; 0: no limit */
    double max_seconds;  /* wall time of this episode; 0: no limit */
} edit_budget;

enum { EDIT_STOP_STEPS = 0, EDIT_STOP_PERFECT, EDIT_STOP_BUDGET, EDIT_STOP_SERVER };

typedef struct {
    int perfect, valid;        /* the saved level at the end */
    int route_key, route_door, route;
    int steps;                 /* steps done, earlier runs of a resumed one included */
    int accepted;              /* steps whose edit replaced the saved level */
    long calls;                /* editor replies asked for (a retry is one more) */
    long tokens;               /* model tokens, prompt and completion */
    long output_tokens;        /* of them, the model's replies */
    int recovered;             /* replies repaired by keeping their complete calls */
    double seconds;            /* wall time of the episode, earlier runs of a resumed one included */
    int stop;                  /* EDIT_STOP_*: why it ended */
    char why[300];             /* the stop in words; for EDIT_STOP_SERVER the server's line */
} edit_result;

typedef struct {
    const level_t *start;      /* ignored when resuming a run directory */
    const target_t *target;
    const edit_editor *editor;
    edit_switches sw;
    edit_budget budget;
    const char *dir;           /* the run directory, or NULL: in memory only */
    int resume;                /* continue dir's run */
    int verbose;               /* one line per step on stdout */
} edit_run;

/* A story's target for an editing run: story_extract_offline for the
 * rule-based editors, the model's reading (rich/target_extraction.txt,
 * recorded in dir when given) for openai.  STORY_OK, STORY_REFUSED (reason:
 * why), STORY_INVALID (the model's answer is not a target), or
 * EDIT_STORY_SERVER / EDIT_STORY_ERROR when the call failed. */
enum { EDIT_STORY_SERVER = 10, EDIT_STORY_ERROR = 11 };
int edit_story_target(const char *story, const edit_editor *e, const char *dir, target_t *t, char *reason, int len);

/* Exit statuses edit_episode shares with the command. */
enum { EDIT_OK = 0, EDIT_ERROR = 1, EDIT_USAGE = 2, EDIT_INFEASIBLE = 3, EDIT_SERVER = 4 };

/* One editing episode: the saved level at the end in final (final_tiles,
 * PCG_MAX_CELLS bytes) and the totals in res.  EDIT_OK (whether the level
 * is perfect or not: res says), EDIT_INFEASIBLE when target_feasible()
 * refuses the target on the start level's map (nothing is asked), or
 * another status with one line in err. */
int edit_episode(const edit_run *run, level_t *final, unsigned char *final_tiles, edit_result *res, char *err,
                 int errlen);

#endif
