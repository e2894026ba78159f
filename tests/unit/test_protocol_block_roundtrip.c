/*
 * siox_block_encode() then siox_block_decode() gives back the same block:
 * every record kind, extreme integers, negative deltas, floats, empty strings
 * and bytes with NULs; also the empty block and decoding into a reused block.
 */
#include <stdlib.h>

#include "test_protocol_sample.h"

static void roundtrip(const struct siox_block *in, struct siox_block *out) {
  uint8_t *z = NULL;
  size_t zlen = 0, raw = 0;
  const char *why = "unset";
  assert_int_equal(siox_block_encode(in, &z, &zlen, &raw), 0);
  assert_non_null(z);
  assert_true(zlen > 0);
  assert_int_equal(siox_block_decode(z, zlen, raw, out, &why), 0);
  assert_null(why);
  free(z);
}

static void test_every_record_kind(void **state) {
  (void)state;
  struct siox_block a, b;
  siox_block_init(&a);
  siox_block_init(&b);
  sample_block(&a);
  roundtrip(&a, &b);
  assert_blocks_same(&a, &b);
  /* decoded strings own a NUL terminator, and STR/BYTES come from the ontology */
  assert_int_equal(b.string_attrs[1].value.vtype, SIOX_VT_BYTES);
  assert_int_equal(b.string_attrs[0].value.vtype, SIOX_VT_STR);
  assert_string_equal(b.processes[2].job, "");
  siox_block_free(&a);
  siox_block_free(&b);
}

static void test_empty_block(void **state) {
  (void)state;
  struct siox_block a, b;
  siox_block_init(&a);
  siox_block_init(&b);
  sample_block(&b); /* decode must reset what was there */
  roundtrip(&a, &b);
  assert_blocks_same(&a, &b);
  assert_int_equal(b.n_activities, 0);
  siox_block_free(&a);
  siox_block_free(&b);
}

/* Decoding twice into one block gives the same result: reset really empties. */
static void test_reused_block(void **state) {
  (void)state;
  struct siox_block a, b;
  siox_block_init(&a);
  siox_block_init(&b);
  sample_block(&a);
  roundtrip(&a, &b);
  roundtrip(&a, &b);
  assert_blocks_same(&a, &b);
  siox_block_free(&a);
  siox_block_free(&b);
}

/* A self-parent cannot be delta-coded (aid - parent == 0 means root); the
 * header documents that it travels as a root. */
static void test_self_parent_becomes_root(void **state) {
  (void)state;
  struct siox_block a, b;
  siox_block_init(&a);
  siox_block_init(&b);
  siox_block_add_process(&a);
  struct siox_block_activity *x = siox_block_add_activity(&a);
  x->aid = x->parent = 77;
  roundtrip(&a, &b);
  assert_int_equal(b.activities[0].aid, 77);
  assert_int_equal(b.activities[0].parent, 0);
  siox_block_free(&a);
  siox_block_free(&b);
}

/* The attribute delta state is per attribute id: interleaving ids and types
 * must not leak one id's previous value into another. */
static void test_attr_delta_per_id(void **state) {
  (void)state;
  struct siox_block a, b;
  siox_block_init(&a);
  siox_block_init(&b);
  siox_block_add_process(&a);
  for (uint32_t i = 0; i < 200; i++) {
    struct siox_block_activity *x = siox_block_add_activity(&a);
    struct siox_value *v = siox_block_add_attrs(&a, x, 3);
    v[0].attr = 1000 + i % 97, v[0].vtype = SIOX_VT_U64, v[0].v.u64 = (uint64_t)i * 0x9e3779b97f4a7c15ull;
    v[1].attr = 1000 + i % 89, v[1].vtype = SIOX_VT_I64, v[1].v.i64 = -(int64_t)i;
    v[2].attr = 1000 + i % 89, v[2].vtype = SIOX_VT_F64, v[2].v.f64 = i / 3.0;
  }
  roundtrip(&a, &b);
  assert_blocks_same(&a, &b);
  siox_block_free(&a);
  siox_block_free(&b);
}

/* The densest valid block in memory terms (empty Process messages, 2 bytes
 * each on the wire) must stay inside the decoder's unpack memory budget. */
static void test_dense_block_within_budget(void **state) {
  (void)state;
  struct siox_block a, b;
  siox_block_init(&a);
  siox_block_init(&b);
  for (int i = 0; i < 500000; i++) assert_non_null(siox_block_add_process(&a));
  roundtrip(&a, &b);
  assert_int_equal(b.n_processes, 500000);
  siox_block_free(&a);
  siox_block_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_record_kind), cmocka_unit_test(test_empty_block),
      cmocka_unit_test(test_reused_block),      cmocka_unit_test(test_self_parent_becomes_root),
      cmocka_unit_test(test_attr_delta_per_id), cmocka_unit_test(test_dense_block_within_budget),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
