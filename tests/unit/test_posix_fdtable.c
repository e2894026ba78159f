/* POSIX layer fd table: fds share one description after dup (as the kernel
 * shares the offset), close drops only its fd, the table grows past the
 * static first chunk, and stream positions start unknown. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "fdtable.h"

static int teardown(void **state) {
  (void)state;
  sxp_fd_detach_range(0, SXP_FD_MAX - 1);
  return 0;
}

static void test_attach_and_detach(void **state) {
  (void)state;
  assert_null(sxp_fd_ofd(5));
  struct sxp_ofd *o = sxp_ofd_create("/tmp/a", 0, 0);
  assert_int_equal(sxp_fd_attach(5, o), 0);
  assert_ptr_equal(sxp_fd_ofd(5), o);
  assert_string_equal(sxp_fd_ofd(5)->path, "/tmp/a");
  assert_int_equal(sxp_fd_ofd(5)->pathlen, 6);
  assert_int_equal(sxp_fd_detach(5), 1);
  assert_null(sxp_fd_ofd(5));
  assert_int_equal(sxp_fd_detach(5), 0);
}

static void test_dup_shares_description(void **state) {
  (void)state;
  struct sxp_ofd *o = sxp_ofd_create("/f", 0, 0);
  sxp_fd_attach(3, o);
  assert_int_equal(sxp_fd_dup(3, 7), 0);
  assert_ptr_equal(sxp_fd_ofd(7), o);
  assert_int_equal(atomic_load(&o->refs), 2);
  sxp_ofd_advance(sxp_fd_ofd(3), 10);
  assert_int_equal(sxp_ofd_pos(sxp_fd_ofd(7)), 10); /* one offset for both */
  sxp_fd_detach(3);
  assert_ptr_equal(sxp_fd_ofd(7), o); /* still alive through fd 7 */
  assert_int_equal(atomic_load(&o->refs), 1);
  sxp_fd_detach(7);
}

static void test_dup_of_unknown_clears_target(void **state) {
  (void)state;
  sxp_fd_attach(9, sxp_ofd_create("/old", 0, 0));
  assert_int_equal(sxp_fd_dup(8, 9), -ENOENT);
  assert_null(sxp_fd_ofd(9)); /* fd 9 now names whatever fd 8 is */
}

static void test_attach_replaces_stale(void **state) {
  (void)state;
  sxp_fd_attach(4, sxp_ofd_create("/first", 0, 0));
  sxp_fd_attach(4, sxp_ofd_create("/second", 0, 0)); /* the first is freed (ASan) */
  assert_string_equal(sxp_fd_ofd(4)->path, "/second");
}

static void test_grows_past_first_chunk(void **state) {
  (void)state;
  int big = SXP_FD_CHUNK * 3 + 17;
  assert_null(sxp_fd_peek(big));
  assert_int_equal(sxp_fd_attach(big, sxp_ofd_create(NULL, 0, 0)), 0);
  assert_non_null(sxp_fd_peek(big));
  assert_int_equal(sxp_fd_ofd(big)->pathlen, 0);
  assert_null(sxp_fd_ofd(big - 1));
  assert_int_equal(sxp_fd_attach(SXP_FD_MAX, sxp_ofd_create(NULL, 0, 0)), -EBADF);
  assert_int_equal(sxp_fd_attach(-1, sxp_ofd_create(NULL, 0, 0)), -EBADF);
  sxp_fd_detach_range((unsigned)big - 5, ~0u);
  assert_null(sxp_fd_ofd(big));
}

static void test_detach_range(void **state) {
  (void)state;
  for (int fd = 10; fd < 20; fd++) sxp_fd_attach(fd, sxp_ofd_create(NULL, 0, 0));
  sxp_fd_detach_range(12, 15);
  for (int fd = 10; fd < 20; fd++) {
    if (fd >= 12 && fd <= 15) assert_null(sxp_fd_ofd(fd));
    else assert_non_null(sxp_fd_ofd(fd));
  }
}

static void test_stream_position_starts_unknown(void **state) {
  (void)state;
  struct sxp_fd *s = sxp_fd_slot(1); /* like stdout: never opened here */
  assert_int_equal(sxp_stream_pos(s), SXP_POS_UNKNOWN);
  assert_int_equal(sxp_stream_advance(s, 5), SXP_POS_UNKNOWN);
  sxp_stream_set(s, 0);
  assert_int_equal(sxp_stream_advance(s, 5), 0);
  assert_int_equal(sxp_stream_advance(s, 3), 5);
  assert_int_equal(sxp_stream_pos(s), 8);
  sxp_stream_reset(s);
  assert_int_equal(sxp_stream_pos(s), SXP_POS_UNKNOWN);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_attach_and_detach, teardown),
      cmocka_unit_test_teardown(test_dup_shares_description, teardown),
      cmocka_unit_test_teardown(test_dup_of_unknown_clears_target, teardown),
      cmocka_unit_test_teardown(test_attach_replaces_stale, teardown),
      cmocka_unit_test_teardown(test_grows_past_first_chunk, teardown),
      cmocka_unit_test_teardown(test_detach_range, teardown),
      cmocka_unit_test_teardown(test_stream_position_starts_unknown, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
