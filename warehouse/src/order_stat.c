/*
 * The median and percentiles blame judges by (blame.h), by selection
 * instead of a sort: blame takes the median and the 90th percentile of
 * 20,000 peer samples per kind, the peers' medians per node and the size
 * groups' medians, and sorting each (qsort, a function call per
 * comparison) was a third of the CLI's own CPU time for a call. The k-th
 * smallest value is the same however it is found, so the answers are the
 * sort's.
 */
#include "blame.h"

#include <math.h>
#include <stdlib.h>

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

static void swap(double *v, size_t i, size_t j) {
  double t = v[i];
  v[i] = v[j];
  v[j] = t;
}

static double median3(double a, double b, double c) {
  if (a > b) {
    double t = a;
    a = b;
    b = t;
  }
  return c < a ? a : c > b ? b : c;
}

/* The k-th smallest of v[0..n) (k < n); v is reordered so that nothing
 * before k is larger and nothing after it smaller. Three-way partitions
 * (peer times repeat: many samples of one size take the same time), and
 * a sort of what is left if the pivots keep choosing badly. */
static double select_kth(double *v, size_t n, size_t k) {
  size_t lo = 0, hi = n, rounds = 0;
  while (hi - lo > 1) {
    if (++rounds > 64) {
      qsort(v + lo, hi - lo, sizeof(*v), cmp_double);
      break;
    }
    double p = median3(v[lo], v[lo + (hi - lo) / 2], v[hi - 1]);
    size_t lt = lo, i = lo, gt = hi; /* [lo,lt) < p, [lt,gt) == p, [gt,hi) > p */
    while (i < gt) {
      if (v[i] < p) swap(v, lt++, i++);
      else if (v[i] > p) swap(v, i, --gt);
      else i++;
    }
    if (k < lt) hi = lt;
    else if (k >= gt) lo = gt;
    else return p;
  }
  return v[k];
}

double siox_median(double *v, size_t n) {
  if (n == 0) return 0;
  double hi = select_kth(v, n, n / 2);
  if (n % 2) return hi;
  double lo = v[0]; /* the largest of the lower half */
  for (size_t i = 1; i < n / 2; i++)
    if (v[i] > lo) lo = v[i];
  return (lo + hi) / 2;
}

double siox_percentile(double *v, size_t n, double p) {
  if (n == 0) return 0;
  size_t rank = (size_t)ceil(p * (double)n);
  return select_kth(v, n, rank ? rank - 1 : 0);
}
