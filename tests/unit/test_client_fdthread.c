/*
 * The flusher thread makes no file descriptor in the application's table
 * (with a table of its own, own_table.c, it makes its sockets there).
 * Every new descriptor takes the lowest free number for a moment, and
 * single-threaded programs keep a number free on purpose (dash: close(1), then dup2(file, 1)); a socket the
 * flusher made in that gap was replaced by the dup2 and then closed by the
 * flusher, taking the program's stdout with it. Here socket, eventfd and
 * open are interposed to note the thread of every caller, through a daemon
 * that is missing, appears, goes away and comes back.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <linux/kcmp.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <siox/siox.h>

#include "client_fake_daemon.h"

static pthread_t main_thread;
static _Atomic int off_main; /* descriptors made by another thread */

/* Counts a descriptor made by another thread in the main thread's table
 * (kcmp: 0 when both share it; an error counts as shared). */
static void note_caller(void) {
  if (pthread_equal(pthread_self(), main_thread)) return;
  if (syscall(SYS_kcmp, getpid(), (pid_t)syscall(SYS_gettid), KCMP_FILES, 0, 0) <= 0) atomic_fetch_add(&off_main, 1);
}

int socket(int domain, int type, int protocol) {
  static int (*real)(int, int, int);
  if (!real) real = (int (*)(int, int, int))dlsym(RTLD_NEXT, "socket");
  note_caller();
  return real(domain, type, protocol);
}

int eventfd(unsigned int initval, int flags) {
  static int (*real)(unsigned int, int);
  if (!real) real = (int (*)(unsigned int, int))dlsym(RTLD_NEXT, "eventfd");
  note_caller();
  return real(initval, flags);
}

int open(const char *path, int flags, ...) {
  static int (*real)(const char *, int, ...);
  if (!real) real = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
  va_list ap;
  va_start(ap, flags);
  mode_t mode = (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
  va_end(ap);
  note_caller();
  return real(path, flags, mode);
}

static void sleep_ms(long ms) {
  nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000}, NULL);
}

static void test_flusher_makes_no_descriptor(void **state) {
  (void)state;
  main_thread = pthread_self();
  char path[108];
  fake_daemon_tmp_path(path, sizeof path, "fdthread");
  struct siox_options o = {.socket_path = path};
  assert_int_equal(siox_init(&o), 0);
  siox_unid node;
  siox_type_id t;
  assert_int_equal(siox_node_register("h", "TEST", NULL, &node), 0);
  assert_int_equal(siox_activity_type_register(node, "op", &t), 0);
  siox_activity_stop(siox_activity_start(t)); /* the flusher starts */
  /* No daemon, no call: the flusher retries every 100 ms, and asks. */
  sleep_ms(400);
  assert_int_equal(atomic_load(&off_main), 0);

  struct fake_daemon *d = fake_daemon_start(path);
  assert_non_null(d);
  fake_client_record_until(t, 1); /* the next calls make the socket it asked for */
  fake_daemon_stop(d);
  fake_client_record_until(t, 0);
  sleep_ms(300); /* a lost connection: the flusher asks again, idle */
  d = fake_daemon_start(path);
  assert_non_null(d);
  assert_int_equal(siox_flush(5000), 0); /* the flush itself makes it */
  struct siox_stats s;
  siox_stats_get(&s);
  assert_int_equal(s.connected, 1);
  assert_int_equal(d->bad_frames, 0);
  assert_int_equal(siox_finalize(), 0);
  fake_daemon_stop(d);
  assert_int_equal(atomic_load(&off_main), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_flusher_makes_no_descriptor)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
