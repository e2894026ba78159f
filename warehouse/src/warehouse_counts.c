/* How much the warehouse holds, for `siox status` (siox_wh_counts). */
#include <errno.h>
#include <string.h>

#include "warehouse.h"
#include "wh_pg.h"

static const char counts_sql[] =
    "SELECT (SELECT count(*) FROM activities), (SELECT count(*) FROM processes),"
    " (SELECT count(*) FROM nodes), (SELECT count(*) FROM daemons),"
    " (SELECT count(*) FROM causal_links),"
    " (SELECT coalesce(sum(dropped), 0) FROM client_stats)";

/* Schemas 012/013's losses. */
static const char losses_sql[] =
    "SELECT (SELECT coalesce(sum(daemon_dropped_invalid), 0) FROM client_stats),"
    " (SELECT coalesce(sum(activities), 0) FROM quarantined_batches)";

/* A warehouse written by a server older than 012/013 has neither the column
 * nor the table: it recorded no such loss. Any other failure is reported. */
static int predates_losses(PGresult *res) {
  const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
  return state && (strcmp(state, "42P01") == 0 || strcmp(state, "42703") == 0);
}

int siox_wh_counts(PGconn *c, struct siox_wh_counts *out, char *err, size_t errlen) {
  PGresult *res = siox_wh_query(c, "counting the warehouse", counts_sql, 0, NULL, err, errlen);
  if (!res) return -EIO;
  out->activities = siox_wh_i64(res, 0, 0);
  out->processes = siox_wh_i64(res, 0, 1);
  out->nodes = siox_wh_i64(res, 0, 2);
  out->daemons = siox_wh_i64(res, 0, 3);
  out->implicit_links = siox_wh_i64(res, 0, 4);
  out->dropped = siox_wh_i64(res, 0, 5);
  PQclear(res);
  out->dropped_validation = out->quarantined = 0;
  res = PQexecParams(c, losses_sql, 0, NULL, NULL, NULL, NULL, 0);
  if (PQresultStatus(res) != PGRES_TUPLES_OK) {
    if (predates_losses(res)) return PQclear(res), 0;
    return siox_wh_failed(res, c, "counting the warehouse's losses", err, errlen);
  }
  out->dropped_validation = siox_wh_i64(res, 0, 0);
  out->quarantined = siox_wh_i64(res, 0, 1);
  PQclear(res);
  return 0;
}
