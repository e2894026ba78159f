/*
 * Integration test (c): kill -9 of siox-server mid-stream. A daemon-like
 * client keeps up to 4 batches in flight; after batch 8 is acknowledged the
 * server is SIGKILLed (its embedded postmaster survives), restarted on the
 * same data dir (it must adopt the postmaster), and the client reconnects
 * and resends everything after the last Ack it saw, in order, as a daemon
 * would (including batches that were stored but whose Acks were lost).
 * Every activity and string attribute must be present exactly once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server_harness.h"
#include "siox/siox_ontology.h"

#define NBATCH 30
#define PER 2000
#define WINDOW 4
#define T0 1700000000000000000LL

static int send_seq(int fd, int seq) {
  struct siox_block b;
  siox_block_init(&b);
  block_spmd(&b, 77, 1, "node5", 1 + (uint64_t)(seq - 1) * PER, PER, T0 + (int64_t)seq * 10000000);
  struct siox_block_string_attr *s = siox_block_add_string_attr(&b);
  s->proc = 0, s->aid = 1 + (uint64_t)(seq - 1) * PER;
  s->value.attr = SIOX_ATTR_POSIX_PATH, s->value.vtype = SIOX_VT_STR;
  siox_block_set_bytes(&b, &s->value, "/x", 2);
  int rc = cli_batch(fd, 5, (uint64_t)seq, 0, 0, &b);
  siox_block_free(&b);
  return rc;
}

static int reconnect(struct harness *h, int *fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
  if (!h->pid && harness_start(h, NULL) != 0) return -1;
  if ((*fd = cli_connect(h->port)) < 0) return -1;
  return (int)cli_hello(*fd, 5, "node5", NULL);
}

int main(int argc, char **argv) {
  struct harness h;
  if (harness_setup(&h, argc, argv, NULL, NULL) != 0) return 1;
  int fd = -1, killed = 0, last_ack = reconnect(&h, &fd), next = last_ack + 1, restarts = 0;
  while (last_ack < NBATCH && restarts < 5) {
    int ok = 1;
    while (ok && next <= NBATCH && next - last_ack <= WINDOW) ok = send_seq(fd, next++) == 0;
    long long a = ok ? cli_wait_ack(fd, (uint64_t)last_ack + 1, 60000) : -1;
    if (a > 0) last_ack = (int)a;
    if (a > 0 && !killed && last_ack >= 8) {
      /* Let the batches in flight commit, then lose their Acks with the
       * server: the resend below must then be skipped as duplicates. */
      usleep(300 * 1000);
      harness_kill9(&h);
      killed = 1;
      a = -1;
    }
    if (a <= 0) { /* connection lost: reconnect, resend all after our last Ack */
      restarts++;
      int acked = reconnect(&h, &fd);
      CHECK(acked >= last_ack, "server acked_seq %d below our last ack %d", acked, last_ack);
      if (acked > last_ack) printf("server had stored %d batches whose Acks were lost; resending them\n", acked - last_ack);
      next = last_ack + 1;
    }
  }
  CHECK(killed && last_ack == NBATCH, "killed %d, last ack %d", killed, last_ack);
  CHECK(harness_log_has(&h, "adopting running postmaster"), "postmaster adopted after kill -9");
  PGconn *c = harness_db(&h);
  CHECK(c && harness_scalar(c, "SELECT count(*) FROM activities") == NBATCH * PER, "every activity");
  CHECK(c && harness_scalar(c, "SELECT count(DISTINCT aid) FROM activities") == NBATCH * PER, "exactly once");
  CHECK(c && harness_scalar(c, "SELECT count(*) FROM activity_text_attrs") == NBATCH, "text attrs exactly once");
  CHECK(c && harness_scalar(c, "SELECT min(aid & 4294967295) FROM activities") == 1, "first");
  CHECK(c && harness_scalar(c, "SELECT max(aid & 4294967295) FROM activities") == NBATCH * PER, "last");
  CHECK(c && harness_scalar(c, "SELECT acked_seq FROM daemons WHERE daemon_id = 5") == NBATCH, "acked_seq");
  PQfinish(c);
  if (fd >= 0) close(fd);
  return harness_finish(&h, "server_restart");
}
