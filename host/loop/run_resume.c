/* What --resume builds on: the files of each node, their checksums in
 * graph.json, and the redo of a node whose files were damaged.  See
 * loop_internal.h. */
#include "loop_internal.h"
#include "checkpoint.h"
#include "levelio.h"
#include "util.h"
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- node files */

/* A node's steps in order, as far as its files go: a redo starts at one
 * step and takes every later one with it, and always the outcome. */
enum { STEP_AUTHOR, STEP_TRAIN, STEP_LEVELS, STEP_FITNESS, STEP_FEEDBACK, STEP_OUTCOME };
static const char *const step_names[] = {"reward", "training", "levels", "fitness", "feedback"};
enum { KIND_TEXT, KIND_CHECKPOINT, KIND_LEVEL, KIND_EVAL };

/* A file of a node that --resume relies on.  Its FNV-1a 64 goes into
 * graph.json when the node finishes, and is checked before a resumed run
 * builds on the node. */
typedef struct {
    char name[GRAPH_FILE_NAME_MAX]; /* relative to the node directory */
    int step, kind;
    const char *marker;             /* a "done" file that says it must exist, or NULL */
    int needed_ok;                  /* a node that finished ok must have it */
} node_file;
#define NODE_FILES_MAX (RUN_MAX_LEVELS + 4)

static int node_files(const run_state *R, node_file *f)
{
    int n = 0, feedback = R->c->ablation == ABL_FB || R->c->ablation == ABL_FULL;
    int levels = R->c->n_levels < RUN_MAX_LEVELS ? R->c->n_levels : RUN_MAX_LEVELS;
    f[n++] = (node_file){"reward.c", STEP_AUTHOR, KIND_TEXT, NULL, 1};
    f[n++] = (node_file){"train/" CHECKPOINT_FILE, STEP_TRAIN, KIND_CHECKPOINT, "train.done", 1};
    for (int i = 0; i < levels; i++) {
        f[n] = (node_file){"", STEP_LEVELS, KIND_LEVEL, "levels.done", 1};
        snprintf(f[n++].name, GRAPH_FILE_NAME_MAX, "levels/level_%03d.txt", i);
    }
    f[n++] = (node_file){"eval.json", STEP_FITNESS, KIND_EVAL, NULL, 1};
    f[n++] = (node_file){"feedback.txt", STEP_FEEDBACK, KIND_TEXT, NULL, feedback};
    return n;
}

/* DIR/nodes/NNN/name */
static void node_path(char *out, size_t len, const run_state *R, int id, const char *name)
{
    snprintf(out, len, "%s/nodes/%03d/%.*s", R->c->out, id, GRAPH_FILE_NAME_MAX - 1, name);
}

/* Does the file read as what it should be?  0, or -1 with one line. */
static int file_parses(const char *path, int kind, char *err, int errlen)
{
    unsigned char tiles[PCG_MAX_CELLS];
    level_t l;
    checkpoint_state cs;
    long len;
    if (kind == KIND_LEVEL) return level_read(path, &l, tiles, err, errlen);
    if (kind == KIND_CHECKPOINT) {
        if (checkpoint_read(&cs, path, err, errlen)) return -1;
        checkpoint_state_free(&cs);
        return 0;
    }
    if (kind == KIND_EVAL) {
        json_t *j = read_json_file(path, 8L << 20, err, errlen);
        if (!j) return -1;
        json_t *f = json_object_get(j, "fitness");
        int ok = json_is_number(f) && json_number_value(f) >= 0 && json_number_value(f) <= 1;
        json_decref(j);
        return ok ? 0 : (snprintf(err, (size_t)errlen, "%s: no fitness in [0,1]", path), -1);
    }
    char *t = read_file(path, 8L << 20, &len, err, errlen);
    int ok = t && len > 0 && strlen(t) == (size_t)len;
    free(t);
    if (t && !ok) snprintf(err, (size_t)errlen, "%s: %s", path, len ? "holds binary data" : "is empty");
    return ok ? 0 : -1;
}

/* Missing, changed since the node finished (sum != NULL), or unreadable as
 * its kind: 0 when sound, else -1 with one line naming the file. */
static int file_damaged(const char *path, int kind, const graph_file *rec, char *err, int errlen)
{
    uint64_t sum;
    if (!path_present(path)) return snprintf(err, (size_t)errlen, "%s is missing", path), -1;
    if (file_fnv1a64(path, &sum, err, errlen)) return -1;
    if (rec && sum != rec->fnv1a)
        return snprintf(err, (size_t)errlen, "%s does not match the checksum recorded in graph.json", path), -1;
    return file_parses(path, kind, err, errlen);
}

/* The first step of node id whose files cannot be trusted, with the
 * reason; -1 when they are sound.  A file is checked when the node
 * recorded it, when the node finished ok and needs it, when its step's
 * "done" file says it was made, or simply when it is there. */
static int node_damage(const run_state *R, int id, char *why, int len)
{
    const thought_node *nd = &R->g.nodes[id];
    /* without checksums nothing shows the files are the node's own */
    if (nd->status != NODE_PENDING && nd->n_files < 0)
        return snprintf(why, (size_t)len, "graph.json records no checksums of its files (an older format, or they were "
                                          "removed)"),
               STEP_AUTHOR;
    node_file f[NODE_FILES_MAX];
    int n = node_files(R, f);
    for (int i = 0; i < n; i++) {
        char path[1200], marker[1200];
        node_path(path, sizeof path, R, id, f[i].name);
        node_path(marker, sizeof marker, R, id, f[i].marker ? f[i].marker : "");
        const graph_file *rec = graph_find_file(nd, f[i].name);
        /* a node records every file it finished with: one it needs but
         * did not record is as unproven as a node without the record */
        if (!rec && nd->status == NODE_OK && f[i].needed_ok)
            return snprintf(why, (size_t)len, "graph.json records no checksum of %.200s", f[i].name), f[i].step;
        int needed = rec || (f[i].marker && path_present(marker));
        if (!needed && !path_present(path)) continue;
        if (file_damaged(path, f[i].kind, rec, why, len)) return f[i].step;
    }
    return -1;
}

