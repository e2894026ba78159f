/*
 * siox-daemon spool: batches written are replayed in seq order after a
 * reopen, acknowledged ones are unlinked, the byte bound reports full, and
 * seq numbers are never reused across restarts (spool files + state file).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon.h"

static char dir[64];

static int setup(void **state) {
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/siox-spool-test-XXXXXX");
  return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd);
}

/* Seals one batch whose block bytes are `fill` repeated n times. */
static void put(struct spool *s, uint8_t fill, size_t n) {
  uint8_t *blk = malloc(n);
  memset(blk, fill, n);
  struct spool_batch b = {.h = {SPOOL_MAGIC, SPOOL_VERSION, s->next_seq, 10, 100, (uint32_t)n, 0}, .block = blk};
  assert_int_equal(spool_write(s, &b), 0);
  s->next_seq++;
  free(blk);
}

static void test_replay_in_order(void **state) {
  (void)state;
  struct spool s;
  assert_int_equal(spool_open(&s, dir, 1 << 20), 0);
  assert_int_equal(s.next_seq, 1);
  /* Twelve batches: numeric order differs from name order (10 < 2). */
  for (int i = 1; i <= 12; i++)
    put(&s, (uint8_t)i, 100 + (size_t)i);
  spool_close(&s);
  assert_int_equal(spool_open(&s, dir, 1 << 20), 0);
  assert_int_equal(s.n, 12);
  assert_int_equal(s.next_seq, 13);
  for (size_t i = 0; i < s.n; i++) {
    struct spool_batch b;
    assert_int_equal(spool_at(&s, i)->seq, i + 1);
    assert_int_equal(spool_read(&s, i + 1, &b), 0);
    assert_int_equal(b.h.block_len, 101 + i);
    assert_int_equal(b.block[0], (uint8_t)(i + 1));
    spool_batch_free(&b);
  }
  spool_close(&s);
}

static void test_ack_unlinks_and_seq_survives(void **state) {
  (void)state;
  struct spool s;
  assert_int_equal(spool_open(&s, dir, 1 << 20), 0);
  for (int i = 0; i < 5; i++)
    put(&s, 1, 64);
  assert_int_equal(spool_ack(&s, 3), 3);
  assert_int_equal(s.n, 2);
  assert_int_equal(spool_at(&s, 0)->seq, 4);
  struct spool_batch b;
  assert_int_equal(spool_read(&s, 2, &b), -ENOENT);
  assert_int_equal(spool_ack(&s, 5), 2);
  assert_int_equal(s.n, 0);
  assert_int_equal(s.bytes, 0);
  spool_close(&s);
  /* Every file is gone; the state file still forbids reusing 1..5. */
  assert_int_equal(spool_open(&s, dir, 1 << 20), 0);
  assert_int_equal(s.n, 0);
  assert_int_equal(s.next_seq, 6);
  spool_close(&s);
}

static void test_bound_reports_full(void **state) {
  (void)state;
  struct spool s;
  assert_int_equal(spool_open(&s, dir, 3 * (1024 + sizeof(struct spool_hdr))), 0);
  put(&s, 1, 1024);
  put(&s, 2, 1024);
  assert_false(spool_full(&s));
  put(&s, 3, 1024);
  assert_true(spool_full(&s));
  assert_int_equal(s.bytes, 3 * (1024 + sizeof(struct spool_hdr)));
  /* Full never deletes: everything is still readable. */
  assert_int_equal(s.n, 3);
  assert_int_equal(spool_ack(&s, 1), 1);
  assert_false(spool_full(&s));
  spool_close(&s);
}

static void test_stale_temporaries_removed(void **state) {
  (void)state;
  char path[128];
  snprintf(path, sizeof path, "%s/spool", dir);
  assert_int_equal(state_mkdirs(path, 0700), 0);
  snprintf(path, sizeof path, "%s/spool/7.sxb.tmp", dir);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs("half", f);
  fclose(f);
  struct spool s;
  assert_int_equal(spool_open(&s, dir, 1 << 20), 0);
  assert_int_equal(s.n, 0);
  assert_int_equal(access(path, F_OK), -1);
  spool_close(&s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_replay_in_order, setup, teardown),
      cmocka_unit_test_setup_teardown(test_ack_unlinks_and_seq_survives, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bound_reports_full, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stale_temporaries_removed, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
