/*
 * The block container: builder slots come back zeroed and keep earlier
 * contents when arrays grow; the string arena copies exactly (NULs included),
 * serves strings larger than a chunk, and after a reset reuses its memory
 * instead of allocating again.
 */
#include <stdio.h>
#include <stdlib.h>

#include "test_protocol_sample.h"

static void test_slots_zeroed_and_kept(void **state) {
  (void)state;
  struct siox_block b;
  siox_block_init(&b);
  for (uint32_t i = 0; i < 1000; i++) {
    struct siox_block_activity *a = siox_block_add_activity(&b);
    assert_non_null(a);
    assert_int_equal(a->aid + a->parent + a->nattr + (uint64_t)a->start_ns, 0);
    a->aid = i;
    struct siox_block_descriptor *d = siox_block_add_descriptor(&b);
    assert_int_equal(d->nvalues + d->values[1].len, 0);
    d->aid = i;
  }
  assert_int_equal(b.n_activities, 1000);
  assert_true(b.cap_activities >= 1000 && b.cap_activities < 4000); /* geometric, not per add */
  for (uint32_t i = 0; i < 1000; i++) assert_int_equal(b.activities[i].aid, i), assert_int_equal(b.descriptors[i].aid, i);
  siox_block_reset(&b);
  assert_int_equal(b.n_activities + b.n_descriptors, 0);
  assert_true(b.cap_activities >= 1000); /* capacity kept for the next batch */
  siox_block_free(&b);
  assert_null(b.activities);
}

static void test_add_attrs_slices(void **state) {
  (void)state;
  struct siox_block b;
  siox_block_init(&b);
  struct siox_block_activity *a = siox_block_add_activity(&b);
  assert_non_null(siox_block_add_attrs(&b, a, 0)); /* valid pointer even for none */
  assert_int_equal(a->nattr, 0);
  for (uint32_t i = 0; i < 100; i++) {
    a = siox_block_add_activity(&b);
    struct siox_value *v = siox_block_add_attrs(&b, a, 3);
    assert_non_null(v);
    assert_int_equal(a->attr_first, 3 * i);
    assert_int_equal(a->nattr, 3);
    assert_int_equal(v[0].attr + v[2].v.u64, 0);
    v[2].v.u64 = i;
  }
  assert_int_equal(b.n_attrs, 300);
  assert_int_equal(b.attrs[b.activities[50].attr_first + 2].v.u64, 49);
  siox_block_free(&b);
}

static void test_strdup_exact(void **state) {
  (void)state;
  struct siox_block b;
  siox_block_init(&b);
  char *e = siox_block_strdup(&b, NULL, 0);
  assert_non_null(e);
  assert_string_equal(e, "");
  char *s = siox_block_strdup(&b, "a\0b\0c", 5);
  assert_memory_equal(s, "a\0b\0c", 6); /* NUL appended after len */
  struct siox_value v = {0};
  assert_int_equal(siox_block_set_bytes(&b, &v, "xyz", 2), 0);
  assert_int_equal(v.len, 2);
  assert_string_equal(v.bytes, "xy");
  assert_string_equal(e, ""); /* earlier copies untouched */
  siox_block_free(&b);
}

/* Strings spanning many chunks and one larger than a chunk all survive, and
 * after a reset the same sequence of copies lands at the same addresses:
 * the arena is reused, not reallocated. */
static void test_arena_reuse(void **state) {
  (void)state;
  enum { N = 5000 };
  static char *first[N + 1];
  struct siox_block b;
  char big[200000], tmp[64];
  memset(big, 'B', sizeof big);
  siox_block_init(&b);
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < N; i++) {
      int n = snprintf(tmp, sizeof tmp, "string-%d-%0*d", i, i % 40, 0);
      char *p = siox_block_strdup(&b, tmp, (size_t)n);
      assert_non_null(p);
      if (round == 0) first[i] = p;
      assert_ptr_equal(p, first[i]);
    }
    char *p = siox_block_strdup(&b, big, sizeof big);
    assert_non_null(p);
    if (round == 0) first[N] = p;
    assert_ptr_equal(p, first[N]);
    for (int i = 0; i < N; i++) { /* nothing overwritten by later copies */
      int n = snprintf(tmp, sizeof tmp, "string-%d-%0*d", i, i % 40, 0);
      assert_memory_equal(first[i], tmp, (size_t)n + 1);
    }
    assert_memory_equal(p, big, sizeof big);
    siox_block_reset(&b);
  }
  siox_block_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_slots_zeroed_and_kept),
      cmocka_unit_test(test_add_attrs_slices),
      cmocka_unit_test(test_strdup_exact),
      cmocka_unit_test(test_arena_reuse),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
