/*
 * Integration test (a): a daemon-like client sends Hello and three batches
 * to a real siox-server with an embedded PostgreSQL; every activity row in
 * the warehouse must equal what was sent (global aid, clock offset applied,
 * parent, type, node, attributes), and resending the same seqs must be
 * acknowledged without creating a single duplicate. The same activities
 * resent under new seqs (a daemon that lost its state) are acknowledged and
 * add no row: no activity, text attribute, remote call or descriptor
 * mapping twice. Status and Ping are answered with the right counters and
 * clock stamps.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server_harness.h"
#include "siox/siox_ontology.h"
#include "siox_client_wire.h"
#include "siox_frame.h"

#define NBATCH 3
#define PER 1000
#define OFFSET_NS 5000
#define T0 1700000000000000000LL

static void make_batch(struct siox_block *b, int k) {
  siox_block_init(b);
  block_spmd(b, 4242, 99, "node1", 1 + (uint64_t)k * PER, PER, T0 + (int64_t)k * PER * 1000);
  struct siox_block_string_attr *s = siox_block_add_string_attr(b);
  s->proc = 0, s->aid = 1 + (uint64_t)k * PER;
  s->value.attr = SIOX_ATTR_POSIX_PATH, s->value.vtype = SIOX_VT_STR;
  siox_block_set_bytes(b, &s->value, "/data/out.h5", 12);
  struct siox_block_target *t = siox_block_add_target(b);
  t->proc = 0, t->target_id = 1;
  t->hwid = siox_block_strdup(b, "brick1", 6);
  t->swid = siox_block_strdup(b, "GlusterFS-brick", 15);
  struct siox_block_descriptor *d = block_desc(b, 0, SIOX_DESC_SEND, 1 + (uint64_t)k * PER, 1, SIOX_ATTR_TEST_HANDLE,
                                               "obj", 3);
  d->offset = 0, d->length = 4096;
  d = block_desc(b, 0, SIOX_DESC_MAP, 2 + (uint64_t)k * PER, 0, SIOX_ATTR_TEST_HANDLE, "obj", 3);
  d->nvalues = 2;
  d->values[1].attr = SIOX_ATTR_POSIX_PATH, d->values[1].vtype = SIOX_VT_STR;
  siox_block_set_bytes(b, &d->values[1], "/data/out.h5", 12);
  struct siox_block_stats *st = siox_block_add_stats(b);
  st->proc = 0, st->activities = (uint64_t)(k + 1) * PER, st->records = 7, st->dropped = 3;
}

/* Sends the NBATCH batches as seqs first_seq.. */
static int send_all(int port, int expect_acked, int first_seq) {
  int fd = cli_connect(port);
  if (fd < 0) return -1;
  long long acked = cli_hello(fd, 42, "node1", NULL);
  CHECK(acked == expect_acked, "hello acked_seq %lld, want %d", acked, expect_acked);
  for (int k = 0; k < NBATCH; k++) {
    struct siox_block b;
    make_batch(&b, k);
    CHECK(cli_batch(fd, 42, (uint64_t)(first_seq + k), OFFSET_NS, 1000, &b) == 0, "send batch %d", k);
    siox_block_free(&b);
  }
  long long got = cli_wait_ack(fd, (uint64_t)(first_seq + NBATCH - 1), 60000);
  CHECK(got == first_seq + NBATCH - 1, "ack %lld, want %d", got, first_seq + NBATCH - 1);
  close(fd);
  return 0;
}

/* Compares every stored activity with what make_batch sent. */
static void check_rows(PGconn *c) {
  long long proc = harness_scalar(c, "SELECT proc_id FROM processes WHERE daemon_id = 42 AND pid = 4242 AND nonce = 99");
  CHECK(proc > 0, "process row");
  PGresult *r = PQexec(c, "SELECT aid, proc_id, parent_aid, start_ns, end_ns, err, attr_ids::text, attr_vals::text,"
                          " real_ids::text, t.name, n.hwid, n.swid FROM activities a JOIN activity_types t USING (type_id)"
                          " JOIN nodes n ON n.node_id = a.node_id ORDER BY aid");
  CHECK(PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == NBATCH * PER, "%d rows", PQntuples(r));
  for (int i = 0; i < PQntuples(r) && i < NBATCH * PER; i++) {
    long long local = i + 1, aid = (proc << 32) | local;
    long long start = T0 + (long long)i * 1000 + OFFSET_NS;
    char ids[64], vals[64];
    snprintf(ids, sizeof ids, "{%d,%d}", SIOX_ATTR_IO_OFFSET, SIOX_ATTR_IO_BYTES);
    snprintf(vals, sizeof vals, "{%lld,4096}", local * 4096);
    int bad = atoll(PQgetvalue(r, i, 0)) != aid || atoll(PQgetvalue(r, i, 1)) != proc ||
              atoll(PQgetvalue(r, i, 3)) != start || atoll(PQgetvalue(r, i, 4)) != start + 700 ||
              atoi(PQgetvalue(r, i, 5)) != ((i % 100 == 0) ? 5 : 0) || strcmp(PQgetvalue(r, i, 6), ids) ||
              strcmp(PQgetvalue(r, i, 7), vals) || strcmp(PQgetvalue(r, i, 8), "{}") ||
              strcmp(PQgetvalue(r, i, 9), "write") || strcmp(PQgetvalue(r, i, 10), "node1") ||
              strcmp(PQgetvalue(r, i, 11), "POSIX");
    int has_parent = (i % PER) % 10 == 9;
    bad |= has_parent ? atoll(PQgetvalue(r, i, 2)) != aid - 1 : !PQgetisnull(r, i, 2);
    CHECK(!bad, "row %d differs (aid %s start %s attrs %s %s)", i, PQgetvalue(r, i, 0), PQgetvalue(r, i, 3),
          PQgetvalue(r, i, 6), PQgetvalue(r, i, 7));
    if (bad) break;
  }
  PQclear(r);
}

