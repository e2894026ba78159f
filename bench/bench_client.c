/*
 * bench_client: cost of one instrumented activity (start + 2 numeric
 * attributes + stop) on the client hot path, against the same loop body
 * without SIOX, measured in one run while a drain thread plays the daemon
 * (bench_drain.c: reads the unix socket, discards and acknowledges). Prints
 * medians over REPS runs.
 *
 * usage: bench_client [ITERATIONS [REPS]]   (default 1000000 and 11)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <siox/siox.h>

#include "bench_drain.h"

static volatile uint64_t sink;

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double baseline(long n) {
  double t0 = now_ns();
  for (long i = 0; i < n; i++) {
    sink = (uint64_t)i;
    sink = 4096;
  }
  return now_ns() - t0;
}

static double instrumented(long n, siox_type_id type) {
  double t0 = now_ns();
  for (long i = 0; i < n; i++) {
    siox_aid a = siox_activity_start(type);
    siox_activity_attr_u64(a, SIOX_ATTR_IO_OFFSET, (uint64_t)i);
    siox_activity_attr_u64(a, SIOX_ATTR_IO_BYTES, 4096);
    sink = (uint64_t)i;
    sink = 4096;
    siox_activity_stop(a);
  }
  return now_ns() - t0;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_d);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000000;
  int reps = argc > 2 ? atoi(argv[2]) : 11;
  if (n <= 0 || reps <= 0 || reps > 1000) return fprintf(stderr, "usage: bench_client [ITERATIONS [REPS]]\n"), 2;
  char path[108];
  if (bench_drain_start("client", path, sizeof path) < 0) return perror("bench_client: socket"), 1;
  /* A ring that holds one repetition: we measure the hot path while the
   * daemon keeps up, not the drop policy. */
  struct siox_options o = {.socket_path = path, .buffer_bytes = (size_t)n * 128};
  siox_unid node;
  siox_type_id type;
  if (siox_init(&o) < 0 || siox_node_register("bench", "BENCH", NULL, &node) < 0 ||
      siox_activity_type_register(node, "op", &type) < 0)
    return fprintf(stderr, "bench_client: init failed\n"), 1;
  double *b = calloc((size_t)reps, sizeof *b), *s = calloc((size_t)reps, sizeof *s);
  instrumented(n, type); /* warm-up: page faults of the ring, connection */
  siox_flush(30000);
  for (int r = 0; r < reps; r++) {
    b[r] = baseline(n) / (double)n;
    s[r] = instrumented(n, type) / (double)n;
    siox_flush(30000);
  }
  struct siox_stats st;
  siox_stats_get(&st);
  double mb = median(b, reps), ms = median(s, reps);
  printf("client_ns_per_activity %.2f ns\n", ms);
  printf("client_baseline_ns %.2f ns\n", mb);
  printf("client_overhead_ratio %.2f x\n", ms / (mb > 0 ? mb : 1e-9));
  printf("client_dropped %llu count\n", (unsigned long long)st.dropped);
  siox_finalize();
  unlink(path);
  free(b);
  free(s);
  return 0;
}
