/*
 * Integration test: a send or receive record that reaches the server one
 * batch before its activity row (the client writes an activity when it
 * ends) must still be linked once the activity arrives, even when nothing
 * follows it. Case A: the receive's activity comes last. Case B: the
 * sender's activity comes last, after a server restart in between, so the
 * waiting state must live in the warehouse, not in memory. Case C: the
 * receive's record comes a batch after its activity.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server_harness.h"
#include "siox/siox_ontology.h"
#include "siox_client_wire.h"

#define T0 1700000000000000000LL
#define MS 1000000LL
#define CLIENT 1 /* daemon ids */
#define BRICK 2

static void sender(struct siox_block *b, uint64_t aid, const char *obj, int with_activity, int with_record) {
  uint32_t p = block_proc(b, 100, "client1", "GlusterFS-client");
  struct siox_block_target *t = siox_block_add_target(b);
  t->proc = p, t->target_id = 1;
  t->hwid = siox_block_strdup(b, "brick1", 6);
  t->swid = siox_block_strdup(b, "GlusterFS-brick", 15);
  int64_t t0 = T0 + (int64_t)aid * 1000 * MS;
  if (with_activity) block_act(b, p, aid, t0, t0 + 10 * MS);
  if (!with_record) return;
  struct siox_block_descriptor *d = block_desc(b, p, SIOX_DESC_SEND, aid, 1, SIOX_ATTR_TEST_HANDLE, obj, strlen(obj));
  d->offset = 0, d->length = 8192;
}

static void receiver(struct siox_block *b, uint64_t aid, const char *obj, int with_activity, int with_record) {
  uint32_t p = block_proc(b, 200, "brick1", "GlusterFS-brick");
  int64_t t0 = T0 + (int64_t)aid * 1000 * MS;
  if (with_activity) block_act(b, p, aid, t0 + 2 * MS, t0 + 8 * MS);
  if (!with_record) return;
  struct siox_block_descriptor *d = block_desc(b, p, SIOX_DESC_RECEIVE, aid, 1, SIOX_ATTR_TEST_HANDLE, obj, strlen(obj));
  d->offset = 0, d->length = 8192;
}

typedef void (*side_fn)(struct siox_block *, uint64_t, const char *, int, int);

static void send_part(const struct harness *h, uint64_t daemon, uint64_t seq, side_fn fill, uint64_t aid, const char *obj,
                 int with_activity, int with_record) {
  struct siox_block b;
  siox_block_init(&b);
  fill(&b, aid, obj, with_activity, with_record);
  CHECK(cli_send_block(h->port, daemon, daemon == CLIENT ? "client1" : "brick1", NULL, seq, &b) == 0,
        "batch %llu of daemon %llu", (unsigned long long)seq, (unsigned long long)daemon);
  siox_block_free(&b);
}

/* Waits until a matcher pass has seen every remote call stored so far. */
static void wait_pass(PGconn *c) {
  for (int i = 0; i < 300; i++) {
    if (harness_scalar(c, "SELECT ((SELECT watermark FROM match_state) >= (SELECT max(rc_id) FROM remote_calls))::int")
        == 1)
      return;
    usleep(100 * 1000);
  }
  CHECK(0, "no matcher pass within 30 s");
}

/* Waits (up to 10 s, i.e. ~50 passes) for the link parent aid -> child aid. */
static long long wait_link(PGconn *c, int aid) {
  char sql[512];
  snprintf(sql, sizeof sql,
           "SELECT count(*) FROM causal_links l JOIN processes sp ON sp.proc_id = l.parent_aid >> 32"
           " JOIN processes rp ON rp.proc_id = l.child_aid >> 32 WHERE sp.pid = 100 AND rp.pid = 200"
           " AND l.parent_aid & 4294967295 = %d AND l.child_aid & 4294967295 = %d AND l.confidence = 1"
           " AND l.flags = ''",
           aid, aid);
  long long n = 0;
  for (int i = 0; i < 100 && (n = harness_scalar(c, sql)) == 0; i++) usleep(100 * 1000);
  return n;
}

int main(int argc, char **argv) {
  struct harness h;
  const char *const args[] = {"--match-ms", "200", NULL};
  if (harness_setup(&h, argc, argv, NULL, args) != 0) return 1;
  PGconn *c = harness_db(&h);
  CHECK(c != NULL, "db");
  if (!c) return harness_finish(&h, "server_waiting");
  /* A: R's record first, S complete, then (after a pass) R's activity alone. */
  send_part(&h, BRICK, 1, receiver, 1, "objA", 0, 1);
  send_part(&h, CLIENT, 1, sender, 1, "objA", 1, 1);
  wait_pass(c);
  CHECK(harness_scalar(c, "SELECT count(*) FROM causal_links") == 0, "no link without R's activity");
  send_part(&h, BRICK, 2, receiver, 1, "objA", 1, 0);
  CHECK(wait_link(c, 1) == 1, "A: receive linked once its activity arrived");

  /* B: S's record first, R complete, a pass, a restart, then S's activity. */
  send_part(&h, CLIENT, 2, sender, 2, "objB", 0, 1);
  send_part(&h, BRICK, 3, receiver, 2, "objB", 1, 1);
  wait_pass(c);
  PQfinish(c);
  CHECK(harness_stop(&h) == 0, "clean stop before the restart");
  CHECK(harness_start(&h, args) == 0, "restart");
  c = harness_db(&h);
  CHECK(c != NULL, "db after restart");
  send_part(&h, CLIENT, 3, sender, 2, "objB", 1, 0);
  CHECK(c && wait_link(c, 2) == 1, "B: sender linked once its activity arrived, across a restart");

  /* C: the other order. R's activity in one batch, its record in the next
   * (the record then takes its interval from the stored activity). */
  send_part(&h, CLIENT, 4, sender, 3, "objC", 1, 1);
  send_part(&h, BRICK, 4, receiver, 3, "objC", 1, 0);
  send_part(&h, BRICK, 5, receiver, 3, "objC", 0, 1);
  CHECK(c && wait_link(c, 3) == 1, "C: receive whose record came after its activity linked");
  CHECK(c && harness_scalar(c, "SELECT count(*) FROM causal_links") == 3, "exactly three links");
  CHECK(c && harness_scalar(c, "SELECT count(*) FROM remote_calls WHERE start_ns IS NULL OR end_ns < start_ns") == 0,
        "every remote call has its activity's interval");
  CHECK(c && harness_scalar(c, "SELECT count(*) FROM remote_calls r WHERE r.kind = 'R' AND NOT r.matched") == 0,
        "no receive left unmatched");
  CHECK(c && harness_scalar(c, "SELECT count(*) FROM remote_calls WHERE waiting") == 0, "nothing left waiting");
  PQfinish(c);
  return harness_finish(&h, "server_waiting");
}
