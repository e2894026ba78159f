/*
 * siox-daemon frameseq.c: the highest client frame seq taken per process
 * incarnation (uid, nonce). A frame at or below it is a resent copy; seq 0
 * (none) never is; seqs wrap; another uid's claim of a nonce is neither
 * answered nor changed; the table's export (which the journal carries)
 * imports to the same answers; it holds at most 65536 nonces.
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

static void test_taken_seqs_are_copies(void **state) {
  (void)state;
  struct daemon d = {0};
  const uint64_t n = 0x1234567890abcdefull;
  assert_false(frameseq_resent(&d, 7, n, 1)); /* nothing known */
  for (uint32_t s = 1; s <= 3; s++) frameseq_take(&d, 7, n, s);
  assert_true(frameseq_resent(&d, 7, n, 2));
  assert_true(frameseq_resent(&d, 7, n, 3));
  assert_false(frameseq_resent(&d, 7, n, 4));
  assert_false(frameseq_resent(&d, 7, n, 0)); /* no seq: always new */
  assert_int_equal(d.ctr.frames_resent_dropped, 2);
  /* Another uid claiming the nonce: not answered, not changed. */
  assert_false(frameseq_resent(&d, 8, n, 2));
  frameseq_take(&d, 8, n, 100);
  assert_false(frameseq_resent(&d, 7, n, 50));
  /* Serial-number order across the wrap (2^32 - 1, then 1). */
  const uint64_t m = 42;
  frameseq_take(&d, 7, m, 0xffffffffu);
  assert_true(frameseq_resent(&d, 7, m, 0xfffffff0u));
  assert_false(frameseq_resent(&d, 7, m, 1));
  frameseq_take(&d, 7, m, 1);
  assert_true(frameseq_resent(&d, 7, m, 0xffffffffu));
  assert_false(frameseq_resent(&d, 7, m, 2));
  frameseq_free(&d);
}

static void test_table_survives_a_restart(void **state) {
  (void)state;
  struct daemon d = {0};
  frameseq_open(&d, 7, 99);
  frameseq_take(&d, 7, 99, 10);
  frameseq_take(&d, 9, 1000, 3);
  uint8_t *tab;
  ssize_t n = frameseq_export(&d, &tab); /* what the journal carries */
  assert_int_equal(n, 2 * 16);
  frameseq_free(&d);

  struct daemon e = {0};
  assert_int_equal(frameseq_import(&e, tab, (size_t)n), 0);
  assert_true(frameseq_resent(&e, 7, 99, 10));
  assert_false(frameseq_resent(&e, 7, 99, 11));
  assert_true(frameseq_resent(&e, 9, 1000, 3));
  assert_false(frameseq_resent(&e, 7, 1000, 3)); /* the uid is kept too */
  /* A later (lower) table does not move a seq back. */
  frameseq_take(&e, 7, 99, 20);
  assert_int_equal(frameseq_import(&e, tab, (size_t)n), 0);
  assert_true(frameseq_resent(&e, 7, 99, 20));
  assert_int_equal(frameseq_import(&e, tab, n - 1), -EBADMSG); /* not whole entries */
  frameseq_free(&e);
  free(tab);

  struct daemon g = {0};
  assert_int_equal(frameseq_export(&g, &tab), 0); /* empty: nothing to carry */
  assert_null(tab);
}

static void test_bounded(void **state) {
  (void)state;
  struct daemon d = {0};
  for (uint64_t i = 1; i <= 65536; i++) frameseq_open(&d, 1, i); /* live sessions: never forgotten */
  frameseq_take(&d, 1, 5, 4);
  assert_true(frameseq_resent(&d, 1, 5, 4));
  frameseq_take(&d, 1, 70000, 4); /* full: not tracked */
  assert_false(frameseq_resent(&d, 1, 70000, 4));
  frameseq_free(&d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_taken_seqs_are_copies),
      cmocka_unit_test(test_table_survives_a_restart),
      cmocka_unit_test(test_bounded),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
