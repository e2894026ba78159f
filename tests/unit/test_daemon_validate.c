/*
 * siox-daemon validation (validate.c): each rule by which siox-server
 * refuses a whole batch refuses the one client record here, and the records
 * that pass are exactly those the server accepts. Registrations (nodes,
 * types, targets) are per client: another client's do not count, and a
 * refused registration (a type on an unknown node) is not recorded. The
 * batcher drops a refused record alone and counts it for its client.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>
#include <siox/siox_ontology.h>

#include "cw_synth.h"
#include "daemon.h"

static const char *node(struct batcher_slot *s, uint32_t unid) {
  struct siox_cw_node f = {0};
  struct cw_rec r = {.type = SIOX_REC_NODE, .a = unid, .fixed = &f};
  return validate_record(s, &r);
}

static const char *type(struct batcher_slot *s, uint32_t id, uint32_t unid) {
  struct siox_cw_type f = {unid, 0};
  struct cw_rec r = {.type = SIOX_REC_TYPE, .a = id, .fixed = &f};
  return validate_record(s, &r);
}

static const char *activity(struct batcher_slot *s, uint32_t type_id, uint64_t aid, uint64_t parent, uint32_t attr,
                            uint32_t vtype) {
  struct siox_cw_activity f = {aid, parent, 1, 2, 0, 1};
  struct siox_cw_attr at = {attr, vtype, {.u64 = 1}};
  struct cw_rec r = {.type = SIOX_REC_ACTIVITY, .a = type_id, .fixed = &f, .attrs = &at, .nattr = 1};
  return validate_record(s, &r);
}

static const char *desc(struct batcher_slot *s, uint32_t kind, uint64_t aid, uint32_t target, uint32_t attr) {
  struct siox_cw_desc f = {aid, target, kind == SIOX_DESC_MAP ? 2u : 1u, 0, 0};
  struct siox_cw_desc_value v = {attr, 0, 3};
  struct cw_rec r = {.type = SIOX_REC_DESC, .a = kind, .fixed = &f, .dv = {&v, &v}};
  return validate_record(s, &r);
}

static void test_registry_rules(void **state) {
  (void)state;
  struct batcher_slot a = {0}, b = {0};
  assert_non_null(activity(&a, 1, 1, 0, SIOX_ATTR_IO_BYTES, SIOX_VT_U64)); /* type not yet registered */
  assert_non_null(type(&a, 1, 1));                                          /* node not yet registered */
  assert_null(node(&a, 1));
  assert_non_null(activity(&a, 1, 1, 0, SIOX_ATTR_IO_BYTES, SIOX_VT_U64)); /* the refused type stays unknown */
  assert_null(type(&a, 1, 1));
  assert_null(activity(&a, 1, 1, 0, SIOX_ATTR_IO_BYTES, SIOX_VT_U64));
  assert_non_null(activity(&b, 1, 1, 0, SIOX_ATTR_IO_BYTES, SIOX_VT_U64)); /* another client's type */

  struct siox_cw_edge e = {2, 0};
  struct cw_rec edge = {.type = SIOX_REC_EDGE, .a = 1, .fixed = &e};
  assert_non_null(validate_record(&a, &edge));
  assert_null(node(&a, 2));
  assert_null(validate_record(&a, &edge));

  struct siox_cw_attr na = {SIOX_ATTR_NODE_CAPACITY, SIOX_VT_U64, {.u64 = 5}};
  struct cw_rec nattr = {.type = SIOX_REC_NODE_ATTR, .a = 3, .fixed = &na};
  assert_non_null(validate_record(&a, &nattr)); /* node 3 unknown */
  nattr.a = 2;
  assert_null(validate_record(&a, &nattr));

  assert_null(desc(&a, SIOX_DESC_SEND, 1, 0, SIOX_ATTR_TEST_HANDLE)); /* target 0: any receiver */
  assert_non_null(desc(&a, SIOX_DESC_SEND, 1, 4, SIOX_ATTR_TEST_HANDLE));
  struct siox_cw_target t = {0, 0, 0};
  struct cw_rec target = {.type = SIOX_REC_TARGET, .a = 4, .fixed = &t};
  assert_null(validate_record(&a, &target));
  assert_null(desc(&a, SIOX_DESC_SEND, 1, 4, SIOX_ATTR_TEST_HANDLE));
  validate_free(&a);
  validate_free(&b);
}

