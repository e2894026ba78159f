/* blame.c: when sizes differ, times are compared per byte. */
#include "test_cli_tree.h"

#define SAMPLE(aid, node, hw, ns, b) {aid, node, hw, "", ns, b}

static const struct siox_blame_sample small_fast_peers[] = {
    SAMPLE(100, 10, "dev0", 1 * MS, MIB), SAMPLE(101, 10, "dev0", 1 * MS, MIB),
    SAMPLE(102, 12, "dev2", 1 * MS, MIB), SAMPLE(103, 12, "dev2", 1 * MS, MIB),
};

static void big_write_is_not_slow(void **state) {
  (void)state;
  /* 8 ms for 8 MiB vs 1 ms per 1 MiB: 8x in time, the same per byte. */
  struct siox_tree *t = io_chain("dev1", 11, 8 * MS, 8 * MIB);
  struct siox_blame b;
  assert_int_equal(siox_blame_walk(t, &SIOX_BLAME_RULE_DEFAULT, &b), 0);
  assert_int_equal(siox_blame_judge(&b, small_fast_peers, 4), 0);
  assert_true(b.per_byte);
  assert_true(b.ratio > 0.99 && b.ratio < 1.01);
  assert_int_equal(b.verdict, SIOX_VERDICT_NORMAL);
  siox_blame_release(&b);
  siox_tree_destroy(t);
}

static void small_write_is_slow(void **state) {
  (void)state;
  /* 0.5 ms for 64 KiB (8 ms/MiB) vs peers' 1 ms/MiB: faster in time, 8x per byte. */
  struct siox_tree *t = io_chain("dev1", 11, MS / 2, 64 * 1024);
  struct siox_blame b;
  assert_int_equal(siox_blame_walk(t, &SIOX_BLAME_RULE_DEFAULT, &b), 0);
  assert_int_equal(siox_blame_judge(&b, small_fast_peers, 4), 0);
  assert_true(b.ratio > 7.99 && b.ratio < 8.01);
  assert_int_equal(b.verdict, SIOX_VERDICT_CULPRIT);
  siox_blame_release(&b);
  siox_tree_destroy(t);
}

static void peers_without_sizes(void **state) {
  (void)state;
  struct siox_tree *t = io_chain("dev1", 11, 8 * MS, 8 * MIB);
  const struct siox_blame_sample mixed[] = {
      SAMPLE(100, 10, "dev0", 1 * MS, MIB), SAMPLE(101, 10, "dev0", 1 * MS, MIB),
      SAMPLE(102, 12, "dev2", 1 * MS, MIB), SAMPLE(103, 12, "dev2", 1 * MS, -1),
  };
  struct siox_blame b;
  assert_int_equal(siox_blame_walk(t, &SIOX_BLAME_RULE_DEFAULT, &b), 0);
  assert_int_equal(siox_blame_judge(&b, mixed, 4), 0);
  assert_true(b.per_byte);
  assert_int_equal(b.peer_samples, 3);
  assert_int_equal(b.peer_skipped, 1);
  siox_blame_release(&b);

  /* No peer has a size: compare plain times (8 ms vs 1 ms -> culprit). */
  const struct siox_blame_sample none[] = {
      SAMPLE(100, 10, "dev0", 1 * MS, -1), SAMPLE(101, 10, "dev0", 1 * MS, -1),
      SAMPLE(102, 12, "dev2", 1 * MS, -1),
  };
  assert_int_equal(siox_blame_walk(t, &SIOX_BLAME_RULE_DEFAULT, &b), 0);
  assert_int_equal(siox_blame_judge(&b, none, 3), 0);
  assert_false(b.per_byte);
  assert_int_equal(b.verdict, SIOX_VERDICT_CULPRIT);
  assert_true(b.ratio > 7.99 && b.ratio < 8.01);
  siox_blame_release(&b);
  siox_tree_destroy(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(big_write_is_not_slow),
      cmocka_unit_test(small_write_is_slow),
      cmocka_unit_test(peers_without_sizes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