static void check_counts(PGconn *c, int acked) {
  CHECK(harness_scalar(c, "SELECT count(*) FROM activities") == NBATCH * PER, "activities");
  CHECK(harness_scalar(c, "SELECT count(DISTINCT aid) FROM activities") == NBATCH * PER, "distinct");
  CHECK(harness_scalar(c, "SELECT count(*) FROM activity_text_attrs WHERE value = '/data/out.h5'") == NBATCH, "text attrs");
  CHECK(harness_scalar(c, "SELECT count(*) FROM processes") == 1, "processes");
  CHECK(harness_scalar(c, "SELECT count(*) FROM nodes") == 1, "nodes");
  CHECK(harness_scalar(c, "SELECT count(*) FROM activity_types") == 1, "types");
  CHECK(harness_scalar(c, "SELECT acked_seq FROM daemons WHERE daemon_id = 42") == acked, "acked_seq");
  CHECK(harness_scalar(c, "SELECT count(*) FROM remote_calls") == NBATCH, "remote calls");
  CHECK(harness_scalar(c, "SELECT count(*) FROM descriptor_mappings") == NBATCH, "descriptor mappings");
  CHECK(harness_scalar(c, "SELECT activities FROM client_stats") == NBATCH * PER, "client_stats");
  CHECK(harness_scalar(c, "SELECT dropped FROM client_stats") == 3, "client_stats dropped");
  CHECK(harness_scalar(c, "SELECT count(*) FROM causal_edges WHERE kind = 'explicit'") == NBATCH * PER / 10, "explicit");
}

static long long counter(const Siox__StatusReply *r, const char *name) {
  for (size_t i = 0; i < r->n_counters; i++)
    if (strcmp(r->counters[i]->name, name) == 0) return r->counters[i]->value;
  return -1;
}

/* StatusRequest and Ping need no Hello (siox status, clock sync); the
 * counters need a MUNGE status credential (siox status signs its request). */
static void check_status_and_ping(int port) {
  int fd = cli_connect(port);
  uint16_t type = 0;
  uint8_t *p = NULL;
  uint32_t len = 0;
  Siox__StatusReply *r = cli_status(fd, 1);
  CHECK(r && strcmp(r->role, "server") == 0, "status reply");
  if (r) {
    CHECK(counter(r, "batches_ingested") == NBATCH, "batches_ingested %lld", counter(r, "batches_ingested"));
    CHECK(counter(r, "batches_duplicate") == NBATCH, "batches_duplicate %lld", counter(r, "batches_duplicate"));
    CHECK(counter(r, "activities_ingested") == NBATCH * PER, "activities_ingested");
    CHECK(counter(r, "bad_frames") == 0 && counter(r, "db_ok") == 1, "bad_frames, db_ok");
    siox__status_reply__free_unpacked(r, NULL);
  }
  Siox__Ping ping = SIOX__PING__INIT;
  ping.t1 = 12345;
  CHECK(cli_send(fd, SIOX_FRAME_PING, &ping.base) == 0 && cli_recv(fd, &type, &p, &len, 10000) == 0, "ping");
  Siox__Pong *g = type == SIOX_FRAME_PONG ? siox__pong__unpack(NULL, len, p) : NULL;
  CHECK(g && g->t1 == 12345 && g->t2 > 1600000000000000000LL && g->t3 >= g->t2, "pong");
  if (g) siox__pong__free_unpacked(g, NULL);
  free(p);
  close(fd);
}

int main(int argc, char **argv) {
  struct harness h;
  if (harness_setup(&h, argc, argv, NULL, NULL) != 0) return 1;
  send_all(h.port, 0, 1);
  PGconn *c = harness_db(&h);
  CHECK(c != NULL, "db");
  if (c) check_rows(c), check_counts(c, NBATCH);
  send_all(h.port, NBATCH, 1); /* the same seqs again: acked, not stored twice */
  if (c) check_counts(c, NBATCH);
  CHECK(harness_log_has(&h, "daemon 42 (node1) connected, acked_seq 3"), "second hello logged");
  check_status_and_ping(h.port);
  send_all(h.port, NBATCH, NBATCH + 1); /* the same activities under new seqs */
  if (c) check_rows(c), check_counts(c, 2 * NBATCH);
  CHECK(harness_log_has(&h, "some activities already stored; keeping the first copies"), "resend logged");
  PQfinish(c);
  return harness_finish(&h, "server_ingest");
}
