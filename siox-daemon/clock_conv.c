/*
 * Clock conversion: client records carry raw TSC ticks (cheap on the hot
 * path); the daemon maps them to CLOCK_REALTIME ns before they enter a batch,
 * by linear interpolation between the client's HELLO clock pair and the pair
 * sent with each BATCH (taken after the batch's last record).
 */
#include <errno.h>
#include <stdint.h>

#include "daemon.h"

int clock_conv_init(struct clock_conv *c, uint32_t clock_flags, uint64_t tsc0, int64_t ns0, uint64_t tsc_ref,
                    int64_t ns_ref) {
  c->tsc = (clock_flags & SIOX_CW_CLOCK_TSC) != 0;
  c->tsc0 = tsc0;
  c->ns0 = ns0;
  c->mult = 0;
  c->host_shift = 0;
  if (!c->tsc)
    return 0;
  if (tsc_ref <= tsc0) {
    /* No slope to interpolate with: pin everything to the batch's time. */
    c->tsc0 = tsc_ref;
    c->ns0 = ns_ref;
    return -EINVAL;
  }
  /* Fixed point (CLOCK_CONV_SHIFT fraction bits) keeps the per-record cost
   * to one multiply. The line is anchored at the batch pair, which lies just
   * after the batch's records, so the rounding error (distance in ticks /
   * 2^CLOCK_CONV_SHIFT ns) stays far below 1 ns however old HELLO is. */
  __int128 num = ((__int128)ns_ref - ns0) * ((__int128)1 << CLOCK_CONV_SHIFT);
  __int128 mult = num / (__int128)(tsc_ref - tsc0);
  if (mult > INT64_MAX || mult < INT64_MIN) {
    c->tsc0 = tsc_ref;
    c->ns0 = ns_ref;
    return -EINVAL; /* hostile pair: no clock runs that fast */
  }
  c->mult = (int64_t)mult;
  c->tsc0 = tsc_ref;
  c->ns0 = ns_ref;
  return 0;
}
