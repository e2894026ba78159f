/* blame.c: the walk ends at the deepest component holding most of the time,
 * and a slow device among fast peers is named, with its evidence. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_cli_tree.h"

#define SAMPLE(aid, node, hw, ns, b) {aid, node, hw, "", ns, b}

static void walk_reaches_the_device(void **state) {
  (void)state;
  struct siox_tree *t = io_chain("dev1", 11, 10 * MS, MIB);
  struct siox_blame b;
  assert_int_equal(siox_blame_walk(t, &SIOX_BLAME_RULE_DEFAULT, &b), 0);
  assert_int_equal(b.npath, 4);
  assert_int_equal(b.suspect_idx, 3);
  assert_string_equal(b.suspect->hwid, "dev1");
  siox_blame_release(&b);
  siox_tree_destroy(t);
}

static void walk_stops_where_the_time_is(void **state) {
  (void)state;
  /* The brick holds 90% but spends it in itself; the device write under it
   * holds 10% of the call, so the brick is the suspect. */
  struct siox_tree *t = siox_tree_create();
  tree_add(t, 1, 0, "host0", "POSIX", "write", 1, 0, 100 * MS);
  tree_add(t, 2, 1, "brick1", "GlusterFS-brick", "WRITE", 2, 5 * MS, 95 * MS);
  tree_add(t, 3, 2, "dev1", "device", "write", 3, 80 * MS, 90 * MS);
  assert_int_equal(siox_tree_finish(t, 1), 0);
  struct siox_blame b;
  assert_int_equal(siox_blame_walk(t, &SIOX_BLAME_RULE_DEFAULT, &b), 0);
  assert_int_equal(b.npath, 3);
  assert_int_equal(b.suspect_idx, 1);
  assert_string_equal(b.suspect->swid, "GlusterFS-brick");
  siox_blame_release(&b);
  siox_tree_destroy(t);
}

static void slow_device_named(void **state) {
  (void)state;
  struct siox_tree *t = io_chain("dev1", 11, 10 * MS, MIB);
  const struct siox_blame_sample s[] = {
      SAMPLE(100, 10, "dev0", 1 * MS, MIB),       SAMPLE(101, 10, "dev0", 1 * MS + 100000, MIB),
      SAMPLE(102, 10, "dev0", 1 * MS - 50000, MIB), SAMPLE(103, 12, "dev2", 1200000, MIB),
      SAMPLE(104, 12, "dev2", 1300000, MIB),      SAMPLE(105, 11, "dev1", 9 * MS, MIB), /* its own node */
      SAMPLE(4, 11, "dev1", 10 * MS, MIB),        /* the suspect itself */
  };
  struct siox_blame b;
  assert_int_equal(siox_blame_walk(t, &SIOX_BLAME_RULE_DEFAULT, &b), 0);
  assert_int_equal(siox_blame_judge(&b, s, sizeof(s) / sizeof(s[0])), 0);
  assert_int_equal(b.verdict, SIOX_VERDICT_CULPRIT);
  assert_string_equal(b.suspect->hwid, "dev1");
  assert_true(b.per_byte);
  assert_int_equal(b.peer_samples, 5);
  assert_int_equal(b.own_samples, 1);
  assert_int_equal(b.npeers, 2);
  assert_string_equal(b.peers[0].hwid, "dev2"); /* slowest peer first */
  assert_int_equal(b.peers[0].n, 2);
  assert_string_equal(b.peers[1].hwid, "dev0");
  /* median of {0.95, 1.0, 1.1, 1.2, 1.3} ms per MiB is 1.1 ms */
  assert_true(fabs(b.peer_median * MIB * 1e3 - 1.1) < 1e-9);
  assert_true(b.ratio > 9.0 && b.ratio < 9.2);
  assert_true(b.peer_p90 < b.value);
  siox_blame_release(&b);
  siox_tree_destroy(t);
}

static void percentiles(void **state) {
  (void)state;
  double v[] = {5, 1, 4, 2, 3};
  assert_true(siox_median(v, 5) == 3);
  double w[] = {4, 1, 3, 2};
  assert_true(siox_median(w, 4) == 2.5);
  double x[] = {10, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  assert_true(siox_percentile(x, 10, 0.9) == 9);
  assert_true(siox_median(NULL, 0) == 0);
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

/* order_stat.c selects instead of sorting: the same median and percentile
 * as the sorted array gives, over sizes, runs of equal times (peer times
 * repeat) and ordered, reversed and V-shaped input (peers come nearest in
 * time first). */
static void selection_is_the_sort(void **state) {
  (void)state;
  enum { N = 2001 };
  static double v[N], w[N], sorted[N];
  srand(7);
  for (int shape = 0; shape < 5; shape++) {
    for (size_t n = 1; n <= N; n += n < 40 ? 1 : 97) {
      for (size_t i = 0; i < n; i++) {
        double r = (double)(rand() % (shape == 1 ? 4 : 1000));
        v[i] = shape == 2 ? (double)i : shape == 3 ? (double)(n - i) : shape == 4 ? fabs((double)i - n / 2.0) : r;
      }
      memcpy(sorted, v, n * sizeof(*v));
      qsort(sorted, n, sizeof(*sorted), cmp_double);
      double med = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
      memcpy(w, v, n * sizeof(*v));
      assert_true(siox_median(w, n) == med);
      size_t rank = (size_t)ceil(0.9 * (double)n);
      memcpy(w, v, n * sizeof(*v));
      assert_true(siox_percentile(w, n, 0.9) == sorted[rank - 1]);
      memcpy(w, v, n * sizeof(*v));
      assert_true(siox_percentile(w, n, 0.0) == sorted[0]);
      memcpy(w, v, n * sizeof(*v));
      assert_true(siox_percentile(w, n, 1.0) == sorted[n - 1]);
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(walk_reaches_the_device),
      cmocka_unit_test(walk_stops_where_the_time_is),
      cmocka_unit_test(slow_device_named),
      cmocka_unit_test(percentiles),
      cmocka_unit_test(selection_is_the_sort),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
