/* warehouse/src/wh_critical_files.c: the sweep line against a brute-force
 * computation that walks every unit of time, on random integer intervals,
 * and the cases a sweep gets wrong first (ties, nesting, gaps). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "siox/siox_wh.h"

#define T_MAX 300

/* The definition itself: each unit [t, t+1) where k files are active gives
 * each 1/k of exclusive time, and one unit of busy time to each of them and
 * to the job. */
static void brute(const struct siox_wh_span *s, size_t n, size_t nfiles, struct siox_wh_file_share *out, int64_t *busy) {
  memset(out, 0, nfiles * sizeof(*out));
  *busy = 0;
  for (int64_t t = 0; t < T_MAX; t++) {
    int active[64] = {0}, k = 0;
    for (size_t i = 0; i < n; i++)
      if (s[i].start_ns <= t && t + 1 <= s[i].end_ns && s[i].file < nfiles && !active[s[i].file])
        active[s[i].file] = 1, k++;
    if (!k) continue;
    (*busy)++;
    for (size_t f = 0; f < nfiles; f++)
      if (active[f]) out[f].busy_ns++, out[f].exclusive_ns += 1.0 / k;
  }
}

static void check(const struct siox_wh_span *s, size_t n, size_t nfiles) {
  struct siox_wh_file_share got[64], want[64];
  int64_t gb, wb;
  assert_int_equal(siox_wh_critical_files(s, n, nfiles, got, &gb), 0);
  brute(s, n, nfiles, want, &wb);
  assert_int_equal(gb, wb);
  double sum = 0;
  for (size_t f = 0; f < nfiles; f++) {
    assert_int_equal(got[f].busy_ns, want[f].busy_ns);
    assert_true(got[f].exclusive_ns > want[f].exclusive_ns - 1e-6 && got[f].exclusive_ns < want[f].exclusive_ns + 1e-6);
    sum += got[f].exclusive_ns;
  }
  /* idle gaps belong to nobody: the shares add up to the busy time */
  assert_true(sum > (double)gb - 1e-6 && sum < (double)gb + 1e-6);
}

static void random_intervals(void **state) {
  (void)state;
  srand(14);
  struct siox_wh_span s[200];
  for (int round = 0; round < 500; round++) {
    size_t n = (size_t)(rand() % 200), nfiles = 1 + (size_t)(rand() % 12);
    for (size_t i = 0; i < n; i++) {
      int64_t a = rand() % T_MAX, len = rand() % 40;
      s[i] = (struct siox_wh_span){a, a + len < T_MAX ? a + len : T_MAX, (uint32_t)(rand() % (int)nfiles)};
    }
    check(s, n, nfiles);
  }
}

static void two_files_overlapping(void **state) {
  (void)state;
  /* A [0,10) and B [5,20), gap, A [30,40): A 5 + 2.5 + 10, B 2.5 + 10; busy 30 of the 40 */
  struct siox_wh_span s[] = {{0, 10, 0}, {5, 20, 1}, {30, 40, 0}};
  struct siox_wh_file_share out[2];
  int64_t busy;
  assert_int_equal(siox_wh_critical_files(s, 3, 2, out, &busy), 0);
  assert_int_equal(busy, 30);
  assert_true(out[0].exclusive_ns == 17.5 && out[1].exclusive_ns == 12.5);
  assert_int_equal(out[0].busy_ns, 20);
  assert_int_equal(out[1].busy_ns, 15);
}

static void ties_nesting_and_empty(void **state) {
  (void)state;
  /* back to back on one file, nested on one file, an empty span, a file out of range */
  struct siox_wh_span s[] = {{0, 10, 0}, {10, 20, 0}, {2, 8, 0}, {5, 5, 1}, {0, 50, 7}, {10, 20, 1}};
  check(s, 6, 2);
  check(NULL, 0, 3);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(random_intervals), cmocka_unit_test(two_files_overlapping),
                                     cmocka_unit_test(ties_nesting_and_empty)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
