/*
 * A process that makes a known number of activities, for the loss-accounting
 * tests and bench: `loss_producer N [RATE]` makes N activities (RATE per
 * second, 0 = as fast as it can), each with an attribute that lz4 cannot
 * fold away (so a small spool really fills), then finalizes and prints its
 * own account: "made M dropped D dropped_exit E".
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <siox/siox.h>
#include <siox/siox_ontology.h>

static void pace(uint64_t done, uint64_t rate, const struct timespec *t0) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  double due = (double)done / (double)rate;
  double el = (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) * 1e-9;
  if (due > el) nanosleep(&(struct timespec){(time_t)(due - el), (long)((due - el - (time_t)(due - el)) * 1e9)}, NULL);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: loss_producer N [RATE]\n");
    return 2;
  }
  uint64_t n = strtoull(argv[1], NULL, 10), rate = argc > 2 ? strtoull(argv[2], NULL, 10) : 0;
  siox_unid node;
  siox_type_id type;
  if (siox_node_register("loss-host", "loss-producer", "0", &node) < 0 ||
      siox_activity_type_register(node, "op", &type) < 0) {
    fprintf(stderr, "loss_producer: registration failed\n");
    return 1;
  }
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (uint64_t i = 0; i < n; i++) {
    if (rate && i % 1000 == 0) pace(i, rate, &t0);
    siox_aid a = siox_activity_start(type);
    x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift: incompressible */
    siox_activity_attr_u64(a, SIOX_ATTR_IO_OFFSET, x >> 16); /* stays a positive bigint */
    siox_activity_stop(a);
  }
  siox_finalize();
  struct siox_stats st;
  siox_stats_get(&st);
  printf("made %llu dropped %llu dropped_exit %llu\n", (unsigned long long)st.activities,
         (unsigned long long)st.dropped, (unsigned long long)st.dropped_exit);
  return 0;
}
