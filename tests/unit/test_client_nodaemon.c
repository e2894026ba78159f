/*
 * Backpressure without a daemon: calls return, the ring fills, and what does
 * not fit is counted as dropped. A daemon that appears later receives every
 * record that was kept, and after it goes away and comes back the client
 * reconnects with a new HELLO under the same nonce.
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

static void test_no_daemon_then_daemon(void **state) {
  (void)state;
  char path[108];
  fake_daemon_tmp_path(path, sizeof path, "nodaemon");
  struct siox_options o = {.socket_path = path, .buffer_bytes = 64 << 10};
  assert_int_equal(siox_init(&o), 0);
  siox_unid node;
  siox_type_id t;
  assert_int_equal(siox_node_register("h", "TEST", NULL, &node), 0);
  assert_int_equal(siox_activity_type_register(node, "op", &t), 0);
  enum { N = 5000 }; /* 80 bytes each: far more than 64 KiB */
  for (uint64_t i = 0; i < N; i++) {
    siox_aid a = siox_activity_start(t);
    siox_activity_attr_u64(a, SIOX_ATTR_IO_OFFSET, i);
    siox_activity_attr_u64(a, SIOX_ATTR_IO_BYTES, 1);
    siox_activity_stop(a);
  }
  assert_int_equal(siox_flush(100), -ENOTCONN);
  struct siox_stats s;
  siox_stats_get(&s);
  assert_int_equal(s.connected, 0);
  assert_true(s.dropped > 0);
  assert_int_equal(s.activities + s.dropped, N);

  struct fake_daemon *d = fake_daemon_start(path);
  assert_non_null(d);
  assert_int_equal(siox_flush(5000), 0);
  size_t got = fake_daemon_wait(d, N - s.dropped, 10000);
  assert_int_equal(got, N - s.dropped);
  assert_int_equal(d->bad_frames, 0);
  uint64_t nonce = d->conns[0].nonce;
  /* The kept records are the oldest ones, in order. */
  pthread_mutex_lock(&d->lock);
  for (size_t i = 0; i < got; i++) assert_int_equal(d->acts[i].attrs[0].v.u64, i);
  pthread_mutex_unlock(&d->lock);
  siox_stats_get(&s);
  assert_int_equal(s.connected, 1);
  assert_true(s.bytes_sent > got * 80);

  /* Daemon restart: reconnect, HELLO again with the same nonce. */
  fake_daemon_stop(d);
  wait_disconnected();
  for (int i = 0; i < 10; i++) siox_activity_stop(siox_activity_start(t));
  d = fake_daemon_start(path);
  assert_int_equal(siox_flush(5000), 0);
  assert_int_equal(fake_daemon_wait(d, 10, 10000), 10);
  assert_int_equal(d->nconns, 1);
  assert_int_equal(d->conns[0].nonce, nonce);
  assert_int_equal(d->bad_frames, 0);
  assert_int_equal(siox_finalize(), 0);
  fake_daemon_stop(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_no_daemon_then_daemon)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