static void test_content_rules(void **state) {
  (void)state;
  struct batcher_slot a = {0};
  assert_null(node(&a, 1));
  assert_null(type(&a, 1, 1));
  assert_null(activity(&a, 1, 0xffffffffu, 0xfffffffeu, SIOX_ATTR_IO_BYTES, SIOX_VT_U64));
  assert_non_null(activity(&a, 1, 1ull << 32, 0, SIOX_ATTR_IO_BYTES, SIOX_VT_U64));
  assert_non_null(activity(&a, 1, 5, 1ull << 32, SIOX_ATTR_IO_BYTES, SIOX_VT_U64));
  assert_non_null(activity(&a, 1, 5, 0, 9999, SIOX_VT_U64));
  assert_non_null(activity(&a, 1, 5, 0, 0, SIOX_VT_U64));

  struct siox_cw_attr_str s = {1, 0, 0};
  struct cw_rec str = {.type = SIOX_REC_ATTR_STR, .a = SIOX_ATTR_HDF5_NAME, .fixed = &s};
  assert_null(validate_record(&a, &str));
  str.a = 9999;
  assert_non_null(validate_record(&a, &str));

  assert_null(desc(&a, SIOX_DESC_CREATE, 0, 1, SIOX_ATTR_POSIX_FD));
  assert_null(desc(&a, SIOX_DESC_MAP, 0, 1, SIOX_ATTR_POSIX_PATH));
  assert_non_null(desc(&a, SIOX_DESC_CREATE, 0, 1, SIOX_ATTR_IO_BYTES)); /* not a descriptor type */
  assert_non_null(desc(&a, SIOX_DESC_CREATE, 0, 1, 9999));
  assert_non_null(desc(&a, SIOX_DESC_RECEIVE, 0, 1, SIOX_ATTR_TEST_HANDLE)); /* receive without an activity */
  validate_free(&a);
}

/* Through the batcher: the bad record goes, the rest of the frame stays. */
static void test_batcher_drops_alone(void **state) {
  (void)state;
  struct batcher bt;
  batcher_init(&bt);
  struct client_ident who = {100, 1000, 0xa, "h", "/bin/x", "x", ""};
  struct batcher_slot slot = {0};
  struct daemon_counters ctr = {0};
  struct clock_conv cc;
  clock_conv_init(&cc, 0, 0, 0, 0, 0);
  struct synth_buf r = {0};
  struct siox_cw_attr at = {SIOX_ATTR_IO_BYTES, SIOX_VT_U64, {.u64 = 1}};
  synth_node(&r, 1, "h", "POSIX", "");
  synth_type(&r, 1, 1, "write");
  synth_activity(&r, 1, 1, 0, 10, 20, 0, 1, &at);
  synth_activity(&r, 1, 1ull << 32, 0, 10, 20, 0, 1, &at);
  synth_activity(&r, 2, 3, 0, 10, 20, 0, 1, &at);
  synth_activity(&r, 1, 4, 0, 10, 20, 0, 1, &at);
  assert_int_equal(batcher_add_records(&bt, &slot, &who, &cc, r.p, r.len, &ctr), 0);
  assert_int_equal(bt.block.n_activities, 2);
  assert_int_equal(bt.block.activities[0].aid, 1);
  assert_int_equal(bt.block.activities[1].aid, 4);
  assert_int_equal(bt.block.n_types, 1);
  assert_int_equal(slot.dropped_validation, 2);
  assert_int_equal(ctr.activities_dropped_validation, 2);
  synth_buf_free(&r);
  validate_free(&slot);
  batcher_destroy(&bt);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_registry_rules),
      cmocka_unit_test(test_content_rules),
      cmocka_unit_test(test_batcher_drops_alone),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
