/*
 * The outcome rule of an applied hint set (knowledge-base/src/outcome_rule.c)
 * on synthetic runs: with and without the set, faster and slower, clear and
 * noisy. The noise is a fixed pseudo-random sequence: every verdict is
 * exact, no timing involved.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "outcome_rule.h"

#define CALLS 64
#define MAXRUNS 6

static uint64_t seed = 12345;

/* Uniform in [-1, 1). */
static double noise(void) {
  seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(seed >> 11) / (double)(1ULL << 52) - 1.0;
}

struct runs {
  struct kb_call calls[MAXRUNS][CALLS];
  struct kb_run run[MAXRUNS];
};

/* n runs of CALLS calls of bytes each, s_per_byte per byte, each call
 * scattered by +-call_noise and each run by +-run_noise (shares). */
static void make(struct runs *r, size_t n, double s_per_byte, double bytes, double call_noise, double run_noise) {
  for (size_t i = 0; i < n; i++) {
    double run = 1 + run_noise * noise();
    for (size_t k = 0; k < CALLS; k++)
      r->calls[i][k] = (struct kb_call){s_per_byte * bytes * run * (1 + call_noise * noise()), bytes};
    r->run[i] = (struct kb_run){r->calls[i], CALLS};
  }
}

static struct kb_outcome judge(const struct runs *w, size_t nw, const struct runs *wo, size_t nwo) {
  struct kb_outcome o;
  assert_int_equal(kb_outcome_judge(w->run, nw, wo->run, nwo, &o), 0);
  return o;
}

/* The case: the hinted run's writes took 2-5x as long per byte. */
static void clear_slower(void **st) {
  (void)st;
  static struct runs w, wo;
  make(&wo, 2, 1e-8, 4096, 0.2, 0.1);
  make(&w, 1, 3e-8, 4096, 0.2, 0.1);
  struct kb_outcome o = judge(&w, 1, &wo, 2);
  assert_int_equal(o.verdict, KB_SLOWER);
  assert_true(o.speedup < 0.5 && o.speedup > 0.25);
  assert_true(o.ci_low <= o.speedup && o.speedup <= o.ci_high && o.ci_high < 1);
  assert_int_equal(o.runs_with, 1);
  assert_int_equal(o.runs_without, 2);
  assert_int_equal(o.calls_with, CALLS);
  assert_int_equal(o.calls_without, 2 * CALLS);
  assert_int_equal(o.per_byte, 1);
}

/* Sieving disabled on a sparse layout: 6x faster per byte. */
static void clear_faster(void **st) {
  (void)st;
  static struct runs w, wo;
  make(&wo, 3, 6e-8, 65536, 0.2, 0.1);
  make(&w, 3, 1e-8, 65536, 0.2, 0.1);
  struct kb_outcome o = judge(&w, 3, &wo, 3);
  assert_int_equal(o.verdict, KB_FASTER);
  assert_true(o.speedup > 4 && o.speedup < 8);
  assert_true(o.ci_low > 1 && o.ci_low <= o.speedup && o.speedup <= o.ci_high);
}

/* 10 % slower in the mean, but runs scatter by +-60 %: within noise. */
static void noisy_slower_is_no_change(void **st) {
  (void)st;
  static struct runs w, wo;
  make(&wo, 3, 1e-8, 4096, 0.5, 0.6);
  make(&w, 3, 1.1e-8, 4096, 0.5, 0.6);
  struct kb_outcome o = judge(&w, 3, &wo, 3);
  assert_int_equal(o.verdict, KB_NO_CHANGE);
  assert_true(o.ci_low < 1 && o.ci_high > 1);
}

/* The same 10 % with little noise is measured. */
static void quiet_small_slowdown_is_slower(void **st) {
  (void)st;
  static struct runs w, wo;
  make(&wo, 4, 1e-8, 4096, 0.02, 0.01);
  make(&w, 4, 1.1e-8, 4096, 0.02, 0.01);
  struct kb_outcome o = judge(&w, 4, &wo, 4);
  assert_int_equal(o.verdict, KB_SLOWER);
  assert_true(o.ci_high < 1 && o.speedup > 0.85);
}

