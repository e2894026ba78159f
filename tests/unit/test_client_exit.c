/*
 * Process exit flushes: a process that records activities and calls exit()
 * without siox_finalize() still delivers them (the library destructor runs
 * siox_finalize with the bounded exit timeout). The recording process is
 * forked before the fake daemon starts, so it carries no daemon state.
 * A process that only initialises and registers (a preloaded /bin/true)
 * starts no flusher thread and never connects: it pays no per-process tax.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <siox/siox.h>

#include "client_fake_daemon.h"

enum { N = 300 };

static void recorder(int go_fd, const char *path) {
  char c;
  if (read(go_fd, &c, 1) != 1) _exit(4);
  struct siox_options o = {.socket_path = path, .flush_interval_ms = 60000};
  siox_unid node;
  siox_type_id t;
  if (siox_init(&o) < 0 || siox_node_register("h", "TEST", NULL, &node) < 0 ||
      siox_activity_type_register(node, "op", &t) < 0)
    _exit(5);
  for (int i = 0; i < N; i++) siox_activity_stop(siox_activity_start(t));
  exit(0); /* no siox_finalize(): the destructor must flush */
}

static void test_exit_flushes(void **state) {
  (void)state;
  char path[108];
  fake_daemon_tmp_path(path, sizeof path, "exit");
  int go[2];
  assert_int_equal(pipe(go), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) recorder(go[0], path);
  struct fake_daemon *d = fake_daemon_start(path);
  assert_non_null(d);
  assert_int_equal(write(go[1], "g", 1), 1);
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  assert_int_equal(fake_daemon_wait(d, N, 10000), N);
  assert_int_equal(d->bad_frames, 0);
  fake_daemon_stop(d);
}

/* Threads of the calling process (/proc/self/task entries). */
static int thread_count(void) {
  DIR *d = opendir("/proc/self/task");
  if (!d) return -1;
  int n = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

static void idler(int go_fd, const char *path) {
  char c;
  if (read(go_fd, &c, 1) != 1) _exit(4);
  struct siox_options o = {.socket_path = path};
  siox_unid node;
  siox_type_id t;
  if (siox_init(&o) < 0 || siox_node_register("h", "TEST", NULL, &node) < 0 ||
      siox_activity_type_register(node, "op", &t) < 0)
    _exit(5);
  exit(thread_count() == 1 ? 0 : 6); /* 6: a flusher thread was started */
}

static void test_idle_process_costs_nothing(void **state) {
  (void)state;
  char path[108];
  fake_daemon_tmp_path(path, sizeof path, "idle");
  int go[2];
  assert_int_equal(pipe(go), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) idler(go[0], path);
  struct fake_daemon *d = fake_daemon_start(path);
  assert_non_null(d);
  assert_int_equal(write(go[1], "g", 1), 1);
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  pthread_mutex_lock(&d->lock);
  size_t conns = d->nconns;
  pthread_mutex_unlock(&d->lock);
  assert_int_equal(conns, 0); /* no connection, no HELLO, no exit flush */
  fake_daemon_stop(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_exit_flushes),
                                     cmocka_unit_test(test_idle_process_costs_nothing)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
