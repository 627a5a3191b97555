/* host/grid/stats.h: sample statistics, Welch's t-test against values computed
 * independently (scipy.stats.ttest_ind(a, b, equal_var=False), scipy 1.17,
 * and one worked by hand). */
#include "harness.h"
#include "stats.h"
#include <math.h>

static void near(double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol)) fail_msg("got %.15g, want %.15g (tolerance %g)", got, want, tol);
}

static void stats_mean_sd_sample(void **state)
{
    (void)state;
    double x[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, m, sd;
    stats_mean_sd(x, 10, &m, &sd);
    near(m, 5.5, 1e-15);
    near(sd, 3.0276503540974917, 1e-14); /* divisor n - 1 */
    stats_mean_sd(x, 1, &m, &sd);
    near(m, 1, 0);
    assert_true(isnan(sd));
    stats_mean_sd(x, 0, &m, &sd);
    assert_true(isnan(m) && isnan(sd));
}

static void stats_welch_matches_scipy(void **state)
{
    (void)state;
    static const struct {
        double a[10], b[10];
        int na, nb;
        double t, p, df;
    } cases[] = {
        {{0.1, 0.3, 0.2, 0.4, 0.0}, {0.5, 0.6, 0.2, 0.9, 0.7}, 5, 5, -2.801397166943046, 0.028041482241805214,
         6.62025811497849},
        {{0.793, 0.1, 0.95, 0.99, 1.0}, {0, 0, 0, 0, 0}, 5, 5, 4.489758873568776, 0.010907830159371561, 4.0},
        {{0, 0, 0, 0, 0}, {0.0, 0.033, 0.0, 0.1, 0.0}, 5, 5, -1.368953346990258, 0.24285110893757025, 4.0},
        {{0.2, 0.4}, {0.3, 0.9, 0.5}, 2, 3, -1.315191898442858, 0.2829349769495572, 2.8942917547568707},
        {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {3.5, 4.0}, 10, 2, 1.7685190342396897, 0.1078495608694314,
         9.856717897868121},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double t, df, p = stats_welch_p(cases[i].a, cases[i].na, cases[i].b, cases[i].nb, &t, &df);
        near(t, cases[i].t, 1e-12);
        near(df, cases[i].df, 1e-10);
        near(p, cases[i].p, 1e-12);
    }
    /* by hand: a = {0.1, 0.3, 0.2} (variance 0.01), b = {0.5, 0.5, 0.5}: t = -0.3 / sqrt(0.01 / 3)
     * = -5.19615, df = 2, and for 2 degrees of freedom the two-sided p is 1 - |t| / sqrt(2 + t^2)
     * = 1 - 5.19615 / sqrt(29) = 0.035099 */
    double a[] = {0.1, 0.3, 0.2}, b[] = {0.5, 0.5, 0.5}, t, df;
    double p = stats_welch_p(a, 3, b, 3, &t, &df);
    near(t, -0.3 / sqrt(0.01 / 3), 1e-12);
    near(df, 2, 1e-12);
    near(p, 1 - fabs(t) / sqrt(2 + t * t), 1e-12);
    /* undefined: too few values, or no spread and the same mean */
    double z[] = {0, 0, 0}, one[] = {1, 1, 1};
    assert_true(isnan(stats_welch_p(a, 1, b, 3, NULL, NULL)));
    assert_true(isnan(stats_welch_p(z, 3, z, 3, &t, &df)));
    assert_true(isnan(t));
    /* no spread, different means: t infinite, p 0 (scipy says the same) */
    near(stats_welch_p(z, 3, one, 3, &t, NULL), 0, 0);
    assert_true(isinf(t) && t < 0);
    /* symmetric */
    near(stats_welch_p(b, 3, a, 3, NULL, NULL), p, 1e-15);
}

PCG_TESTS(stats, cmocka_unit_test(stats_mean_sd_sample), cmocka_unit_test(stats_welch_matches_scipy))
