/*
 * Fills a running siox-server with a GlusterFS-like template for the blame
 * latency benchmark (bench/bench_blame_latency.sh), as daemons would: real
 * Batch frames over TCP, MUNGE-signed Hellos, the server's own ingest and
 * remote-call matcher. What it sends:
 *   - HOSTS client hosts (node1..), one daemon each, running the ranks of
 *     the jobs (POSIX write, job "job-J", uid 1000 + J % 3) and one
 *     GlusterFS client process (no job) with one node per brick
 *     (nodeH / GlusterFS-client / brickB);
 *   - BRICKS brick hosts (brick1..), one daemon each, one brick process
 *     (brickB / GlusterFS-brick);
 *   - per write: POSIX write -> client writev -> brick writev, linked by
 *     send/receive records (the matcher makes the causal links); every 50th
 *     write the client also does a lookup of its own (a root in the client
 *     layer) -> brick lookup;
 *   - jobs staggered in time, 4 ranks each, file per process or one shared
 *     file; in some 5 s epochs one brick is slowed by 20 ms per request, and
 *     1% of requests are slow by chance.
 * The script then copies this template in time with SQL (see its header).
 * Usage: bench_blame_fill PORT MUNGE_SOCKET JOBS WRITES_PER_RANK
 * Prints the number of activities sent on stdout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server_harness.h"
#include "siox/siox_ontology.h"
#include "siox_client_wire.h"

#define HOSTS 4
#define BRICKS 4
#define RANKS 4
#define T0 1700000000000000000LL
#define US 1000LL
#define MS 1000000LL
#define GAP (2 * MS)          /* between one rank's writes */
#define STAGGER (1500 * MS)   /* between job starts */
#define SLICE (500 * MS)      /* one batch per daemon per slice */
#define EPOCH (5000 * MS)

struct daemon {
  int fd;
  uint64_t id, seq;
  struct siox_block b;
};

static int jobs, writes;
static struct daemon hostd[HOSTS], brickd[BRICKS];
static uint64_t rank_aid[4096], client_aid[HOSTS], brick_aid[BRICKS];
static long long sent;

static char *dup_s(struct siox_block *b, const char *s) { return siox_block_strdup(b, s, strlen(s)); }

static uint32_t proc_add(struct siox_block *b, uint32_t pid, uint32_t uid, const char *host, const char *job) {
  struct siox_block_process *p = siox_block_add_process(b);
  p->pid = pid, p->uid = uid, p->nonce = pid;
  p->host = dup_s(b, host);
  p->exe = dup_s(b, job[0] ? "/usr/bin/ior" : "/usr/sbin/glusterfsd");
  p->args = dup_s(b, job[0] ? "ior -w" : "glusterfsd");
  p->job = dup_s(b, job);
  return (uint32_t)(b->n_processes - 1);
}

static void node_add(struct siox_block *b, uint32_t proc, uint32_t unid, const char *hw, const char *sw, const char *iid) {
  struct siox_block_node *n = siox_block_add_node(b);
  n->proc = proc, n->unid = unid;
  n->hwid = dup_s(b, hw), n->swid = dup_s(b, sw), n->iid = dup_s(b, iid);
}

static void type_add(struct siox_block *b, uint32_t proc, uint32_t type_id, uint32_t unid, const char *name) {
  struct siox_block_type *t = siox_block_add_type(b);
  t->proc = proc, t->type_id = type_id, t->unid = unid;
  t->name = dup_s(b, name);
}

static void act_add(struct siox_block *b, uint32_t proc, uint32_t type, uint64_t aid, int64_t s, int64_t e,
                    uint64_t off, uint64_t bytes) {
  struct siox_block_activity *a = siox_block_add_activity(b);
  a->proc = proc, a->type_id = type, a->aid = aid, a->start_ns = s, a->end_ns = e;
  struct siox_value *v = siox_block_add_attrs(b, a, bytes ? 2 : 0);
  sent++;
  if (!bytes) return;
  v[0].attr = SIOX_ATTR_IO_OFFSET, v[0].vtype = SIOX_VT_U64, v[0].v.u64 = off;
  v[1].attr = SIOX_ATTR_IO_BYTES, v[1].vtype = SIOX_VT_U64, v[1].v.u64 = bytes;
}

