/* The thought graph of the reward-design loop (docs/method.md#the-reward-design-loop).
 *
 * A node is one iteration: a reward (refined from a parent), its fitness and
 * the feedback on its levels.  Parent selection:
 *   CoT         the latest node (highest id) that holds a valid reward;
 *   ToT, GoT    among nodes that hold a valid reward and have fewer than
 *               `breadth` children, the one with the highest fitness; ties go
 *               to the lowest id (the oldest node).
 * Failed and pending nodes hold no reward, so they are never parents or
 * references; a failed child still uses one of its parent's `breadth` slots.
 * (So in CoT a node whose child failed gets a second child: the chain goes
 * on from the latest valid reward.)
 * With no eligible node the next node starts from the empty template (-1).
 * Under the acceptance rule GRAPH_ACCEPT_IMPROVE (`--accept improve`) a
 * revision that scored no higher than its parent is kept in the graph but
 * not built on: CoT refines the best node so far (highest fitness, ties to
 * the lowest id) instead of the latest, and ToT and GoT expand only roots
 * and nodes that scored above their parent.  GRAPH_ACCEPT_ALWAYS (the
 * paper's, graph_init's) takes every revision as above.
 * GoT references (--got-best B, --got-worst W; 2 and 0 by default): the B
 * best and then the W worst valid nodes by fitness (ties to the lowest id),
 * leaving out the previous iteration's node.  Under the graph's rule
 * GRAPH_REFS_REFERENCE (`--got-refs reference`, as the paper's reference
 * implementation chooses) the parent may be one of them; under
 * GRAPH_REFS_ENGINE (`--got-refs engine`) the parent is left out too, since
 * the prompt already shows its code. */
#ifndef PCG_GRAPH_H
#define PCG_GRAPH_H
#include <jansson.h>
#include <stdint.h>

enum { PE_COT = 0, PE_TOT = 1, PE_GOT = 2 };
enum { NODE_PENDING = 0, NODE_OK = 1, NODE_FAILED = 2 };
#define GRAPH_MAX_NODES 1024
#define GRAPH_MAX_BREADTH 16
#define GRAPH_PATH_MAX 256
/* references per node: up to GRAPH_MAX_REF_KIND best and as many worst */
#define GRAPH_MAX_REF_KIND 4
#define GRAPH_MAX_REFS (2 * GRAPH_MAX_REF_KIND)
enum { REF_BEST = 0, REF_WORST = 1 };
/* How references are chosen (and shown, host/author/): see above. */
enum { GRAPH_REFS_REFERENCE = 0, GRAPH_REFS_ENGINE = 1 };
/* Which revisions the search builds on: see above. */
enum { GRAPH_ACCEPT_ALWAYS = 0, GRAPH_ACCEPT_IMPROVE = 1 };
#define GRAPH_FILE_NAME_MAX 64
#define GRAPH_MAX_FILES 128

/* A file a finished node produced, as it was when the node finished: its
 * name relative to the node's directory and the FNV-1a 64 of its bytes
 * (stored as 16 hex digits).  `run --resume` checks them. */
typedef struct {
    char name[GRAPH_FILE_NAME_MAX];
    uint64_t fnv1a;
} graph_file;

typedef struct {
    int id;                       /* index in the graph, 0.. */
    int iteration;                /* 1..Y */
    int parent;                   /* -1: started from the empty template */
    int n_children;               /* derived from the parents of later nodes */
    int n_refs;                   /* GoT references shown to the model */
    int refs[GRAPH_MAX_REFS];
    double ref_fitness[GRAPH_MAX_REFS];
    int ref_kind[GRAPH_MAX_REFS]; /* REF_BEST or REF_WORST */
    char reward_path[GRAPH_PATH_MAX]; /* relative to the run directory; "" if none */
    double fitness;               /* [0,1]; 0 when failed */
    int status;                   /* NODE_PENDING, NODE_OK, NODE_FAILED */
    char *feedback;               /* owned; NULL if none */
    long tokens_prompt, tokens_completion;
    double wall_s;
    int n_files;                  /* -1: none recorded (pending, or a graph from before checksums) */
    graph_file *files;            /* owned */
} thought_node;

