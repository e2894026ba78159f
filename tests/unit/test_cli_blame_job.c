/* blame_job.c: job-level sums: a call charged by several processes of one
 * job counts once, entries sort by time, the class is the majority's. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "blame_job.h"

static void sums_and_classes(void **state) {
  (void)state;
  struct siox_job_blame j = {0};
  assert_int_equal(siox_job_charge(&j, "brick3", false, SIOX_CLASS_FAULT, 1, 60), 0);
  assert_int_equal(siox_job_charge(&j, "B", true, SIOX_CLASS_INTERFERENCE, 2, 30), 0);
  assert_int_equal(siox_job_charge(&j, "B", true, SIOX_CLASS_INTERFERENCE, 2, 50), 0); /* another pid of B */
  assert_int_equal(siox_job_charge(&j, "brick3", false, SIOX_CLASS_TRANSIENT, 3, 5), 0);
  assert_int_equal(siox_job_charge(&j, "brick3", false, SIOX_CLASS_FAULT, 4, 70), 0);
  assert_int_equal(siox_job_charge(&j, "brick1", false, SIOX_CLASS_NORMAL, 5, 0), 0); /* nothing charged */
  siox_job_sort(&j);
  assert_int_equal(j.n, 2);
  assert_string_equal(j.e[0].key, "brick3");
  assert_int_equal(j.e[0].ns, 135);
  assert_int_equal(j.e[0].calls, 3);
  assert_int_equal(siox_job_entry_class(&j.e[0]), SIOX_CLASS_FAULT);
  assert_int_equal(j.e[0].nexamples, 3);
  assert_true(j.e[1].is_job);
  assert_int_equal(j.e[1].ns, 80);
  assert_int_equal(j.e[1].calls, 1);
  assert_int_equal(j.e[1].nexamples, 1);
  siox_job_release(&j);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(sums_and_classes)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