static void desc_add(struct siox_block *b, uint32_t proc, uint32_t kind, uint64_t aid, uint32_t node, const char *obj,
                     uint64_t off, uint64_t len) {
  struct siox_block_descriptor *d = block_desc(b, proc, kind, aid, node, SIOX_ATTR_TEST_HANDLE, obj, strlen(obj));
  d->offset = off, d->length = len;
}

/* The process tables of a host daemon's batch: its client process (index 0,
 * node unid B+1 per brick, types writev B+1 and lookup 5+B) and the ranks
 * of every job on it (index 1 + j, node 1, type 1 write). */
static void host_tables(struct siox_block *b, int h) {
  char host[16], brick[16], job[16];
  snprintf(host, sizeof host, "node%d", h + 1);
  uint32_t c = proc_add(b, 500 + (uint32_t)h, 0, host, "");
  for (int k = 0; k < BRICKS; k++) {
    snprintf(brick, sizeof brick, "brick%d", k + 1);
    node_add(b, c, (uint32_t)k + 1, host, "GlusterFS-client", brick);
    type_add(b, c, (uint32_t)k + 1, (uint32_t)k + 1, "writev");
    type_add(b, c, (uint32_t)k + 5, (uint32_t)k + 1, "lookup");
    struct siox_block_target *t = siox_block_add_target(b);
    t->proc = c, t->target_id = (uint32_t)k + 1;
    t->hwid = dup_s(b, brick), t->swid = dup_s(b, "GlusterFS-brick");
  }
  for (int j = 0; j < jobs; j++) {
    snprintf(job, sizeof job, "job-%d", j);
    uint32_t p = proc_add(b, 1000 + (uint32_t)j * 10 + (uint32_t)h, 1000 + (uint32_t)(j % 3), host, job);
    node_add(b, p, 1, host, "POSIX", "");
    type_add(b, p, 1, 1, "write");
  }
}

static void brick_tables(struct siox_block *b, int k) {
  char brick[16];
  snprintf(brick, sizeof brick, "brick%d", k + 1);
  uint32_t p = proc_add(b, 600 + (uint32_t)k, 0, brick, "");
  node_add(b, p, 1, brick, "GlusterFS-brick", "");
  type_add(b, p, 1, 1, "writev");
  type_add(b, p, 2, 1, "lookup");
}

static unsigned rnd(unsigned *s) { return *s = *s * 1103515245u + 12345u, (*s >> 8) & 0xffffff; }

/* Service time of one request at brick k starting at t. */
static int64_t service(int k, int64_t t, uint64_t bytes, unsigned *seed) {
  int64_t ns = 300 * US + (int64_t)bytes; /* ~1 GB/s */
  long epoch = (long)((t - T0) / EPOCH);
  if (epoch % 3 == 0 && epoch / 3 % BRICKS == k) ns += 20 * MS;
  if (rnd(seed) % 100 == 0) ns += (int64_t)(rnd(seed) % 40) * MS;
  return ns;
}

/* Write i of rank r of job j: POSIX -> client -> brick, with its records. */
static void one_write(int j, int r, int i) {
  unsigned seed = (unsigned)(j * 7919 + r * 104729 + i * 31);
  int h = (j + r) % HOSTS, shared = j % 2 == 0;
  int k = shared ? (j * 3) % BRICKS : (j * 3 + r) % BRICKS;
  uint64_t bytes = rnd(&seed) % 4 == 0 ? 65536 : 262144;
  uint64_t off = shared ? ((uint64_t)i * RANKS + (uint64_t)r) * bytes : (uint64_t)i * bytes;
  int64_t s = T0 + (int64_t)j * STAGGER + (int64_t)i * GAP + (int64_t)(rnd(&seed) % 300) * US;
  int64_t d = service(k, s + 60 * US, bytes, &seed);
  char obj[48], gobj[48];
  snprintf(obj, sizeof obj, "p:%d:%d", j, shared ? -1 : r);
  snprintf(gobj, sizeof gobj, "g:%d:%d", j, shared ? -1 : r);
  struct siox_block *hb = &hostd[h].b, *bb = &brickd[k].b;
  uint32_t rp = 1 + (uint32_t)j, ra = (uint32_t)(j * RANKS + r);
  uint64_t pa = ++rank_aid[ra], ca = ++client_aid[h], ba = ++brick_aid[k];
  act_add(hb, rp, 1, pa, s, s + d + 110 * US, off, bytes);
  desc_add(hb, rp, SIOX_DESC_SEND, pa, 0, obj, off, bytes);
  act_add(hb, 0, (uint32_t)k + 1, ca, s + 20 * US, s + d + 100 * US, off, bytes);
  desc_add(hb, 0, SIOX_DESC_RECEIVE, ca, (uint32_t)k + 1, obj, off, bytes);
  desc_add(hb, 0, SIOX_DESC_SEND, ca, (uint32_t)k + 1, gobj, off, bytes);
  act_add(bb, 0, 1, ba, s + 60 * US, s + 60 * US + d, off, bytes);
  desc_add(bb, 0, SIOX_DESC_RECEIVE, ba, 1, gobj, off, bytes);
  if (i % 50 != 25) return;
  /* A lookup the client does of its own (no POSIX call above it). */
  int64_t ls = s + 500 * US, ld = service(k, ls, 0, &seed);
  snprintf(gobj, sizeof gobj, "l:%d:%d:%d", j, r, i);
  ca = ++client_aid[h], ba = ++brick_aid[k];
  act_add(hb, 0, (uint32_t)k + 5, ca, ls, ls + ld + 100 * US, 0, 0);
  desc_add(hb, 0, SIOX_DESC_SEND, ca, (uint32_t)k + 1, gobj, 0, 0);
  act_add(bb, 0, 2, ba, ls + 50 * US, ls + 50 * US + ld, 0, 0);
  desc_add(bb, 0, SIOX_DESC_RECEIVE, ba, 1, gobj, 0, 0);
}

