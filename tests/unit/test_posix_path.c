/* POSIX layer: posix/path values are absolute and lexically normalised
 * (instrumentation/README.md), and gfid strings parse to 16 raw bytes. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "path.h"

static void expect_path(const char *base, const char *in, const char *want) {
  char out[256];
  int n = sxp_path_normalise(base, in, out, sizeof out);
  assert_int_equal(n, (int)strlen(want));
  assert_string_equal(out, want);
}

static void test_absolute_kept(void **state) {
  (void)state;
  expect_path(NULL, "/a/b/c", "/a/b/c");
  expect_path("/ignored", "/x", "/x");
  expect_path(NULL, "/", "/");
}

static void test_slashes_and_dots_folded(void **state) {
  (void)state;
  expect_path(NULL, "//a///b/./c/", "/a/b/c");
  expect_path(NULL, "/a/b/../c", "/a/c");
  expect_path(NULL, "/a/b/../../..", "/");
  expect_path(NULL, "/../..//x/.", "/x");
  expect_path(NULL, "/a/..b/.c", "/a/..b/.c"); /* names that only start with dots */
}

static void test_relative_joined_to_base(void **state) {
  (void)state;
  expect_path("/home/u", "f.dat", "/home/u/f.dat");
  expect_path("/home/u/", "./d/../f", "/home/u/f");
  expect_path("/home/u", "../../../etc/x", "/etc/x");
  expect_path("/", "a", "/a");
  expect_path("/home/u", ".", "/home/u");
}

static void test_bad_input_rejected(void **state) {
  (void)state;
  char out[16];
  assert_int_equal(sxp_path_normalise("/b", "", out, sizeof out), -EINVAL);
  assert_int_equal(sxp_path_normalise(NULL, "rel", out, sizeof out), -EINVAL);
  assert_int_equal(sxp_path_normalise("rel/base", "x", out, sizeof out), -EINVAL);
  assert_int_equal(sxp_path_normalise(NULL, "/0123456789/abcdef", out, sizeof out), -ENAMETOOLONG);
  /* exactly fits: 15 characters + NUL */
  assert_int_equal(sxp_path_normalise(NULL, "/0123456789abcd", out, sizeof out), 15);
  assert_int_equal(sxp_path_normalise(NULL, "/0123456789abcde", out, sizeof out), -ENAMETOOLONG);
}

static void test_gfid_parsed(void **state) {
  (void)state;
  const char *s = "0e6a1c3b-7f2d-4c11-9a00-FFeeddccbbaa";
  uint8_t g[16];
  const uint8_t want[16] = {0x0e, 0x6a, 0x1c, 0x3b, 0x7f, 0x2d, 0x4c, 0x11,
                            0x9a, 0x00, 0xff, 0xee, 0xdd, 0xcc, 0xbb, 0xaa};
  assert_int_equal(sxp_gfid_parse(s, strlen(s), g), 0);
  assert_memory_equal(g, want, 16);
  assert_int_equal(sxp_gfid_parse(s, strlen(s) + 1, g), 0); /* with its NUL */
}

static void test_gfid_rejected(void **state) {
  (void)state;
  uint8_t g[16];
  const char *bad[] = {"0e6a1c3b-7f2d-4c11-9a00-ffeeddccbba", "0e6a1c3b7f2d-4c11-9a00-ffeeddccbbaa0",
                       "0e6a1c3b-7f2d-4c11-9a00-ffeeddccbbax", "0e6a1c3b-7f2d-4c11-9a00-ffeeddccbbaa00"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_int_equal(sxp_gfid_parse(bad[i], strlen(bad[i]), g), -EINVAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_absolute_kept),          cmocka_unit_test(test_slashes_and_dots_folded),
      cmocka_unit_test(test_relative_joined_to_base), cmocka_unit_test(test_bad_input_rejected),
      cmocka_unit_test(test_gfid_parsed),            cmocka_unit_test(test_gfid_rejected),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
