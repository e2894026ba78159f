/*
 * Matcher benchmark: the cost of implicit links on a long-lived file, with
 * receives that wait for late senders. A real siox-server (embedded
 * PostgreSQL) and two daemons: a GlusterFS client sends a 128 KiB writev
 * every 1 ms on one file, a brick receives each inside its sender's
 * interval. The client's batches reach the server LAG batches after the
 * brick's (a spooling daemon), so LAG x PER_BATCH receives are unmatched at
 * any time -- the state in which the matcher once stalled ingest. Batches
 * are sent back to back: the full ingest rate.
 *
 * Each round runs three fresh servers, interleaved: the baseline (the same
 * activities without send/receive records: no matching work), the SQL
 * matcher alone (--match-memory off: the matcher before issue 15) and the
 * in-memory matcher (the default). Prints medians over the rounds:
 *   server_match_pairs_per_s      linked pairs per second of matcher time
 *                                 (the server's match_busy_us: the database
 *                                 thread's time in the window and in SQL
 *                                 passes, link writes included), in-memory
 *   server_match_cpu_pairs_per_s  linked pairs per CPU second of matching
 *                                 (the server's match_cpu_us: the database
 *                                 thread's CPU and its PostgreSQL backend's
 *                                 over the same stretches; robust to the
 *                                 load, where match_busy_us is not)
 *   server_match_pairs_per_s_sql  the same for the SQL matcher alone
 *   server_match_lag_ms_p95(_sql) p95 over the client batches of the time
 *                                 from the Ack of the batch that completes
 *                                 its pairs to those links being visible
 *                                 (a poller counts causal_links every 5 ms)
 *   server_match_e2e_pairs_per_s(_sql)  linked pairs / (first send .. all linked)
 *   server_match_time_ratio       in-memory e2e time over the baseline's
 *   server_match_last_quarter_ratio  in-memory: time of the last quarter of
 *                                 the batches over the first quarter's
 * Usage: bench_match SIOX_SERVER [pairs] [runs]
 * With BENCH_MATCH_ONLY=memory in the environment, each round runs the
 * in-memory matcher alone and prints its figures only (for profiling and
 * for A/B rounds of two builds).
 */
#include <pthread.h>
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

/* Counts causal_links every 5 ms: (time, count) samples for the lag. */
struct poller {
  PGconn *c;
  pthread_t t;
  volatile int stop;
  double *t_s;
  long long *n;
  size_t len, cap;
};

static void *poll_links(void *arg) {
  struct poller *p = arg;
  while (!p->stop && p->len < p->cap) {
    double t = now_s();
    long long n = links(p->c);
    p->t_s[p->len] = t, p->n[p->len++] = n;
    usleep(5000);
  }
  return NULL;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) { return qsort(v, (size_t)n, sizeof *v, cmp), v[n / 2]; }

/* p95 of the lags: client batch k (acked at ack[k]) completes pairs up to
 * (k + 1) * PER_BATCH; its lag ends at the first sample that counts them. */
static double lag_p95(const struct poller *p, const double *ack, int nbatch) {
  double *lag = malloc((size_t)nbatch * sizeof *lag);
  if (!lag) return -1;
  size_t j = 0;
  for (int k = 0; k < nbatch; k++) {
    long long want = (long long)(k + 1) * PER_BATCH;
    while (j < p->len && p->n[j] < want) j++;
    double l = j < p->len ? p->t_s[j] - ack[k] : now_s() - ack[k];
    lag[k] = l > 0 ? l * 1000 : 0;
  }
  qsort(lag, (size_t)nbatch, sizeof *lag, cmp);
  double v = lag[(size_t)(0.95 * (nbatch - 1))];
  free(lag);
  return v;
}

struct result {
  double t, q[2], lag_ms, busy_s, cpu_s;
};

/* One run on a fresh server: step k sends brick batch k and client batch
 * k - LAG. With linked, waits until every pair is linked (memory: the
 * in-memory matcher on). Returns 0 and fills *res, or -1. */