static int flush(struct daemon *d) {
  if (cli_batch(d->fd, d->id, ++d->seq, 0, 20000, &d->b) != 0 || cli_wait_ack(d->fd, d->seq, 600000) != (long long)d->seq)
    return fprintf(stderr, "bench_blame_fill: batch %llu of daemon %llu not acked\n", (unsigned long long)d->seq,
                   (unsigned long long)d->id),
           -1;
  siox_block_free(&d->b);
  siox_block_init(&d->b);
  return 0;
}

static int open_daemon(struct daemon *d, int port, uint64_t id, const char *host) {
  d->id = id;
  siox_block_init(&d->b);
  d->fd = cli_connect(port);
  if (d->fd < 0 || cli_hello(d->fd, id, host, NULL) < 0)
    return fprintf(stderr, "bench_blame_fill: Hello of %s refused\n", host), -1;
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 5) return fprintf(stderr, "usage: %s PORT MUNGE_SOCKET JOBS WRITES_PER_RANK\n", argv[0]), 2;
  int port = atoi(argv[1]);
  harness_munge_socket = argv[2];
  jobs = atoi(argv[3]), writes = atoi(argv[4]);
  if (jobs < 1 || jobs > 400 || writes < 1) return fprintf(stderr, "bench_blame_fill: bad JOBS or WRITES\n"), 2;
  char name[16];
  for (int h = 0; h < HOSTS; h++)
    if (snprintf(name, sizeof name, "node%d", h + 1), open_daemon(&hostd[h], port, 10 + (uint64_t)h, name) != 0) return 1;
  for (int k = 0; k < BRICKS; k++)
    if (snprintf(name, sizeof name, "brick%d", k + 1), open_daemon(&brickd[k], port, 20 + (uint64_t)k, name) != 0) return 1;
  int64_t end = T0 + (int64_t)(jobs - 1) * STAGGER + (int64_t)writes * GAP;
  for (int64_t t = T0; t < end; t += SLICE) {
    for (int h = 0; h < HOSTS; h++) host_tables(&hostd[h].b, h);
    for (int k = 0; k < BRICKS; k++) brick_tables(&brickd[k].b, k);
    for (int j = 0; j < jobs; j++) {
      int64_t js = T0 + (int64_t)j * STAGGER;
      for (int i = 0; i < writes; i++) {
        int64_t s = js + (int64_t)i * GAP;
        if (s < t || s >= t + SLICE) continue;
        for (int r = 0; r < RANKS; r++) one_write(j, r, i);
      }
    }
    /* Senders first, as a client's daemon usually is ahead of the brick's. */
    for (int h = 0; h < HOSTS; h++)
      if (flush(&hostd[h]) != 0) return 1;
    for (int k = 0; k < BRICKS; k++)
      if (flush(&brickd[k]) != 0) return 1;
  }
  for (int h = 0; h < HOSTS; h++) close(hostd[h].fd);
  for (int k = 0; k < BRICKS; k++) close(brickd[k].fd);
  printf("%lld\n", sent);
  return 0;
}
