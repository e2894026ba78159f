/* blame_collective.c: blame through a collective call whose rank made no
 * I/O itself (ROMIO's aggregator wrote its data) and that no link ties to
 * the aggregator's pwrite: the collective on blame's path, and which
 * sibling (the same collective in another rank) it waited for. */
#include "blame_collective.h"
#include "test_cli_tree.h"

static void collective(struct siox_tree *t, int64_t aid) {
  struct siox_act *a = siox_tree_find(t, aid);
  assert_non_null(a);
  assert_int_equal(siox_act_add_num(a, "mpi/collective", "-", SIOX_AV_U64, 1, 0), 0);
}

/* A waiting rank's H5Dwrite: a set_view (not collective here) and the
 * collective write_at_all, neither with children. Times in ms. */
static struct siox_tree *waiting_rank(void) {
  struct siox_tree *t = siox_tree_create();
  tree_add(t, 1, 0, "host0", "HDF5", "H5Dwrite", 1, 0, 900 * MS);
  tree_add(t, 2, 1, "host0", "MPI-IO", "MPI_File_set_view", 2, 5 * MS, 10 * MS);
  tree_add(t, 3, 1, "host0", "MPI-IO", "MPI_File_write_at_all", 2, 20 * MS, 890 * MS);
  assert_int_equal(siox_tree_finish(t, 1), 0);
  collective(t, 3);
  return t;
}

static void the_collective_on_the_path_is_found(void **state) {
  (void)state;
  struct siox_tree *t = waiting_rank();
  struct siox_blame b;
  assert_int_equal(siox_blame_walk(t, &SIOX_BLAME_RULE_DEFAULT, &b), 0);
  const struct siox_act *c = siox_collective_on_path(&b);
  assert_non_null(c);
  assert_int_equal(c->aid, 3);
  siox_blame_release(&b);
  siox_tree_destroy(t);
}

static void no_collective_no_sibling(void **state) {
  (void)state;
  struct siox_tree *t = io_chain("sda", 5, 50 * MS, 4096); /* an independent write: nothing collective */
  struct siox_blame b;
  assert_int_equal(siox_blame_walk(t, &SIOX_BLAME_RULE_DEFAULT, &b), 0);
  assert_null(siox_collective_on_path(&b));
  siox_blame_release(&b);
  siox_tree_destroy(t);
}

/* The waiting rank's write_at_all [20, 890) ms against its siblings:
 * - 11: another waiting rank, overlapping it wholly, no I/O: longest
 *   overlap, but it waited too (the longest-overlap rule alone picks it);
 * - 12: the aggregator of the round before, [-700, 60): its pwrites took
 *   the longest (the most-I/O rule alone picks it), 40 ms of overlap;
 * - 13: the aggregator of this round, [60, 880): the one waited for;
 * - 14: the aggregator of the round after, starting as the call ends: no
 *   overlap, whatever its I/O;
 * - 3: the call itself, were the query to return it. */
static void the_aggregator_of_the_same_round_is_followed(void **state) {
  (void)state;
  struct siox_tree *t = waiting_rank();
  const struct siox_act *c = siox_tree_find(t, 3);
  const struct siox_sibling s[] = {
      {.aid = 11, .pid = 101, .start_ns = 15 * MS, .end_ns = 895 * MS, .io_ns = 0},
      {.aid = 12, .pid = 100, .start_ns = -700 * MS, .end_ns = 60 * MS, .io_ns = 740 * MS},
      {.aid = 13, .pid = 100, .start_ns = 60 * MS, .end_ns = 880 * MS, .io_ns = 600 * MS},
      {.aid = 14, .pid = 100, .start_ns = 890 * MS, .end_ns = 1900 * MS, .io_ns = 990 * MS},
      {.aid = 3, .pid = 102, .start_ns = 20 * MS, .end_ns = 890 * MS, .io_ns = 900 * MS},
  };
  assert_int_equal(siox_collective_pick(c, s, 5), 2);
  /* Without this round's aggregator, the one before (it overlaps and made
   * I/O) is all that is left; the waiting rank and the round after never. */
  assert_int_equal(siox_collective_pick(c, s, 2), 1);
  siox_tree_destroy(t);
}

static void no_sibling_with_io_gives_none(void **state) {
  (void)state;
  struct siox_tree *t = waiting_rank();
  const struct siox_act *c = siox_tree_find(t, 3);
  const struct siox_sibling s[] = {
      {.aid = 11, .pid = 101, .start_ns = 15 * MS, .end_ns = 895 * MS, .io_ns = 0},
      {.aid = 14, .pid = 100, .start_ns = 890 * MS, .end_ns = 1900 * MS, .io_ns = 990 * MS},
  };
  assert_int_equal(siox_collective_pick(c, s, 2), -1);
  assert_int_equal(siox_collective_pick(c, s, 0), -1);
  siox_tree_destroy(t);
}

/* Equal overlap: the sibling with more I/O, then the lower aid. */
static void ties_go_to_more_io_then_lower_aid(void **state) {
  (void)state;
  struct siox_tree *t = waiting_rank();
  const struct siox_act *c = siox_tree_find(t, 3);
  const struct siox_sibling s[] = {
      {.aid = 21, .pid = 100, .start_ns = 0, .end_ns = 900 * MS, .io_ns = 300 * MS},
      {.aid = 22, .pid = 101, .start_ns = 0, .end_ns = 900 * MS, .io_ns = 500 * MS},
      {.aid = 20, .pid = 102, .start_ns = 0, .end_ns = 900 * MS, .io_ns = 500 * MS},
  };
  assert_int_equal(siox_collective_pick(c, s, 3), 2);
  assert_int_equal(siox_collective_pick(c, s, 2), 1);
  siox_tree_destroy(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(the_collective_on_the_path_is_found),
      cmocka_unit_test(no_collective_no_sibling),
      cmocka_unit_test(the_aggregator_of_the_same_round_is_followed),
      cmocka_unit_test(no_sibling_with_io_gives_none),
      cmocka_unit_test(ties_go_to_more_io_then_lower_aid),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
