/*
 * Warehouse queries over many activities: the slowest ones (`siox top`);
 * the peer samples blame compares a suspect with are wh_peers.c's. Reads
 * io/bytes out of the activity row's attribute arrays by its ontology id.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "warehouse.h"
#include "wh_pg.h"

#include <siox/siox_wh.h>

#define BYTES_EXPR "a.attr_vals[array_position(a.attr_ids, (SELECT id FROM ontology WHERE name = 'io/bytes'))]"

/* A NULL parameter matches anything: one statement for every filter mix.
 * The branch is the whole query on one warehouse's tables; on a coordinator
 * it runs once per shard (siox_wh_fanout), each shard sorting its own rows
 * and sending its first $5 only, all shards at once (the CTE's Append of
 * foreign scans is asynchronous; a Merge Append over them would not be),
 * and the outer ORDER BY picks the first $5 of those: the same rows as the
 * query on the whole site, since (dur, aid) orders every row. --roots
 * reads causal_links of the whole site (a child's link may live on another
 * shard), so that branch's LIMIT stays at the coordinator. */
static const char top_branch[] =
    "(SELECT a.aid, coalesce(p.host, '') AS host, n.hwid, n.swid, ty.name, coalesce(p.job, '') AS job,"
    "        a.start_ns, a.end_ns - a.start_ns AS dur, a.err, a.attr_ids, a.attr_vals"
    "   FROM {S}activities a"
    "   JOIN {S}activity_types ty ON ty.type_id = a.type_id"
    "   JOIN {S}nodes n ON n.node_id = a.node_id"
    "   LEFT JOIN {S}processes p ON p.proc_id = a.proc_id"
    "  WHERE ($1::text IS NULL OR p.job = $1)"
    "    AND ($2::text IS NULL OR n.swid = $2)"
    "    AND ($3::text IS NULL OR ty.name = $3)"
    "    AND (NOT $4::bool OR (a.parent_aid IS NULL AND"
    "         NOT EXISTS (SELECT 1 FROM causal_links l WHERE l.child_aid = a.aid)))"
    "  ORDER BY dur DESC, a.aid LIMIT $5::bigint)";

#define TOP_HEAD "WITH a AS MATERIALIZED ("
#define TOP_TAIL                                                                                          \
  ") SELECT a.aid, a.host, a.hwid, a.swid, a.name, a.job, a.start_ns, a.dur, a.err, coalesce(" BYTES_EXPR \
  ", -1) FROM a ORDER BY a.dur DESC, a.aid LIMIT $5::bigint"

int siox_wh_top(PGconn *c, const struct siox_top_query *q, struct siox_top *out, char *err, size_t errlen) {
  char limit[24];
  snprintf(limit, sizeof(limit), "%ld", q->limit);
  const char *params[] = {q->job, q->layer, q->name, q->roots_only ? "true" : "false", limit};
  char *branches = siox_wh_fanout(c, top_branch, err, errlen);
  if (!branches) return -EIO;
  size_t cap = strlen(TOP_HEAD) + strlen(branches) + strlen(TOP_TAIL) + 1;
  char *sql = malloc(cap);
  if (sql) snprintf(sql, cap, "%s%s%s", TOP_HEAD, branches, TOP_TAIL);
  free(branches);
  if (!sql) return -ENOMEM;
  PGresult *res = PQexecParams(c, sql, 5, NULL, params, NULL, NULL, 0);
  free(sql);
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
