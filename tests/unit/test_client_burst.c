/*
 * A burst larger than the thread's ring: the producer wakes the flusher
 * when its ring passes the fill mark (an eighth of it), so with a flush
 * timer far longer than the test (60 s) the records reach the daemon during
 * the burst, and none is dropped. Without the wake-up the ring would
 * overflow and the records would arrive only at the timer or at the final
 * flush. The producer waits for the daemon's count, never for a time.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include <siox/siox.h>

#include "client_fake_daemon.h"

#define RING_BYTES (64u << 10)
#define BURST 20000 /* about 20 rings of activities */

static void test_burst_beyond_ring(void **state) {
  (void)state;
  char sock[108];
  fake_daemon_tmp_path(sock, sizeof sock, "burst");
  struct fake_daemon *fd = fake_daemon_start(sock);
  assert_non_null(fd);
  struct siox_options o = {.socket_path = sock, .buffer_bytes = RING_BYTES, .flush_interval_ms = 60000};
  assert_int_equal(siox_init(&o), 0);
  siox_unid node;
  siox_type_id t;
  assert_int_equal(siox_node_register("host1", "BURST", NULL, &node), 0);
  assert_int_equal(siox_activity_type_register(node, "write", &t), 0);
  struct siox_attr a[2] = {{SIOX_ATTR_IO_BYTES, SIOX_VT_U64, {.u64 = 4096}}, {SIOX_ATTR_IO_OFFSET, SIOX_VT_U64, {.u64 = 0}}};
  /* Records below the fill mark (an eighth of the ring) wait for the
   * timer; past it the producer's wake-up ships them. So after every 256
   * records the daemon must hold all but at most an eighth of a ring (with
   * the mark at half a ring, as until 2026-12-07, it held less: a streaming
   * thread must wake the flusher early, as the flusher no longer polls it
   * every 20 ms), and waiting for that here (not
   * for a time) keeps the test exact on a loaded machine: without the
   * wake-up it times out, with it nothing overflows and nothing is dropped. */
  size_t mark = RING_BYTES / 8 / (48 + 2 * 16) + 1;
  for (int i = 0; i < BURST; i++) {
    siox_aid aid = siox_activity_start(t);
    assert_int_not_equal(aid, 0);
    a[1].v.u64 = (uint64_t)i * 4096;
    siox_activity_stop_attrs(aid, a, 2, 0);
    size_t made = (size_t)i + 1;
    if (made % 256 == 0 && made > mark) assert_true(fake_daemon_wait(fd, made - mark, 30000) >= made - mark);
  }
  assert_int_equal(siox_flush(5000), 0);
  assert_true(fake_daemon_wait(fd, BURST, 10000) >= BURST);
  struct siox_stats s;
  siox_stats_get(&s);
  assert_int_equal(s.dropped, 0);
  assert_int_equal(s.activities, BURST);
  assert_int_equal(siox_finalize(), 0);
  fake_daemon_stop(fd);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_burst_beyond_ring)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
