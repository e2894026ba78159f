/* blame.c: when sizes differ, times are compared per byte; when the peers
 * show several sizes, against their latency line for the suspect's size. */
#include "test_cli_tree.h"

#define SAMPLE(aid, node, hw, ns, b) {aid, node, hw, "", ns, b}

static const struct siox_blame_sample small_fast_peers[] = {
    SAMPLE(100, 10, "dev0", 1 * MS, MIB), SAMPLE(101, 10, "dev0", 1 * MS, MIB),
    SAMPLE(102, 12, "dev2", 1 * MS, MIB), SAMPLE(103, 12, "dev2", 1 * MS, MIB),
};

/* Gives the six two_sizes samples for any kind. */
static int one_kind(void *ctx, const struct siox_act *x, const struct siox_blame_sample **s, size_t *n) {
  (void)x;
  *s = ctx;
  *n = 6;
  return 0;
}

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

/* Peers of two sizes: 4 KiB in 20 ms, 128 KiB in 100 ms, so the line is
 * 17.42 ms + 630 ns/B. A 2 KiB fragment in 19 ms is what the line gives
 * (per byte it would be 3.3x the peers' median rate, and named); the same
 * fragment in 8 s is ~430x the line, and named with the excess over it. */
static const struct siox_blame_sample two_sizes[] = {
    SAMPLE(100, 10, "dev0", 20 * MS, 4096), SAMPLE(101, 10, "dev0", 100 * MS, 131072),
    SAMPLE(102, 12, "dev2", 20 * MS, 4096), SAMPLE(103, 12, "dev2", 100 * MS, 131072),
    SAMPLE(104, 13, "dev3", 20 * MS, 4096), SAMPLE(105, 13, "dev3", 100 * MS, 131072),
};

static void small_piece_judged_by_the_line(void **state) {
  (void)state;
  struct siox_tree *t = io_chain("dev1", 11, 19 * MS, 2048);
  struct siox_blame b;
  assert_int_equal(siox_blame_walk(t, &SIOX_BLAME_RULE_DEFAULT, &b), 0);
  assert_int_equal(siox_blame_judge(&b, two_sizes, 6), 0);
  assert_true(b.per_byte && b.line);
  assert_string_equal(b.suspect->hwid, "dev1");
  assert_float_equal(b.line_b_s, 80e-3 / (131072 - 4096), 1e-15);
  assert_float_equal(b.line_a_s, 20e-3 - 4096 * b.line_b_s, 1e-12);
  assert_float_equal(b.peer_median, 1.0, 1e-9);
  assert_true(b.ratio > 1.0 && b.ratio < 1.05);
  assert_int_equal(b.verdict, SIOX_VERDICT_NORMAL);
  siox_blame_release(&b);
  siox_tree_destroy(t);

  t = io_chain("dev1", 11, 8000 * MS, 2048);
  assert_int_equal(siox_blame_walk(t, &SIOX_BLAME_RULE_DEFAULT, &b), 0);
  assert_int_equal(siox_blame_find(&b, one_kind, (void *)two_sizes), 0);
  assert_int_equal(b.verdict, SIOX_VERDICT_CULPRIT);
  assert_true(b.ratio > 420 && b.ratio < 435);
  assert_string_equal(b.suspect->hwid, "dev1");
  double want = 8.0 - (b.line_a_s + b.line_b_s * 2048);
  assert_float_equal(b.excess_s, want, 1e-9);
  siox_blame_release(&b);
  siox_tree_destroy(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(big_write_is_not_slow),
      cmocka_unit_test(small_write_is_slow),
      cmocka_unit_test(peers_without_sizes),
      cmocka_unit_test(small_piece_judged_by_the_line),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
