/*
 * The median of a sample and its distribution-free 95% confidence interval
 * (order statistics of the binomial(n, 1/2)): what the benches that run
 * interleaved rounds on a loaded machine report. Header-only, for the
 * bench programs.
 */
#ifndef SIOX_BENCH_MEDIAN_CI_H
#define SIOX_BENCH_MEDIAN_CI_H

#include <stdlib.h>

struct median_ci {
  double median, lo, hi;
};

static int median_ci_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Sorts v. The interval is [x_(k), x_(n+1-k)] (1-based) with the largest k
 * such that P(Binomial(n, 1/2) <= k - 1) <= 2.5%: the median lies below
 * x_(k) only when at most k - 1 of the n values do, so each side misses it
 * with at most 2.5% and the interval covers it with >= 95%. (Until
 * 2026-11-25 this took [x_(k+1), x_(n-k)], one value in from each end:
 * 79-93% coverage for 6-31 rounds, not 95%.) With n < 6 no such k exists
 * and the interval is the whole range (>= 93.75% only). */
static inline struct median_ci median_ci(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, median_ci_cmp);
  struct median_ci e = {n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, v[0], v[n - 1]};
  double cdf = 0, p = 1;
  for (int i = 0; i < n; i++) p *= 0.5; /* C(n, 0) / 2^n */
  int j = 0;
  for (int i = 0; i < n; i++) {
    cdf += p; /* P(B <= i) */
    if (cdf > 0.025) break;
    j = i + 1;
    p = p * (n - i) / (i + 1);
  }
  if (j >= 1) e.lo = v[j - 1], e.hi = v[n - j];
  return e;
}

#endif
