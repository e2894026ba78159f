/*
 * How complete a trace is: per process, what it made (its own count, from
 * client_stats), what the warehouse stored, and what was dropped where
 * (client ring, client exit, daemon spool, daemon validation). Summed over
 * a job, a process, or everything. See warehouse/schema/013.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "warehouse.h"
#include "wh_pg.h"

/* A NULL parameter matches anything. A process without client_stats has
 * not reported yet: it counts as `unreported` and its stored activities are
 * not held against a `made` it never said. A process made what it put in
 * its buffer (activities) and what it could not (dropped). A process's
 * activities are counted by their aid range (aid = proc_id << 32 | local),
 * the primary key: activities has no proc_id index, so "proc_id = p" read
 * the whole table per process (0.7 s per shard at 1M activities, on every
 * `siox graph`). */
static const char loss_sql[] =
    "WITH p AS (SELECT pr.proc_id FROM processes pr"
    "            WHERE ($1::text IS NULL OR pr.job = $1) AND ($2::int IS NULL OR pr.proc_id = $2)),"
    " s AS (SELECT p.proc_id, cs.activities, cs.dropped, cs.dropped_exit, cs.daemon_dropped_spool,"
    "              cs.daemon_dropped_invalid, cs.proc_id IS NOT NULL AS reported,"
    "              (SELECT count(*) FROM activities a WHERE a.aid " SIOX_WH_AIDS_OF("p.proc_id") ") AS stored"
    "         FROM p LEFT JOIN client_stats cs ON cs.proc_id = p.proc_id)"
    " SELECT count(*), count(*) FILTER (WHERE NOT reported),"
    "        coalesce(sum(activities + dropped), 0), coalesce(sum(stored) FILTER (WHERE reported), 0),"
    "        coalesce(sum(stored), 0), coalesce(sum(dropped), 0), coalesce(sum(dropped_exit), 0),"
    "        coalesce(sum(daemon_dropped_spool), 0), coalesce(sum(daemon_dropped_invalid), 0)"
    "   FROM s";

int siox_wh_loss(PGconn *c, const char *job, int64_t proc_id, struct siox_wh_loss *out, char *err, size_t errlen) {
  char proc[24];
  snprintf(proc, sizeof proc, "%lld", (long long)proc_id);
  const char *params[] = {job, proc_id > 0 ? proc : NULL};
  PGresult *res = PQexecParams(c, loss_sql, 2, NULL, params, NULL, NULL, 0);
  if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1) {
    const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
    if (state && strcmp(state, "42703") == 0) { /* undefined_column: written by a server before schema 13 */
      snprintf(err, errlen, "no loss breakdown: the warehouse predates schema 13 (siox-server upgrades it on start)");
      PQclear(res);
      return -ENOTSUP;
    }
    return siox_wh_failed(res, c, "accounting for dropped activities", err, errlen);
  }
  out->processes = siox_wh_i64(res, 0, 0);
  out->unreported = siox_wh_i64(res, 0, 1);
  out->made = siox_wh_i64(res, 0, 2);
  out->stored_reported = siox_wh_i64(res, 0, 3);
  out->stored = siox_wh_i64(res, 0, 4);
  out->dropped_client = siox_wh_i64(res, 0, 5);
  out->dropped_exit = siox_wh_i64(res, 0, 6);
  out->dropped_daemon_spool = siox_wh_i64(res, 0, 7);
  out->dropped_daemon_invalid = siox_wh_i64(res, 0, 8);
  out->unaccounted = out->made - out->stored_reported - out->dropped_client - out->dropped_exit -
                     out->dropped_daemon_spool - out->dropped_daemon_invalid;
  PQclear(res);
  return 0;
}
