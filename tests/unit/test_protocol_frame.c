/*
 * The 12-byte frame header: network byte order on the wire, and every
 * rejection (magic, version, type, length) with its errno and reason.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "siox_frame.h"

static void test_encode_is_big_endian(void **state) {
  (void)state;
  uint8_t h[SIOX_FRAME_HDR_LEN];
  siox_frame_hdr_encode(h, SIOX_FRAME_BATCH, 0x01020304u);
  const uint8_t want[] = {'S', 'I', 'O', 'X', 0, 1, 0, 3, 1, 2, 3, 4};
  assert_memory_equal(h, want, sizeof want);
}

static void test_roundtrip_every_type(void **state) {
  (void)state;
  for (uint16_t t = SIOX_FRAME_HELLO; t <= SIOX_FRAME_TYPE_LAST; t++) {
    uint8_t h[SIOX_FRAME_HDR_LEN];
    struct siox_frame_hdr hdr;
    const char *why = "unset";
    siox_frame_hdr_encode(h, t, SIOX_FRAME_MAX_PAYLOAD);
    assert_int_equal(siox_frame_hdr_decode(h, &hdr, &why), 0);
    assert_null(why);
    assert_int_equal(hdr.magic, SIOX_FRAME_MAGIC);
    assert_int_equal(hdr.version, SIOX_FRAME_VERSION);
    assert_int_equal(hdr.type, t);
    assert_int_equal(hdr.length, SIOX_FRAME_MAX_PAYLOAD);
  }
}

static void expect_reject(const uint8_t h[SIOX_FRAME_HDR_LEN], int err) {
  struct siox_frame_hdr hdr;
  const char *why = NULL;
  assert_int_equal(siox_frame_hdr_decode(h, &hdr, &why), err);
  assert_non_null(why);
  assert_true(strlen(why) > 0);
  assert_int_equal(siox_frame_hdr_decode(h, &hdr, NULL), err); /* why is optional */
}

static void test_rejects(void **state) {
  (void)state;
  uint8_t h[SIOX_FRAME_HDR_LEN];
  siox_frame_hdr_encode(h, SIOX_FRAME_PING, 8);
  h[0] = 'X';
  expect_reject(h, -EPROTO); /* bad magic */
  siox_frame_hdr_encode(h, SIOX_FRAME_PING, 8);
  h[5] = 2;
  expect_reject(h, -EPROTONOSUPPORT);
  siox_frame_hdr_encode(h, 0, 8);
  expect_reject(h, -EPROTO);
  siox_frame_hdr_encode(h, SIOX_FRAME_TYPE_LAST + 1, 8);
  expect_reject(h, -EPROTO);
  siox_frame_hdr_encode(h, 0xffff, 8);
  expect_reject(h, -EPROTO);
  siox_frame_hdr_encode(h, SIOX_FRAME_BATCH, SIOX_FRAME_MAX_PAYLOAD + 1);
  expect_reject(h, -EMSGSIZE);
  siox_frame_hdr_encode(h, SIOX_FRAME_BATCH, UINT32_MAX);
  expect_reject(h, -EMSGSIZE);
}

/* The parsed fields are filled even on rejection, for the caller's log. */
static void test_fields_filled_on_error(void **state) {
  (void)state;
  uint8_t h[SIOX_FRAME_HDR_LEN];
  struct siox_frame_hdr hdr;
  siox_frame_hdr_encode(h, 42, 7);
  assert_int_equal(siox_frame_hdr_decode(h, &hdr, NULL), -EPROTO);
  assert_int_equal(hdr.type, 42);
  assert_int_equal(hdr.length, 7);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_encode_is_big_endian),
      cmocka_unit_test(test_roundtrip_every_type),
      cmocka_unit_test(test_rejects),
      cmocka_unit_test(test_fields_filled_on_error),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
