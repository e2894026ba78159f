/*
 * Matcher benchmark: the cost of implicit links on a long-lived file, with
 * receives that wait for late senders. A real siox-server (embedded
 * PostgreSQL) and two daemons: a GlusterFS client sends a 128 KiB writev
 * every 1 ms on one file, a brick receives each inside its sender's
 * interval. The client's batches reach the server LAG batches after the
 * brick's (a spooling daemon), so LAG x PER_BATCH receives are unmatched at
 * any time -- the state in which the matcher once stalled ingest.
 *
 * Baseline in the same run: the same activities without send/receive
 * records (no matching work). Each run uses a fresh server. Prints medians:
 *   server_match_pairs_per_s       linked pairs / (first send .. all linked)
 *   server_match_time_ratio        that time over the baseline's (ingest only)
 *   server_match_last_quarter_ratio  time of the last quarter of the batches
 *                                    over the first quarter's (1: no growth
 *                                    with the file's history)
 * Usage: bench_match SIOX_SERVER [pairs] [runs]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "server_harness.h"
#include "siox/siox_ontology.h"
#include "siox_client_wire.h"

#define PER_BATCH 1000
#define LAG 8
#define T0 1700000000000000000LL
#define MS 1000000LL
#define FILE_HANDLE "bench-match.dat"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Batch k (1-based) of one side: PER_BATCH activities, with their remote
 * call records when linked is set. */
static void fill(struct siox_block *b, int sender, int k, int linked) {
  uint32_t p = sender ? block_proc(b, 100, "client1", "GlusterFS-client") : block_proc(b, 200, "brick1", "GlusterFS-brick");
  if (sender && linked) {
    struct siox_block_target *t = siox_block_add_target(b);
    t->proc = p, t->target_id = 1;
    t->hwid = siox_block_strdup(b, "brick1", 6);
    t->swid = siox_block_strdup(b, "GlusterFS-brick", 15);
  }
  for (int j = 0; j < PER_BATCH; j++) {
    uint64_t i = (uint64_t)(k - 1) * PER_BATCH + (uint64_t)j;
    int64_t s = T0 + (int64_t)i * MS;
    if (sender) block_act(b, p, i + 1, s, s + 800000);
    else block_act(b, p, i + 1, s + 100000, s + 700000);
    if (!linked) continue;
    struct siox_block_descriptor *d = block_desc(b, p, sender ? SIOX_DESC_SEND : SIOX_DESC_RECEIVE, i + 1,
                                                 1, SIOX_ATTR_TEST_HANDLE, FILE_HANDLE,
                                                 strlen(FILE_HANDLE));
    d->offset = i * 131072, d->length = 131072;
  }
}

static int send_batch(int fd, uint64_t daemon, int k, int linked) {
  struct siox_block b;
  siox_block_init(&b);
  fill(&b, daemon == 1, k, linked);
  int rc = cli_batch(fd, daemon, (uint64_t)k, 0, 20000, &b);
  siox_block_free(&b);
  return rc == 0 && cli_wait_ack(fd, (uint64_t)k, 600000) == k ? 0 : -1;
}

static long long links(PGconn *c) { return harness_scalar(c, "SELECT count(*) FROM causal_links"); }

/* One run on a fresh server: step k sends brick batch k and client batch
 * k - LAG. With linked, waits until every pair is linked. Returns the
 * seconds and the per-quarter times in q[0] (first) and q[1] (last). */
static double run(const char *bin, int nbatch, int linked, double q[2]) {
  struct harness h;
  const char *const args[] = {"--match-ms", "200", NULL};
  if (harness_init(&h, bin) != 0 || harness_start(&h, args) != 0) return harness_cleanup(&h), -1;
  PGconn *c = harness_db(&h);
  int cf = cli_connect(h.port), bf = cli_connect(h.port);
  double t = -1, t0 = now_s(), tq = t0;
  if (!c || cli_hello(cf, 1, "client1", NULL) < 0 || cli_hello(bf, 2, "brick1", NULL) < 0) goto out;
  for (int k = 1; k <= nbatch + LAG; k++) {
    if ((k <= nbatch && send_batch(bf, 2, k, linked) < 0) || (k > LAG && send_batch(cf, 1, k - LAG, linked) < 0))
      goto out;
    if (k == (nbatch + LAG) / 4) q[0] = now_s() - tq;
    if (k == (nbatch + LAG) - (nbatch + LAG) / 4) tq = now_s();
  }
  long long want = linked ? (long long)nbatch * PER_BATCH : 0, n = 0;
  for (int i = 0; i < 6000 && (n = links(c)) < want; i++) usleep(50000);
  if (n != want) {
    fprintf(stderr, "bench: %lld of %lld pairs linked\n", n, want);
    goto out;
  }
  q[1] = now_s() - tq;
  t = now_s() - t0;
out:
  if (c) PQfinish(c);
  close(cf), close(bf);
  harness_stop(&h);
  harness_cleanup(&h);
  return t;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) { return qsort(v, (size_t)n, sizeof *v, cmp), v[n / 2]; }

int main(int argc, char **argv) {
  if (argc < 2) return fprintf(stderr, "usage: %s SIOX_SERVER [pairs] [runs]\n", argv[0]), 2;
  long pairs = argc > 2 ? atol(argv[2]) : 40000;
  int runs = argc > 3 ? atoi(argv[3]) : 3;
  int nbatch = (int)((pairs + PER_BATCH - 1) / PER_BATCH);
  if (runs > 9) runs = 9;
  if (runs < 1 || nbatch < 4) return fprintf(stderr, "bench: need runs >= 1 and pairs >= %d\n", 4 * PER_BATCH), 2;
  double m[9], base[9], ratio[9], growth[9];
  for (int r = 0; r < runs; r++) {
    double qb[2], qm[2];
    base[r] = run(argv[1], nbatch, 0, qb);
    m[r] = run(argv[1], nbatch, 1, qm);
    if (base[r] <= 0 || m[r] <= 0) return fprintf(stderr, "bench: run %d failed\n", r + 1), 1;
    ratio[r] = m[r] / base[r];
    growth[r] = qm[1] / qm[0];
    fprintf(stderr, "run %d: %d pairs linked in %.3f s (first quarter %.3f s, last %.3f s), ingest only %.3f s\n",
            r + 1, nbatch * PER_BATCH, m[r], qm[0], qm[1], base[r]);
  }
  printf("server_match_pairs_per_s %.0f pairs/s\n", nbatch * PER_BATCH / median(m, runs));
  printf("server_match_time_ratio %.2f x\n", median(ratio, runs));
  printf("server_match_last_quarter_ratio %.2f x\n", median(growth, runs));
  return 0;
}
