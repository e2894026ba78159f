/*
 * The healthy reference's write line (capacity/cap_model.c
 * siox_cap_model_healthy, README "The healthy reference"), on synthetic
 * samples with known answers: three healthy bricks whose 128 KiB writes
 * were sampled at four moments, 50 us each at three of them and 400 us at
 * one (the machine busy then), and a slowed brick at 5 ms. The rule before
 * (the lower-median brick's least-squares line) costs a healed brick's
 * write the moments' mean, ~137 us; the robust line 50 us. Without a
 * disturbed moment both are the same; --healthy-ls (healthy_ls) gives the
 * rule before.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "siox_capacity.h"

#define US 1000LL
#define MS 1000000LL
#define CHUNK 131072
#define CLEAN_NS (50 * US)
#define BUSY_NS (400 * US)
#define ROUNDS 4
#define PER_ROUND 32

/* Brick b's writes: ROUNDS moments of PER_ROUND 128 KiB writes, the
 * `busy`-th moment (-1: none) at BUSY_NS, the others at CLEAN_NS (+0-3 us),
 * and 8 small ones (4 KiB at 20 us: the demo's). Returns samples written. */
static size_t brick_writes(uint32_t b, int busy, int64_t base_ns, struct siox_cap_sample *s) {
  size_t n = 0;
  for (int r = 0; r < ROUNDS; r++)
    for (int i = 0; i < PER_ROUND; i++)
      s[n++] = (struct siox_cap_sample){b, SIOX_CAP_WRITE, CHUNK, base_ns + r * 100 * MS + i * MS,
                                        (r == busy ? BUSY_NS : CLEAN_NS) + (i % 4) * US, 0, b + 1, 0};
  for (int i = 0; i < 8; i++)
    s[n++] = (struct siox_cap_sample){b, SIOX_CAP_WRITE, 4096, base_ns + 500 * MS + i * MS, 20 * US, 0, b + 1, 0};
  return n;
}

static siox_cap_model *fitted(int busy) {
  siox_cap_model *m = siox_cap_model_new();
  static struct siox_cap_sample s[4 * (ROUNDS * PER_ROUND + 8)];
  size_t n = 0;
  for (int k = 0; k < 4; k++) {
    char name[16];
    snprintf(name, sizeof name, "h:/b%d", k + 1);
    uint32_t b = (uint32_t)siox_cap_model_comp(m, name, SIOX_CAP_BRICK);
    size_t n0 = n;
    n += brick_writes(b, busy, k * 10 * MS, s + n);
    if (k == 2) /* the slowed brick */
      for (size_t i = n0; i < n; i++) s[i].ns = 5 * MS + (int64_t)(i % 3) * US;
  }
  assert_int_equal(siox_cap_model_fit(m, s, n), 0);
  return m;
}

static double ref_write(const siox_cap_model *m) {
  struct siox_cap_fit f;
  siox_cap_model_healthy(m, SIOX_CAP_WRITE, &f);
  assert_true(f.n > 0);
  return siox_cap_fit_eval(&f, CHUNK);
}

static void test_disturbed_moment_left_out(void **state) {
  (void)state;
  siox_cap_model *m = fitted(1);
  double robust = ref_write(m);
  assert_true(fabs(robust - (CLEAN_NS + 1.5 * US)) < 3 * US);
  /* The brick's own line stays least squares: the moments' mean. */
  double ls = siox_cap_fit_eval(&m->comp[0].fit[SIOX_CAP_WRITE], CHUNK);
  assert_true(ls > CLEAN_NS + 70 * US);
  m->healthy_ls = 1;
  assert_true(fabs(ref_write(m) - ls) < 1);
  siox_cap_model_free(m);
}

static void test_clean_same_as_least_squares(void **state) {
  (void)state;
  siox_cap_model *m = fitted(-1);
  double robust = ref_write(m);
  m->healthy_ls = 1;
  assert_true(fabs(ref_write(m) - robust) < 1 * US);
  siox_cap_model_free(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_disturbed_moment_left_out),
      cmocka_unit_test(test_clean_same_as_least_squares),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
