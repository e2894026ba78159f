/* blame_wait.c siox_blame_connection_windows: a client subvolume's request
 * is served only once its brick takes it; before that it sits in the
 * client's connection behind whatever else the subvolume has in flight.
 * The picture is scenario (f) as CI caught it: job A's 4 KiB write spent
 * 22 ms in the client writev to a healthy brick that served it in 85 us,
 * while job B's four 1 MiB writers kept the connection full. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "blame_class.h"
#include "blame_wait.h"
#include "test_cli_tree.h"

#define US 1000LL

/* POSIX write 1 [0, 29570) us -> (implicit) client writev 2 [7556, 29570)
 * -> (implicit) brick writev 3 [29300, 29385). */
static struct siox_tree *connection_wait(void) {
  struct siox_tree *t = siox_tree_create();
  tree_add(t, 1, 0, "vm", "POSIX", "write", 1, 0, 29570 * US);
  tree_add(t, 2, 1, "vm", "GlusterFS-client", "writev", 2, 7556 * US, 29570 * US);
  tree_add(t, 3, 2, "brick1", "GlusterFS-brick", "writev", 3, 29300 * US, 29385 * US);
  t->acts[1].link = SIOX_LINK_IMPLICIT;
  t->acts[2].link = SIOX_LINK_IMPLICIT;
  assert_int_equal(siox_tree_finish(t, 1), 0);
  return t;
}

/* The subvolume's requests around the call: A's own, then job B's four
 * writers, each with a 1 MiB writev in flight back to back (~11 ms each). */
static size_t subvolume(struct siox_served *s) {
  size_t n = 0;
  s[n++] = (struct siox_served){.aid = 2, .start_ns = 7556 * US, .end_ns = 29570 * US, .bytes = 4096, .pid = 100,
                                .host = "vm", .job = "A", .own = true};
  for (int w = 0; w < 4; w++)
    for (int k = 0; k < 3; k++) {
      int64_t from = (-2000 + 11000 * k + 700 * w) * US;
      s[n++] = (struct siox_served){.aid = 10 + 3 * w + k, .start_ns = from, .end_ns = from + 11000 * US,
                                    .bytes = 1048576, .pid = 200 + w, .host = "vm", .job = "B"};
    }
  return n;
}

/* The class as blame_wait.c feeds it: peers judged the subvolume slow, its
 * other operations ran at 1.7x the kind's model (not slow). */
static enum siox_class classify(const struct siox_wait *w) {
  struct siox_class_input in = {.peers = 1, .kind = -1, .baseline = -1, .ratio = 3.0, .wait_share = 0.5,
                                .ops = 1599, .ops_ratio = 1.7, .ops_shared_ratio = 0.5, .wait = w};
  return siox_classify(&in).cls;
}

static void the_connection_is_a_queue(void **state) {
  (void)state;
  struct siox_tree *t = connection_wait();
  struct siox_served s[16];
  size_t n = subvolume(s);
  struct siox_wait before, after;
  /* Without the windows the client's 22 ms count as its service of the
   * call: only the 7.5 ms before it are queued, and the verdict is a
   * transient on a healthy component (what CI reported). */
  assert_int_equal(siox_wait_analyze(0, 29570 * US, "A", s, n, &before), 0);
  assert_int_equal(before.own_ns, 22014 * US);
  assert_true(2 * before.queued_ns < before.total_ns);
  assert_int_equal(classify(&before), SIOX_CLASS_TRANSIENT);

  struct siox_served_set set = {.s = s, .n = n};
  assert_int_equal(siox_blame_connection_windows(t->root, 2, &set), (29300 - 7556) * US);
  assert_int_equal(s[0].start_ns, 29300 * US);
  assert_int_equal(siox_wait_analyze(0, 29570 * US, "A", s, n, &after), 0);
  assert_int_equal(after.own_ns, 270 * US);
  assert_true(after.queued_ns > 29000 * US); /* B's writes were in flight all along */
  assert_int_equal(after.queued_same_job_ns, 0);
  assert_true(after.nby >= 1 && strcmp(after.by[0].job, "B") == 0);
  assert_int_equal(classify(&after), SIOX_CLASS_INTERFERENCE);
  siox_wait_release(&before);
  siox_wait_release(&after);
  siox_tree_destroy(t);
}

/* Only requests with a child on another node move, and only to a child
 * start inside them: the brick's own fop, a client fop without a brick
 * fop and one whose brick clock runs early keep their service. */
static void nothing_else_moves(void **state) {
  (void)state;
  struct siox_tree *t = siox_tree_create();
  tree_add(t, 1, 0, "vm", "POSIX", "write", 1, 0, 100 * MS);
  tree_add(t, 2, 1, "vm", "GlusterFS-client", "writev", 2, 10 * MS, 40 * MS);
  tree_add(t, 3, 2, "brick1", "GlusterFS-brick", "writev", 3, 5 * MS, 30 * MS); /* brick clock early */
  tree_add(t, 4, 1, "vm", "GlusterFS-client", "writev", 2, 50 * MS, 90 * MS);  /* no brick fop */
  assert_int_equal(siox_tree_finish(t, 1), 0);
  struct siox_served s[] = {
      {.aid = 2, .start_ns = 10 * MS, .end_ns = 40 * MS, .own = true},
      {.aid = 4, .start_ns = 50 * MS, .end_ns = 90 * MS, .own = true},
      {.aid = 7, .start_ns = 0, .end_ns = 100 * MS, .job = "B"},
  };
  struct siox_served_set set = {.s = s, .n = 3};
  assert_int_equal(siox_blame_connection_windows(t->root, 2, &set), 0);
  assert_int_equal(s[0].start_ns, 10 * MS);
  assert_int_equal(s[1].start_ns, 50 * MS);
  assert_int_equal(siox_blame_connection_windows(t->root, 3, &set), 0); /* at the brick: nothing below */
  siox_tree_destroy(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(the_connection_is_a_queue),
      cmocka_unit_test(nothing_else_moves),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
