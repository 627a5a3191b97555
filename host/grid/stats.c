/* Summary statistics and Welch's t-test.  See stats.h. */
#include "stats.h"
#include <gsl/gsl_cdf.h>
#include <math.h>

void stats_mean_sd(const double *x, int n, double *mean, double *sd)
{
    double m = 0, v = 0;
    for (int i = 0; i < n; i++) m += x[i];
    m = n > 0 ? m / n : NAN;
    /* two passes: the squared deviations from the mean, not the raw sums,
     * so that values close together lose no precision */
    for (int i = 0; i < n; i++) v += (x[i] - m) * (x[i] - m);
    *mean = m;
    *sd = n > 1 ? sqrt(v / (n - 1)) : NAN;
}

double stats_welch_p(const double *a, int na, const double *b, int nb, double *t_out, double *df_out)
{
    double ma, sa, mb, sb, t = NAN, df = NAN, p = NAN;
    if (na >= 2 && nb >= 2) {
        stats_mean_sd(a, na, &ma, &sa);
        stats_mean_sd(b, nb, &mb, &sb);
        double va = sa * sa / na, vb = sb * sb / nb, se2 = va + vb;
        if (se2 > 0) {
            t = (ma - mb) / sqrt(se2);
            df = se2 * se2 / (va * va / (na - 1) + vb * vb / (nb - 1));
            /* Q is the upper tail; doubling |t|'s tail is the two-sided p */
            p = 2 * gsl_cdf_tdist_Q(fabs(t), df);
            if (p > 1) p = 1;
        } else if (ma != mb) {
            t = ma > mb ? INFINITY : -INFINITY;
            p = 0;
        }
    }
    if (t_out) *t_out = t;
    if (df_out) *df_out = df;
    return p;
}
