/*
 * siox-daemon record walker and frame-header checks: every kind of
 * malformed client input is rejected with a reason, a valid stream of every
 * record type is accepted and visited in order.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>
#include <siox/siox_ontology.h>

#include "cw_synth.h"
#include "daemon.h"

static int count_visit(void *ctx, const struct cw_rec *r) {
  int *types = ctx;
  types[++types[0]] = r->type;
  return 0;
}

/* One record of each type, built by the same helpers the bench uses plus
 * hand-built edge, target, node attribute and descriptor records. */
static void valid_stream(struct synth_buf *b) {
  struct siox_cw_attr at[2] = {{SIOX_ATTR_IO_OFFSET, SIOX_VT_U64, {.u64 = 4096}},
                               {SIOX_ATTR_IO_BYTES, SIOX_VT_U64, {.u64 = 4096}}};
  synth_node(b, 1, "host1", "POSIX", "");
  struct siox_cw_rec_hdr *h = synth_reserve(b, 16);
  *h = (struct siox_cw_rec_hdr){SIOX_REC_EDGE, 2, 1};
  synth_type(b, 7, 1, "write");
  h = synth_reserve(b, 24);
  *h = (struct siox_cw_rec_hdr){SIOX_REC_TARGET, 3, 9};
  struct siox_cw_target *t = (void *)(h + 1);
  t->hwid_len = 3;
  memcpy(t + 1, "srv", 3);
  h = synth_reserve(b, 24);
  *h = (struct siox_cw_rec_hdr){SIOX_REC_NODE_ATTR, 3, 1};
  *(struct siox_cw_attr *)(h + 1) = (struct siox_cw_attr){SIOX_ATTR_NODE_CAPACITY, SIOX_VT_U64, {.u64 = 1}};
  synth_activity(b, 7, 1, 0, 100, 200, 0, 2, at);
  synth_attr_str(b, SIOX_ATTR_POSIX_PATH, 1, "/tmp/x");
  h = synth_reserve(b, 8 + 32 + 16 + 8);
  *h = (struct siox_cw_rec_hdr){SIOX_REC_DESC, 8, SIOX_DESC_CREATE};
  struct siox_cw_desc *d = (void *)(h + 1);
  d->ndesc = 1;
  struct siox_cw_desc_value *v = (void *)(d + 1);
  *v = (struct siox_cw_desc_value){SIOX_ATTR_POSIX_PATH, 6, 0};
  memcpy(v + 1, "/tmp/x", 6);
}

static void test_accepts_valid_stream(void **state) {
  (void)state;
  struct synth_buf b = {0};
  valid_stream(&b);
  int types[16] = {0};
  const char *why = NULL;
  assert_int_equal(cw_walk(b.p, b.len, count_visit, types, &why), 0);
  int want[] = {SIOX_REC_NODE, SIOX_REC_EDGE, SIOX_REC_TYPE, SIOX_REC_TARGET, SIOX_REC_NODE_ATTR, SIOX_REC_ACTIVITY,
                SIOX_REC_ATTR_STR, SIOX_REC_DESC};
  assert_int_equal(types[0], 8);
  for (int i = 0; i < 8; i++)
    assert_int_equal(types[i + 1], want[i]);
  synth_buf_free(&b);
}

/* Builds one activity record and returns it in b. */
static void one_activity(struct synth_buf *b, uint32_t nattr) {
  struct siox_cw_attr at[SIOX_CW_MAX_ATTRS] = {{SIOX_ATTR_IO_BYTES, SIOX_VT_U64, {.u64 = 1}}};
  synth_activity(b, 1, 1, 0, 1, 2, 0, nattr, at);
}

static void expect_reject(const uint8_t *p, size_t n, const char *needle) {
  const char *why = NULL;
  assert_int_equal(cw_walk(p, n, NULL, NULL, &why), -EBADMSG);
  assert_non_null(why);
  assert_non_null(strstr(why, needle));
}

static void test_rejects_truncated_header(void **state) {
  (void)state;
  struct synth_buf b = {0};
  one_activity(&b, 1);
  expect_reject(b.p, 4, "multiple of 8");
  synth_buf_free(&b);
}

static void test_rejects_zero_words(void **state) {
  (void)state;
  struct synth_buf b = {0};
  one_activity(&b, 1);
  ((struct siox_cw_rec_hdr *)b.p)->words = 0;
  expect_reject(b.p, b.len, "zero words");
  synth_buf_free(&b);
}

static void test_rejects_words_past_end(void **state) {
  (void)state;
  struct synth_buf b = {0};
  one_activity(&b, 1);
  ((struct siox_cw_rec_hdr *)b.p)->words += 1;
  expect_reject(b.p, b.len, "past end of batch");
  /* The same record cut short by the frame. */
  ((struct siox_cw_rec_hdr *)b.p)->words -= 1;
  expect_reject(b.p, b.len - 8, "past end of batch");
  synth_buf_free(&b);
}

