/* blame_unlinked.c: the time of a call that no linked component covers, on
 * synthetic metadata trees shaped like the GlusterFS testbed's (a creat
 * whose negative lookup carries no gfid, an open with nothing linked, an
 * MPI-IO open over POSIX). The root's exclusive time alone gets the last
 * case wrong: the explicit POSIX child covers the root's time, yet no
 * component does. Times in ms. */
#include <string.h>

#include "test_cli_tree.h"

#include "blame_unlinked.h"

/* POSIX creat 0..125: its LOOKUP of the new name (no gfid, not linked)
 * took 0..62 on the slowed brick; the client's create, linked, 62..124,
 * with the brick's create inside. */
static struct siox_tree *creat_tree(void) {
  struct siox_tree *t = siox_tree_create();
  tree_add(t, 1, 0, "host0", "POSIX", "open", 1, 0, 125 * MS);
  tree_add(t, 2, 1, "host0", "GlusterFS-client", "create", 2, 62 * MS, 124 * MS);
  tree_add(t, 3, 2, "brick2", "GlusterFS-brick", "create", 3, 63 * MS, 123 * MS);
  t->acts[1].link = t->acts[2].link = SIOX_LINK_IMPLICIT;
  assert_int_equal(siox_tree_finish(t, 1), 0);
  return t;
}

static void an_unlinked_lookup_is_unexplained(void **state) {
  (void)state;
  struct siox_tree *t = creat_tree();
  struct siox_unlinked u;
  assert_int_equal(siox_unlinked_find(t->root, &u), 0);
  assert_int_equal(u.total_ns, 125 * MS);
  assert_int_equal(u.linked, 2);
  assert_int_equal(u.ngaps, 2);
  assert_int_equal(u.unlinked_ns, 63 * MS);
  const struct siox_interval *l = siox_unlinked_longest(&u);
  assert_non_null(l);
  assert_int_equal(l->start, 0);
  assert_int_equal(l->end, 62 * MS);
  siox_unlinked_release(&u);
  siox_tree_destroy(t);
}

/* Nothing linked below: all of the call is unexplained, in one stretch. */
static void an_open_with_nothing_linked_is_all_unexplained(void **state) {
  (void)state;
  struct siox_tree *t = siox_tree_create();
  tree_add(t, 1, 0, "host0", "POSIX", "open", 1, 10 * MS, 164 * MS);
  assert_int_equal(siox_tree_finish(t, 1), 0);
  struct siox_unlinked u;
  assert_int_equal(siox_unlinked_find(t->root, &u), 0);
  assert_int_equal(u.linked, 0);
  assert_int_equal(u.ngaps, 1);
  assert_int_equal(u.unlinked_ns, 154 * MS);
  assert_int_equal(u.gaps[0].start, 10 * MS);
  siox_unlinked_release(&u);
  siox_tree_destroy(t);
}

/* MPI_File_open -> POSIX open (explicit: same process) -> client open and a
 * client lookup that overlap (implicit), bricks below. The root's own
 * exclusive time is 2 ms, but the POSIX open's 40 ms before its lookup are
 * covered by no component: unexplained, and overlaps count once. */
static void explicit_children_cover_nothing(void **state) {
  (void)state;
  struct siox_tree *t = siox_tree_create();
  tree_add(t, 1, 0, "host0", "MPI-IO", "MPI_File_open", 1, 0, 100 * MS);
  tree_add(t, 2, 1, "host0", "POSIX", "open", 2, 1 * MS, 99 * MS);
  tree_add(t, 3, 2, "host0", "GlusterFS-client", "lookup", 3, 41 * MS, 70 * MS);
  tree_add(t, 4, 2, "host0", "GlusterFS-client", "open", 3, 60 * MS, 98 * MS);
  tree_add(t, 5, 4, "brick1", "GlusterFS-brick", "open", 4, 61 * MS, 97 * MS);
  t->acts[2].link = t->acts[3].link = t->acts[4].link = SIOX_LINK_IMPLICIT;
  assert_int_equal(siox_tree_finish(t, 1), 0);
  assert_int_equal(t->root->exclusive_ns, 2 * MS);
  struct siox_unlinked u;
  assert_int_equal(siox_unlinked_find(t->root, &u), 0);
  assert_int_equal(u.linked, 3);
  assert_int_equal(u.unlinked_ns, (41 + 2) * MS); /* [0,41) and [98,100) */
  assert_int_equal(u.ngaps, 2);
  assert_int_equal(siox_unlinked_longest(&u)->end, 41 * MS);
  siox_unlinked_release(&u);
  siox_tree_destroy(t);
}

