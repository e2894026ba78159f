/*
 * How `siox status` and `siox graph` show a trace's completeness (see
 * loss_view.h). The places are those of the data path: the client's buffer
 * (ring full and other refused calls), the client's exit (no daemon took
 * what it still held), the daemon's spool (full: discarded and counted) and
 * the daemon's record validation.
 */
#include <inttypes.h>

#include "json_out.h"
#include "loss_view.h"

static double percent(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * (double)part / (double)whole : 100.0;
}

void siox_loss_text(FILE *f, const char *label, const struct siox_wh_loss *l) {
  fprintf(f,
          "%s made %" PRId64 ", stored %" PRId64 " (%.1f%%); dropped: client buffer %" PRId64 ", client exit %" PRId64
          ", daemon spool %" PRId64 ", daemon validation %" PRId64 "; unaccounted %" PRId64,
          label, l->made, l->stored_reported, percent(l->stored_reported, l->made), l->dropped_client,
          l->dropped_exit, l->dropped_daemon_spool, l->dropped_daemon_invalid, l->unaccounted);
  if (l->unreported)
    fprintf(f, "; %" PRId64 " of %" PRId64 " processes not reported yet (%" PRId64 " activities stored)",
            l->unreported, l->processes, l->stored - l->stored_reported);
  fputc('\n', f);
}

json_object *siox_loss_json(const struct siox_wh_loss *l) {
  json_object *o = json_object_new_object(), *d = json_object_new_object();
  siox_json_int(o, "processes", l->processes);
  siox_json_int(o, "processes_unreported", l->unreported);
  siox_json_int(o, "made", l->made);
  siox_json_int(o, "stored", l->stored_reported);
  siox_json_int(o, "stored_all", l->stored);
  siox_json_dbl(o, "complete_percent", percent(l->stored_reported, l->made));
  siox_json_int(d, "client_buffer", l->dropped_client);
  siox_json_int(d, "client_exit", l->dropped_exit);
  siox_json_int(d, "daemon_spool", l->dropped_daemon_spool);
  siox_json_int(d, "daemon_validation", l->dropped_daemon_invalid);
  json_object_object_add(o, "dropped", d);
  siox_json_int(o, "dropped_total",
                l->dropped_client + l->dropped_exit + l->dropped_daemon_spool + l->dropped_daemon_invalid);
  siox_json_int(o, "unaccounted", l->unaccounted);
  return o;
}
