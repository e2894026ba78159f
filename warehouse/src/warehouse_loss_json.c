/*
 * A trace's completeness as JSON (documents.h): `siox status --json` and
 * the graph document's "trace_completeness". The places are those of the
 * data path: the client's buffer (ring full and other refused calls), the
 * client's exit (no daemon took what it still held), the daemon's spool
 * (full: discarded and counted) and the daemon's record validation.
 */
#include "documents.h"
#include "json_build.h"

double siox_wh_loss_percent(const struct siox_wh_loss *l) {
  return l->made > 0 ? 100.0 * (double)l->stored_reported / (double)l->made : 100.0;
}

json_object *siox_wh_loss_json(const struct siox_wh_loss *l) {
  json_object *o = json_object_new_object(), *d = json_object_new_object();
  siox_json_int(o, "processes", l->processes);
  siox_json_int(o, "processes_unreported", l->unreported);
  siox_json_int(o, "made", l->made);
  siox_json_int(o, "stored", l->stored_reported);
  siox_json_int(o, "stored_all", l->stored);
  siox_json_dbl(o, "complete_percent", siox_wh_loss_percent(l));
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
