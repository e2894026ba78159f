/* blame_collective.c: blame through a collective call whose rank made no
 * I/O itself (ROMIO's aggregator wrote its data) and that no link ties to
 * the aggregator's pwrite: the collective on blame's path, and which
 * sibling (the same collective in another rank) it waited for. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blame_collective.h"
#include "blame_wait.h"
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


/* ---- waiting in a collective --------------------------------------------
 * Rank 0's H5Dwrite 0..300 ms: its collective write_at_all 0..100 reached
 * the slowed brick (client writev 10..90, implicit link), then HDF5's
 * trailing MPI_File_set_view 100..300 waited, with nothing below it, for
 * rank 1 (pid 101), which entered it at 280 ms; rank 2 (pid 102) entered
 * at 105 ms. 220 of the 300 ms are unlinked. */
static struct siox_tree *set_view_wait(void) {
  struct siox_tree *t = siox_tree_create();
  tree_add(t, 1, 0, "host0", "HDF5", "H5Dwrite", 1, 0, 300 * MS);
  tree_add(t, 2, 1, "host0", "MPI-IO", "MPI_File_write_at_all", 2, 0, 100 * MS);
  tree_add(t, 3, 2, "host0", "GlusterFS-client", "writev", 3, 10 * MS, 90 * MS);
  tree_add(t, 4, 1, "host0", "MPI-IO", "MPI_File_set_view", 2, 100 * MS, 300 * MS);
  t->acts[2].link = SIOX_LINK_IMPLICIT;
  assert_int_equal(siox_tree_finish(t, 1), 0);
  collective(t, 2);
  return t;
}

static const struct siox_sibling set_view_siblings[] = {
    {.aid = 41, .pid = 101, .host = "host0", .start_ns = 280 * MS, .end_ns = 300 * MS},
    {.aid = 42, .pid = 102, .host = "host0", .start_ns = 105 * MS, .end_ns = 300 * MS},
};

/* The brick's fault, as the class rule gave it: 10 ms own service, nothing
 * queued in the call's own windows. */
static struct siox_blame_wait faulty(const struct siox_tree *t, struct siox_served *s, size_t n) {
  struct siox_blame_wait o;
  memset(&o, 0, sizeof(o));
  o.resource = siox_tree_find((struct siox_tree *)t, 3);
  o.v.cls = SIOX_CLASS_FAULT;
  o.w.own_ns = 10 * MS;
  o.queue = &o.w;
  o.served = (struct siox_served_set){.s = s, .n = n};
  return o;
}

/* The set_view is the only waiting collective: the write_at_all reached a
 * component, and what lies below a link is another process's work. */
static void the_set_view_waits(void **state) {
  (void)state;
  struct siox_tree *t = set_view_wait();
  const struct siox_act *w[4];
  assert_int_equal(siox_collective_waits(t->root, w, 4), 1);
  assert_int_equal(w[0]->aid, 4);
  assert_true(siox_collective_call(w[0])); /* collective by definition, no attribute */
  siox_tree_destroy(t);
}

/* The brick held rank 1 up (its request 100..280 ms): the set_view's wait
 * until rank 1 arrived is the brick's, and the fault stands. */
static void a_wait_for_the_held_up_rank_is_charged(void **state) {
  (void)state;
  struct siox_tree *t = set_view_wait();
  struct siox_served s[] = {
      {.aid = 90, .start_ns = 100 * MS, .end_ns = 290 * MS, .pid = 101, .host = "host0", .job = "job42"},
      {.aid = 91, .start_ns = 200 * MS, .end_ns = 250 * MS, .pid = 102, .host = "host0", .job = "job42"},
  };
  struct siox_unlinked u;
  assert_int_equal(siox_unlinked_find(t->root, &u), 0);
  assert_int_equal(u.unlinked_ns, 220 * MS);
  const struct siox_act *c = siox_tree_find(t, 4);
  /* Rank 1's request until it arrived at 280; rank 2 had arrived (105). */
  int64_t ns = -1;
  assert_int_equal(siox_collective_wait_ns(c, set_view_siblings, 2, s, 2, &u, &ns), 0);
  assert_int_equal(ns, 180 * MS);
  struct siox_blame_wait o = faulty(t, s, 2);
  siox_blame_wait_unlinked(&o, &u, ns);
  assert_false(o.outweighed);
  assert_int_equal(o.v.cls, SIOX_CLASS_FAULT);
  siox_unlinked_release(&u);
  siox_tree_destroy(t);
}

