/* graph.c: the critical path follows, at each level, the child whose end is
 * latest; the tree links children to parents and finds its root. */
#include <errno.h>

#include "test_cli_tree.h"

static void latest_end_wins_at_each_level(void **state) {
  (void)state;
  struct siox_tree *t = siox_tree_create();
  tree_add(t, 1, 0, "h", "MPI-IO", "root", 1, 0, 100);
  tree_add(t, 2, 1, "h", "POSIX", "a", 2, 0, 50);   /* longest start-to-end? no: ends early */
  tree_add(t, 3, 1, "h", "POSIX", "b", 2, 40, 80);  /* ends last: critical */
  tree_add(t, 4, 1, "h", "POSIX", "c", 2, 5, 79);   /* longer than b, but ends earlier */
  tree_add(t, 5, 3, "d", "device", "x", 3, 41, 70);
  tree_add(t, 6, 3, "d", "device", "y", 3, 45, 78); /* critical under b */
  assert_int_equal(siox_tree_finish(t, 1), 0);
  const bool want[] = {true, false, true, false, false, true};
  for (int64_t aid = 1; aid <= 6; aid++) assert_int_equal(siox_tree_find(t, aid)->critical, want[aid - 1]);
  assert_int_equal(siox_act_critical_child(siox_tree_find(t, 1))->aid, 3);
  assert_null(siox_act_critical_child(siox_tree_find(t, 6)));
  /* children come sorted by start */
  struct siox_act *r = siox_tree_find(t, 1);
  assert_int_equal(r->nchildren, 3);
  assert_int_equal(r->children[0]->aid, 2);
  assert_int_equal(r->children[1]->aid, 4);
  assert_int_equal(r->children[2]->aid, 3);
  siox_tree_destroy(t);
}

static void tie_on_end_takes_the_longer_child(void **state) {
  (void)state;
  struct siox_tree *t = siox_tree_create();
  tree_add(t, 1, 0, "h", "A", "root", 1, 0, 100);
  tree_add(t, 7, 1, "h", "B", "short", 2, 60, 90);
  tree_add(t, 8, 1, "h", "B", "long", 2, 10, 90);
  assert_int_equal(siox_tree_finish(t, 1), 0);
  assert_true(siox_tree_find(t, 8)->critical);
  assert_false(siox_tree_find(t, 7)->critical);
  siox_tree_destroy(t);
}

static void root_missing_and_orphans(void **state) {
  (void)state;
  struct siox_tree *t = siox_tree_create();
  tree_add(t, 1, 0, "h", "A", "root", 1, 0, 100);
  tree_add(t, 2, 99, "h", "A", "orphan", 1, 0, 10); /* parent not loaded */
  assert_int_equal(siox_tree_finish(t, 1), 0);
  assert_int_equal(t->unreachable, 1);
  assert_int_equal(siox_tree_size(t), 1);
  assert_int_equal(siox_tree_add(t, &(struct siox_act_info){.aid = 3}), -EINVAL);
  siox_tree_destroy(t);

  t = siox_tree_create();
  tree_add(t, 1, 0, "h", "A", "root", 1, 0, 100);
  assert_int_equal(siox_tree_finish(t, 42), -ENOENT);
  siox_tree_destroy(t);
}

static void root_with_outside_parent_becomes_root(void **state) {
  (void)state;
  struct siox_tree *t = siox_tree_create();
  tree_add(t, 5, 4, "h", "POSIX", "write", 1, 0, 100); /* its parent is not in this tree */
  tree_add(t, 6, 5, "h", "device", "write", 2, 10, 20);
  assert_int_equal(siox_tree_finish(t, 5), 0);
  assert_int_equal(t->root->aid, 5);
  assert_int_equal(t->root->link, SIOX_LINK_ROOT);
  assert_int_equal(t->root->exclusive_ns, 90);
  siox_tree_destroy(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(latest_end_wins_at_each_level),
      cmocka_unit_test(tie_on_end_takes_the_longer_child),
      cmocka_unit_test(root_missing_and_orphans),
      cmocka_unit_test(root_with_outside_parent_becomes_root),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
