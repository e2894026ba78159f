/*
 * The daemon's hint cache (siox-daemon/hint_cache.c): an answer is served
 * for exactly its TTL; the key tells apart every field of the question
 * (uid, executable, arguments, path, component); the cache stays within
 * its bound by dropping the oldest entry; TTL 0 caches nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "daemon.h"

static struct hint_answer answer(int64_t set_id, const char *key, const char *value) {
  struct hint_answer a;
  memset(&a, 0, sizeof a);
  a.r.status = SIOX_HINTS_FOUND;
  a.r.hint_set_id = set_id;
  a.r.n = 1;
  strcpy(a.r.component, "romio321");
  strcpy(a.hints[0].key, key);
  strcpy(a.hints[0].value, value);
  return a;
}

struct key {
  char *k;
  size_t n;
};

static struct key key_of(uint32_t uid, const char *job, const char *exe, const char *args, const char *path, const char *comp) {
  struct key k;
  assert_int_equal(hint_cache_key(uid, job, exe, args, path, comp, &k.k, &k.n), 0);
  return k;
}

static void test_ttl(void **state) {
  (void)state;
  struct hint_cache c;
  hint_cache_init(&c, 5000, 8);
  struct key k = key_of(1000, "j1", "/bin/app", "app -n 4", "/mnt/out.h5", "romio321");
  struct hint_answer a = answer(42, "romio_ds_write", "disable");
  assert_null(hint_cache_get(&c, k.k, k.n, 0));
  assert_int_equal(hint_cache_put(&c, k.k, k.n, &a, 1000), 0);
  const struct hint_answer *got = hint_cache_get(&c, k.k, k.n, 5999);
  assert_non_null(got);
  assert_int_equal(got->r.hint_set_id, 42);
  assert_string_equal(got->hints[0].value, "disable");
  assert_null(hint_cache_get(&c, k.k, k.n, 6000)); /* put at 1000 + 5000 ms */
  assert_int_equal(c.n, 0);
  free(k.k);
  hint_cache_destroy(&c);
}

static void test_key_fields(void **state) {
  (void)state;
  struct hint_cache c;
  hint_cache_init(&c, 1000, 16);
  struct key base = key_of(1000, "j1", "/bin/app", "app -n 4", "/mnt/out.h5", "romio321");
  struct key other[] = {
      key_of(1001, "j1", "/bin/app", "app -n 4", "/mnt/out.h5", "romio321"),
      key_of(1000, "j2", "/bin/app", "app -n 4", "/mnt/out.h5", "romio321"),
      key_of(1000, "j1", "/bin/app2", "app -n 4", "/mnt/out.h5", "romio321"),
      key_of(1000, "j1", "/bin/app", "app -n 8", "/mnt/out.h5", "romio321"),
      key_of(1000, "j1", "/bin/app", "app -n 4", "/mnt/out2.h5", "romio321"),
      key_of(1000, "j1", "/bin/app", "app -n 4", "/mnt/out.h5", "ompio"),
      /* NUL-separated fields: moving a byte from one field to the next
       * must not give the same key. */
      key_of(1000, "j1", "/bin/ap", "app -n 4", "p/mnt/out.h5", "romio321"),
  };
  struct hint_answer a = answer(7, "cb_nodes", "2");
  hint_cache_put(&c, base.k, base.n, &a, 0);
  for (size_t i = 0; i < sizeof other / sizeof other[0]; i++) {
    assert_null(hint_cache_get(&c, other[i].k, other[i].n, 1));
    free(other[i].k);
  }
  struct key same = key_of(1000, "j1", "/bin/app", "app -n 4", "/mnt/out.h5", "romio321");
  assert_non_null(hint_cache_get(&c, same.k, same.n, 1));
  free(same.k);
  free(base.k);
  hint_cache_destroy(&c);
}

static void test_bound_drops_oldest(void **state) {
  (void)state;
  struct hint_cache c;
  hint_cache_init(&c, 60000, 3);
  struct key k[4];
  char path[32];
  for (int i = 0; i < 4; i++) {
    snprintf(path, sizeof path, "/mnt/f%d", i);
    k[i] = key_of(0, "j1", "/bin/app", "", path, "romio321");
    struct hint_answer a = answer(i + 1, "cb_nodes", "1");
    assert_int_equal(hint_cache_put(&c, k[i].k, k[i].n, &a, i), 0);
  }
  assert_int_equal(c.n, 3);
  assert_null(hint_cache_get(&c, k[0].k, k[0].n, 10));
  for (int i = 1; i < 4; i++) assert_int_equal(hint_cache_get(&c, k[i].k, k[i].n, 10)->r.hint_set_id, i + 1);
  /* A put of a cached key replaces its answer and renews its TTL. */
  struct hint_answer b = answer(99, "cb_nodes", "4");
  hint_cache_put(&c, k[1].k, k[1].n, &b, 50000);
  assert_int_equal(c.n, 3);
  assert_int_equal(hint_cache_get(&c, k[1].k, k[1].n, 100000)->r.hint_set_id, 99);
  assert_null(hint_cache_get(&c, k[2].k, k[2].n, 100000));
  for (int i = 0; i < 4; i++) free(k[i].k);
  hint_cache_destroy(&c);
}

static void test_ttl_zero_caches_nothing(void **state) {
  (void)state;
  struct hint_cache c;
  hint_cache_init(&c, 0, 8);
  struct key k = key_of(0, "j1", "/bin/app", "", "/mnt/f", "romio321");
  struct hint_answer a = answer(1, "cb_nodes", "1");
  assert_int_equal(hint_cache_put(&c, k.k, k.n, &a, 0), 0);
  assert_null(hint_cache_get(&c, k.k, k.n, 0));
  free(k.k);
  hint_cache_destroy(&c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ttl),
      cmocka_unit_test(test_key_fields),
      cmocka_unit_test(test_bound_drops_oldest),
      cmocka_unit_test(test_ttl_zero_caches_nothing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
