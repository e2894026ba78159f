/*
 * job_claim: a client whose HELLO claims a job id that is not the one its
 * batch environment gives. It sets SIOX_JOB_ID=CLAIM after exec (so the
 * claim is in the library's getenv but not in /proc/self/environ), then
 * records N activities on node (claim, "claimer") and flushes. Used by
 * test_job_owner.sh: the daemon must take the job id from the environment
 * the process was started with, never from the claim.
 *
 * It then stays alive for a second: the daemon reads /proc/PID when it
 * handles the HELLO, and a client that has already exited keeps its claim
 * (nothing is left to check it against; job_id.c), which is why the
 * warehouse also keys jobs by uid.
 *
 * usage: job_claim CLAIM N
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <siox/siox.h>

int main(int argc, char **argv) {
  if (argc != 3) return fprintf(stderr, "usage: job_claim CLAIM N\n"), 2;
  setenv(SIOX_ENV_JOB, argv[1], 1);
  int n = atoi(argv[2]);
  siox_unid node;
  siox_type_id t;
  if (siox_node_register("claimer", "claimer", NULL, &node) || siox_activity_type_register(node, "op", &t))
    return fprintf(stderr, "job_claim: cannot register\n"), 1;
  for (int i = 0; i < n; i++) siox_activity_stop(siox_activity_start(t));
  int rc = siox_flush(5000);
  sleep(1);
  return rc == 0 && siox_finalize() == 0 ? 0 : 1;
}
