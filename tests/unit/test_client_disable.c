/*
 * SIOX_DISABLE=1: the library records nothing and never connects; every
 * call returns at once with a neutral result.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include <siox/siox.h>

#include "client_fake_daemon.h"

static void test_disabled(void **state) {
  (void)state;
  char path[108];
  fake_daemon_tmp_path(path, sizeof path, "disable");
  struct fake_daemon *d = fake_daemon_start(path);
  setenv(SIOX_ENV_DISABLE, "1", 1);
  setenv(SIOX_ENV_SOCKET, path, 1);
  siox_unid node = 99;
  siox_type_id t = 99;
  assert_int_equal(siox_node_register("h", "TEST", NULL, &node), 0);
  assert_int_equal(node, 0);
  assert_int_equal(siox_activity_type_register(node, "op", &t), 0);
  assert_int_equal(siox_activity_start(t), 0);
  assert_int_equal(siox_activity_start(1), 0);
  siox_activity_stop(1);
  assert_int_equal(siox_flush(100), 0);
  struct siox_stats s;
  assert_int_equal(siox_stats_get(&s), 0);
  assert_int_equal(s.activities + s.records + s.dropped + s.bytes_sent, 0);
  assert_int_equal(siox_finalize(), 0);
  pthread_mutex_lock(&d->lock);
  assert_int_equal(d->nconns, 0);
  pthread_mutex_unlock(&d->lock);
  fake_daemon_stop(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_disabled)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
