/*
 * Process exit flushes: a process that records activities and calls exit()
 * without siox_finalize() still delivers them (the library destructor runs
 * siox_finalize with the bounded exit timeout). The recording process is
 * forked before the fake daemon starts, so it carries no daemon state.
 * A process that only initialises and registers (a preloaded /bin/true)
 * starts no flusher thread and never connects: it pays no per-process tax.
 * Nor does one that records a few calls and exits (no thread: its writer
 * sends them; with SIOX_LATE_FLUSHER=1, a few hundred, handed over at exit).
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <siox/siox.h>

#include "client_fake_daemon.h"

enum { N = 300 };

/* Forks a child that runs fn(go_fd, path, mode) once the fake daemon at
 * path (named after tag) listens; returns the daemon, the child in *pid. */
static struct fake_daemon *start_child(const char *tag, void (*fn)(int, const char *, int), int mode, pid_t *pid) {
  char path[108];
  fake_daemon_tmp_path(path, sizeof path, tag);
  int go[2];
  assert_int_equal(pipe(go), 0);
  *pid = fork();
  assert_true(*pid >= 0);
  if (*pid == 0) fn(go[0], path, mode);
  struct fake_daemon *d = fake_daemon_start(path);
  assert_non_null(d);
  assert_int_equal(write(go[1], "g", 1), 1);
  close(go[0]);
  close(go[1]);
  return d;
}

static void recorder(int go_fd, const char *path, int mode) {
  (void)mode;
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
  pid_t pid;
  struct fake_daemon *d = start_child("exit", recorder, 0, &pid);
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

/* A short-lived process (a few hundred calls, then exit) starts no
 * flusher thread: creating it was most of its cost under the preload
 * (~0.8 ms CPU on the test VM). The exit hand-over, run by the exiting
 * thread, still delivers every record. One that goes on recording starts
 * it: after 128 KiB of records, or at its first record past the start
 * time (~64-134 ms after its first). */
enum { SHORT_N = 300, LONG_N = 5000, EAGER_N = 3 };

/* flush_ms 0: the library's default period. */
static int record_one_op(const char *path, unsigned flush_ms, siox_type_id *t) {
  struct siox_options o = {.socket_path = path, .flush_interval_ms = flush_ms};
  siox_unid node;
  return siox_init(&o) < 0 || siox_node_register("h", "TEST", NULL, &node) < 0 ||
                 siox_activity_type_register(node, "op", t) < 0
             ? -1
             : 0;
}

static void short_lived(int go_fd, const char *path, int mode) {
  char c;
  siox_type_id t;
  if (read(go_fd, &c, 1) != 1) _exit(4);
  if (mode < 3) setenv("SIOX_LATE_FLUSHER", "1", 1); /* the opt-in late start */
  if (record_one_op(path, mode >= 3 ? 0 : 60000, &t) < 0) _exit(5);
  if (mode == 3) { /* records at its start, then quiet until killed */
    for (int i = 0; i < 3; i++) siox_activity_stop(siox_activity_start(t));
    for (;;) pause();
  }
  if (mode == 4) { /* by default: a few records, sent by their writer */
    for (int i = 0; i < EAGER_N; i++) siox_activity_stop(siox_activity_start(t));
    exit(thread_count() == 1 ? 0 : 6);
  }
  int n = mode == 0 ? SHORT_N : mode == 1 ? LONG_N : 1;
  for (int i = 0; i < n; i++) siox_activity_stop(siox_activity_start(t));
  if (mode == 2) { /* a slow recorder: its next record comes after the start time */
    usleep(300000);
    siox_activity_stop(siox_activity_start(t));
  }
  int want = mode == 0 ? 1 : 2; /* 6: the flusher thread did (not) start */
  exit(thread_count() == want ? 0 : 6);
}

static void run_short_lived(int mode, size_t expect) {
  pid_t pid;
  struct fake_daemon *d = start_child("short", short_lived, mode, &pid);
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  assert_int_equal(fake_daemon_wait(d, expect, 10000), expect);
  assert_int_equal(d->bad_frames, 0);
  fake_daemon_stop(d);
}

/* By default the flusher starts with the first record: a process that
 * records at its start and is then quiet (an HPC code reading its input,
 * then computing) has its records at the daemon while it runs, so a kill
 * -9 (a job's time limit) loses none. With the late start they waited for
 * the exit hand-over, which a killed process never runs: lost, uncounted. */
static void test_quiet_process_delivers_before_kill(void **state) {
  (void)state;
  pid_t pid;
  struct fake_daemon *d = start_child("quiet", short_lived, 3, &pid);
  size_t got = fake_daemon_wait(d, 3, 10000);
  kill(pid, SIGKILL);
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_int_equal(got, 3);
  fake_daemon_stop(d);
}

static void test_short_process_starts_no_thread(void **state) {
  (void)state;
  run_short_lived(0, SHORT_N);
}

/* By default too, a process of a few records (open, write, close) starts
 * no thread: each record is sent by the thread that wrote it, and the exit
 * flush waits for the daemon's ACK. */
static void test_default_short_process_starts_no_thread(void **state) {
  (void)state;
  run_short_lived(4, EAGER_N);
}

static void test_busy_process_starts_flusher(void **state) {
  (void)state;
  run_short_lived(1, LONG_N);
}

static void test_slow_process_starts_flusher(void **state) {
  (void)state;
  run_short_lived(2, 2);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_exit_flushes),
                                     cmocka_unit_test(test_idle_process_costs_nothing),
                                     cmocka_unit_test(test_quiet_process_delivers_before_kill),
                                     cmocka_unit_test(test_short_process_starts_no_thread),
                                     cmocka_unit_test(test_default_short_process_starts_no_thread),
                                     cmocka_unit_test(test_busy_process_starts_flusher),
                                     cmocka_unit_test(test_slow_process_starts_flusher)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
