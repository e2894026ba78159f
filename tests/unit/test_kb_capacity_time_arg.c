/*
 * The window arguments of `siox capacity` and `siox anomalies`
 * (warehouse/src/time_arg.c): ages, ISO 8601 UTC times, @SECONDS and "now", and
 * the malformed forms that must be refused rather than misread.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "time_arg.h"

#define NOW 1795419467000000000LL /* 2026-11-23T07:37:47Z */
#define S 1000000000LL

static int64_t parse_ok(const char *s) {
  int64_t v = 0;
  if (siox_time_arg(s, NOW, &v) != 0) fail_msg("'%s' refused", s);
  return v;
}

static void ages(void **state) {
  (void)state;
  assert_int_equal(parse_ok("now"), NOW);
  assert_int_equal(parse_ok("90s"), NOW - 90 * S);
  assert_int_equal(parse_ok("15m"), NOW - 900 * S);
  assert_int_equal(parse_ok("2h"), NOW - 7200 * S);
  assert_int_equal(parse_ok("7d"), NOW - 7 * 86400 * S);
  assert_int_equal(parse_ok("0s"), NOW);
}

static void absolute(void **state) {
  (void)state;
  assert_int_equal(parse_ok("2026-11-23T07:37:47Z"), 1795419467 * S);
  assert_int_equal(parse_ok("2026-11-23T07:37:47"), 1795419467 * S);
  assert_int_equal(parse_ok("2026-11-23T07:37"), 1795419420 * S);
  assert_int_equal(parse_ok("2026-11-23 07:37:47"), 1795419467 * S);
  assert_int_equal(parse_ok("2026-11-23"), 1795392000 * S);
  assert_int_equal(parse_ok("@1795419467"), 1795419467 * S);
  assert_int_equal(parse_ok("@0"), 0);
}

static void refused(void **state) {
  (void)state;
  static const char *const bad[] = {"", "h", "-5m", "+5m", "5", "5x", "5mm", "m5", "@", "@-1", "@12a", "@99999999999",
                                    "2026-13-01", "2026-11-23T07:37:47+01:00", "yesterday", "99999999d"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    int64_t v = 42;
    if (siox_time_arg(bad[i], NOW, &v) != -EINVAL) fail_msg("'%s' accepted as %lld", bad[i], (long long)v);
    assert_int_equal(v, 42);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(ages),
      cmocka_unit_test(absolute),
      cmocka_unit_test(refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
