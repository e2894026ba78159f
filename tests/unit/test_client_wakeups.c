/*
 * An application thread wakes the flusher only when it has something for
 * it. While no daemon runs, the flusher asks for a socket every 100 ms and
 * the next recording thread tries to make one (siox__fd_assist); a try
 * that offered nothing used to be followed by an eventfd write anyway: a
 * system call on the application's call path, and a flusher cycle, ten
 * times a second for nothing. Here write() is interposed to count the
 * 8-byte writes (the wake-up word) made by the recording thread, without a
 * daemon; then a daemon appears and the client must still connect through
 * the socket offered (that wake-up is kept).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <siox/siox.h>

#include "client_fake_daemon.h"

static pthread_t main_thread;
static _Atomic int main_wakes; /* 8-byte writes by the recording (main) thread */

ssize_t write(int fd, const void *buf, size_t n) {
  static ssize_t (*real)(int, const void *, size_t);
  if (!real) real = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
  if (n == sizeof(uint64_t) && pthread_equal(pthread_self(), main_thread)) atomic_fetch_add(&main_wakes, 1);
  return real(fd, buf, n);
}

static void sleep_ms(long ms) {
  nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000}, NULL);
}

static void test_no_wakeup_without_an_offer(void **state) {
  (void)state;
  main_thread = pthread_self();
  char path[108];
  fake_daemon_tmp_path(path, sizeof path, "wakeups");
  siox_type_id t;
  fake_client_setup(path, 0, &t);
  /* 1 s of recording with no daemon: ~10 requests for a socket, each
   * answered by a failed connect in one of these calls. */
  for (int i = 0; i < 200; i++) {
    siox_activity_stop(siox_activity_start(t));
    sleep_ms(5);
  }
  assert_int_equal(atomic_load(&main_wakes), 0);

  struct fake_daemon *d = fake_daemon_start(path);
  assert_non_null(d);
  struct siox_stats s = {0};
  for (int i = 0; i < 2000 && !s.connected; i++) {
    siox_activity_stop(siox_activity_start(t));
    siox_stats_get(&s);
    sleep_ms(5);
  }
  assert_int_equal(s.connected, 1); /* the offered socket was taken */
  assert_int_equal(siox_finalize(), 0);
  assert_int_equal(d->bad_frames, 0);
  fake_daemon_stop(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_no_wakeup_without_an_offer)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