typedef struct {
    int pe;      /* PE_COT, PE_TOT, PE_GOT */
    int breadth; /* N_breadth (CoT: 1) */
    int ref_rule; /* GRAPH_REFS_ENGINE (graph_init's) or GRAPH_REFS_REFERENCE */
    int accept;   /* GRAPH_ACCEPT_ALWAYS (graph_init's) or GRAPH_ACCEPT_IMPROVE: the run's setting,
                     not stored in graph.json (config.json holds it) */
    int n, cap;
    thought_node *nodes;
} thought_graph;

/* "cot", "tot", "got" <-> PE_*; -1 / "?" for anything else. */
int graph_pe_from_name(const char *name);
const char *graph_pe_name(int pe);

/* 0, or -1 if pe or breadth (1..GRAPH_MAX_BREADTH) is invalid.  The
 * reference rule starts as GRAPH_REFS_ENGINE; the caller sets ref_rule. */
int graph_init(thought_graph *g, int pe, int breadth);
void graph_free(thought_graph *g);

/* Append a pending node; returns its id, or -1 (parent not an existing node,
 * iteration < 1, graph full, out of memory).  Updates the parent's
 * n_children. */
int graph_add(thought_graph *g, int iteration, int parent);
/* Replace a node's feedback with a copy of text (NULL clears it). 0 or -1. */
int graph_set_feedback(thought_graph *g, int id, const char *text);
/* Record a node's outcome: NODE_OK with fitness in [0,1], or NODE_FAILED
 * (fitness forced to 0). 0, or -1 if arguments are invalid. */
int graph_finish(thought_graph *g, int id, int status, double fitness);
/* Replace a node's recorded files with a copy of files[0..n) (n == -1:
 * none recorded).  0, or -1 (bad id, n over GRAPH_MAX_FILES, out of memory). */
int graph_set_files(thought_graph *g, int id, const graph_file *files, int n);
/* The recorded file called name, or NULL. */
const graph_file *graph_find_file(const thought_node *nd, const char *name);
/* Make the last node pending again, to be redone: no outcome, reward,
 * feedback or recorded files.  Only the last node, since later nodes'
 * parents and references were chosen knowing its outcome.  0 or -1. */
int graph_reopen(thought_graph *g, int id);

/* Parent for the next node (rules above, under g->accept), -1 for the
 * empty template. */
int graph_select_parent(const thought_graph *g);
/* GoT references for the next node (id g->n), refined from parent: the
 * n_best best, then the n_worst worst (each 0..GRAPH_MAX_REF_KIND) by the
 * rules above; ids into out, REF_BEST/REF_WORST into kind (may be NULL).
 * Returns how many.  Any PE may ask; only GoT shows them to the model. */
int graph_references(const thought_graph *g, int parent, int n_best, int n_worst, int out[GRAPH_MAX_REFS],
                     int kind[GRAPH_MAX_REFS]);
/* Best valid node (highest fitness, lowest id on ties), -1 if none. */
int graph_best(const thought_graph *g);
/* Children of id in id order; returns the count, fills up to max. */
int graph_children(const thought_graph *g, int id, int *out, int max);

/* JSON for the run directory; strict validation on the way back in (ids in
 * order, parents and references earlier nodes, children consistent, fitness
 * in [0,1], no unknown fields, relative reward paths without "..", references
 * {"id", "fitness", "kind": "best"|"worst"} (no kind: best), the parent a
 * reference only under "references": "reference" (absent: engine), files as
 * {"relative/name": "16 hex digits"}; a node without "files" has none
 * recorded). */
json_t *graph_to_json(const thought_graph *g);
int graph_from_json(const json_t *j, thought_graph *g, char *err, int errlen);
/* Atomic write (temporary file + rename); load with the checks above. */
int graph_save(const thought_graph *g, const char *path);
int graph_load(const char *path, thought_graph *g, char *err, int errlen);

#endif
