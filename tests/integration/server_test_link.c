/*
 * Integration test (d): implicit cross-process links. Daemon A's process
 * sends (SEND record, target brick1/GlusterFS-brick) on test/handle "obj1";
 * daemon B's brick process maps "obj1" to a gfid and receives on the gfid
 * inside the send's interval. A decoy send on the same object lies 10 s
 * later and a decoy receive 20 s later: the matcher must write exactly one
 * causal_links row, (S, R) with confidence 1.0, and keep the decoy
 * receive unmatched. The server requires per-daemon tokens (--auth token).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server_harness.h"
#include "siox/siox_ontology.h"
#include "siox_client_wire.h"

#define T0 1700000000000000000LL
#define SEC 1000000000LL

static void sender_batch(struct siox_block *b) {
  uint32_t p = block_proc(b, 100, "client1", "GlusterFS-client");
  struct siox_block_target *t = siox_block_add_target(b);
  t->proc = p, t->target_id = 1;
  t->hwid = siox_block_strdup(b, "brick1", 6);
  t->swid = siox_block_strdup(b, "GlusterFS-brick", 15);
  block_act(b, p, 1, T0, T0 + 10 * 1000000);                /* S: 10 ms */
  block_act(b, p, 2, T0 + 10 * SEC, T0 + 10 * SEC + 1000000); /* decoy S, 10 s later */
  struct siox_block_descriptor *d = block_desc(b, p, SIOX_DESC_SEND, 1, 1, SIOX_ATTR_TEST_HANDLE, "obj1", 4);
  d->offset = 0, d->length = 65536;
  d = block_desc(b, p, SIOX_DESC_SEND, 2, 1, SIOX_ATTR_TEST_HANDLE, "obj1", 4);
  d->offset = 0, d->length = 65536;
}

static void receiver_batch(struct siox_block *b) {
  static const uint8_t gfid[16] = {0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  uint32_t p = block_proc(b, 200, "brick1", "GlusterFS-brick");
  struct siox_block_descriptor *m = block_desc(b, p, SIOX_DESC_MAP, 0, 1, SIOX_ATTR_TEST_HANDLE, "obj1", 4);
  m->nvalues = 2;
  m->values[1].attr = SIOX_ATTR_GLUSTERFS_GFID, m->values[1].vtype = SIOX_VT_BYTES;
  siox_block_set_bytes(b, &m->values[1], gfid, sizeof gfid);
  block_act(b, p, 1, T0 + 2000000, T0 + 8000000);   /* R inside S */
  block_act(b, p, 2, T0 + 20 * SEC, T0 + 20 * SEC + 1000); /* decoy R: no sender near */
  struct siox_block_descriptor *d = block_desc(b, p, SIOX_DESC_RECEIVE, 1, 1, SIOX_ATTR_GLUSTERFS_GFID, gfid, 16);
  d->offset = 4096, d->length = 8192;
  d = block_desc(b, p, SIOX_DESC_RECEIVE, 2, 1, SIOX_ATTR_GLUSTERFS_GFID, gfid, 16);
  d->offset = 0, d->length = 4096;
}

static void send_one(int port, uint64_t daemon, const char *host, void (*fill)(struct siox_block *)) {
  int fd = cli_connect(port);
  char token[32];
  snprintf(token, sizeof token, "s3cret-%llu", (unsigned long long)daemon); /* each daemon id has its own */
  CHECK(cli_hello(fd, daemon, host, token) == 0, "hello");
  struct siox_block b;
  siox_block_init(&b);
  fill(&b);
  CHECK(cli_batch(fd, daemon, 1, 0, 20000, &b) == 0, "send");
  CHECK(cli_wait_ack(fd, 1, 60000) == 1, "ack");
  siox_block_free(&b);
  close(fd);
}

int main(int argc, char **argv) {
  struct harness h;
  const char *const args[] = {"--match-ms", "200", NULL};
  if (harness_setup(&h, argc, argv, "1 s3cret-1\n2 s3cret-2\n", args) != 0) return 1;
  int bad = cli_connect(h.port); /* a daemon with the wrong token is turned away */
  CHECK(cli_hello(bad, 1, "intruder", "guess") < 0, "wrong token rejected");
  close(bad);
  bad = cli_connect(h.port); /* daemon 2's token does not open a session for daemon 1 */
  CHECK(cli_hello(bad, 1, "client1", "s3cret-2") < 0, "another daemon's token rejected");
  close(bad);
  /* Receiver first: the matcher must also link a sender that arrives late. */
  send_one(h.port, 2, "brick1", receiver_batch);
  send_one(h.port, 1, "client1", sender_batch);
  PGconn *c = harness_db(&h);
  long long n = 0;
  for (int i = 0; c && i < 100 && (n = harness_scalar(c, "SELECT count(*) FROM causal_links")) == 0; i++) usleep(100000);
  usleep(1000000); /* several more matcher passes: nothing may change */
  CHECK(harness_scalar(c, "SELECT count(*) FROM causal_links") == 1, "exactly one link");
  CHECK(harness_scalar(c, "SELECT count(*) FROM causal_links l JOIN processes sp ON sp.proc_id = l.parent_aid >> 32"
                          " JOIN processes rp ON rp.proc_id = l.child_aid >> 32 WHERE sp.pid = 100 AND rp.pid = 200"
                          " AND l.parent_aid & 4294967295 = 1 AND l.child_aid & 4294967295 = 1 AND l.confidence = 1"
                          " AND l.flags = '' AND l.overlap_bytes = 8192") == 1,
        "the right link with confidence 1.0");
  CHECK(harness_scalar(c, "SELECT count(*) FROM causal_edges WHERE kind = 'implicit'") == 1, "in causal_edges");
  CHECK(harness_scalar(c, "SELECT count(*) FROM remote_calls r WHERE r.kind = 'R' AND NOT r.matched") == 1, "decoy unmatched");
  CHECK(harness_scalar(c, "SELECT count(DISTINCT object_id) FROM remote_calls") == 1, "one object after the MAP");
  PQfinish(c);
  return harness_finish(&h, "server_link");
}
