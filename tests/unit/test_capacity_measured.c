/*
 * The measured side of `siox capacity validate` over repeated runs
 * (capacity/README.md, "Validation"): a case's jobs come in repeats of the
 * scenario's copies, in a row; the measured I/O time is the mean over a
 * repeat's copies and the median over the repeats, so that one disturbed
 * run among three does not make the figure.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "siox_capacity.h"

/* One run, one copy: its own time (what validate measured before repeats). */
static void test_one_run(void **state) {
  (void)state;
  const int64_t t[] = {2500};
  assert_int_equal(siox_cap_measured(t, 1, 1), 2500);
}

/* Three runs of one copy: the median, not the mean (the slow third run of
 * 9000 would make the mean 4000). */
static void test_median_of_repeats(void **state) {
  (void)state;
  const int64_t t[] = {1000, 9000, 2000};
  assert_int_equal(siox_cap_measured(t, 3, 1), 2000);
  const int64_t even[] = {1000, 4000, 2000, 9000};
  assert_int_equal(siox_cap_measured(even, 4, 1), 3000); /* (2000 + 4000) / 2 */
}

/* load=2 three times, each repeat's two copies in a row: the repeats'
 * means are 1500, 5000 and 2500; their median 2500. Grouping the copies
 * any other way (e.g. every other job) gives another answer. */
static void test_copies_in_a_row(void **state) {
  (void)state;
  const int64_t t[] = {1000, 2000, 4000, 6000, 2000, 3000};
  assert_int_equal(siox_cap_measured(t, 6, 2), 2500);
  assert_int_equal(siox_cap_measured(t, 2, 2), 1500); /* one repeat: the mean over its copies */
}

/* No jobs, or jobs that do not make whole repeats, are refused. */
static void test_refused(void **state) {
  (void)state;
  const int64_t t[] = {1000, 2000, 3000};
  assert_int_equal(siox_cap_measured(t, 0, 1), -EINVAL);
  assert_int_equal(siox_cap_measured(t, 3, 2), -EINVAL);
  assert_int_equal(siox_cap_measured(t, 1, 2), -EINVAL);
  assert_int_equal(siox_cap_measured(t, 3, 0), -EINVAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_one_run),
      cmocka_unit_test(test_median_of_repeats),
      cmocka_unit_test(test_copies_in_a_row),
      cmocka_unit_test(test_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
