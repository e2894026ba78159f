/*
 * The flusher thread has a descriptor table of its own (own_table.c), so
 * that the application's table keeps one user and the kernel's fast path
 * (no file reference count per system call). Checked here:
 * - the flusher shares the table while the process has made few records
 *   (the copy would cost more than it saves), and takes its own once it
 *   has made TABLE_RECORDS (own_table.c, "When");
 * - the flusher's table is not the application's (kcmp), and holds none of
 *   the application's descriptors, not even those open when it started: a
 *   pipe's write end closed by the application reaches EOF at the reader;
 * - after the daemon restarts, the flusher connects from its own table;
 *   the exit hand-over (on the exiting thread, which cannot use that
 *   socket) connects again, and every record arrives, after its types;
 * - a fork() child keeps every descriptor the application had: the
 *   flusher's socket number, in its own table, may be one of them.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <siox/siox.h>

#include "client_fake_daemon.h"

enum { LOW_FDS = 16, AFTER_RESTART = 200, ENOUGH = 2100 /* > own_table.c's TABLE_RECORDS */ };

static int shares_main_table(pid_t tid) {
  return syscall(SYS_kcmp, getpid(), tid, KCMP_FILES, 0, 0) == 0;
}

/* The one thread of this process whose table is not the main thread's
 * (the fake daemon's thread shares it), or 0. */
static pid_t own_table_thread(void) {
  DIR *d = opendir("/proc/self/task");
  assert_non_null(d);
  pid_t found = 0;
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) {
    pid_t tid = (pid_t)atoi(e->d_name);
    if (tid > 0 && !shares_main_table(tid)) found = tid, n++;
  }
  closedir(d);
  assert_true(n <= 1);
  return found;
}

static int task_has_fd(pid_t tid, int fd) {
  char p[64];
  struct stat st;
  snprintf(p, sizeof p, "/proc/self/task/%d/fd/%d", (int)tid, fd);
  return stat(p, &st) == 0;
}

/* Activities of type t that arrived, each aid once (a frame sent again
 * after a reconnect may arrive twice; the server keeps it once). */
static size_t distinct_of_type(struct fake_daemon *d, uint32_t t) {
  size_t n = 0;
  pthread_mutex_lock(&d->lock);
  for (size_t i = 0; i < d->nacts; i++) {
    if (d->acts[i].type != t) continue;
    size_t j = 0;
    while (j < i && !(d->acts[j].type == t && d->acts[j].aid == d->acts[i].aid)) j++;
    n += j == i;
  }
  pthread_mutex_unlock(&d->lock);
  return n;
}

/* The flusher holds no copy of a descriptor the application had open
 * when it started: closing the write end ends the pipe. */
static void check_pipe_reaches_eof(int p[2]) {
  pid_t tid = own_table_thread();
  assert_true(tid > 0);
  assert_true(task_has_fd(getpid(), p[0]) && task_has_fd(getpid(), p[1]));
  assert_false(task_has_fd(tid, p[0]));
  assert_false(task_has_fd(tid, p[1]));
  assert_int_equal(close(p[1]), 0);
  struct pollfd pf = {p[0], POLLIN, 0};
  assert_int_equal(poll(&pf, 1, 5000), 1); /* a copy elsewhere: no EOF, timeout */
  char c;
  assert_int_equal(read(p[0], &c, 1), 0);
  close(p[0]);
}

/* The child has every low descriptor its parent had. The fake daemon's
 * thread is held out of malloc across fork() (test_client_fork says why). */
static void check_fork_keeps_fds(struct fake_daemon *d) {
  if (fcntl(0, F_GETFD) < 0) assert_int_equal(open("/dev/null", O_RDONLY), 0);
  int open_before[LOW_FDS];
  for (int fd = 0; fd < LOW_FDS; fd++) open_before[fd] = fcntl(fd, F_GETFD) >= 0;
  fake_daemon_hold(d);
  pid_t pid = fork();
  if (pid != 0) fake_daemon_release(d);
  assert_true(pid >= 0);
  if (pid == 0) {
    for (int fd = 0; fd < LOW_FDS; fd++)
      if (open_before[fd] && fcntl(fd, F_GETFD) < 0) _exit(10 + fd);
    _exit(0);
  }
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_flusher_has_its_own_table(void **state) {
  (void)state;
  char path[108];
  fake_daemon_tmp_path(path, sizeof path, "fdtable");
  struct fake_daemon *d = fake_daemon_start(path);
  assert_non_null(d);
  struct siox_options o = {.socket_path = path};
  assert_int_equal(siox_init(&o), 0);
  siox_unid node;
  siox_type_id t, t2;
  assert_int_equal(siox_node_register("h", "TEST", NULL, &node), 0);
  assert_int_equal(siox_activity_type_register(node, "op", &t), 0);
  assert_int_equal(siox_activity_type_register(node, "after", &t2), 0);
  int p[2];
  assert_int_equal(pipe(p), 0); /* open when the flusher starts */
  siox_activity_stop(siox_activity_start(t)); /* the flusher starts */
  assert_int_equal(siox_flush(5000), 0);      /* and has run */
  assert_int_equal(own_table_thread(), 0);    /* one record: the copy would not pay */
  for (int i = 0; i < ENOUGH; i++) siox_activity_stop(siox_activity_start(t));
  assert_int_equal(siox_flush(5000), 0); /* the flusher looked before this cycle */
  check_pipe_reaches_eof(p);

  /* The daemon restarts: the flusher's next socket is in its own table. */
  fake_daemon_stop(d);
  fake_client_record_until(t, 0);
  d = fake_daemon_start(path);
  assert_non_null(d);
  fake_client_record_until(t, 1);
  check_fork_keeps_fds(d);
  for (int i = 0; i < AFTER_RESTART; i++) siox_activity_stop(siox_activity_start(t2));
  assert_int_equal(siox_finalize(), 0);
  assert_int_equal(distinct_of_type(d, t2), AFTER_RESTART);
  pthread_mutex_lock(&d->lock);
  assert_int_equal(d->bad_frames, 0);
  assert_int_equal(d->unregistered, 0);
  pthread_mutex_unlock(&d->lock);
  fake_daemon_stop(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_flusher_has_its_own_table)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
