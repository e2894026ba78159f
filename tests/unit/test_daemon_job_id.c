/*
 * siox-daemon job ids (job_id.c): the Slurm job of a cgroup file, the first
 * job variable of an environment block in the client's order, and the
 * whole decision: for a live process its environment wins over a HELLO
 * claim, a process of another uid is never read, an exited one keeps its
 * claim.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon.h"

static void test_cgroup_slurm(void **state) {
  (void)state;
  char out[64];
  const char *v1 = "12:memory:/slurm/uid_1000/job_4711/step_0\n0::/\n";
  assert_int_equal(job_id_from_cgroup(v1, out, sizeof out), 0);
  assert_string_equal(out, "4711");
  const char *v2 = "0::/system.slice/slurmstepd.scope/job_88/step_batch/user/task_0\n";
  assert_int_equal(job_id_from_cgroup(v2, out, sizeof out), 0);
  assert_string_equal(out, "88");
  /* A user's own cgroup named like a job, without slurm, is not believed. */
  assert_int_equal(job_id_from_cgroup("0::/user.slice/job_12/x\n", out, sizeof out), -ENOENT);
  assert_int_equal(job_id_from_cgroup("0::/slurm/job_/x\n", out, sizeof out), -ENOENT);
}

static void test_environ_order(void **state) {
  (void)state;
  char out[64];
  static const char env[] = "PATH=/bin\0PBS_JOBID=77.pbs\0SLURM_JOB_ID=5\0SIOX_JOB_IDX=no\0";
  assert_int_equal(job_id_from_environ(env, sizeof env - 1, out, sizeof out), 0);
  assert_string_equal(out, "5"); /* SLURM_JOB_ID before PBS_JOBID, like the client */
  static const char env2[] = "SLURM_JOB_ID=5\0SIOX_JOB_ID=mine\0";
  assert_int_equal(job_id_from_environ(env2, sizeof env2 - 1, out, sizeof out), 0);
  assert_string_equal(out, "mine");
  static const char env3[] = "SIOX_JOB_ID=\0HOME=/\0LSB_JOBID=9";
  assert_int_equal(job_id_from_environ(env3, sizeof env3 - 1, out, sizeof out), 0);
  assert_string_equal(out, "9"); /* empty values skipped; no final NUL needed */
  assert_int_equal(job_id_from_environ("A=1", 3, out, sizeof out), -ENOENT);
  assert_int_equal(job_id_from_environ(env, sizeof env - 1, out, 2), 0); /* "5" fits in 2 */
  assert_int_equal(job_id_from_environ(env2, sizeof env2 - 1, out, 3), 0);
  assert_string_equal(out, "5"); /* "mine" does not fit: the next variable */
}

/* This process: unless the test runs inside a batch job, its environment
 * has no job variable, so a claim stays a claim. */
static void test_peer_self(void **state) {
  (void)state;
  char out[JOB_ID_MAX];
  enum job_source src = job_id_of_peer((uint32_t)getpid(), (uint32_t)getuid(), "victim", out, sizeof out);
  if (src == JOB_CGROUP) {
    /* run inside a Slurm job: its cgroup's id wins, as it should */
  } else if (getenv("SLURM_JOB_ID") || getenv("SIOX_JOB_ID") || getenv("PBS_JOBID") || getenv("LSB_JOBID") ||
      getenv("FLUX_JOB_ID") || getenv("COBALT_JOBID")) {
    assert_int_equal(src, JOB_ENVIRON);
  } else {
    assert_int_equal(src, JOB_CLAIMED);
    assert_string_equal(out, "claimed:victim");
  }
  /* Another uid than the owner's: /proc is not read, the claim is marked. */
  src = job_id_of_peer((uint32_t)getpid(), (uint32_t)getuid() + 1, "victim", out, sizeof out);
  assert_int_equal(src, JOB_CLAIMED);
  assert_string_equal(out, "claimed:victim");
  src = job_id_of_peer((uint32_t)getpid(), (uint32_t)getuid() + 1, "", out, sizeof out);
  assert_int_equal(src, JOB_NONE);
  assert_string_equal(out, "");
}

/* A client that exited before its HELLO was read: nothing to check the
 * claim against, so it is kept as it is. */
static void test_peer_exited(void **state) {
  (void)state;
  pid_t child = fork();
  assert_true(child >= 0);
  if (child == 0) _exit(0);
  int st;
  assert_int_equal(waitpid(child, &st, 0), child);
  char out[JOB_ID_MAX];
  assert_int_equal(job_id_of_peer((uint32_t)child, (uint32_t)getuid(), "job-7", out, sizeof out), JOB_EXITED);
  assert_string_equal(out, "job-7");
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_cgroup_slurm), cmocka_unit_test(test_environ_order),
                                     cmocka_unit_test(test_peer_self), cmocka_unit_test(test_peer_exited)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
