/* The parts of refinement (refine.h) shared by host/prefer/refine*.c. */
#ifndef PCG_REFINE_INTERNAL_H
#define PCG_REFINE_INTERNAL_H
#include "contracts.h"
#include "graph.h"
#include "refine.h"

/* A candidate's end beyond refine_gate's verdicts. */
enum {
    CAND_NO_REVISION = 100, /* the author gave no revised reward */
    CAND_CONTRACT,          /* the contracts did not hold: not trained */
    CAND_SANDBOX,           /* the sandbox refused the revision: not trained */
    CAND_FAILED             /* training, generation or play failed */
};

typedef struct {
    refine_target t;
    int round;              /* 0 directed, 1 the feedback round */
    char dir[1300], note[400], why[700];
    char aside[1320];       /* where an earlier attempt with another revision was moved, or "" */
    int reused;             /* an earlier attempt's training of this same revision is reused */
    int verdict;
    int contract_ran;
    contract_result contract;
    int trained;
    double fitness, gain;
    refine_profile prof;
    char *code;
} refine_candidate;

typedef struct {
    const refine_opts *o;
    run_state R;
    run_config c;
    thought_graph g;
    int node, persona;      /* persona: the offline judge's index, -1 for a file of one's own */
    char *persona_text, *code;
    char dir[1200];         /* RUN/prefer/PERSONA */
    pref_model model;
    level_set *levels;      /* the node's */
    double fitness;         /* the node's levels by the evaluator */
    refine_profile before;
    int n_targets;
    refine_target targets[REFINE_MAX_TARGETS];
    refine_candidate cand[REFINE_MAX_TARGETS + 1];
    int n_cand, accepted;   /* accepted: the kept candidate's index, -1 for none */
    int server_failed;
    int parent_failed; /* the node's own reward fails on the contract pairs: no revision can be checked */
    int refused;            /* the projected training time was refused (said already) */
    FILE *log;
} refine_ctx;

/* refine_author.c: k's revision of code (k->round 1: the feedback round,
 * evidence what the rejected candidate showed), malloc'd, or NULL with
 * k->note saying why (k->verdict CAND_FAILED when k->dir could not be
 * made).  k->dir is reused only when an earlier attempt in it revised to
 * the same reward (the offline author) or from the same request (a model);
 * otherwise an earlier attempt there is moved aside (k->aside), so that a
 * new reward never inherits another's training. */
char *refine_revise(refine_ctx *x, refine_candidate *k, const char *code, const char *evidence);

/* refine_record.c: the record refine.json and the summary on stdout. */
int refine_write_record(const refine_ctx *x, char *err, int errlen);
/* An earlier attempt in dir, moved to dir.N (the first N free; to says
 * which), so that nothing it made is lost.  0: dir is missing or empty,
 * nothing moved; 1: moved; -1 with one line in err. */
int refine_set_aside(const char *dir, char *to, int tolen, char *err, int errlen);
void refine_print(const refine_ctx *x);
const char *refine_candidate_verdict(int verdict);

#endif
