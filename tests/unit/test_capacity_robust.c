/*
 * The model's fit with disturbed samples left out (capacity/cap_fit_robust.c,
 * README "Disturbed samples"), on synthetic samples with known answers: an
 * exact line with some requests delayed by 20 ms (a preempted thread, a wait
 * no activity holds) is found exactly and the delayed ones counted; normal
 * noise keeps (nearly) every sample and the least-squares answer; fewer than
 * 5 samples are not judged; never fewer than half are kept; the model's
 * calibration (siox_cap_model_fit) uses it for clients, not for bricks; and
 * the simulation serves a
 * request in the line's time, plus the delays' mean (excess_ns) when the
 * model is asked to (with_delays).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "siox_capacity.h"

#define A_NS 50000.0 /* 50 us per request */
#define B_NS 2.0     /* + 2 ns per byte */
#define DELAY_NS 20e6

static double size_of(size_t i) { return 4096.0 * (double)(i % 32 + 1); }

static double delay_sum; /* of the last line_with_delays */

/* n samples on the line, every `every`-th (from 3) delayed by DELAY_NS (and
 * up to 40 % more); returns how many were, their delays' sum in delay_sum. */
static size_t line_with_delays(double *x, double *y, size_t n, size_t every) {
  size_t d = 0;
  delay_sum = 0;
  for (size_t i = 0; i < n; i++) {
    x[i] = size_of(i);
    y[i] = A_NS + B_NS * x[i];
    if (every && i % every == 3) {
      double late = DELAY_NS * (1.0 + (double)(i % 5) / 10);
      y[i] += late;
      delay_sum += late;
      d++;
    }
  }
  return d;
}

static void test_delays_left_out(void **state) {
  (void)state;
  double x[200], y[200];
  size_t d = line_with_delays(x, y, 200, 20);
  struct siox_cap_fit ols, f;
  assert_int_equal(siox_cap_fit_line(x, y, 200, &ols), 0);
  /* The guard: least squares is pulled far off by 10 delayed requests. */
  assert_true(ols.a_ns > 10 * A_NS);
  assert_int_equal(siox_cap_fit_robust(x, y, 200, &f), 0);
  assert_int_equal(f.left_out, d);
  assert_int_equal(f.n, 200 - d);
  assert_true(fabs(f.a_ns - A_NS) < 1e-6 * A_NS);
  assert_true(fabs(f.b_ns - B_NS) < 1e-9);
  /* What the delayed requests added, spread over all 200. */
  assert_true(fabs(f.excess_ns - delay_sum / 200) < 1e-3);
}

