/* Contracts for a revised reward (docs/prefer.md#contracts): before a
 * revision is trained, it must prefer the right level of a few small
 * hand-built pairs more than the reward it revises does.  Each pair
 * differs in one feature of the floor (forks, dead ends, open cells, an
 * enemy by the key); a dimension is checked on the pairs of its lever
 * (author_experience.h).  The rewards run in the sandbox's confined worker,
 * on the edits that turn one level of a pair into the other. */
#ifndef PCG_CONTRACTS_H
#define PCG_CONTRACTS_H

#define CONTRACT_MAX_PAIRS 4

typedef struct {
    int pairs, held;                     /* pairs checked; of them, moved the intended way */
    double shift[CONTRACT_MAX_PAIRS];    /* per pair: how much more the revision prefers the intended level */
} contract_result;

/* Check revised against parent for raising (direction +1) or lowering (-1)
 * dimension dim_id.  0: checked, res filled (it holds when held ==
 * pairs); 1: the dimension has no pairs (nothing checked); -1: the
 * revised reward failed to run on the pairs, -2: the parent did (err
 * says why). */
int contract_check(const char *parent_src, const char *revised_src, int variant, const char *dim_id, int direction,
                   contract_result *res, char *err, int errlen);

/* The pairs of a lever kind (AT_EXP_*): how many, and pair k's two maps
 * (the level with less of the feature first), 8 x 8. */
#define CONTRACT_SIDE 8
int contract_pairs(int kind);
void contract_pair_maps(int kind, int k, unsigned char *less, unsigned char *more);

#endif
