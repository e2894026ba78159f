/*
 * Server ingest benchmark: starts a real siox-server (embedded PostgreSQL in
 * a temp dir), then acts as a daemon: sends pre-encoded batches of 64k SPMD
 * activities (2 numeric attributes each) with up to 4 batches in flight, and
 * measures from the first send to the last Ack (= committed). Prints
 * `server_ingest_activities_per_s VALUE act/s`, the median of the runs.
 * Usage: bench_server SIOX_SERVER_BINARY [total_activities] [runs]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "server_harness.h"
#include "siox_frame.h"

#define PER_BATCH 65536
#define WINDOW 4

struct enc {
  uint8_t *frame;
  size_t len;
};

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct enc encode(uint64_t d, uint64_t seq, uint32_t pid) {
  struct enc e = {0, 0};
  e.frame = spmd_batch_frame(d, seq, pid, PER_BATCH, &e.len);
  return e;
}

static double run(int port, uint64_t daemon, int nbatch, size_t *wire) {
  struct enc *e = calloc((size_t)nbatch + 1, sizeof *e);
  *wire = 0;
  for (int i = 1; i <= nbatch; i++) e[i] = encode(daemon, (uint64_t)i, (uint32_t)(1000 + daemon)), *wire += e[i].len;
  int fd = cli_connect(port);
  if (fd < 0 || cli_hello(fd, daemon, "benchnode", NULL) != 0) return -1;
  double t0 = now_s();
  int next = 1;
  long long acked = 0;
  while (acked < nbatch) {
    while (next <= nbatch && next - acked <= WINDOW) cli_send_raw(fd, e[next].frame, e[next].len), next++;
    long long a = cli_wait_ack(fd, (uint64_t)acked + 1, 120000);
    if (a < 0) return fprintf(stderr, "bench: lost the server\n"), -1;
    acked = a;
  }
  double dt = now_s() - t0;
  close(fd);
  for (int i = 1; i <= nbatch; i++) free(e[i].frame);
  free(e);
  return dt;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc < 2) return fprintf(stderr, "usage: %s SIOX_SERVER [activities] [runs]\n", argv[0]), 2;
  long total = argc > 2 ? atol(argv[2]) : 2097152;
  int runs = argc > 3 ? atoi(argv[3]) : 3;
  int nbatch = (int)((total + PER_BATCH - 1) / PER_BATCH);
  struct harness h;
  if (harness_init(&h, argv[1]) != 0 || harness_start(&h, NULL) != 0) {
    fprintf(stderr, "bench: cannot start siox-server\n");
    harness_cleanup(&h);
    return 1;
  }
  double rate[16];
  size_t wire = 0;
  if (runs > 16) runs = 16;
  for (int r = 0; r < runs; r++) {
    double dt = run(h.port, 100 + (uint64_t)r, nbatch, &wire);
    if (dt <= 0) return harness_cleanup(&h), 1;
    rate[r] = (double)nbatch * PER_BATCH / dt;
    fprintf(stderr, "run %d: %d x %d activities in %.3f s = %.0f act/s (warehouse now %ld activities)\n", r + 1, nbatch,
            PER_BATCH, dt, rate[r], (long)(r + 1) * nbatch * PER_BATCH);
  }
  qsort(rate, (size_t)runs, sizeof rate[0], cmp);
  printf("server_ingest_activities_per_s %.0f act/s\n", rate[runs / 2]);
  printf("server_wire_bytes_per_activity %.2f B\n", (double)wire / ((double)nbatch * PER_BATCH));
  harness_stop(&h);
  harness_cleanup(&h);
  return 0;
}