/* Normal noise by Box-Muller on a fixed LCG: the same samples every run. */
static double normal(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  double u1 = ((double)(*s >> 11) + 1) / 9007199254740993.0;
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  double u2 = (double)(*s >> 11) / 9007199254740992.0;
  return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

static void test_normal_noise_kept(void **state) {
  (void)state;
  enum { N = 2000 };
  double *x = malloc(N * sizeof(*x)), *y = malloc(N * sizeof(*y));
  assert_non_null(x);
  assert_non_null(y);
  uint64_t seed = 42;
  for (size_t i = 0; i < N; i++) x[i] = size_of(i), y[i] = A_NS + B_NS * x[i] + 1000.0 * normal(&seed);
  struct siox_cap_fit ols, f;
  assert_int_equal(siox_cap_fit_line(x, y, N, &ols), 0);
  assert_int_equal(siox_cap_fit_robust(x, y, N, &f), 0);
  /* 3 SDs leave 0.27 % of normal samples out: 5.4 expected of 2000. */
  assert_true(f.left_out <= 20);
  assert_true(fabs(f.a_ns - A_NS) < 3 * f.se_a);
  assert_true(fabs(f.b_ns - B_NS) < 3 * f.se_b);
  assert_true(fabs(f.a_ns - ols.a_ns) < ols.se_a);
  assert_true(fabs(f.excess_ns) < f.sd_ns);
  free(x);
  free(y);
}

static void test_few_not_judged(void **state) {
  (void)state;
  double x[4] = {4096, 8192, 16384, 32768}, y[4];
  for (int i = 0; i < 4; i++) y[i] = A_NS + B_NS * x[i];
  y[3] += DELAY_NS;
  struct siox_cap_fit ols, f;
  assert_int_equal(siox_cap_fit_line(x, y, 4, &ols), 0);
  assert_int_equal(siox_cap_fit_robust(x, y, 4, &f), 0);
  assert_int_equal(f.left_out, 0);
  assert_int_equal(f.n, 4);
  assert_true(f.a_ns == ols.a_ns && f.b_ns == ols.b_ns);
  assert_int_equal(siox_cap_fit_robust(x, y, 0, &f), -22);
}

static void test_half_kept(void **state) {
  (void)state;
  /* Two equal groups 1 ms apart, of one size: neither is "the outliers". */
  double x[40], y[40];
  for (size_t i = 0; i < 40; i++) x[i] = 65536, y[i] = i % 2 ? 1e6 : 2e6;
  struct siox_cap_fit f;
  assert_int_equal(siox_cap_fit_robust(x, y, 40, &f), 0);
  assert_true(f.n >= 20);
  assert_int_equal(f.n + f.left_out, 40);
}

/* A client's classes are fitted without the delays; a brick's as measured
 * (one translator call: README "Disturbed samples"). */
static void test_model_fit_uses_it(void **state) {
  (void)state;
  siox_cap_model *m = siox_cap_model_new();
  int64_t c = siox_cap_model_comp(m, "client", SIOX_CAP_CLIENT), b = siox_cap_model_comp(m, "h:/b1", SIOX_CAP_BRICK);
  struct siox_cap_sample s[200];
  double x[100], y[100];
  size_t d = line_with_delays(x, y, 100, 10);
  for (size_t i = 0; i < 100; i++) {
    s[i] = (struct siox_cap_sample){(uint32_t)c, SIOX_CAP_WRITE, (uint64_t)x[i], (int64_t)i * 100000000, (int64_t)y[i], 0, 0, 0};
    s[100 + i] = s[i];
    s[100 + i].comp = (uint32_t)b;
  }
  assert_int_equal(siox_cap_model_fit(m, s, 200), 0);
  struct siox_cap_fit ols;
  assert_int_equal(siox_cap_fit_line(x, y, 100, &ols), 0);
  const struct siox_cap_fit *fb = &m->comp[b].fit[SIOX_CAP_WRITE];
  assert_int_equal(fb->left_out, 0);
  assert_int_equal(fb->n, 100);
  assert_true(fb->a_ns == ols.a_ns && fb->b_ns == ols.b_ns);
  const struct siox_cap_fit *f = &m->comp[c].fit[SIOX_CAP_WRITE];
  assert_int_equal(f->left_out, d);
  assert_true(fabs(f->a_ns - A_NS) < 1e-6 * A_NS);
  /* A 128 KiB request costs the line's time, not the delays' mean. */
  assert_true(fabs(siox_cap_fit_eval(f, 131072) - (A_NS + B_NS * 131072)) < 1);
  assert_int_equal(m->samples, 200);
  siox_cap_model_free(m);
}

/* One rank writes 128 KiB to a file on a brick; the client's write class is
 * fitted from samples with delays. */
static void test_simulation_adds_the_delays(void **state) {
  (void)state;
  siox_cap_model *m = siox_cap_model_new();
  int64_t b = siox_cap_model_comp(m, "h:/b1", SIOX_CAP_BRICK), c = siox_cap_model_comp(m, "client", SIOX_CAP_CLIENT);
  m->comp[b].fit[SIOX_CAP_WRITE] = (struct siox_cap_fit){.n = 10, .a_ns = 1e6};
  double x[100], y[100];
  line_with_delays(x, y, 100, 10);
  assert_int_equal(siox_cap_fit_robust(x, y, 100, &m->comp[c].fit[SIOX_CAP_WRITE]), 0);
  m->chunk = 128 * 1024;
  siox_workload *w = siox_wl_new(SIOX_WL_TRACE, "t", 1);
  siox_wl_add_file(w, "/a");
  struct siox_wl_rec rec = {0, SIOX_WL_WRITE, 0, 0, 128 * 1024, 0, 0, 0};
  assert_int_equal(siox_wl_add_rec(w, &rec), 0);
  static const int32_t on_brick[1] = {0};
  struct siox_cap_sim_opts o = {.copies = 1, .brick_of = on_brick, .client = c};
  char err[256] = "";
  double line = A_NS + B_NS * 128 * 1024;
  for (int delays = 0; delays < 2; delays++) {
    m->with_delays = delays;
    siox_cap_model *mc = siox_cap_model_clone(m); /* a scenario's copy keeps the switch */
    struct siox_cap_run run;
    assert_int_equal(siox_cap_simulate(mc, w, &o, &run, err, sizeof err), 0);
    double want = 1e6 + line + (delays ? delay_sum / 100 : 0);
    assert_true(fabs((double)run.job_io_ns[0] - want) < 2);
    siox_cap_run_free(&run);
    siox_cap_model_free(mc);
  }
  siox_wl_free(w);
  siox_cap_model_free(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_delays_left_out), cmocka_unit_test(test_normal_noise_kept),
      cmocka_unit_test(test_few_not_judged),  cmocka_unit_test(test_half_kept),
      cmocka_unit_test(test_model_fit_uses_it), cmocka_unit_test(test_simulation_adds_the_delays),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
