/*
 * Status: the counters `siox status` shows for this daemon, packed as a
 * protobuf-c StatusReply. A client connection whose first frame is
 * SIOX_CW_STATUS receives it (see session.c).
 */
#include <errno.h>
#include <stdlib.h>

#include "daemon.h"
#include "siox.pb-c.h"


int status_build(struct daemon *d, uint8_t **out, size_t *out_len) {
  int64_t offset = 0;
  uint64_t unc = 0;
  clock_sync_best(&d->clock, clock_host_ns(d), &offset, &unc);
  int64_t hc[4];
  hints_counters(d, hc);
  struct {
    const char *name;
    int64_t value;
  } rows[] = {
      {"clients", (int64_t)d->ctr.clients},
      {"activities_received", (int64_t)d->ctr.activities_received},
      {"batches_sealed", (int64_t)d->ctr.batches_sealed},
      {"batches_acked", (int64_t)d->ctr.batches_acked},
      {"spool_bytes", (int64_t)d->spool.bytes},
      {"spool_batches", (int64_t)d->spool.n},
      {"server_connected", d->uplink && uplink_connected(d->uplink)},
      {"clock_offset_ns", offset},
      {"clock_uncertainty_ns", (int64_t)unc},
      {"bad_frames", (int64_t)d->ctr.bad_frames},
      {"client_dropped", (int64_t)daemon_client_dropped(d)},
      {"reading_paused", d->reading_paused},
      {"client_buffer_bytes", (int64_t)d->budget.used},
      {"client_frames_refused", (int64_t)d->budget.refused},
      {"client_buffer_waits", (int64_t)d->budget.waits},
      {"dropped_spool_full", (int64_t)d->ctr.dropped_spool},
      {"client_dropped_exit", (int64_t)d->ctr.client_dropped_exit},
      {"journal_replayed", (int64_t)d->ctr.journal_replayed},
      {"loss_files", (int64_t)d->ctr.loss_files},
      {"frames_resent_dropped", (int64_t)d->ctr.frames_resent_dropped},
      {"hint_queries", hc[0]},
      {"hint_cache_hits", hc[1]},
      {"hint_queries_forwarded", hc[2]},
      {"hint_link_connected", hc[3]},
      {"records_dropped_validation", (int64_t)d->ctr.records_dropped_validation},
      {"activities_dropped_validation", (int64_t)d->ctr.activities_dropped_validation},
      {"batches_quarantined", (int64_t)d->ctr.batches_quarantined},
      {"activities_quarantined", (int64_t)d->ctr.activities_quarantined},
  };
  enum { N = sizeof rows / sizeof rows[0] };
  Siox__Counter cs[N], *ptrs[N];
  for (size_t i = 0; i < N; i++) {
    siox__counter__init(&cs[i]);
    cs[i].name = (char *)rows[i].name;
    cs[i].value = rows[i].value;
    ptrs[i] = &cs[i];
  }
  Siox__StatusReply r = SIOX__STATUS_REPLY__INIT;
  r.role = "daemon";
  r.uptime_s = (uint64_t)(clock_realtime_ns() - d->start_ns) / 1000000000u;
  r.n_counters = N;
  r.counters = ptrs;
  size_t n = siox__status_reply__get_packed_size(&r);
  if (!(*out = malloc(n ? n : 1)))
    return -ENOMEM;
  *out_len = siox__status_reply__pack(&r, *out);
  return 0;
}
