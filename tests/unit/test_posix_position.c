/* POSIX layer position tracking: write/read report the offset where they
 * started from the tracked position, known or not; fork forgets positions
 * (the child shares offsets with its parent); several threads advancing
 * one description account for every byte. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fdtable.h"

static int teardown(void **state) {
  (void)state;
  sxp_fd_detach_range(0, SXP_FD_MAX - 1);
  return 0;
}

static void test_sequential_offsets(void **state) {
  (void)state;
  struct sxp_ofd *o = sxp_ofd_create("/f", 0, 0);
  sxp_fd_attach(3, o);
  assert_int_equal(sxp_ofd_advance(o, 100), 0);
  assert_int_equal(sxp_ofd_advance(o, 100), 100);
  assert_int_equal(sxp_ofd_advance(o, 1), 200);
  sxp_ofd_set(o, 4096); /* lseek */
  assert_int_equal(sxp_ofd_advance(o, 10), 4096);
  assert_int_equal(sxp_ofd_pos(o), 4106);
}

static void test_unknown_stays_unknown(void **state) {
  (void)state;
  struct sxp_ofd *o = sxp_ofd_create("/log", SXP_POS_UNKNOWN, SXP_OFD_APPEND);
  sxp_fd_attach(3, o);
  assert_int_equal(sxp_ofd_advance(o, 50), SXP_POS_UNKNOWN);
  assert_int_equal(sxp_ofd_pos(o), SXP_POS_UNKNOWN); /* not unknown + 50 */
  assert_int_equal(sxp_ofd_flags(o) & SXP_OFD_APPEND, SXP_OFD_APPEND);
}

static void test_fork_forgets_positions(void **state) {
  (void)state;
  struct sxp_ofd *a = sxp_ofd_create("/a", 0, 0), *b = sxp_ofd_create("/b", 0, 0);
  sxp_fd_attach(3, a);
  sxp_fd_attach(SXP_FD_CHUNK + 2, b);
  sxp_ofd_advance(a, 7);
  sxp_stream_set(sxp_fd_peek(3), 9);
  sxp_fd_forget_positions();
  assert_int_equal(sxp_ofd_pos(a), SXP_POS_UNKNOWN);
  assert_int_equal(sxp_ofd_pos(b), SXP_POS_UNKNOWN);
  assert_int_equal(sxp_stream_pos(sxp_fd_peek(3)), SXP_POS_UNKNOWN);
  assert_ptr_equal(sxp_fd_ofd(3), a); /* the fds themselves stay */
}

#define THREADS 4
#define STEPS 10000

static void *writer(void *arg) {
  struct sxp_ofd *o = arg;
  for (int i = 0; i < STEPS; i++) sxp_ofd_advance(o, 3);
  return NULL;
}

static void test_threads_account_every_byte(void **state) {
  (void)state;
  struct sxp_ofd *o = sxp_ofd_create("/shared", 0, 0);
  sxp_fd_attach(3, o);
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; i++) assert_int_equal(pthread_create(&t[i], NULL, writer, o), 0);
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  assert_int_equal(sxp_ofd_pos(o), (uint64_t)THREADS * STEPS * 3);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_sequential_offsets, teardown),
      cmocka_unit_test_teardown(test_unknown_stays_unknown, teardown),
      cmocka_unit_test_teardown(test_fork_forgets_positions, teardown),
      cmocka_unit_test_teardown(test_threads_account_every_byte, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
