/* How much the warehouse holds, for `siox status` (siox_wh_counts). */
#include <errno.h>

#include "warehouse.h"
#include "wh_pg.h"

int siox_wh_counts(PGconn *c, struct siox_wh_counts *out, char *err, size_t errlen) {
  PGresult *res = PQexec(c,
                         "SELECT (SELECT count(*) FROM activities), (SELECT count(*) FROM processes),"
                         " (SELECT count(*) FROM nodes), (SELECT count(*) FROM daemons),"
                         " (SELECT count(*) FROM causal_links),"
                         " (SELECT coalesce(sum(dropped), 0) FROM client_stats)");
  if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1)
    return siox_wh_failed(res, c, "counting the warehouse", err, errlen);
  out->activities = siox_wh_i64(res, 0, 0);
  out->processes = siox_wh_i64(res, 0, 1);
  out->nodes = siox_wh_i64(res, 0, 2);
  out->daemons = siox_wh_i64(res, 0, 3);
  out->implicit_links = siox_wh_i64(res, 0, 4);
  out->dropped = siox_wh_i64(res, 0, 5);
  PQclear(res);
  /* Schemas 012/013's losses; a warehouse without them (older server) has none. */
  res = PQexec(c, "SELECT (SELECT coalesce(sum(daemon_dropped_invalid), 0) FROM client_stats),"
                  " (SELECT coalesce(sum(activities), 0) FROM quarantined_batches)");
  int ok = PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1;
  out->dropped_validation = ok ? siox_wh_i64(res, 0, 0) : 0;
  out->quarantined = ok ? siox_wh_i64(res, 0, 1) : 0;
  PQclear(res);
  return 0;
}