/* Noisy and a large gain: still measured faster. */
static void noisy_large_gain_is_faster(void **st) {
  (void)st;
  static struct runs w, wo;
  make(&wo, 3, 8e-8, 4096, 0.5, 0.3);
  make(&w, 3, 1e-8, 4096, 0.5, 0.3);
  assert_int_equal(judge(&w, 3, &wo, 3).verdict, KB_FASTER);
}

/* Equal distributions: no change, and the interval holds the estimate. */
static void same_is_no_change(void **st) {
  (void)st;
  static struct runs w, wo;
  make(&wo, 3, 1e-8, 4096, 0.3, 0.2);
  make(&w, 3, 1e-8, 4096, 0.3, 0.2);
  struct kb_outcome o = judge(&w, 3, &wo, 3);
  assert_int_equal(o.verdict, KB_NO_CHANGE);
  assert_true(o.ci_low <= o.speedup && o.speedup <= o.ci_high);
}

/* Nothing to compare with: not measured, with no figure. */
static void one_side_missing(void **st) {
  (void)st;
  static struct runs w;
  struct kb_outcome o;
  make(&w, 2, 1e-8, 4096, 0.2, 0.1);
  assert_int_equal(kb_outcome_judge(w.run, 2, NULL, 0, &o), 0);
  assert_int_equal(o.verdict, KB_NOT_MEASURED);
  assert_true(isnan(o.speedup));
  assert_int_equal(o.runs_with, 2);
  assert_int_equal(kb_outcome_judge(NULL, 0, w.run, 2, &o), 0);
  assert_int_equal(o.verdict, KB_NOT_MEASURED);
  /* runs without calls do not count */
  struct kb_run empty = {NULL, 0};
  assert_int_equal(kb_outcome_judge(&empty, 1, w.run, 2, &o), 0);
  assert_int_equal(o.verdict, KB_NOT_MEASURED);
  assert_int_equal(o.runs_with, 0);
}

/* Calls that moved no bytes (e.g. syncs) are judged per call. */
static void per_call_without_bytes(void **st) {
  (void)st;
  static struct runs w, wo;
  make(&wo, 2, 1.0, 0, 0.1, 0.05);
  make(&w, 2, 1.0, 0, 0.1, 0.05);
  for (size_t i = 0; i < 2; i++)
    for (size_t k = 0; k < CALLS; k++) wo.calls[i][k].s = 0.002 * (1 + 0.1 * noise()), w.calls[i][k].s = 0.006;
  struct kb_outcome o = judge(&w, 2, &wo, 2);
  assert_int_equal(o.per_byte, 0);
  assert_int_equal(o.verdict, KB_SLOWER);
  assert_true(fabs(o.speedup - 1.0 / 3) < 0.05);
}

/* The same runs give the same interval (seeded generator). */
static void deterministic(void **st) {
  (void)st;
  static struct runs w, wo;
  make(&wo, 3, 1e-8, 4096, 0.4, 0.3);
  make(&w, 3, 1.2e-8, 4096, 0.4, 0.3);
  struct kb_outcome a = judge(&w, 3, &wo, 3), b = judge(&w, 3, &wo, 3);
  assert_true(a.ci_low == b.ci_low && a.ci_high == b.ci_high && a.verdict == b.verdict);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(clear_slower),        cmocka_unit_test(clear_faster),
      cmocka_unit_test(noisy_slower_is_no_change), cmocka_unit_test(quiet_small_slowdown_is_slower),
      cmocka_unit_test(noisy_large_gain_is_faster), cmocka_unit_test(same_is_no_change),
      cmocka_unit_test(one_side_missing),    cmocka_unit_test(per_call_without_bytes),
      cmocka_unit_test(deterministic),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
