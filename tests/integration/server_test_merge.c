/*
 * Integration test: remote calls stored under an object that a MAP later
 * merges away. Client (daemon 1) and brick (daemon 2) processes; three
 * scenarios 100 s apart, each on its own objects:
 *  1. brick receives on gfid G1 (object B); later the client sends on
 *     handle H1 (new object A) and, in the same batch, maps H1 -> G1: A is
 *     merged into B after the send was resolved under A;
 *  2. the reverse: the client sends on H2 (object A); later the brick
 *     receives on G2 (new object B) and maps H2 -> G2 in the same batch: B
 *     is merged into A after the receive was resolved under B;
 *  3. across batches: send on H3, then a MAP batch, then a receive batch.
 * Each must give exactly one link with confidence 1.0, and no remote call
 * may stay under a merged-away object.
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
#define CLIENT 100
#define BRICK 200

static const uint8_t gfid[3][16] = {{0xaa, 1}, {0xaa, 2}, {0xaa, 3}};
static const char *const handle[3] = {"h1", "h2", "h3"};

static int64_t t_of(int scenario) { return T0 + 100 * SEC * scenario; }

/* Sender activity `scenario + 1` (10 ms) and its SEND on handle H. */
static void send_on(struct siox_block *b, uint32_t p, int s) {
  block_act(b, p, (uint64_t)s + 1, t_of(s), t_of(s) + 10000000);
  struct siox_block_descriptor *d =
      block_desc(b, p, SIOX_DESC_SEND, (uint64_t)s + 1, 0, SIOX_ATTR_TEST_HANDLE, handle[s], strlen(handle[s]));
  d->offset = 0, d->length = 65536;
}

/* Receiver activity `scenario + 1` inside the send, and its RECEIVE on G. */
static void receive_on(struct siox_block *b, uint32_t p, int s) {
  block_act(b, p, (uint64_t)s + 1, t_of(s) + 2000000, t_of(s) + 8000000);
  struct siox_block_descriptor *d = block_desc(b, p, SIOX_DESC_RECEIVE, (uint64_t)s + 1, 1, SIOX_ATTR_GLUSTERFS_GFID,
                                               gfid[s], sizeof gfid[s]);
  d->offset = 4096, d->length = 8192;
}

static void map_to_gfid(struct siox_block *b, uint32_t p, int s) {
  struct siox_block_descriptor *m = block_desc(b, p, SIOX_DESC_MAP, 0, 1, SIOX_ATTR_TEST_HANDLE, handle[s], strlen(handle[s]));
  m->nvalues = 2;
  m->values[1].attr = SIOX_ATTR_GLUSTERFS_GFID, m->values[1].vtype = SIOX_VT_BYTES;
  siox_block_set_bytes(b, &m->values[1], gfid[s], sizeof gfid[s]);
}

/* Batch steps, in order. Objects are numbered in creation order and the
 * smallest id survives a merge, so "A into B" needs B created first. */
static void brick_1(struct siox_block *b) { receive_on(b, block_proc(b, BRICK, "brick1", "GlusterFS-brick"), 0); }

static void client_1(struct siox_block *b) {
  uint32_t p = block_proc(b, CLIENT, "client1", "GlusterFS-client");
  send_on(b, p, 1);    /* scenario 2: H2 created before G2 */
  send_on(b, p, 0);    /* scenario 1: resolved under the new object of H1 ... */
  map_to_gfid(b, p, 0); /* ... which this MAP merges into G1's */
  send_on(b, p, 2);    /* scenario 3 */
}

static void brick_2(struct siox_block *b) {
  uint32_t p = block_proc(b, BRICK, "brick1", "GlusterFS-brick");
  receive_on(b, p, 1);  /* scenario 2: resolved under G2's new object ... */
  map_to_gfid(b, p, 1); /* ... which this MAP merges into H2's */
  map_to_gfid(b, p, 2); /* scenario 3: merge only */
}

static void brick_3(struct siox_block *b) { receive_on(b, block_proc(b, BRICK, "brick1", "GlusterFS-brick"), 2); }

static void send_step(int port, uint64_t daemon, const char *host, uint64_t seq, void (*fill)(struct siox_block *)) {
  struct siox_block b;
  siox_block_init(&b);
  fill(&b);
  CHECK(cli_send_block(port, daemon, host, NULL, seq, &b) == 0, "batch %llu of daemon %llu stored",
        (unsigned long long)seq, (unsigned long long)daemon);
  siox_block_free(&b);
}

static long long link_count(PGconn *c, int s) {
  char sql[512];
  snprintf(sql, sizeof sql,
           "SELECT count(*) FROM causal_links l JOIN processes sp ON sp.proc_id = l.parent_aid >> 32"
           " JOIN processes rp ON rp.proc_id = l.child_aid >> 32 WHERE sp.pid = %d AND rp.pid = %d"
           " AND l.parent_aid & 4294967295 = %d AND l.child_aid & 4294967295 = %d AND l.confidence = 1"
           " AND l.flags = '' AND l.overlap_bytes = 8192",
           CLIENT, BRICK, s + 1, s + 1);
  return harness_scalar(c, sql);
}

int main(int argc, char **argv) {
  struct harness h;
  const char *const args[] = {"--match-ms", "200", NULL};
  if (harness_setup(&h, argc, argv, NULL, args) != 0) return 1;
  send_step(h.port, 2, "brick1", 1, brick_1);
  send_step(h.port, 1, "client1", 1, client_1);
  send_step(h.port, 2, "brick1", 2, brick_2);
  send_step(h.port, 2, "brick1", 3, brick_3);
  PGconn *c = harness_db(&h);
  for (int i = 0; c && i < 100 && harness_scalar(c, "SELECT count(*) FROM causal_links") < 3; i++) usleep(100000);
  usleep(1000000); /* several more matcher passes: nothing may change */
  CHECK(harness_scalar(c, "SELECT count(*) FROM causal_links") == 3, "exactly three links");
  for (int s = 0; s < 3; s++) CHECK(link_count(c, s) == 1, "scenario %d: one link with confidence 1.0", s + 1);
  CHECK(harness_scalar(c, "SELECT count(*) FROM remote_calls r JOIN objects o ON o.object_id = r.object_id"
                          " WHERE o.merged_into IS NOT NULL") == 0,
        "no remote call under a merged-away object");
  CHECK(harness_scalar(c, "SELECT count(*) FROM objects WHERE merged_into IS NOT NULL") == 3, "three merges");
  CHECK(harness_scalar(c, "SELECT count(*) FROM remote_calls r WHERE r.kind = 'R' AND NOT r.matched") == 0, "all matched");
  PQfinish(c);
  return harness_finish(&h, "server_merge");
}
