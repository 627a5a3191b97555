/* Persona-directed refinement's decisions (host/prefer/refine_plan.h):
 * targets follow the weights and skip dimensions at the edge of the scale;
 * the gate in each of its outcomes. */
#include "harness.h"
#include "refine_plan.h"
#include <math.h>

static void model_of(pref_model *m, const double *w)
{
    m->b = 1.0;
    for (int j = 0; j < PREFER_N_DIMS; j++) {
        m->w[j] = w[j];
        m->used[j] = 1;
    }
}

static void refine_targets_follow_weights(void **state)
{
    (void)state;
    static const double w[PREFER_N_DIMS] = {0.1, -0.9, 0.0, 0.4, 0.2, 0.8, -0.3, 0.05, 0.0, 0.6, -0.7, 0.0};
    pref_model m;
    model_of(&m, w);
    double x[PREFER_N_DIMS];
    for (int j = 0; j < PREFER_N_DIMS; j++) x[j] = 3;
    refine_target t[REFINE_MAX_TARGETS];
    assert_int_equal(refine_select(&m, x, t, REFINE_MAX_TARGETS), 3);
    assert_int_equal(t[0].dim, DIM_CHALLENGE_FIT); /* |-0.9| first */
    assert_int_equal(t[0].direction, -1);
    assert_int_equal(t[1].dim, DIM_MASTERY);
    assert_int_equal(t[1].direction, 1);
    assert_int_equal(t[2].dim, DIM_DECISION);
    assert_int_equal(t[2].direction, -1);
    /* no room: challenge fit already at the bottom, mastery at the top */
    x[DIM_CHALLENGE_FIT] = 1.0;
    x[DIM_MASTERY] = 4.9;
    assert_int_equal(refine_select(&m, x, t, REFINE_MAX_TARGETS), 3);
    assert_int_equal(t[0].dim, DIM_DECISION);
    assert_int_equal(t[1].dim, DIM_COGNITIVE);
    assert_int_equal(t[2].dim, DIM_EASE_OF_CONTROL);
    /* zero weights and unused dimensions are never targets */
    for (int j = 0; j < PREFER_N_DIMS; j++) x[j] = 3;
    m.used[DIM_CHALLENGE_FIT] = 0;
    int n = refine_select(&m, x, t, PREFER_N_DIMS);
    assert_int_equal(n, 8); /* twelve, less three zeros, less the unused one */
    for (int k = 0; k < n; k++) {
        assert_true(w[t[k].dim] != 0);
        assert_int_not_equal(t[k].dim, DIM_CHALLENGE_FIT);
        if (k) assert_true(fabs(t[k].weight) <= fabs(t[k - 1].weight));
    }
}

static void refine_gate_outcomes(void **state)
{
    (void)state;
    static const double w[PREFER_N_DIMS] = {0, 0, 0, 0, 0, 0.8, 0, 0, 0, 0, 0, -0.5};
    pref_model m;
    model_of(&m, w);
    refine_target t = {DIM_MASTERY, 1, 0.8};
    double before[PREFER_N_DIMS], after[PREFER_N_DIMS], gain;
    for (int j = 0; j < PREFER_N_DIMS; j++) before[j] = after[j] = 3;
    /* accepted: mastery +1, nothing else */
    after[DIM_MASTERY] = 4;
    assert_int_equal(refine_gate(&m, &t, before, after, 0.8, 0.8, &gain), REFINE_ACCEPT);
    assert_near(gain, 0.8, 1e-12);
    /* the story's fitness fell */
    assert_int_equal(refine_gate(&m, &t, before, after, 0.8, 0.7, &gain), REFINE_FITNESS_FELL);
    /* the target moved, but a heavier loss elsewhere: no predicted gain */
    after[DIM_EMOTIONAL] = 5;
    assert_int_equal(refine_gate(&m, &t, before, after, 0.8, 0.9, &gain), REFINE_NO_GAIN);
    assert_near(gain, 0.8 - 1.0, 1e-12);
    /* the target moved less than epsilon */
    after[DIM_EMOTIONAL] = 3;
    after[DIM_MASTERY] = 3 + REFINE_EPSILON / 2;
    assert_int_equal(refine_gate(&m, &t, before, after, 0.8, 0.9, &gain), REFINE_TARGET_STILL);
    /* moved the wrong way */
    after[DIM_MASTERY] = 2;
    assert_int_equal(refine_gate(&m, &t, before, after, 0.8, 0.9, &gain), REFINE_TARGET_STILL);
    /* a missing dimension blocks acceptance whatever else moved */
    after[DIM_MASTERY] = 5;
    after[DIM_MEANING] = NAN;
    assert_int_equal(refine_gate(&m, &t, before, after, 0.8, 0.9, &gain), REFINE_INCOMPLETE);
    assert_true(isnan(gain));
}

PCG_TESTS(refine_plan, cmocka_unit_test(refine_targets_follow_weights), cmocka_unit_test(refine_gate_outcomes))
