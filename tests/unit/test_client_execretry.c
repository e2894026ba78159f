/*
 * Exec attempts through a PATH search (dash, os.execvp): execve is tried
 * once per PATH entry, and the POSIX layer calls siox_internal_before_exec
 * before each and siox_internal_exec_failed after each failure. The first
 * hands over; the next ones, with nothing recorded since, must not (they
 * used to stop, flush and restart the flusher each time, and with no daemon
 * each wrote a loss file). After the failures the process goes on
 * recording: its next record restarts the flusher, which ships to a daemon
 * that came meanwhile without any flush being asked.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <siox/siox.h>
#include <siox/siox_internal.h>

#include "client_fake_daemon.h"

static int count_loss_files(const char *dir) {
  DIR *d = opendir(dir);
  int n = 0;
  if (!d) return -1;
  for (struct dirent *e; (e = readdir(d)) != NULL;)
    if (strstr(e->d_name, ".loss")) n++;
  closedir(d);
  return n;
}

/* The test's loss directory and its files (nothing of it is left in /tmp). */
static void remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  char f[512];
  for (struct dirent *e; d && (e = readdir(d)) != NULL;)
    if (e->d_name[0] != '.' && snprintf(f, sizeof f, "%s/%s", dir, e->d_name) < (int)sizeof f) unlink(f);
  if (d) closedir(d);
  rmdir(dir);
}

static void test_one_hand_over_per_path_search(void **state) {
  (void)state;
  char path[108], dir[160];
  fake_daemon_tmp_path(path, sizeof path, "execretry");
  snprintf(dir, sizeof dir, "%s.lost", path);
  mkdir(dir, 01733); /* as the daemon leaves it; the daemon itself is down */
  siox_type_id t;
  fake_client_setup(path, 100, &t);
  for (int i = 0; i < 100; i++) siox_activity_stop(siox_activity_start(t));

  for (int entry = 0; entry < 4; entry++) { /* four PATH entries without the command */
    siox_internal_before_exec(100);
    siox_internal_exec_failed();
  }
  assert_int_equal(count_loss_files(dir), 1);

  /* The exec failed for good: recording goes on, and the flusher with it. */
  struct fake_daemon *d = fake_daemon_start(path);
  assert_non_null(d);
  enum { M = 50 };
  size_t got = 0;
  for (int i = 0; i < 400 && got < M; i++) { /* records until the restarted flusher has shipped M */
    siox_activity_stop(siox_activity_start(t));
    got = fake_daemon_wait(d, M, 10);
  }
  assert_true(got >= M);
  assert_int_equal(d->bad_frames, 0);
  siox_finalize();
  fake_daemon_stop(d);
  remove_dir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_one_hand_over_per_path_search)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
