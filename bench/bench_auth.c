/*
 * Authentication cost of a daemon's Hello (bench/run): the round trip of one
 * Hello on a fresh connection, as a daemon makes it on every (re)connect:
 * connect, munge_encode of the credential, Hello, HelloReply (the server
 * runs munge_decode on its threadpool and one warehouse query). The same
 * server is then restarted with --auth none and the same Hello, without a
 * credential, is the baseline. Medians over N Hellos each.
 *   bench_auth SIOX_SERVER [N]
 * Prints: auth_hello_ms, auth_hello_none_ms (baseline), auth_hello_overhead_ms.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "server_harness.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median ms of n Hellos (daemon ids 1..n: unknown, so acked 0); -1 on error. */
static double median_hello(int port, int n) {
  double *t = calloc((size_t)n, sizeof *t);
  if (!t) return -1;
  for (int i = 0; i < n; i++) {
    double t0 = now_ms();
    int fd = cli_connect(port);
    long long acked = fd >= 0 ? cli_hello(fd, 1000 + (uint64_t)i, "bench-node", NULL) : -1;
    t[i] = now_ms() - t0;
    if (fd >= 0) close(fd);
    if (acked != 0) return fprintf(stderr, "bench: Hello %d refused\n", i), free(t), -1;
  }
  qsort(t, (size_t)n, sizeof *t, cmp);
  double m = t[n / 2];
  free(t);
  return m;
}

int main(int argc, char **argv) {
  if (argc < 2) return fprintf(stderr, "usage: %s SIOX_SERVER [N]\n", argv[0]), 2;
  int n = argc > 2 ? atoi(argv[2]) : 500;
  if (n < 1) n = 1;
  struct harness h;
  const char *const none[] = {"--auth", "none", NULL};
  double munge = -1, plain = -1;
  if (harness_init(&h, argv[1]) == 0 && harness_start(&h, NULL) == 0) {
    munge = median_hello(h.port, n);
    harness_stop(&h);
    if (munge >= 0 && harness_start(&h, none) == 0) plain = median_hello(h.port, n);
  }
  harness_stop(&h);
  harness_cleanup(&h);
  if (munge < 0 || plain < 0) return fprintf(stderr, "bench: cannot run the server (see its log)\n"), 1;
  printf("auth_hello_ms %.3f ms\n", munge);
  printf("auth_hello_none_ms %.3f ms\n", plain);
  printf("auth_hello_overhead_ms %.3f ms\n", munge - plain);
  return 0;
}
