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

/* t1 daemon send, t2 server receive, t3 server send, t4 daemon receive. */
void clock_sync_add(struct clock_sync *c, int64_t t1, int64_t t2, int64_t t3, int64_t t4) {
  int64_t rtt = (t4 - t1) - (t3 - t2);
  if (rtt < 0)
    rtt = 0; /* server clock stepped between t2 and t3: treat as instant */
  c->offset[c->next] = ((t2 - t1) + (t3 - t4)) / 2;
  c->rtt[c->next] = (uint64_t)rtt;
  c->next = (c->next + 1) % CLOCK_SYNC_SAMPLES;
  if (c->n < CLOCK_SYNC_SAMPLES)
    c->n++;
}

/* The smallest round trip bounds the asymmetry best, so trust that sample. */
bool clock_sync_best(const struct clock_sync *c, int64_t *offset, uint64_t *uncertainty) {
  if (c->n == 0)
    return false;
  unsigned best = 0;
  for (unsigned i = 1; i < c->n; i++)
    if (c->rtt[i] < c->rtt[best])
      best = i;
  *offset = c->offset[best];
  *uncertainty = c->rtt[best] / 2;
  return true;
}
