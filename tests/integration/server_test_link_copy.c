/*
 * Integration test: the in-memory matcher's links go into causal_links
 * with a plain COPY (issue 15 §1), and the receives' matched flag and the
 * unmatched count (schema 030) follow.
 *
 * A brick's batch stores NPAIR receives R_i (their senders not there yet)
 * and a decoy receive nobody sends to. Before the client's batch with the
 * senders S_i arrives, a link (S_K, R_K) with a wrong confidence is put
 * into causal_links by hand: a pair the window has never linked, but
 * stored all the same (what a disagreement with the SQL matcher would
 * leave). The window's COPY meets the primary key at pair K, near the
 * end of the batch's links, so after rows of its own that the fallback
 * must undo too (and after any COPY before it, were the links split into
 * several COPYs, as was tried: siox-server/README.md). The batch must
 * still be stored and acked, every pair must be there once with the
 * window's values (the savepoint's upsert), every R_i matched;
 * match_state.unmatched (kept by triggers) and the status counter
 * receives_unmatched must both say 1: the decoy.
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
#define GAP (20 * 1000000LL) /* between pairs */
#define NPAIR 150
#define K 130 /* the pair stored by hand: far into the COPY */

static void client_proc(struct siox_block *b, int with_send) {
  uint32_t p = block_proc(b, 100, "client1", "GlusterFS-client");
  struct siox_block_target *t = siox_block_add_target(b);
  t->proc = p, t->target_id = 1;
  t->hwid = siox_block_strdup(b, "brick1", 6);
  t->swid = siox_block_strdup(b, "GlusterFS-brick", 15);
  if (!with_send) { /* registers the process, so that its proc_id is known */
    block_act(b, p, 100000, T0 - 5 * SEC, T0 - 5 * SEC + 1000);
    return;
  }
  for (uint64_t i = 1; i <= NPAIR; i++) { /* S_i: 10 ms, one every GAP */
    block_act(b, p, i, T0 + (int64_t)i * GAP, T0 + (int64_t)i * GAP + 10 * 1000000);
    struct siox_block_descriptor *d = block_desc(b, p, SIOX_DESC_SEND, i, 1, SIOX_ATTR_TEST_HANDLE, "obj1", 4);
    d->offset = i * 65536, d->length = 65536;
  }
}

static void client_first(struct siox_block *b) { client_proc(b, 0); }
static void client_send(struct siox_block *b) { client_proc(b, 1); }

static void brick(struct siox_block *b) {
  uint32_t p = block_proc(b, 200, "brick1", "GlusterFS-brick");
  for (uint64_t i = 1; i <= NPAIR; i++) { /* R_i inside S_i */
    block_act(b, p, i, T0 + (int64_t)i * GAP + 2000000, T0 + (int64_t)i * GAP + 8000000);
    struct siox_block_descriptor *d = block_desc(b, p, SIOX_DESC_RECEIVE, i, 1, SIOX_ATTR_TEST_HANDLE, "obj1", 4);
    d->offset = i * 65536 + 4096, d->length = 8192;
  }
  /* decoy: no sender near in time, none in its bytes */
  block_act(b, p, NPAIR + 1, T0 + 20 * SEC, T0 + 20 * SEC + 1000);
  struct siox_block_descriptor *d = block_desc(b, p, SIOX_DESC_RECEIVE, NPAIR + 1, 1, SIOX_ATTR_TEST_HANDLE, "obj1", 4);
  d->offset = 0, d->length = 4096;
}

static void send_batch(int fd, uint64_t daemon, uint64_t seq, void (*fill)(struct siox_block *)) {
  struct siox_block b;
  siox_block_init(&b);
  fill(&b);
  CHECK(cli_batch(fd, daemon, seq, 0, 20000, &b) == 0, "send %llu/%llu", (unsigned long long)daemon,
        (unsigned long long)seq);
  CHECK(cli_wait_ack(fd, seq, 60000) == (long long)seq, "ack %llu/%llu", (unsigned long long)daemon,
        (unsigned long long)seq);
  siox_block_free(&b);
}

static long long unmatched_status(int port) {
  int fd = cli_connect(port);
  Siox__StatusReply *r = fd >= 0 ? cli_status(fd, 1) : NULL;
  long long v = r ? status_counter(r, "receives_unmatched") : -1;
  if (r) siox__status_reply__free_unpacked(r, NULL);
  if (fd >= 0) close(fd);
  return v;
}

int main(int argc, char **argv) {
  struct harness h;
  const char *const args[] = {"--match-ms", "100", "--auth", "none", NULL};
  if (harness_setup(&h, argc, argv, NULL, args) != 0) return 1;
  int cf = cli_connect(h.port), bf = cli_connect(h.port);
  CHECK(cli_hello(cf, 1, "client1", NULL) >= 0 && cli_hello(bf, 2, "brick1", NULL) >= 0, "hello");
  send_batch(cf, 1, 1, client_first);
  send_batch(bf, 2, 1, brick);
  PGconn *c = harness_db(&h);
  long long cp = harness_scalar(c, "SELECT proc_id FROM processes WHERE pid = 100");
  long long bp = harness_scalar(c, "SELECT proc_id FROM processes WHERE pid = 200");
  char sql[256];
  snprintf(sql, sizeof sql, "INSERT INTO causal_links (parent_aid, child_aid, confidence, overlap_bytes) VALUES"
                            " (%lld, %lld, 0.25, 1) RETURNING 1", cp << 32 | K, bp << 32 | K);
  CHECK(cp > 0 && bp > 0 && harness_scalar(c, sql) == 1, "the pair stored by hand");
  send_batch(cf, 1, 2, client_send);
  snprintf(sql, sizeof sql, "SELECT count(*) FROM causal_links WHERE parent_aid = %lld AND child_aid = %lld"
                            " AND confidence = 1 AND overlap_bytes = 8192 AND flags = ''", cp << 32 | K, bp << 32 | K);
  CHECK(harness_scalar(c, sql) == 1, "the pair stored by hand once, with the window's values");
  snprintf(sql, sizeof sql, "SELECT count(*) FROM causal_links WHERE parent_aid >> 32 = %lld AND child_aid >> 32 = %lld"
                            " AND parent_aid & 4294967295 = child_aid & 4294967295"
                            " AND confidence = 1 AND overlap_bytes = 8192 AND flags = ''", cp, bp);
  long long n = harness_scalar(c, sql);
  CHECK(n == NPAIR, "every pair S_i, R_i with the window's values: %lld of %d", n, NPAIR);
  n = harness_scalar(c, "SELECT count(*) FROM causal_links");
  CHECK(n == NPAIR, "no other link: %lld links", n);
  CHECK(harness_log_has(&h, "upserting the batch's links"), "the fallback said so");
  CHECK(harness_scalar(c, "SELECT count(*) FROM remote_calls r WHERE r.kind = 'R' AND NOT r.matched") == 1, "R matched");
  CHECK(harness_scalar(c, "SELECT unmatched FROM match_state") == 1, "match_state.unmatched: the decoy");
  long long st = -1;
  for (int i = 0; i < 50 && (st = unmatched_status(h.port)) != 1; i++) usleep(100000); /* after a matcher pass */
  CHECK(st == 1, "status receives_unmatched %lld, want 1", st);
  PQfinish(c);
  close(cf), close(bf);
  return harness_finish(&h, "server_link_copy");
}
