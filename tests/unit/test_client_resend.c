/*
 * Resending after a reconnect: activity frames a daemon took but never
 * acknowledged are sent again on the next connection, and only after the
 * whole registration log. siox-daemon validates each activity against the
 * types the process registered on that connection, so a resent frame that
 * overtook the registrations would be dropped there as naming an unknown
 * type. The first fake daemon never acknowledges and then goes away; the
 * second must receive every activity, each after its type.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include <siox/siox.h>

#include "client_fake_daemon.h"

enum { N = 500 };

static void test_resend_after_registrations(void **state) {
  (void)state;
  char path[108];
  fake_daemon_tmp_path(path, sizeof path, "resend");
  struct fake_daemon *a = fake_daemon_start(path);
  assert_non_null(a);
  a->no_acks = 1;
  struct siox_options o = {.socket_path = path, .flush_interval_ms = 10};
  siox_unid node;
  siox_type_id t;
  assert_int_equal(siox_init(&o), 0);
  assert_int_equal(siox_node_register("h", "TEST", NULL, &node), 0);
  assert_int_equal(siox_activity_type_register(node, "op", &t), 0);
  for (int i = 0; i < N; i++) siox_activity_stop(siox_activity_start(t));
  /* The flush cannot complete (no ACK), but everything is written. */
  siox_flush(200);
  assert_int_equal(fake_daemon_wait(a, N, 10000), N);
  assert_int_equal(a->unregistered, 0);
  fake_daemon_stop(a); /* closes the connection: the frames were never acked */

  struct fake_daemon *b = fake_daemon_start(path);
  assert_non_null(b);
  assert_int_equal(siox_flush(10000), 0);
  assert_int_equal(fake_daemon_wait(b, N, 10000), N);
  assert_int_equal(b->unregistered, 0);
  assert_int_equal(b->bad_frames, 0);
  siox_finalize();
  fake_daemon_stop(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_resend_after_registrations)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
