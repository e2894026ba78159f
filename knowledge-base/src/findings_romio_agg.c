/*
 * The aggregation a job already had in its collective calls, as ROMIO's
 * two-phase I/O leaves it in the POSIX layer: which processes made the
 * file-system operations (the aggregators), how many were in flight at
 * once, and whether running them at once helped: an operation that
 * overlapped another process's must not have slowed down as much as the
 * concurrency grew, else the file system served them one after the other
 * and fewer aggregators lose nothing. Pure, no database.
 */
#include <math.h>
#include <stdlib.h>

#include "findings.h"

static int by_start(const void *a, const void *b) {
  int64_t x = ((const struct fnd_interval *)a)->start, y = ((const struct fnd_interval *)b)->start;
  return (x > y) - (x < y);
}

/* Sum of durations over the time with at least one operation in flight
 * (v sorted by start). */
static double concurrency(const struct fnd_interval *v, size_t n) {
  double busy = 0, sum = 0;
  int64_t cur_s = 0, cur_e = -1;
  for (size_t i = 0; i < n; i++) {
    sum += (double)(v[i].end - v[i].start);
    if (v[i].start > cur_e) {
      if (cur_e >= cur_s) busy += (double)(cur_e - cur_s);
      cur_s = v[i].start, cur_e = v[i].end;
    } else if (v[i].end > cur_e) {
      cur_e = v[i].end;
    }
  }
  if (n && cur_e >= cur_s) busy += (double)(cur_e - cur_s);
  return busy > 0 ? sum / busy : 1;
}

/* 1 when v[i] overlaps an operation of another process (v sorted by start;
 * ends are not sorted, so earlier starts are scanned back while they could
 * still be running: max_len bounds how far). */
static int overlaps_other(const struct fnd_interval *v, size_t n, size_t i, int64_t max_len) {
  for (size_t k = i + 1; k < n && v[k].start < v[i].end; k++)
    if (v[k].proc != v[i].proc) return 1;
  for (size_t k = i; k-- > 0 && v[k].start > v[i].start - max_len;)
    if (v[k].proc != v[i].proc && v[k].end > v[i].start) return 1;
  return 0;
}

void fnd_agg_model(struct fnd_interval *v, size_t n, int writers, struct fnd_agg *a) {
  *a = (struct fnd_agg){.writers = writers, .ops = (long)n, .concurrency = 1, .parallel = -1};
  if (!n) return;
  qsort(v, n, sizeof *v, by_start);
  int64_t max_len = 0;
  int maxp = 0;
  for (size_t i = 0; i < n; i++) {
    max_len = v[i].end - v[i].start > max_len ? v[i].end - v[i].start : max_len;
    maxp = v[i].proc > maxp ? v[i].proc : maxp;
  }
  char *seen = calloc((size_t)maxp + 1, 1);
  double solo_ns = 0, solo_b = 0, over_ns = 0, over_b = 0;
  for (size_t i = 0; i < n; i++) {
    if (seen && !seen[v[i].proc]) seen[v[i].proc] = 1, a->aggregators++;
    double ns = (double)(v[i].end - v[i].start), b = v[i].bytes > 0 ? (double)v[i].bytes : 1;
    if (overlaps_other(v, n, i, max_len)) over_ns += ns, over_b += b, a->overlapped++;
    else solo_ns += ns, solo_b += b, a->solo++;
  }
  free(seen);
  a->concurrency = concurrency(v, n);
  a->solo_ns_per_b = solo_b > 0 ? solo_ns / solo_b : 0;
  a->overlap_ns_per_b = over_b > 0 ? over_ns / over_b : 0;
  /* Parallel operations help when they slowed down less than the
   * concurrency grew (more bytes per second in all). 4 of each are needed
   * to tell; without overlap there was no parallelism to lose. */
  if (a->overlapped == 0) a->parallel = 0;
  else if (a->solo >= 4 && a->overlapped >= 4 && a->solo_ns_per_b > 0 && a->concurrency > 1.05) {
    double slowdown = a->overlap_ns_per_b / a->solo_ns_per_b;
    a->parallel = slowdown < 0.8 * a->concurrency;
  }
}

double fnd_agg_speedup(const struct fnd_agg *a, int k) {
  if (k <= 1 || a->parallel == 0) return 1;
  if (a->parallel < 0) return NAN;
  return k < a->concurrency ? k : a->concurrency;
}
