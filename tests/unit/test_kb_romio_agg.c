/*
 * The model of the aggregation a job already had in its collective calls
 * (knowledge-base/src/findings_romio_agg.c): aggregators, concurrency, and
 * whether parallel operations helped, on synthetic operation intervals.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "findings.h"

#define MS 1000000LL

/* 4 operations of proc 0 alone, then rounds of 4 processes at once whose
 * operations take lat_over_ms each (alone: 1 ms). */
static size_t make(struct fnd_interval *v, int64_t lat_over_ms) {
  size_t n = 0;
  for (int i = 0; i < 4; i++) v[n++] = (struct fnd_interval){i * 2 * MS, i * 2 * MS + MS, 4096, 0};
  for (int r = 0; r < 4; r++)
    for (int p = 0; p < 4; p++) {
      int64_t s = 100 * MS + r * 10 * MS;
      v[n++] = (struct fnd_interval){s, s + lat_over_ms * MS, 4096, p};
    }
  return n;
}

/* Four at once and each as fast as alone: parallelism quadrupled the rate. */
static void parallel_helped(void **st) {
  (void)st;
  struct fnd_interval v[32];
  struct fnd_agg a;
  fnd_agg_model(v, make(v, 1), 4, &a);
  assert_int_equal(a.aggregators, 4);
  assert_int_equal(a.solo, 4);
  assert_int_equal(a.overlapped, 16);
  assert_true(a.concurrency > 2.4 && a.concurrency < 2.6); /* (4 + 16) ms over 8 ms busy */
  assert_int_equal(a.parallel, 1);
  assert_true(fabs(fnd_agg_speedup(&a, 2) - 2) < 1e-9);
  assert_true(fabs(fnd_agg_speedup(&a, 1) - 1) < 1e-9); /* a single aggregator serializes */
}

/* Four at once, each 4x as slow: the file system served them in turn. */
static void parallel_did_not_help(void **st) {
  (void)st;
  struct fnd_interval v[32];
  struct fnd_agg a;
  fnd_agg_model(v, make(v, 4), 4, &a);
  assert_int_equal(a.parallel, 0);
  assert_true(fabs(fnd_agg_speedup(&a, 4) - 1) < 1e-9);
}

/* Only operations at once: nothing to compare them with. */
static void cannot_tell(void **st) {
  (void)st;
  struct fnd_interval v[32];
  struct fnd_agg a;
  size_t n = make(v, 1);
  fnd_agg_model(v + 4, n - 4, 4, &a);
  assert_int_equal(a.parallel, -1);
  assert_true(isnan(fnd_agg_speedup(&a, 2)));
}

/* One after the other: no parallelism to lose. */
static void serial(void **st) {
  (void)st;
  struct fnd_interval v[8];
  for (int i = 0; i < 8; i++) v[i] = (struct fnd_interval){(7 - i) * 2 * MS, (7 - i) * 2 * MS + MS, 4096, i % 4};
  struct fnd_agg a;
  fnd_agg_model(v, 8, 4, &a);
  assert_int_equal(a.overlapped, 0);
  assert_int_equal(a.parallel, 0);
  assert_true(fabs(a.concurrency - 1) < 1e-9);
  assert_int_equal(a.aggregators, 4);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(parallel_helped), cmocka_unit_test(parallel_did_not_help),
                                     cmocka_unit_test(cannot_tell), cmocka_unit_test(serial)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
