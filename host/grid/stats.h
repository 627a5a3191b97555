/* Statistics of experiment summaries: sample mean and standard deviation,
 * and Welch's two-sample t-test (the t distribution comes from GSL).  Every
 * function takes plain arrays; none allocates. */
#ifndef PCG_STATS_H
#define PCG_STATS_H

/* Mean and sample standard deviation (divisor n - 1) of x[0..n-1].  The
 * mean is NAN when n == 0, the standard deviation NAN when n < 2. */
void stats_mean_sd(const double *x, int n, double *mean, double *sd);

/* Two-sided p-value of Welch's t-test (unequal variances) of a against b.
 * NAN when it is undefined: a sample with fewer than two values, or two
 * samples without spread and with the same mean.  Two samples without
 * spread and different means give t = +-inf and p = 0 (as scipy's
 * ttest_ind(equal_var=False) reports them).  *t and *df (either may be
 * NULL) get the statistic and the Welch-Satterthwaite degrees of freedom. */
double stats_welch_p(const double *a, int na, const double *b, int nb, double *t, double *df);

#endif