/* The other bricks' creates in the job's window: 0.3 ms each; the
 * client's creates on their bricks 0.4 ms. */
static int create_peers(void *ctx, const struct siox_act *x, const struct siox_blame_sample **s, size_t *n) {
  (void)ctx;
  static const struct siox_blame_sample brick[] = {
      {11, 5, "brick1", "", 300000, -1}, {12, 5, "brick1", "", 310000, -1}, {13, 6, "brick3", "", 290000, -1},
      {14, 6, "brick3", "", 305000, -1}, {15, 7, "brick4", "", 295000, -1}, {16, 7, "brick4", "", 300000, -1}};
  static const struct siox_blame_sample client[] = {
      {21, 8, "host0", "brick1", 400000, -1}, {22, 9, "host0", "brick3", 410000, -1},
      {23, 10, "host0", "brick4", 390000, -1}};
  *s = NULL, *n = 0;
  if (strcmp(x->swid, "GlusterFS-brick") == 0) *s = brick, *n = 6;
  if (strcmp(x->swid, "GlusterFS-client") == 0) *s = client, *n = 3;
  return 0;
}

/* The creat is judged like a write: its brick's create (no size: plain
 * times) against the other bricks' creates; the brick is named although
 * half of the call is unexplained. */
static void a_slow_create_names_its_brick(void **state) {
  (void)state;
  struct siox_tree *t = creat_tree();
  struct siox_blame b;
  assert_int_equal(siox_blame_walk(t, &SIOX_BLAME_RULE_DEFAULT, &b), 0);
  assert_int_equal(siox_blame_find(&b, create_peers, NULL), 0);
  assert_int_equal(b.verdict, SIOX_VERDICT_CULPRIT);
  assert_string_equal(b.suspect->swid, "GlusterFS-brick");
  assert_string_equal(b.suspect->hwid, "brick2");
  assert_string_equal(b.suspect->name, "create");
  assert_false(b.per_byte);
  siox_blame_release(&b);
  siox_tree_destroy(t);
}

/* A creat of a name on a healthy brick, slowed 414 ms by unlinked lookups
 * elsewhere, whose client create (3.9 ms, 5x its peers) the peer rule alone
 * would call a fault: the unlinked time outweighs it. The slowed brick's
 * create of scenario (g) (62 ms own + 433 ms queued of 531 ms, 468 ms
 * unlinked) is still named. */
static void unlinked_time_outweighs_a_small_culprit(void **state) {
  (void)state;
  struct siox_tree *t = siox_tree_create();
  tree_add(t, 1, 0, "host0", "POSIX", "open", 1, 0, 418 * MS);
  tree_add(t, 2, 1, "host0", "GlusterFS-client", "create", 2, 414 * MS, 418 * MS);
  t->acts[1].link = SIOX_LINK_IMPLICIT;
  assert_int_equal(siox_tree_finish(t, 1), 0);
  struct siox_unlinked u;
  assert_int_equal(siox_unlinked_find(t->root, &u), 0);
  assert_true(siox_unlinked_outweighs(&u, 4 * MS + 15 * MS));
  siox_unlinked_release(&u);
  siox_tree_destroy(t);
  u = (struct siox_unlinked){.total_ns = 531 * MS, .unlinked_ns = 468 * MS};
  assert_false(siox_unlinked_outweighs(&u, 62 * MS + 433 * MS));
  u = (struct siox_unlinked){.total_ns = 100 * MS, .unlinked_ns = 40 * MS};
  assert_false(siox_unlinked_outweighs(&u, 1 * MS)); /* most of the call is linked */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(an_unlinked_lookup_is_unexplained),
      cmocka_unit_test(an_open_with_nothing_linked_is_all_unexplained),
      cmocka_unit_test(explicit_children_cover_nothing),
      cmocka_unit_test(a_slow_create_names_its_brick),
      cmocka_unit_test(unlinked_time_outweighs_a_small_culprit),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
