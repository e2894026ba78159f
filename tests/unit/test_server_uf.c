/* Unit test: union-find of descriptor objects (siox-server/uf.c) and the
 * hash map under it (hmap.c): smallest id wins, order does not matter,
 * path compression keeps answers right, deletes keep probe runs intact. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "hmap.h"
#include "uf.h"

static void test_union_smallest_root(void **state) {
  (void)state;
  struct siox_uf u;
  siox_uf_init(&u);
  int64_t loser;
  assert_int_equal(siox_uf_find(&u, 7), 7);
  assert_int_equal(siox_uf_union(&u, 7, 3, &loser), 3);
  assert_int_equal(loser, 7);
  assert_int_equal(siox_uf_union(&u, 9, 7, &loser), 3);
  assert_int_equal(loser, 9);
  assert_int_equal(siox_uf_union(&u, 9, 3, &loser), 3);
  assert_int_equal(loser, 0); /* already one object */
  assert_int_equal(siox_uf_find(&u, 9), 3);
  assert_int_equal(siox_uf_find(&u, 4), 4);
  siox_uf_clear(&u);
}

static void test_union_order_independent(void **state) {
  (void)state;
  struct siox_uf a, b;
  int64_t l;
  siox_uf_init(&a), siox_uf_init(&b);
  for (int64_t i = 2; i <= 100; i++) siox_uf_union(&a, i, i - 1, &l);  /* a chain */
  for (int64_t i = 100; i >= 2; i--) siox_uf_union(&b, i, 100, &l);    /* a star */
  for (int64_t i = 1; i <= 100; i++) {
    assert_int_equal(siox_uf_find(&a, i), 1);
    assert_int_equal(siox_uf_find(&b, i), 2 <= i ? siox_uf_find(&b, 2) : 1);
  }
  assert_int_equal(siox_uf_find(&b, 100), 2);
  siox_uf_clear(&a), siox_uf_clear(&b);
}

static void test_hmap_put_get_del(void **state) {
  (void)state;
  struct siox_hmap m;
  siox_hmap_init(&m);
  for (uint64_t i = 0; i < 5000; i++) assert_int_equal(siox_hmap_put(&m, &i, sizeof i, i * 2, i * 3), 0);
  for (uint64_t i = 0; i < 5000; i += 2) siox_hmap_del(&m, &i, sizeof i);
  assert_int_equal(m.n, 2500);
  for (uint64_t i = 0; i < 5000; i++) {
    uint64_t *v = siox_hmap_get(&m, &i, sizeof i);
    if (i % 2 == 0) {
      assert_null(v);
    } else {
      assert_non_null(v);
      assert_int_equal(v[0], i * 2);
      assert_int_equal(v[1], i * 3);
    }
  }
  assert_null(siox_hmap_get(&m, "abc", 3));
  siox_hmap_clear(&m);
  assert_null(siox_hmap_get(&m, "abc", 3));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_union_smallest_root),
      cmocka_unit_test(test_union_order_independent),
      cmocka_unit_test(test_hmap_put_get_del),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