/* The brick was busy during the set_view, but with another job's requests
 * and a rank that had already arrived: the call did not wait for them, so
 * its 220 ms unlinked outweigh the brick's 10 ms and no fault is named.
 * Charging whatever the brick served over the call (the special case this
 * rule replaced) kept the fault here. */
static void a_busy_brick_serving_others_is_not_charged(void **state) {
  (void)state;
  struct siox_tree *t = set_view_wait();
  struct siox_served s[] = {
      {.aid = 92, .start_ns = 100 * MS, .end_ns = 300 * MS, .pid = 500, .host = "host9", .job = "other"},
      {.aid = 93, .start_ns = 120 * MS, .end_ns = 280 * MS, .pid = 102, .host = "host0", .job = "job42"},
      {.aid = 94, .start_ns = 100 * MS, .end_ns = 280 * MS, .pid = 101, .host = "host7", .job = "job42"},
  };
  struct siox_unlinked u;
  assert_int_equal(siox_unlinked_find(t->root, &u), 0);
  int64_t ns = -1;
  assert_int_equal(siox_collective_wait_ns(siox_tree_find(t, 4), set_view_siblings, 2, s, 3, &u, &ns), 0);
  assert_int_equal(ns, 0); /* pid 101 on another host is another process */
  struct siox_blame_wait o = faulty(t, s, 3);
  siox_blame_wait_unlinked(&o, &u, ns);
  assert_true(o.outweighed);
  assert_int_equal(o.v.cls, SIOX_CLASS_NONE);
  assert_int_equal(o.named.cls, SIOX_CLASS_FAULT);
  siox_unlinked_release(&u);
  siox_tree_destroy(t);
}

/* The same call, its brick's slow request a lone outlier (transient): with
 * the request withdrawn too nothing it reached stands out, so the verdict
 * is normal by the same evidence, not "no verdict" (scenario (h): a write's
 * time spent before its fop reached an idle client). Over a fault the
 * rule leaves no verdict (above): the component is abnormal. */
static void a_withdrawn_transient_leaves_normal(void **state) {
  (void)state;
  struct siox_tree *t = set_view_wait();
  struct siox_served s[] = {
      {.aid = 92, .start_ns = 100 * MS, .end_ns = 300 * MS, .pid = 500, .host = "host9", .job = "other"},
  };
  struct siox_unlinked u;
  assert_int_equal(siox_unlinked_find(t->root, &u), 0);
  struct siox_blame_wait o = faulty(t, s, 1);
  o.v = (struct siox_class_verdict){.cls = SIOX_CLASS_TRANSIENT, .by = SIOX_EVIDENCE_KIND};
  siox_blame_wait_unlinked(&o, &u, 0);
  assert_true(o.outweighed);
  assert_int_equal(o.named.cls, SIOX_CLASS_TRANSIENT);
  assert_int_equal(o.v.cls, SIOX_CLASS_NORMAL);
  assert_int_equal(o.v.by, SIOX_EVIDENCE_KIND);
  siox_unlinked_release(&u);
  siox_tree_destroy(t);
}

/* ---- every waiting collective counts ------------------------------------
 * Rank 0's H5Dwrite 0..2100 ms: its write_at_all 0..100 reached the brick
 * (client writev 10..90, implicit link), then 20 set_views, the i-th at
 * [100 + 100 i, 200 + 100 i), each waited for rank 1 (pid 101), which the
 * brick held up (its request [100 + 100 i, 190 + 100 i)) until it entered
 * that set_view at 180 + 100 i: 80 ms of each, 1600 ms in all. The CLI
 * looked at the first 16 only (1280 ms) and said nothing of the rest. */
#define MANY 20
static struct siox_tree *many_waits(void) {
  struct siox_tree *t = siox_tree_create();
  tree_add(t, 1, 0, "host0", "HDF5", "H5Dwrite", 1, 0, (100 + 100 * MANY) * MS);
  tree_add(t, 2, 1, "host0", "MPI-IO", "MPI_File_write_at_all", 2, 0, 100 * MS);
  tree_add(t, 3, 2, "host0", "GlusterFS-client", "writev", 3, 10 * MS, 90 * MS);
  for (int i = 0; i < MANY; i++)
    tree_add(t, 10 + i, 1, "host0", "MPI-IO", "MPI_File_set_view", 2, (100 + 100 * i) * MS, (200 + 100 * i) * MS);
  t->acts[2].link = SIOX_LINK_IMPLICIT;
  assert_int_equal(siox_tree_finish(t, 1), 0);
  collective(t, 2);
  return t;
}

