/* Unit test: binary COPY rows (siox-server/copybuf.c) byte for byte against
 * PostgreSQL's documented format, and UTF-8 scrubbing (text.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "copybuf.h"
#include "text.h"

static void test_header_row_trailer(void **state) {
  (void)state;
  struct siox_copybuf c;
  siox_copybuf_init(&c);
  siox_copybuf_start(&c);
  assert_int_equal(c.len, 19);
  assert_memory_equal(c.p, "PGCOPY\n\377\r\n\0", 11);
  siox_copybuf_row(&c, 3);
  siox_copybuf_i64(&c, 0x0102030405060708LL);
  siox_copybuf_null(&c);
  siox_copybuf_text(&c, "ab", 2);
  assert_int_equal(siox_copybuf_finish(&c), 0);
  static const uint8_t want[] = {0, 3, 0, 0, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8, 0xff, 0xff, 0xff, 0xff,
                                 0, 0, 0, 2, 'a', 'b', 0xff, 0xff};
  assert_int_equal(c.len, 19 + sizeof want);
  assert_memory_equal(c.p + 19, want, sizeof want);
  siox_copybuf_free(&c);
}

static void test_arrays(void **state) {
  (void)state;
  struct siox_copybuf c;
  siox_copybuf_init(&c);
  siox_copybuf_start(&c);
  size_t at = c.len;
  siox_copybuf_array(&c, SIOX_PG_INT4_OID, 2, 4);
  siox_copybuf_i32(&c, 5);
  siox_copybuf_i32(&c, -1);
  static const uint8_t want[] = {0, 0, 0, 36, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 23, 0, 0, 0, 2, 0, 0, 0, 1,
                                 0, 0, 0, 4, 0, 0, 0, 5, 0, 0, 0, 4, 0xff, 0xff, 0xff, 0xff};
  assert_int_equal(c.len - at, sizeof want);
  assert_memory_equal(c.p + at, want, sizeof want);
  at = c.len;
  siox_copybuf_array(&c, SIOX_PG_FLOAT8_OID, 0, 8); /* empty: no dimension */
  static const uint8_t empty[] = {0, 0, 0, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0xbd};
  assert_int_equal(c.len - at, sizeof empty);
  assert_memory_equal(c.p + at, empty, sizeof empty);
  at = c.len;
  siox_copybuf_f64(&c, 1.0);
  static const uint8_t one[] = {0, 0, 0, 8, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0};
  assert_memory_equal(c.p + at, one, sizeof one);
  siox_copybuf_free(&c);
}

static void test_text_clean(void **state) {
  (void)state;
  char ok[] = "h\xc3\xa9llo \xe2\x82\xac";
  assert_int_equal(siox_text_clean(ok, strlen(ok)), 0);
  char bad[] = "a\xff" "b\xc3" "c\xe0\x80\xaf" "d";
  size_t n = sizeof bad - 1;
  assert_int_equal(siox_text_clean(bad, n), 5);
  assert_memory_equal(bad, "a?b?c???d", n);
  char nul[] = {'x', 0, 'y'};
  assert_int_equal(siox_text_clean(nul, 3), 1);
  assert_memory_equal(nul, "x?y", 3);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_header_row_trailer),
      cmocka_unit_test(test_arrays),
      cmocka_unit_test(test_text_clean),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
