/*
 * The in-memory matcher's own cost, on one core: bench_match's workload (a
 * client sends a 128 KiB writev every 1 ms on one file, a brick receives
 * each inside its sender, the client's batches arrive LAG batches after
 * the brick's) fed straight to match_window.c, without a server or a
 * database. What the server adds on top (storing the links in PostgreSQL)
 * is in bench_match's server_match_pairs_per_s.
 * Prints the median of runs:
 *   server_match_window_pairs_per_s  linked pairs per CPU second of the window
 * Usage: bench_match_window [pairs] [runs]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "match_window.h"

#define PER_BATCH 1000
#define LAG 8
#define T0 1700000000000000000LL
#define MS 1000000LL

static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void fill(struct siox_mw *w, struct siox_mw_call *c, int sender, int k, uint32_t node, uint32_t d) {
  for (int j = 0; j < PER_BATCH; j++) {
    int64_t i = (int64_t)(k - 1) * PER_BATCH + j, s = T0 + i * MS;
    c[j] = (struct siox_mw_call){.aid = ((int64_t)(sender ? 1 : 2) << 32) | (i + 1), .object = 1, .offset = i * 131072,
                                 .length = 131072, .start = sender ? s : s + 100000, .end = sender ? s + 800000 : s + 700000,
                                 .hw = node, .sw = node, .daemon = d, .kind = sender ? 'S' : 'R'};
  }
  (void)w;
}

static double run(int nbatch, long long *linked) {
  struct siox_mw *w = siox_mw_new(SIOX_MATCH_WINDOW_CALLS, 30000000000LL, 2000000000LL);
  struct siox_mw_call *c = malloc(PER_BATCH * sizeof *c);
  if (!w || !c) return -1;
  siox_mw_start(w, INT64_MIN, 0);
  uint32_t node = siox_mw_intern(w, "brick1", 0), ds = siox_mw_daemon(w, 1, 20000), dr = siox_mw_daemon(w, 2, 20000);
  struct siox_mw_out out = {0};
  *linked = 0;
  double t0 = cpu_s();
  for (int k = 1; k <= nbatch + LAG; k++) {
    if (k <= nbatch) fill(w, c, 0, k, node, dr), siox_mw_batch(w, c, PER_BATCH, &out);
    if (k > LAG) fill(w, c, 1, k - LAG, node, ds), siox_mw_batch(w, c, PER_BATCH, &out);
    *linked += (long long)out.nlinks;
    out.nlinks = out.nstale = 0;
  }
  double t = cpu_s() - t0;
  siox_mw_out_free(&out);
  siox_mw_free(w);
  free(c);
  return t;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  long pairs = argc > 1 ? atol(argv[1]) : 1000000;
  int runs = argc > 2 ? atoi(argv[2]) : 5, nbatch = (int)(pairs / PER_BATCH);
  if (runs < 1 || runs > 15 || nbatch < 1) return fprintf(stderr, "usage: %s [pairs >= 1000] [runs 1..15]\n", argv[0]), 2;
  double rate[15];
  for (int r = 0; r < runs; r++) {
    long long linked = 0;
    double t = run(nbatch, &linked);
    if (t <= 0 || linked != (long long)nbatch * PER_BATCH)
      return fprintf(stderr, "bench: run %d linked %lld of %d pairs\n", r + 1, linked, nbatch * PER_BATCH), 1;
    rate[r] = (double)linked / t;
    fprintf(stderr, "run %d: %lld pairs in %.3f CPU s\n", r + 1, linked, t);
  }
  qsort(rate, (size_t)runs, sizeof *rate, cmp);
  printf("server_match_window_pairs_per_s %.0f pairs/s\n", rate[runs / 2]);
  return 0;
}
