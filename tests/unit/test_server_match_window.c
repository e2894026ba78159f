/* Unit test: how the in-memory matcher's window (siox-server/
 * match_window.c) says a batch moves match_state.unmatched (schema 035):
 * -1 for a receive stored by an earlier batch that gets its first link,
 * nothing for a receive of the batch itself (its row is stored after its
 * links), nothing for a receive that only changes its links, +1 for one
 * that loses its last. And the clock widening: none between two calls of
 * one daemon. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "match_window.h"

#define T0 1700000000000000000LL
#define MS 1000000LL

struct fixture {
  struct siox_mw *w;
  uint32_t node, d;
  struct siox_mw_out out;
};

static int setup(void **state) {
  static struct fixture f;
  memset(&f, 0, sizeof f);
  f.w = siox_mw_new(1024, 30000 * MS, 2000 * MS);
  if (!f.w) return -1;
  siox_mw_start(f.w, INT64_MIN, 0);
  f.node = siox_mw_intern(f.w, "brick1", 0);
  f.d = siox_mw_daemon(f.w, 1, 20000);
  *state = &f;
  return 0;
}

static int teardown(void **state) {
  struct fixture *f = *state;
  siox_mw_out_free(&f->out);
  siox_mw_free(f->w);
  return 0;
}

/* A ranged call on object 1: [off, off + 4096), [start, end) in ms after T0. */
static struct siox_mw_call call(const struct fixture *f, char kind, int64_t aid, int64_t off, int64_t start,
                                int64_t end) {
  return (struct siox_mw_call){.aid = aid, .object = 1, .offset = off, .length = 4096, .start = T0 + start * MS,
                               .end = T0 + end * MS, .hw = f->node, .sw = f->node, .daemon = f->d, .kind = kind};
}

/* One batch; returns its out.unmatched (out emptied first). */
static int64_t batch(struct fixture *f, struct siox_mw_call *c, size_t n) {
  f->out.nlinks = f->out.nstale = 0, f->out.unmatched = 0;
  assert_int_equal(siox_mw_batch(f->w, c, n, &f->out), 0);
  for (size_t i = 0; i < n; i++) assert_int_equal(c[i].in_memory, 1);
  return f->out.unmatched;
}

static void test_stored_receive_first_link(void **state) {
  struct fixture *f = *state;
  struct siox_mw_call r[] = {call(f, 'R', 2, 0, 10, 20), call(f, 'R', 3, 8192, 10, 20)};
  assert_int_equal(batch(f, r, 2), 0); /* stored unmatched: the insert trigger counts them */
  struct siox_mw_call s[] = {call(f, 'S', 1, 0, 5, 30)};
  assert_int_equal(batch(f, s, 1), -1); /* receive 2's first link; 3 is not near it */
  assert_int_equal(f->out.nlinks, 1);
  struct siox_mw_call s2[] = {call(f, 'S', 4, 0, 8, 25)};
  assert_int_equal(batch(f, s2, 1), 0); /* receive 2 again: its links change, it stays matched */
  assert_true(f->out.nlinks >= 1);
}

static void test_receive_of_the_batch_is_not_counted(void **state) {
  struct fixture *f = *state;
  struct siox_mw_call c[] = {call(f, 'S', 1, 0, 5, 30), call(f, 'R', 2, 0, 10, 20)};
  assert_int_equal(batch(f, c, 2), 0); /* linked before its row is stored */
  assert_int_equal(f->out.nlinks, 1);
}

static void test_before_parent_replaced_stays_matched(void **state) {
  struct fixture *f = *state;
  struct siox_mw_call r[] = {call(f, 'R', 2, 0, 10, 20)};
  assert_int_equal(batch(f, r, 1), 0);
  struct siox_mw_call late[] = {call(f, 'S', 1, 0, 500, 600)}; /* R starts 490 ms before it: read-ahead */
  assert_int_equal(batch(f, late, 1), -1);
  assert_string_equal(f->out.links[0].flags, "before-parent");
  struct siox_mw_call inside[] = {call(f, 'S', 4, 0, 5, 30)};
  assert_int_equal(batch(f, inside, 1), 0); /* the guess goes stale, the receive keeps a link */
  assert_int_equal(f->out.nstale, 1);
}

/* Times in us after T0 (the edge cases below are sub-millisecond). */
static struct siox_mw_call call_us(const struct fixture *f, char kind, int64_t aid, uint32_t d, int64_t start,
                                   int64_t end) {
  struct siox_mw_call c = call(f, kind, aid, 0, 0, 0);
  c.start = T0 + start * 1000, c.end = T0 + end * 1000, c.daemon = d;
  return c;
}

/* A receive that starts 0.2 ms after its sender ended: with both calls of
 * one daemon (one host clock) it is after-parent, the 100 us slack alone;
 * across daemons of 0.5 ms uncertainty each (w 1.1 ms) it is inside. */
static void test_one_daemon_no_clock_widening(void **state) {
  struct fixture *f = *state;
  uint32_t d2 = siox_mw_daemon(f->w, 2, 500000), d3 = siox_mw_daemon(f->w, 3, 500000);
  struct siox_mw_call one[] = {call_us(f, 'S', 1, d2, 0, 2000), call_us(f, 'R', 2, d2, 2200, 2500)};
  batch(f, one, 2);
  assert_int_equal(f->out.nlinks, 1);
  assert_string_equal(f->out.links[0].flags, "after-parent");
  struct siox_mw_call two[] = {call_us(f, 'S', 3, d2, 0, 2000), call_us(f, 'R', 4, d3, 2200, 2500)};
  two[0].object = two[1].object = 2;
  batch(f, two, 2);
  assert_int_equal(f->out.nlinks, 1);
  assert_string_equal(f->out.links[0].flags, "");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_stored_receive_first_link, setup, teardown),
      cmocka_unit_test_setup_teardown(test_receive_of_the_batch_is_not_counted, setup, teardown),
      cmocka_unit_test_setup_teardown(test_before_parent_replaced_stays_matched, setup, teardown),
      cmocka_unit_test_setup_teardown(test_one_daemon_no_clock_widening, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