struct fake_siblings {
  size_t calls;
  int fail_at; /* the call (from 1) that fails with -EIO; 0: none */
};

/* Rank 1's same set_view, entered 80 ms after the waiting one began. */
static int fake_fetch(void *ctx, const struct siox_act *c, struct siox_sibling **s, size_t *n) {
  struct fake_siblings *f = ctx;
  if (++f->calls == (size_t)f->fail_at) return -EIO;
  *s = calloc(1, sizeof(**s));
  if (!*s) return -ENOMEM;
  **s = (struct siox_sibling){.aid = 1000 + c->aid, .pid = 101, .host = "host0", .start_ns = c->start_ns + 80 * MS,
                              .end_ns = c->end_ns};
  *n = 1;
  return 0;
}

static void every_waiting_collective_counts(void **state) {
  (void)state;
  struct siox_tree *t = many_waits();
  struct siox_served s[MANY];
  for (int i = 0; i < MANY; i++)
    s[i] = (struct siox_served){.aid = 500 + i, .start_ns = (100 + 100 * i) * MS, .end_ns = (190 + 100 * i) * MS,
                                .pid = 101, .host = "host0", .job = "job42"};
  struct siox_unlinked u;
  assert_int_equal(siox_unlinked_find(t->root, &u), 0);
  assert_int_equal(siox_collective_waits(t->root, NULL, 0), MANY); /* counted, whatever fits */
  struct fake_siblings f = {0};
  int64_t ns = -1;
  assert_int_equal(siox_collective_waited(t->root, s, MANY, &u, fake_fetch, &f, &ns), 0);
  assert_int_equal(f.calls, MANY);
  assert_int_equal(ns, MANY * 80 * MS);
  siox_unlinked_release(&u);
  siox_tree_destroy(t);
}

/* A failed sibling query is an error, not a smaller sum. */
static void a_failed_fetch_is_an_error(void **state) {
  (void)state;
  struct siox_tree *t = many_waits();
  struct siox_unlinked u;
  assert_int_equal(siox_unlinked_find(t->root, &u), 0);
  struct fake_siblings f = {.fail_at = 17};
  int64_t ns = 0;
  assert_int_equal(siox_collective_waited(t->root, NULL, 0, &u, fake_fetch, &f, &ns), -EIO);
  assert_int_equal(f.calls, 17);
  siox_unlinked_release(&u);
  siox_tree_destroy(t);
}

/* The allocation for the resource's service failing (here: a count no
 * allocation can hold) is -ENOMEM, never "no wait" (the old 0). */
static void no_memory_is_an_error_not_zero(void **state) {
  (void)state;
  struct siox_tree *t = set_view_wait();
  struct siox_unlinked u;
  assert_int_equal(siox_unlinked_find(t->root, &u), 0);
  int64_t ns = -1;
  assert_int_equal(siox_collective_wait_ns(siox_tree_find(t, 4), set_view_siblings, 2, NULL, SIZE_MAX, &u, &ns),
                   -ENOMEM);
  siox_unlinked_release(&u);
  siox_tree_destroy(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(the_collective_on_the_path_is_found),
      cmocka_unit_test(no_collective_no_sibling),
      cmocka_unit_test(the_aggregator_of_the_same_round_is_followed),
      cmocka_unit_test(no_sibling_with_io_gives_none),
      cmocka_unit_test(ties_go_to_more_io_then_lower_aid),
      cmocka_unit_test(the_set_view_waits),
      cmocka_unit_test(a_wait_for_the_held_up_rank_is_charged),
      cmocka_unit_test(a_busy_brick_serving_others_is_not_charged),
      cmocka_unit_test(a_withdrawn_transient_leaves_normal),
      cmocka_unit_test(every_waiting_collective_counts),
      cmocka_unit_test(a_failed_fetch_is_an_error),
      cmocka_unit_test(no_memory_is_an_error_not_zero),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
