/*
 * How `siox status` and `siox graph` show a trace's completeness as text
 * (see loss_view.h; the JSON object is libsiox-warehouse's
 * siox_wh_loss_json, which says what the places are).
 */
#include <inttypes.h>

#include "loss_view.h"

void siox_loss_text(FILE *f, const char *label, const struct siox_wh_loss *l) {
  fprintf(f,
          "%s made %" PRId64 ", stored %" PRId64 " (%.1f%%); dropped: client buffer %" PRId64 ", client exit %" PRId64
          ", daemon spool %" PRId64 ", daemon validation %" PRId64 "; unaccounted %" PRId64,
          label, l->made, l->stored_reported, siox_wh_loss_percent(l), l->dropped_client,
          l->dropped_exit, l->dropped_daemon_spool, l->dropped_daemon_invalid, l->unaccounted);
  if (l->unreported)
    fprintf(f, "; %" PRId64 " of %" PRId64 " processes not reported yet (%" PRId64 " activities stored)",
            l->unreported, l->processes, l->stored - l->stored_reported);
  fputc('\n', f);
}
