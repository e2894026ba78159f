/*
 * siox-daemon clocks: client TSC -> daemon ns by interpolation between the
 * HELLO and BATCH pairs, the ns pass-through, degenerate pairs, and the
 * NTP-style offset estimate (smallest round trip of the last 8 wins).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "daemon.h"

static void test_tsc_interpolates(void **state) {
  (void)state;
  struct clock_conv c;
  /* 3 ticks per ns: HELLO (3e9 ticks, 1e9 ns), BATCH (6e9, 2e9). */
  assert_int_equal(clock_conv_init(&c, SIOX_CW_CLOCK_TSC, 3000000000ull, 1000000000, 6000000000ull, 2000000000), 0);
  assert_int_equal(clock_conv_ns(&c, 3000000000ull), 1000000000);
  assert_int_equal(clock_conv_ns(&c, 6000000000ull), 2000000000);
  assert_int_equal(clock_conv_ns(&c, 4500000000ull), 1500000000);
  assert_int_equal(clock_conv_ns(&c, 4500000003ull), 1500000001);
  /* Beyond the batch pair (extrapolation) stays on the same line. */
  assert_int_equal(clock_conv_ns(&c, 6000000300ull), 2000000100);
}

/* A realistic span: a process up for a day at 2.1 GHz, ns from the epoch.
 * The error must stay within a nanosecond. */
static void test_tsc_long_span_precision(void **state) {
  (void)state;
  struct clock_conv c;
  const uint64_t hz = 2100000000ull, day = 86400;
  const uint64_t tsc0 = 123456789ull;
  const int64_t ns0 = 1700000000000000000ll;
  uint64_t tsc_ref = tsc0 + hz * day;
  int64_t ns_ref = ns0 + (int64_t)day * 1000000000;
  assert_int_equal(clock_conv_init(&c, SIOX_CW_CLOCK_TSC, tsc0, ns0, tsc_ref, ns_ref), 0);
  uint64_t t = tsc_ref - 21000; /* 10 us before the batch pair */
  int64_t want = ns_ref - 10000;
  int64_t got = clock_conv_ns(&c, t);
  assert_true(got - want <= 1 && want - got <= 1);
}

static void test_ns_pass_through(void **state) {
  (void)state;
  struct clock_conv c;
  assert_int_equal(clock_conv_init(&c, 0, 5, 10, 7, 20), 0);
  assert_int_equal(clock_conv_ns(&c, 1234567), 1234567);
}

/* A host whose clock is wrong by N shows N in every ns value its clients
 * read, so both kinds of client time move by exactly N. */
static void test_host_shift_moves_every_time(void **state) {
  (void)state;
  struct clock_conv c;
  assert_int_equal(clock_conv_init(&c, SIOX_CW_CLOCK_TSC, 3000000000ull, 1000000000, 6000000000ull, 2000000000), 0);
  clock_conv_shift(&c, -50000000);
  assert_int_equal(clock_conv_ns(&c, 4500000000ull), 1500000000 - 50000000);
  assert_int_equal(clock_conv_init(&c, 0, 5, 10, 7, 20), 0);
  assert_int_equal(clock_conv_ns(&c, 1234567), 1234567); /* init clears a former shift */
  clock_conv_shift(&c, 50000000);
  assert_int_equal(clock_conv_ns(&c, 1234567), 1234567 + 50000000);
}

static void test_degenerate_pair_pins_to_batch(void **state) {
  (void)state;
  struct clock_conv c;
  assert_int_equal(clock_conv_init(&c, SIOX_CW_CLOCK_TSC, 1000, 5000, 1000, 9000), -EINVAL);
  assert_int_equal(clock_conv_ns(&c, 1000), 9000);
  assert_int_equal(clock_conv_init(&c, SIOX_CW_CLOCK_TSC, 1000, 5000, 10, 9000), -EINVAL);
  assert_int_equal(clock_conv_init(&c, SIOX_CW_CLOCK_TSC, 0, INT64_MIN, 1, INT64_MAX), -EINVAL);
}

static void test_offset_from_smallest_rtt(void **state) {
  (void)state;
  struct clock_sync cs = {0};
  int64_t off;
  uint64_t unc;
  assert_false(clock_sync_best(&cs, 0, &off, &unc));
  /* Server 1000 ns ahead; symmetric 100 ns legs: t2 = t1+100+1000. */
  clock_sync_add(&cs, 0, 1100, 1100, 200);
  /* A noisy sample: 5000 ns on the way back. */
  clock_sync_add(&cs, 10000, 11100, 11100, 15100);
  assert_true(clock_sync_best(&cs, 15100, &off, &unc));
  assert_int_equal(off, 1000);
  assert_int_equal(unc, 100);
  /* Eight worse samples fill the ring: the good one is kept... */
  for (int i = 0; i < CLOCK_SYNC_SAMPLES; i++)
    clock_sync_add(&cs, 0, 2000, 2000, 1000); /* rtt 1000, offset 1500 */
  assert_true(clock_sync_best(&cs, 1000, &off, &unc));
  assert_int_equal(off, 1000);
  assert_int_equal(unc, 100);
}

/* An old sample's uncertainty grows by CLOCK_DRIFT_PPM us per s of age;
 * once it exceeds a fresh sample's, the fresh one wins. */
static void test_old_sample_ages(void **state) {
  (void)state;
  struct clock_sync cs = {0};
  int64_t off;
  uint64_t unc;
  const int64_t s = 1000000000;
  clock_sync_add(&cs, -200, 900, 900, 0); /* rtt 200 ns, offset 1000, taken at 0 */
  assert_true(clock_sync_best(&cs, 10 * s, &off, &unc));
  assert_int_equal(off, 1000);
  assert_int_equal(unc, 100 + 10000 * CLOCK_DRIFT_PPM); /* 10 s = 10000 ms at 20 ns/ms */
  for (int i = 0; i < CLOCK_SYNC_SAMPLES; i++) /* rtt 100 us, offset 5000, at 10 s */
    clock_sync_add(&cs, 10 * s, 10 * s + 55000, 10 * s + 55000, 10 * s + 100000);
  assert_true(clock_sync_best(&cs, 10 * s + 100000, &off, &unc));
  assert_int_equal(off, 5000);
  assert_int_equal(unc, 50000);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tsc_interpolates),
      cmocka_unit_test(test_tsc_long_span_precision),
      cmocka_unit_test(test_ns_pass_through),
      cmocka_unit_test(test_degenerate_pair_pins_to_batch),
      cmocka_unit_test(test_offset_from_smallest_rtt),
      cmocka_unit_test(test_host_shift_moves_every_time),
      cmocka_unit_test(test_old_sample_ages),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
