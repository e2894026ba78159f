/*
 * bench/median_ci.h: the distribution-free 95% interval of a median that
 * the benches print beside their figures. The interval's ends are the
 * order statistics x_(k), x_(n+1-k) with the largest k whose one-sided
 * miss probability P(Binomial(n, 1/2) <= k - 1) is at most 2.5%. Checked
 * against that rule computed here in exact integer arithmetic, for every
 * n from 1 to 60, and on the known small cases.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "median_ci.h"

/* k (1-based) for n values, 0 when even k = 1 misses by more than 2.5%. */
static int expected_k(int n) {
  /* P(B <= k - 1) * 2^n = sum_{i < k} C(n, i); compared with 2.5% of 2^n
   * as 40 * sum <= 2^n. */
  long double pow2 = 1, c = 1, sum = 0;
  for (int i = 0; i < n; i++) pow2 *= 2;
  int k = 0;
  for (int i = 0; i < n; i++) {
    sum += c;
    if (40 * sum > pow2) break;
    k = i + 1;
    c = c * (n - i) / (i + 1);
  }
  return k;
}

static void ends_follow_the_binomial_rule(void **state) {
  (void)state;
  for (int n = 1; n <= 60; n++) {
    double v[60];
    for (int i = 0; i < n; i++) v[i] = (double)(n - 1 - i); /* descending: the function must sort */
    struct median_ci e = median_ci(v, n);
    int k = expected_k(n);
    double lo = k ? (double)(k - 1) : 0, hi = k ? (double)(n - k) : (double)(n - 1);
    if (e.lo != lo || e.hi != hi) fail_msg("n=%d: [%g, %g], expected [%g, %g] (k=%d)", n, e.lo, e.hi, lo, hi, k);
    assert_true(e.lo <= e.median && e.median <= e.hi);
  }
}

/* The textbook cases: 8 values give the whole range (99.2%; [x2, x7] would
 * be 93.0%), 9 give [x2, x8] (96.1%), 20 give [x6, x15] (95.9%). */
static void known_cases(void **state) {
  (void)state;
  double v8[] = {8, 1, 7, 2, 6, 3, 5, 4};
  struct median_ci e = median_ci(v8, 8);
  assert_true(e.lo == 1 && e.hi == 8 && e.median == 4.5);
  double v9[] = {9, 1, 8, 2, 7, 3, 6, 4, 5};
  e = median_ci(v9, 9);
  assert_true(e.lo == 2 && e.hi == 8 && e.median == 5);
  double v20[20];
  for (int i = 0; i < 20; i++) v20[i] = 20 - i;
  e = median_ci(v20, 20);
  assert_true(e.lo == 6 && e.hi == 15);
  double v5[] = {3, 1, 2, 5, 4};
  e = median_ci(v5, 5);
  assert_true(e.lo == 1 && e.hi == 5 && e.median == 3);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(ends_follow_the_binomial_rule), cmocka_unit_test(known_cases)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
