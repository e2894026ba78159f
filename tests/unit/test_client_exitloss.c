/*
 * A process that exits while no daemon takes its records leaves them for
 * the daemon in <socket>.lost/: a HELLO frame, its registrations and records
 * as BATCH frames, and a STATS frame (nothing lost, so dropped_exit 0). Its
 * exit is not held up by the missing daemon.
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <siox/siox.h>

#include "client_fake_daemon.h"

static int64_t mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void test_exit_without_daemon_counts_and_reports(void **state) {
  (void)state;
  char path[108], dir[160];
  fake_daemon_tmp_path(path, sizeof path, "exitloss");
  snprintf(dir, sizeof dir, "%s.lost", path);
  mkdir(dir, 01733); /* as the daemon leaves it; the daemon itself is down */
  struct siox_options o = {.socket_path = path};
  assert_int_equal(siox_init(&o), 0);
  siox_unid node;
  siox_type_id t;
  assert_int_equal(siox_node_register("h", "TEST", NULL, &node), 0);
  assert_int_equal(siox_activity_type_register(node, "op", &t), 0);
  enum { N = 3000 };
  for (int i = 0; i < N; i++) siox_activity_stop(siox_activity_start(t));
  int64_t t0 = mono_ms();
  siox_finalize();
  int64_t took = mono_ms() - t0;
  struct siox_stats s;
  siox_stats_get(&s);
  assert_int_equal(s.activities, N);
  assert_int_equal(s.dropped_exit, 0); /* spilled, not lost */
  assert_true(took < 1000); /* no daemon ever: no wait for one */

  char file[300];
  snprintf(file, sizeof file, "%s/%ld-", dir, (long)getpid());
  DIR *dp = opendir(dir);
  assert_non_null(dp);
  struct dirent *e;
  char found[600] = "";
  while ((e = readdir(dp)))
    if (strncmp(e->d_name, file + strlen(dir) + 1, strlen(file) - strlen(dir) - 1) == 0)
      snprintf(found, sizeof found, "%s/%s", dir, e->d_name);
  closedir(dp);
  assert_true(found[0] != '\0');
  FILE *f = fopen(found, "rb");
  assert_non_null(f);
  static uint8_t buf[4 << 20];
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  struct siox_cw_frame_hdr h;
  memcpy(&h, buf, sizeof h);
  assert_int_equal(h.magic, SIOX_CW_MAGIC);
  assert_int_equal(h.type, SIOX_CW_HELLO);
  size_t off = sizeof h + h.length;
  uint64_t acts = 0, regs = 0;
  for (memcpy(&h, buf + off, sizeof h); off < n && h.type == SIOX_CW_BATCH; memcpy(&h, buf + off, sizeof h)) {
    struct siox_cw_batch b;
    memcpy(&b, buf + off + sizeof h, sizeof b);
    assert_int_equal(b.bytes, h.length - sizeof b);
    for (size_t r = off + sizeof h + sizeof b; r < off + sizeof h + h.length;) {
      struct siox_cw_rec_hdr rh;
      memcpy(&rh, buf + r, sizeof rh);
      assert_true(rh.words > 0);
      acts += rh.type == SIOX_REC_ACTIVITY;
      regs += rh.type == SIOX_REC_TYPE && b.thread == 0;
      r += (size_t)rh.words * 8;
    }
    off += sizeof h + h.length;
  }
  assert_int_equal(acts, N);
  assert_int_equal(regs, 1);
  assert_int_equal(h.type, SIOX_CW_STATS);
  assert_int_equal(h.length, sizeof(struct siox_cw_stats));
  assert_int_equal(n, off + sizeof h + h.length);
  struct siox_cw_stats st;
  memcpy(&st, buf + off + sizeof h, sizeof st);
  assert_int_equal(st.activities, N);
  assert_int_equal(st.dropped_exit, 0);
  unlink(found);
  rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_exit_without_daemon_counts_and_reports)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
