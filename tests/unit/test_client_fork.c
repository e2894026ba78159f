/*
 * fork(): the child is a new process identity (new nonce), ships its own
 * records and the registrations its handles need, and none of the parent's
 * pre-fork records; the parent's records arrive once, from the parent.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <siox/siox.h>

#include "client_fake_daemon.h"

enum { PRE = 100, CHILD = 50 };

static void child_work(siox_type_id t_child) {
  for (int i = 0; i < CHILD; i++) siox_activity_stop(siox_activity_start(t_child));
  _exit(siox_finalize() == 0 ? 0 : 3);
}

static int has_type_reg(struct fake_daemon *d, uint64_t nonce, uint32_t type) {
  int n = 0;
  pthread_mutex_lock(&d->lock);
  for (size_t i = 0; i < d->nregs; i++)
    n += d->regs[i].nonce == nonce && d->regs[i].rtype == SIOX_REC_TYPE && d->regs[i].a == type;
  pthread_mutex_unlock(&d->lock);
  return n;
}

static void test_fork(void **state) {
  (void)state;
  char path[108];
  fake_daemon_tmp_path(path, sizeof path, "fork");
  struct fake_daemon *d = fake_daemon_start(path);
  struct siox_options o = {.socket_path = path, .flush_interval_ms = 10000};
  assert_int_equal(siox_init(&o), 0);
  siox_unid node;
  siox_type_id t_pre, t_child;
  assert_int_equal(siox_node_register("h", "TEST", NULL, &node), 0);
  assert_int_equal(siox_activity_type_register(node, "pre", &t_pre), 0);
  assert_int_equal(siox_activity_type_register(node, "child", &t_child), 0);
  /* Records still buffered at fork time (long flush interval, no flush). */
  for (int i = 0; i < PRE; i++) siox_activity_stop(siox_activity_start(t_pre));
  siox_aid open_at_fork = siox_activity_start(t_pre);
  /* The fake daemon's thread held out of malloc across fork() (GCC 12's
   * ASan allocator has no fork handlers); the library holds its flusher. */
  fake_daemon_hold(d);
  pid_t pid = fork();
  if (pid != 0) fake_daemon_release(d);
  assert_true(pid >= 0);
  if (pid == 0) {
    siox_activity_stop(open_at_fork); /* the parent's: ignored in the child */
    child_work(t_child);
  }
  siox_activity_stop(open_at_fork);
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  assert_int_equal(siox_flush(5000), 0);
  assert_int_equal(fake_daemon_wait(d, PRE + 1 + CHILD, 10000), PRE + 1 + CHILD);
  nanosleep(&(struct timespec){0, 50000000}, NULL); /* let duplicates show up, if any */

  pthread_mutex_lock(&d->lock);
  assert_int_equal(d->nconns, 2);
  assert_int_equal(d->nacts, PRE + 1 + CHILD);
  uint64_t parent_nonce = 0, child_nonce = 0;
  for (size_t i = 0; i < d->nacts; i++) {
    if (d->acts[i].type == t_pre) parent_nonce = d->acts[i].nonce;
    if (d->acts[i].type == t_child) child_nonce = d->acts[i].nonce;
  }
  assert_int_equal(d->bad_frames, 0);
  pthread_mutex_unlock(&d->lock);
  assert_int_not_equal(parent_nonce, child_nonce);
  assert_int_equal(fake_daemon_count(d, parent_nonce, t_pre), PRE + 1);
  assert_int_equal(fake_daemon_count(d, child_nonce, t_pre), 0);
  assert_int_equal(fake_daemon_count(d, child_nonce, t_child), CHILD);
  /* The child re-shipped the registrations its handles refer to. */
  assert_int_equal(has_type_reg(d, child_nonce, t_child), 1);
  assert_int_equal(has_type_reg(d, child_nonce, t_pre), 1);
  assert_int_equal(has_type_reg(d, parent_nonce, t_child), 1);
  assert_int_equal(siox_finalize(), 0);
  fake_daemon_stop(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_fork)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
