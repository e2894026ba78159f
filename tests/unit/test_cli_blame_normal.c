/* blame.c: nothing is named when the suspect is like its peers, or when
 * there are too few peers to tell. */
#include "test_cli_tree.h"

#define SAMPLE(aid, node, hw, ns, b) {aid, node, hw, "", ns, b}

static void alike_peers_no_culprit(void **state) {
  (void)state;
  struct siox_tree *t = io_chain("dev1", 11, 1 * MS, MIB);
  const struct siox_blame_sample s[] = {
      SAMPLE(100, 10, "dev0", 1 * MS, MIB), SAMPLE(101, 10, "dev0", 900000, MIB),
      SAMPLE(102, 12, "dev2", 1100000, MIB), SAMPLE(103, 12, "dev2", 1050000, MIB),
  };
  struct siox_blame b;
  assert_int_equal(siox_blame_walk(t, &SIOX_BLAME_RULE_DEFAULT, &b), 0);
  assert_int_equal(siox_blame_judge(&b, s, 4), 0);
  assert_int_equal(b.verdict, SIOX_VERDICT_NORMAL);
  assert_string_equal(b.suspect->hwid, "dev1"); /* where the time went, still reported */
  assert_int_equal(b.peer_samples, 4);
  assert_true(b.ratio > 0.9 && b.ratio < 1.1);
  siox_blame_release(&b);
  siox_tree_destroy(t);
}

static void twice_the_median_is_not_enough(void **state) {
  (void)state;
  struct siox_tree *t = io_chain("dev1", 11, 2 * MS, MIB);
  const struct siox_blame_sample s[] = {
      SAMPLE(100, 10, "dev0", 1 * MS, MIB), SAMPLE(101, 10, "dev0", 1 * MS, MIB),
      SAMPLE(102, 12, "dev2", 1 * MS, MIB),
  };
  struct siox_blame b;
  assert_int_equal(siox_blame_walk(t, &SIOX_BLAME_RULE_DEFAULT, &b), 0);
  assert_int_equal(siox_blame_judge(&b, s, 3), 0);
  assert_int_equal(b.verdict, SIOX_VERDICT_NORMAL);
  siox_blame_release(&b);
  /* ...but it is at a rule of 1.5x */
  struct siox_blame_rule r = SIOX_BLAME_RULE_DEFAULT;
  r.ratio = 1.5;
  assert_int_equal(siox_blame_walk(t, &r, &b), 0);
  assert_int_equal(siox_blame_judge(&b, s, 3), 0);
  assert_int_equal(b.verdict, SIOX_VERDICT_CULPRIT);
  siox_blame_release(&b);
  siox_tree_destroy(t);
}

static void slow_peers_too_no_culprit(void **state) {
  (void)state;
  /* 10x the median but not beyond the peers' p90: peers are often this slow. */
  struct siox_tree *t = io_chain("dev1", 11, 10 * MS, MIB);
  const struct siox_blame_sample s[] = {
      SAMPLE(100, 10, "dev0", 1 * MS, MIB),  SAMPLE(101, 10, "dev0", 1 * MS, MIB),
      SAMPLE(102, 10, "dev0", 1 * MS, MIB),  SAMPLE(103, 12, "dev2", 12 * MS, MIB),
      SAMPLE(104, 12, "dev2", 12 * MS, MIB),
  };
  struct siox_blame b;
  assert_int_equal(siox_blame_walk(t, &SIOX_BLAME_RULE_DEFAULT, &b), 0);
  assert_int_equal(siox_blame_judge(&b, s, 5), 0);
  assert_true(b.ratio >= 3.0);
  assert_int_equal(b.verdict, SIOX_VERDICT_NORMAL);
  siox_blame_release(&b);
  siox_tree_destroy(t);
}

static void too_few_peers(void **state) {
  (void)state;
  struct siox_tree *t = io_chain("dev1", 11, 10 * MS, MIB);
  /* Only own-node samples and the suspect itself: nothing to compare with. */
  const struct siox_blame_sample s[] = {
      SAMPLE(4, 11, "dev1", 10 * MS, MIB), SAMPLE(100, 11, "dev1", 10 * MS, MIB),
      SAMPLE(101, 10, "dev0", 1 * MS, MIB), SAMPLE(102, 10, "dev0", 1 * MS, MIB),
  };
  struct siox_blame b;
  assert_int_equal(siox_blame_walk(t, &SIOX_BLAME_RULE_DEFAULT, &b), 0);
  assert_int_equal(siox_blame_judge(&b, s, 4), 0);
  assert_int_equal(b.verdict, SIOX_VERDICT_NO_PEERS);
  assert_int_equal(b.peer_samples, 2);
  assert_int_equal(b.own_samples, 1);
  siox_blame_release(&b);
  assert_int_equal(siox_blame_walk(t, &SIOX_BLAME_RULE_DEFAULT, &b), 0);
  assert_int_equal(siox_blame_judge(&b, NULL, 0), 0);
  assert_int_equal(b.verdict, SIOX_VERDICT_NO_PEERS);
  siox_blame_release(&b);
  siox_tree_destroy(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(alike_peers_no_culprit),
      cmocka_unit_test(twice_the_median_is_not_enough),
      cmocka_unit_test(slow_peers_too_no_culprit),
      cmocka_unit_test(too_few_peers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