/* Checksums of the node's files as they are now that it has finished. */
void record_files(run_state *R, int id)
{
    node_file f[NODE_FILES_MAX];
    graph_file rec[NODE_FILES_MAX];
    int n = node_files(R, f), k = 0;
    for (int i = 0; i < n; i++) {
        char path[1200], err[1400];
        node_path(path, sizeof path, R, id, f[i].name);
        if (!path_present(path) || file_fnv1a64(path, &rec[k].fnv1a, err, sizeof err)) continue;
        snprintf(rec[k++].name, GRAPH_FILE_NAME_MAX, "%.*s", GRAPH_FILE_NAME_MAX - 1, f[i].name);
    }
    graph_set_files(&R->g, id, rec, k); /* out of memory: left unrecorded, checked for readability only */
}

/* What each step leaves in the node directory.  Stored model replies about
 * the levels go with the levels; the author's stored exchanges stay, so a
 * redone reward is the same reward. */
static const struct {
    int step;
    const char *name;
} step_outputs[] = {
    {STEP_AUTHOR, "reward.c"},           {STEP_TRAIN, "train.done"},
    {STEP_TRAIN, "train"},               {STEP_LEVELS, "levels.done"},
    {STEP_LEVELS, "levels"},             {STEP_LEVELS, "llm/fitness.request.json"},
    {STEP_LEVELS, "llm/fitness.reply.txt"}, {STEP_LEVELS, "llm/fitness.outcome.json"},
    {STEP_LEVELS, "llm/feedback.request.json"}, {STEP_LEVELS, "llm/feedback.reply.txt"},
    {STEP_LEVELS, "llm/feedback.outcome.json"}, {STEP_FITNESS, "eval.json"},
    {STEP_FITNESS, "levels.png"},        {STEP_FEEDBACK, "feedback.txt"},
    {STEP_OUTCOME, "failed.txt"},
};

/* Move the outputs of steps >= step into ndir/damaged-K, kept for
 * inspection, not deleted.  0, or -1 with one line. */
static int set_aside(const char *ndir, int step, char *why, int len)
{
    char aside[1400], from[1600], to[1700];
    int k = 1;
    do snprintf(aside, sizeof aside, "%s/damaged-%d", ndir, k++);
    while (path_present(aside) && k < 10000);
    int made = 0;
    for (size_t i = 0; i < sizeof step_outputs / sizeof step_outputs[0]; i++) {
        const char *name = step_outputs[i].name;
        if (step_outputs[i].step < step) continue;
        snprintf(from, sizeof from, "%s/%s", ndir, name);
        if (!path_present(from)) continue;
        if (!made && path_mkdir(aside, why, len) != 0) return -1;
        made = 1;
        int n = snprintf(to, sizeof to, "%s/", aside);
        for (const char *c = name; *c && n < (int)sizeof to - 1; c++) to[n++] = *c == '/' ? '_' : *c;
        to[n] = 0;
        if (path_rename(from, to, why, len) != 0) return -1;
    }
    return 0;
}

/* If node id has damaged files, set its outputs from the first damaged
 * step on aside, so that run_node redoes those steps, and say so.  0
 * nothing damaged, 1 set aside, -1 error (printed). */
int redo_damaged(run_state *R, int id)
{
    char ndir[1200], why[2600], err[2000];
    snprintf(ndir, sizeof ndir, "%s/nodes/%03d", R->c->out, id);
    int step = node_damage(R, id, why, sizeof why);
    if (step < 0) return 0;
    run_warn(R, "run: node %d: %s; redoing it from its %s step", id, why, step_names[step]);
    if (set_aside(ndir, step, err, sizeof err)) {
        die_msg("run: node %d: %s", id, err);
        return -1;
    }
    return 1;
}

/* --resume: the finished nodes' files must be what they were when the
 * nodes finished.  The last node may be redone from its first damaged step
 * (nothing was chosen after it); an earlier one cannot, since later
 * parents, references and feedback were chosen knowing its outcome, so the
 * resume is refused.  0, or -1 (printed). */
int check_finished_nodes(run_state *R, const char *graph_path)
{
    for (int id = 0; id < R->g.n; id++) {
        thought_node *nd = &R->g.nodes[id];
        if (nd->status == NODE_PENDING) continue; /* run_node checks what it had reached */
        char why[2600];
        if (id < R->g.n - 1) {
            if (node_damage(R, id, why, sizeof why) < 0) continue;
            die_msg("run: --resume: node %d: %s; later nodes were built on it, so it cannot be redone "
                    "(restore what was changed, or start a new run)",
                    id, why);
            return -1;
        }
        int rc = redo_damaged(R, id);
        if (rc < 0) return -1;
        if (rc == 0) continue;
        graph_reopen(&R->g, id); /* the loop continues it like an interrupted node */
        if (graph_save(&R->g, graph_path)) return die_msg("run: %s", write_error()), -1;
    }
    return 0;
}
