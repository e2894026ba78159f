/*
 * Warehouse query of blame through a collective call (blame_collective.h):
 * the call's siblings in the other ranks of its job.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "blame_collective.h"
#include "warehouse.h"
#include "wh_pg.h"

/* The job's processes are found by (job, uid), their activities by aid
 * range per process (the aid's high half is the process); the file by the
 * object of the call's remote-call send, when it has one. */
static const char siblings_sql[] =
    "WITH me AS (SELECT a.aid, a.proc_id, a.node_id, a.type_id, a.start_ns, a.end_ns, p.job, p.uid"
    "              FROM activities a JOIN processes p ON p.proc_id = a.proc_id WHERE a.aid = $1::bigint),"
    " obj AS (SELECT r.object_id FROM remote_calls r WHERE r.aid = $1::bigint AND r.kind = 'S')"
    "SELECT s.aid, coalesce(p.pid, 0), s.start_ns, s.end_ns,"
    "       coalesce((SELECT sum(c.end_ns - c.start_ns) FROM activities c JOIN nodes cn ON cn.node_id = c.node_id"
    "                  WHERE c.parent_aid = s.aid AND cn.swid = 'POSIX'), 0), coalesce(p.host, '')"
    "  FROM me JOIN processes p ON p.job = me.job AND p.uid = me.uid AND p.proc_id <> me.proc_id AND me.job <> ''"
    "  JOIN activities s ON s.aid " SIOX_WH_AIDS_OF("p.proc_id")
    "   AND s.type_id = me.type_id AND s.start_ns < me.end_ns AND s.end_ns > me.start_ns"
    "  JOIN nodes sn ON sn.node_id = s.node_id AND sn.swid = (SELECT swid FROM nodes WHERE node_id = me.node_id)"
    " WHERE NOT EXISTS (SELECT 1 FROM obj)"
    "    OR EXISTS (SELECT 1 FROM remote_calls r WHERE r.aid = s.aid AND r.kind = 'S'"
    "                  AND r.object_id IN (SELECT object_id FROM obj))"
    " ORDER BY s.aid"; /* no LIMIT: a sibling left out would be a rank blame silently never looked at */

int siox_wh_siblings(PGconn *c, int64_t aid, struct siox_sibling **out, size_t *n, char *err, size_t errlen) {
  char a[24];
  snprintf(a, sizeof(a), "%lld", (long long)aid);
  const char *params[] = {a};
  PGresult *res = PQexecParams(c, siblings_sql, 1, NULL, params, NULL, NULL, 0);
  if (PQresultStatus(res) != PGRES_TUPLES_OK) return siox_wh_failed(res, c, "finding the call's siblings", err, errlen);
  *n = (size_t)PQntuples(res);
  *out = calloc(*n + 1, sizeof(**out));
  if (!*out) {
    PQclear(res);
    snprintf(err, errlen, "out of memory");
    return -ENOMEM;
  }
  for (int r = 0; r < (int)*n; r++)
    (*out)[r] = (struct siox_sibling){.aid = siox_wh_i64(res, r, 0), .pid = (int32_t)siox_wh_i64(res, r, 1),
                                      .start_ns = siox_wh_i64(res, r, 2), .end_ns = siox_wh_i64(res, r, 3),
                                      .io_ns = siox_wh_i64(res, r, 4)};
  for (int r = 0; r < (int)*n; r++) snprintf((*out)[r].host, sizeof((*out)[r].host), "%s", PQgetvalue(res, r, 5));
  PQclear(res);
  return 0;
}