static int run(const char *bin, int nbatch, int linked, int memory, struct result *res) {
  struct harness h;
  const char *const on[] = {"--match-ms", "200", NULL}, *const off[] = {"--match-ms", "200", "--match-memory", "off", NULL};
  if (harness_init(&h, bin) != 0 || harness_start(&h, memory ? on : off) != 0) return harness_cleanup(&h), -1;
  PGconn *c = harness_db(&h);
  struct poller p = {.c = harness_db(&h), .cap = 1 << 20};
  double *ack = calloc((size_t)nbatch + 1, sizeof *ack);
  p.t_s = malloc(p.cap * sizeof *p.t_s), p.n = malloc(p.cap * sizeof *p.n);
  int cf = cli_connect(h.port), bf = cli_connect(h.port), rc = -1, polling = 0;
  double t0 = now_s(), tq = t0;
  if (!c || !p.c || !ack || !p.t_s || !p.n || cli_hello(cf, 1, "client1", NULL) < 0 || cli_hello(bf, 2, "brick1", NULL) < 0)
    goto out;
  polling = pthread_create(&p.t, NULL, poll_links, &p) == 0;
  for (int k = 1; k <= nbatch + LAG; k++) {
    if ((k <= nbatch && send_batch(bf, 2, k, linked) < 0) || (k > LAG && send_batch(cf, 1, k - LAG, linked) < 0))
      goto out;
    if (k > LAG) ack[k - LAG - 1] = now_s();
    if (k == (nbatch + LAG) / 4) res->q[0] = now_s() - tq;
    if (k == (nbatch + LAG) - (nbatch + LAG) / 4) tq = now_s();
  }
  long long want = linked ? (long long)nbatch * PER_BATCH : 0, n = 0;
  for (int i = 0; i < 6000 && (n = links(c)) < want; i++) usleep(50000);
  if (n != want) {
    fprintf(stderr, "bench: %lld of %lld pairs linked\n", n, want);
    goto out;
  }
  res->q[1] = now_s() - tq;
  res->t = now_s() - t0;
  if (polling) p.stop = 1, pthread_join(p.t, NULL), polling = 0;
  res->lag_ms = linked ? lag_p95(&p, ack, nbatch) : 0;
  res->busy_s = server_counter(h.port, "match_busy_us") / 1e6;
  res->cpu_s = server_counter(h.port, "match_cpu_us") / 1e6;
  rc = 0;
out:
  if (polling) p.stop = 1, pthread_join(p.t, NULL);
  if (c) PQfinish(c);
  if (p.c) PQfinish(p.c);
  free(ack), free(p.t_s), free(p.n);
  close(cf), close(bf);
  harness_stop(&h);
  harness_cleanup(&h);
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 2) return fprintf(stderr, "usage: %s SIOX_SERVER [pairs] [runs]\n", argv[0]), 2;
  long pairs = argc > 2 ? atol(argv[2]) : 40000;
  int runs = argc > 3 ? atoi(argv[3]) : 3;
  int nbatch = (int)((pairs + PER_BATCH - 1) / PER_BATCH);
  if (runs > 9) runs = 9;
  if (runs < 1 || nbatch < 4) return fprintf(stderr, "bench: need runs >= 1 and pairs >= %d\n", 4 * PER_BATCH), 2;
  double rate[2][9], cpu[2][9], lag[2][9], e2e[2][9], ratio[9], growth[9];
  double np = (double)nbatch * PER_BATCH;
  const char *only = getenv("BENCH_MATCH_ONLY");
  int memory_only = only && strcmp(only, "memory") == 0;
  for (int r = 0; r < runs; r++) {
    struct result b = {.t = 1}, m[2] = {{.t = 1}, {.t = 1}};
    if ((!memory_only && (run(argv[1], nbatch, 0, 1, &b) || run(argv[1], nbatch, 1, 0, &m[0]))) ||
        run(argv[1], nbatch, 1, 1, &m[1]))
      return fprintf(stderr, "bench: run %d failed\n", r + 1), 1;
    for (int v = memory_only; v < 2; v++) {
      rate[v][r] = m[v].busy_s > 0 ? np / m[v].busy_s : 0;
      cpu[v][r] = m[v].cpu_s > 0 ? np / m[v].cpu_s : 0;
      lag[v][r] = m[v].lag_ms;
      e2e[v][r] = np / m[v].t;
      fprintf(stderr, "run %d %s: %.0f pairs in %.3f s (matcher busy %.3f s, CPU %.3f s, lag p95 %.0f ms; quarters %.3f/%.3f s)\n",
              r + 1, v ? "memory" : "sql", np, m[v].t, m[v].busy_s, m[v].cpu_s, m[v].lag_ms, m[v].q[0], m[v].q[1]);
    }
    if (!memory_only) fprintf(stderr, "run %d baseline (ingest only): %.3f s\n", r + 1, b.t);
    ratio[r] = m[1].t / b.t;
    growth[r] = m[1].q[1] / m[1].q[0];
  }
  printf("server_match_pairs_per_s %.0f pairs/s\n", median(rate[1], runs));
  printf("server_match_cpu_pairs_per_s %.0f pairs/s\n", median(cpu[1], runs));
  if (memory_only) {
    printf("server_match_lag_ms_p95 %.0f ms\n", median(lag[1], runs));
    printf("server_match_e2e_pairs_per_s %.0f pairs/s\n", median(e2e[1], runs));
    return 0;
  }
  printf("server_match_pairs_per_s_sql %.0f pairs/s\n", median(rate[0], runs));
  printf("server_match_cpu_pairs_per_s_sql %.0f pairs/s\n", median(cpu[0], runs));
  printf("server_match_lag_ms_p95 %.0f ms\n", median(lag[1], runs));
  printf("server_match_lag_ms_p95_sql %.0f ms\n", median(lag[0], runs));
  printf("server_match_e2e_pairs_per_s %.0f pairs/s\n", median(e2e[1], runs));
  printf("server_match_e2e_pairs_per_s_sql %.0f pairs/s\n", median(e2e[0], runs));
  printf("server_match_time_ratio %.2f x\n", median(ratio, runs));
  printf("server_match_last_quarter_ratio %.2f x\n", median(growth, runs));
  return 0;
}