static void test_rejects_fixed_part_short(void **state) {
  (void)state;
  struct synth_buf b = {0};
  one_activity(&b, 0);
  ((struct siox_cw_rec_hdr *)b.p)->words = 2; /* header + 8 bytes of 40 */
  expect_reject(b.p, 16, "too short");
  synth_buf_free(&b);
}

static void test_rejects_string_past_end(void **state) {
  (void)state;
  struct synth_buf b = {0};
  synth_type(&b, 1, 1, "write");
  struct siox_cw_type *t = (void *)(b.p + 8);
  t->name_len = 200; /* record holds 8 bytes of name */
  expect_reject(b.p, b.len, "past record end");
  t->name_len = SIOX_CW_MAX_STR + 1;
  expect_reject(b.p, b.len, "above bound");
  synth_buf_free(&b);
  synth_attr_str(&b, SIOX_ATTR_POSIX_PATH, 1, "/a/b");
  ((struct siox_cw_attr_str *)(b.p + 8))->len = 9;
  expect_reject(b.p, b.len, "past record end");
  synth_buf_free(&b);
}

static void test_rejects_nattr_above_max(void **state) {
  (void)state;
  struct synth_buf b = {0};
  one_activity(&b, SIOX_CW_MAX_ATTRS);
  const char *why;
  assert_int_equal(cw_walk(b.p, b.len, NULL, NULL, &why), 0);
  ((struct siox_cw_activity *)(b.p + 8))->nattr = SIOX_CW_MAX_ATTRS + 1;
  expect_reject(b.p, b.len, "nattr");
  synth_buf_free(&b);
  one_activity(&b, 2);
  ((struct siox_cw_activity *)(b.p + 8))->nattr = 3; /* fits the bound, not the record */
  expect_reject(b.p, b.len, "past record end");
  synth_buf_free(&b);
}

static void test_rejects_unknown_record_type(void **state) {
  (void)state;
  struct synth_buf b = {0};
  one_activity(&b, 1);
  ((struct siox_cw_rec_hdr *)b.p)->type = 99;
  expect_reject(b.p, b.len, "unknown record type");
  synth_buf_free(&b);
}

static void test_rejects_bad_values(void **state) {
  (void)state;
  struct synth_buf b = {0};
  one_activity(&b, 1);
  ((struct siox_cw_attr *)(b.p + 8 + sizeof(struct siox_cw_activity)))->vtype = SIOX_VT_STR;
  expect_reject(b.p, b.len, "not numeric");
  synth_buf_free(&b);
}

/* A bad record after good ones is still found, and the visitor has seen
 * only the good ones before the walk fails. */
static void test_rejects_late_violation(void **state) {
  (void)state;
  struct synth_buf b = {0};
  one_activity(&b, 1);
  one_activity(&b, 1);
  size_t second = b.len / 2;
  ((struct siox_cw_rec_hdr *)(b.p + second))->words = 0;
  int types[8] = {0};
  const char *why;
  assert_int_equal(cw_walk(b.p, b.len, count_visit, types, &why), -EBADMSG);
  assert_int_equal(types[0], 1);
  synth_buf_free(&b);
}

static void test_frame_header_checks(void **state) {
  (void)state;
  const char *why;
  struct siox_cw_frame_hdr ok = {SIOX_CW_MAGIC, SIOX_CW_VERSION, SIOX_CW_BATCH, 64, 0};
  assert_int_equal(cw_frame_check(&ok, &why), 0);
  struct siox_cw_frame_hdr h = ok;
  h.magic ^= 1;
  assert_int_equal(cw_frame_check(&h, &why), -EBADMSG);
  assert_non_null(strstr(why, "magic"));
  h = ok;
  h.version = 2;
  assert_int_equal(cw_frame_check(&h, &why), -EBADMSG);
  assert_non_null(strstr(why, "version"));
  h = ok;
  h.type = 0;
  assert_int_equal(cw_frame_check(&h, &why), -EBADMSG);
  h = ok;
  h.length = SIOX_CW_MAX_PAYLOAD + 1;
  assert_int_equal(cw_frame_check(&h, &why), -EBADMSG);
  assert_non_null(strstr(why, "length"));
  h.length = SIOX_CW_MAX_PAYLOAD;
  assert_int_equal(cw_frame_check(&h, &why), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_accepts_valid_stream),    cmocka_unit_test(test_rejects_truncated_header),
      cmocka_unit_test(test_rejects_zero_words),      cmocka_unit_test(test_rejects_words_past_end),
      cmocka_unit_test(test_rejects_fixed_part_short), cmocka_unit_test(test_rejects_string_past_end),
      cmocka_unit_test(test_rejects_nattr_above_max), cmocka_unit_test(test_rejects_unknown_record_type),
      cmocka_unit_test(test_rejects_bad_values),      cmocka_unit_test(test_rejects_late_violation),
      cmocka_unit_test(test_frame_header_checks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
