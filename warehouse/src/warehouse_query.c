/*
 * Warehouse queries over many activities: the slowest ones (`siox top`) and
 * the peer samples blame compares a suspect with. Both read io/bytes out of
 * the activity row's attribute arrays by its ontology id.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "warehouse.h"
#include "wh_pg.h"

#include <siox/siox_wh.h>

#define BYTES_EXPR "a.attr_vals[array_position(a.attr_ids, (SELECT id FROM ontology WHERE name = 'io/bytes'))]"

/* A NULL parameter matches anything: one statement for every filter mix. */
static const char top_sql[] =
    "SELECT a.aid, coalesce(p.host, ''), n.hwid, n.swid, ty.name, coalesce(p.job, ''),"
    "       a.start_ns, a.end_ns - a.start_ns AS dur, a.err, coalesce(" BYTES_EXPR ", -1)"
    "  FROM activities a"
    "  JOIN activity_types ty ON ty.type_id = a.type_id"
    "  JOIN nodes n ON n.node_id = a.node_id"
    "  LEFT JOIN processes p ON p.proc_id = a.proc_id"
    " WHERE ($1::text IS NULL OR p.job = $1)"
    "   AND ($2::text IS NULL OR n.swid = $2)"
    "   AND ($3::text IS NULL OR ty.name = $3)"
    "   AND (NOT $4::bool OR (a.parent_aid IS NULL AND"
    "        NOT EXISTS (SELECT 1 FROM causal_links l WHERE l.child_aid = a.aid)))"
    " ORDER BY dur DESC, a.aid LIMIT $5::bigint";

int siox_wh_top(PGconn *c, const struct siox_top_query *q, struct siox_top *out, char *err, size_t errlen) {
  char limit[24];
  snprintf(limit, sizeof(limit), "%ld", q->limit);
  const char *params[] = {q->job, q->layer, q->name, q->roots_only ? "true" : "false", limit};
  PGresult *res = PQexecParams(c, top_sql, 5, NULL, params, NULL, NULL, 0);
  if (PQresultStatus(res) != PGRES_TUPLES_OK) return siox_wh_failed(res, c, "finding the slowest activities", err, errlen);
  out->n = (size_t)PQntuples(res);
  out->rows = calloc(out->n ? out->n : 1, sizeof(*out->rows));
  if (!out->rows) {
    PQclear(res);
    return -ENOMEM;
  }
  out->res = res;
  for (int r = 0; r < (int)out->n; r++) {
    out->rows[r] = (struct siox_top_row){
        .aid = siox_wh_i64(res, r, 0), .host = PQgetvalue(res, r, 1), .hwid = PQgetvalue(res, r, 2),
        .swid = PQgetvalue(res, r, 3), .name = PQgetvalue(res, r, 4), .job = PQgetvalue(res, r, 5),
        .start_ns = siox_wh_i64(res, r, 6), .duration_ns = siox_wh_i64(res, r, 7),
        .err = (int32_t)siox_wh_i64(res, r, 8), .bytes = siox_wh_i64(res, r, 9)};
  }
  return 0;
}

void siox_wh_top_free(struct siox_top *t) {
  free(t->rows);
  PQclear(t->res);
  t->rows = NULL;
  t->res = NULL;
}

/* Server-side processes (bricks, devices) serve every job and carry none,
 * so "same job" admits them too. A job is keyed by (uid, job id): another
 * user's processes that carry the same id are not in it. The nearest
 * samples in time are kept. The kind (SWID and name) is the list of its
 * type ids (a type belongs to one node): the window is then read by the
 * (type_id, start_ns) index (schema 015, siox_wh_exec_window), not every
 * activity in it. The nodes are joined to the kept samples only: joined
 * before the sort, the planner (expecting a few hundred rows) looped over
 * the nodes for each of the window's tens of thousands. */
static const char peers_sql[] =
    "SELECT x.aid, x.node_id, n.hwid, n.iid, x.ns, x.bytes FROM ("
    "  SELECT a.aid, a.node_id, a.end_ns - a.start_ns AS ns, coalesce(" BYTES_EXPR ", -1) AS bytes,"
    "         abs(a.start_ns - $6::bigint) AS dist"
    "    FROM activities a"
    "    LEFT JOIN processes p ON p.proc_id = a.proc_id"
    "   WHERE a.type_id = ANY (ARRAY(SELECT ty.type_id FROM activity_types ty JOIN nodes tn ON tn.node_id = ty.node_id"
    "                                WHERE tn.swid = $1 AND ty.name = $2))"
    "     AND (coalesce(p.job, '') = ''"
    "          OR (p.job = $3 AND p.uid = (SELECT uid FROM processes WHERE proc_id = ($8::bigint >> 32))))"
    "     AND a.start_ns BETWEEN $4::bigint AND $5::bigint"
    "   ORDER BY dist, a.aid LIMIT $7::bigint) x"
    "  JOIN nodes n ON n.node_id = x.node_id"
    " ORDER BY x.dist, x.aid";

int siox_wh_peers(PGconn *c, const struct siox_peer_query *q, struct siox_peer_set *out, char *err, size_t errlen) {
  char from[24], to[24], mid[24], limit[24], call[24];
  snprintf(call, sizeof(call), "%lld", (long long)q->call_aid);
  snprintf(from, sizeof(from), "%lld", (long long)q->from_ns);
  snprintf(to, sizeof(to), "%lld", (long long)q->to_ns);
  snprintf(mid, sizeof(mid), "%lld", (long long)q->mid_ns);
  snprintf(limit, sizeof(limit), "%ld", q->limit);
  const char *params[] = {q->swid, q->name, q->job ? q->job : "", from, to, mid, limit, call};
  PGresult *res = siox_wh_exec_window(c, peers_sql, 8, params);
  if (PQresultStatus(res) != PGRES_TUPLES_OK) return siox_wh_failed(res, c, "finding peer activities", err, errlen);
  out->n = (size_t)PQntuples(res);
  out->s = calloc(out->n ? out->n : 1, sizeof(*out->s));
  if (!out->s) {
    PQclear(res);
    return -ENOMEM;
  }
  out->res = res;
  for (int r = 0; r < (int)out->n; r++) {
    out->s[r] = (struct siox_blame_sample){
        .aid = siox_wh_i64(res, r, 0), .node_id = (int32_t)siox_wh_i64(res, r, 1), .hwid = PQgetvalue(res, r, 2),
        .iid = PQgetvalue(res, r, 3), .ns = siox_wh_i64(res, r, 4), .bytes = siox_wh_i64(res, r, 5)};
  }
  return 0;
}

void siox_wh_peers_free(struct siox_peer_set *p) {
  free(p->s);
  PQclear(p->res);
  p->s = NULL;
  p->res = NULL;
}
