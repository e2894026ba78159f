/* graph.c: exclusive time is the inclusive time minus the UNION of the
 * children's intervals clipped to the parent (children overlap). */
#include "test_cli_tree.h"

static void overlapping_children_counted_once(void **state) {
  (void)state;
  /* [10,40) and [30,60) overlap: union 50, a sum would say 60. */
  struct siox_interval iv[] = {{10, 40}, {30, 60}};
  assert_int_equal(siox_exclusive_ns(0, 100, iv, 2), 50);
}

static void children_clipped_to_parent(void **state) {
  (void)state;
  /* [-20,5) -> [0,5); [90,120) -> [90,100); [200,300) and [50,50) add nothing. */
  struct siox_interval iv[] = {{90, 120}, {-20, 5}, {200, 300}, {10, 40}, {30, 60}, {50, 50}};
  assert_int_equal(siox_exclusive_ns(0, 100, iv, 6), 100 - (5 + 50 + 10));
}

static void nested_and_identical_children(void **state) {
  (void)state;
  struct siox_interval nested[] = {{20, 30}, {10, 50}};
  assert_int_equal(siox_exclusive_ns(0, 100, nested, 2), 60);
  struct siox_interval same[] = {{0, 100}, {0, 100}};
  assert_int_equal(siox_exclusive_ns(0, 100, same, 2), 0);
  assert_int_equal(siox_exclusive_ns(0, 100, NULL, 0), 100);
  assert_int_equal(siox_exclusive_ns(100, 100, NULL, 0), 0);
}

static void tree_times(void **state) {
  (void)state;
  struct siox_tree *t = siox_tree_create();
  /* A collective: the root waits for three parallel writes, two overlapping,
   * one of them sticking out past the root's end (clock skew). */
  tree_add(t, 1, 0, "host0", "MPI-IO", "MPI_File_write_at_all", 1, 0, 100 * MS);
  tree_add(t, 2, 1, "host0", "POSIX", "pwrite", 2, 10 * MS, 60 * MS);
  tree_add(t, 3, 1, "host1", "POSIX", "pwrite", 3, 20 * MS, 70 * MS);
  tree_add(t, 4, 1, "host2", "POSIX", "pwrite", 4, 90 * MS, 130 * MS);
  tree_add(t, 5, 3, "dev", "device", "write", 5, 30 * MS, 40 * MS);
  assert_int_equal(siox_tree_finish(t, 1), 0);
  struct siox_act *root = siox_tree_find(t, 1), *w1 = siox_tree_find(t, 3);
  assert_int_equal(root->inclusive_ns, 100 * MS);
  assert_int_equal(root->exclusive_ns, 100 * MS - (60 * MS + 10 * MS)); /* [10,70) + [90,100) */
  assert_int_equal(w1->inclusive_ns, 50 * MS);
  assert_int_equal(w1->exclusive_ns, 40 * MS);
  assert_int_equal(siox_tree_find(t, 5)->exclusive_ns, 10 * MS);
  assert_int_equal(siox_tree_size(t), 5);
  assert_int_equal(siox_tree_find(t, 5)->depth, 2);
  siox_tree_destroy(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(overlapping_children_counted_once),
      cmocka_unit_test(children_clipped_to_parent),
      cmocka_unit_test(nested_and_identical_children),
      cmocka_unit_test(tree_times),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
