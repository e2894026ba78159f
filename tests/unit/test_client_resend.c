/*
 * A frame written to the daemon is not delivered until the daemon
 * acknowledges it (ACK, after its journal has it): a daemon killed before
 * that loses what sits in its socket and read buffers. The client holds
 * written frames until acknowledged, siox_flush waits for the ACK, and after
 * the connection breaks the unacknowledged frames go again to the next
 * daemon (the server stores an aid once, so a repeat is harmless), after
 * the whole registration log: siox-daemon validates each activity against
 * the types registered on its connection, and would drop a resent activity
 * that overtook its type's registration.
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
