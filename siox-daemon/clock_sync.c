/*
 * Clock sync: the daemon's estimate of (server clock - daemon clock), from
 * Ping/Pong exchanges with siox-server. Every Batch envelope carries the
 * estimate and its uncertainty so that the server can align hosts before it
 * matches activities across them.
 */
#include <time.h>

#include "daemon.h"

int64_t clock_realtime_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t clock_host_ns(const struct daemon *d) {
  return clock_realtime_ns() + d->cfg.test_clock_shift_ns;
}

/* A sample's uncertainty: half its round trip, plus what the two clocks
 * may have drifted apart since it was taken. */
static uint64_t aged_uncertainty(uint64_t rtt, int64_t taken, int64_t now) {
  int64_t age = now > taken ? now - taken : 0;
  return rtt / 2 + (uint64_t)age / 1000000u * CLOCK_DRIFT_PPM;
}

/* Index of the ring's best sample at time now, or -1 for the kept one. */
static int best_at(const struct clock_sync *c, int64_t now) {
  int best = -1;
  uint64_t u = c->kept_valid ? aged_uncertainty(c->kept_rtt, c->kept_t, now) : UINT64_MAX;
  for (unsigned i = 0; i < c->n; i++) {
    uint64_t ui = aged_uncertainty(c->rtt[i], c->t[i], now);
    if (ui < u) {
      u = ui;
      best = (int)i;
    }
  }
  return best;
}

/* t1 daemon send, t2 server receive, t3 server send, t4 daemon receive. */
void clock_sync_add(struct clock_sync *c, int64_t t1, int64_t t2, int64_t t3, int64_t t4) {
  int64_t rtt = (t4 - t1) - (t3 - t2);
  if (rtt < 0)
    rtt = 0; /* server clock stepped between t2 and t3: treat as instant */
  c->offset[c->next] = ((t2 - t1) + (t3 - t4)) / 2;
  c->rtt[c->next] = (uint64_t)rtt;
  c->t[c->next] = t4;
  c->next = (c->next + 1) % CLOCK_SYNC_SAMPLES;
  if (c->n < CLOCK_SYNC_SAMPLES)
    c->n++;
  /* The best sample so far outlives the ring: under ingest every ping
   * waits behind batches (the server pauses reading the uplink during
   * database work), and a ring of such samples alone was 126 ms off in
   * integration_sys_clock_blame. */
  int b = best_at(c, t4);
  if (b >= 0) {
    c->kept_offset = c->offset[b];
    c->kept_rtt = c->rtt[b];
    c->kept_t = c->t[b];
    c->kept_valid = true;
  }
}

/* The sample with the smallest uncertainty now: the smallest round trip
 * bounds the asymmetry best, and an old sample loses to a fresh one once
 * the clocks may have drifted apart by more than the difference. */
bool clock_sync_best(const struct clock_sync *c, int64_t now, int64_t *offset, uint64_t *uncertainty) {
  if (c->n == 0)
    return false;
  int b = best_at(c, now);
  *offset = b >= 0 ? c->offset[b] : c->kept_offset;
  *uncertainty = b >= 0 ? aged_uncertainty(c->rtt[b], c->t[b], now) : aged_uncertainty(c->kept_rtt, c->kept_t, now);
  return true;
}
