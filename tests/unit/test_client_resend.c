/*
 * A frame written to the daemon is not delivered until the daemon
 * acknowledges it (ACK, after its journal has it): a daemon killed before
 * that loses what sits in its socket and read buffers. The client holds
 * written frames until acknowledged, siox_flush waits for the ACK, and after
 * the connection breaks the unacknowledged frames go again to the next
 * daemon, after the whole registration log: siox-daemon validates each
 * activity against the types registered on its connection, and would drop
 * a resent activity that overtook its type's registration. Each ring frame
 * carries its seq (1, 2, 3... per process incarnation), the same when it
 * is resent, so that the daemon can drop a copy of a frame it had taken;
 * registration frames carry none (they are sent whole every time).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include <siox/siox.h>

#include "client_fake_daemon.h"

static void wait_disconnected(void) {
  struct siox_stats s;
  for (int i = 0; i < 2000; i++) {
    siox_stats_get(&s);
    if (!s.connected) return;
    nanosleep(&(struct timespec){0, 5000000}, NULL);
  }
  fail_msg("client did not notice the daemon going away");
}

/* The ring frames' seqs the fake daemon saw (registrations, seq 0, left
 * out), and checks those carry none. */
static size_t ring_seqs(struct fake_daemon *d, uint32_t *out, size_t cap) {
  size_t n = 0;
  pthread_mutex_lock(&d->lock);
  for (size_t i = 0; i < d->nframe_seqs; i++) {
    if (d->frame_seqs[i].thread == 0) {
      assert_int_equal(d->frame_seqs[i].seq, 0);
      continue;
    }
    if (n < cap) out[n++] = d->frame_seqs[i].seq;
  }
  pthread_mutex_unlock(&d->lock);
  return n;
}

static void test_unacknowledged_frames_are_resent(void **state) {
  (void)state;
  char path[108];
  fake_daemon_tmp_path(path, sizeof path, "resend");
  struct fake_daemon *d = fake_daemon_start(path);
  assert_non_null(d);
  d->no_acks = 1; /* a daemon killed before it journaled anything */
  struct siox_options o = {.socket_path = path};
  assert_int_equal(siox_init(&o), 0);
  siox_unid node;
  siox_type_id t;
  assert_int_equal(siox_node_register("h", "TEST", NULL, &node), 0);
  assert_int_equal(siox_activity_type_register(node, "op", &t), 0);
  enum { N = 1000 };
  for (uint64_t i = 0; i < N; i++) {
    siox_aid a = siox_activity_start(t);
    siox_activity_attr_u64(a, SIOX_ATTR_IO_OFFSET, i);
    siox_activity_stop(a);
  }
  /* Written, received, but never acknowledged: not delivered. */
  assert_int_equal(siox_flush(300), -ETIMEDOUT);
  assert_int_equal(fake_daemon_wait(d, N, 5000), N);
  uint32_t first[256], again[256];
  size_t nfirst = ring_seqs(d, first, 256);
  assert_true(nfirst > 0);
  for (size_t i = 0; i < nfirst; i++) assert_int_equal(first[i], i + 1); /* 1, 2, 3... */
  fake_daemon_stop(d);
  wait_disconnected();

  /* The next daemon gets all of them again, in order, with the
   * registrations first (it must be able to resolve the type). */
  d = fake_daemon_start(path);
  assert_int_equal(siox_flush(5000), 0);
  assert_int_equal(fake_daemon_wait(d, N, 5000), N);
  pthread_mutex_lock(&d->lock);
  for (size_t i = 0; i < N; i++) assert_int_equal(d->acts[i].attrs[0].v.u64, i);
  int type_registered = 0;
  for (size_t i = 0; i < d->nregs; i++) type_registered |= d->regs[i].rtype == SIOX_REC_TYPE && d->regs[i].a == t;
  pthread_mutex_unlock(&d->lock);
  assert_true(type_registered);
  assert_int_equal(d->unregistered, 0); /* each activity came after its type */
  /* The same frames with the same seqs, whatever comes after them newer. */
  size_t nagain = ring_seqs(d, again, 256);
  assert_true(nagain >= nfirst);
  for (size_t i = 0; i < nfirst; i++) assert_int_equal(again[i], first[i]);
  for (size_t i = nfirst; i < nagain; i++) assert_true(again[i] > again[i - 1]);
  assert_int_equal(d->bad_frames, 0);
  struct siox_stats s;
  siox_stats_get(&s);
  assert_int_equal(s.dropped, 0);
  assert_int_equal(siox_finalize(), 0);
  siox_stats_get(&s);
  assert_int_equal(s.dropped_exit, 0);
  fake_daemon_stop(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_unacknowledged_frames_are_resent)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
