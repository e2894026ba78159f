/*
 * Warehouse queries over many activities: the slowest ones (`siox top`) and
 * the peer samples blame compares a suspect with. Both read io/bytes out of
 * the activity row's attribute arrays by its ontology id.
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

/* Server-side processes (bricks, devices) serve every job and carry none,
 * so "same job" admits them too. A job is keyed by (uid, job id): another
 * user's processes that carry the same id are not in it. The nearest
 * samples in time are kept. The kind (SWID and name) is the list of its
 * type ids (a type belongs to one node): the window is then read by the
 * (type_id, start_ns) index (schema 015, siox_wh_exec_window), not every
 * activity in it. The nodes' names are read apart (nodes_sql), for the
 * few nodes the samples are on: joined to the kept samples in SQL, the
 * planner (expecting a few hundred rows) looped over the nodes for each of
 * the 20,000 (440,000 comparisons, 40% of the statement), and joined
 * before the sort it did so for each of the window's tens of thousands. */
static const char peers_sql[] =
    "SELECT a.aid, a.node_id, a.end_ns - a.start_ns AS ns, coalesce(" BYTES_EXPR ", -1) AS bytes"
    "  FROM activities a"
    "  LEFT JOIN processes p ON p.proc_id = a.proc_id"
    " WHERE a.type_id = ANY (ARRAY(SELECT ty.type_id FROM activity_types ty JOIN nodes tn ON tn.node_id = ty.node_id"
    "                              WHERE tn.swid = $1 AND ty.name = $2))"
    "   AND (coalesce(p.job, '') = ''"
    "        OR (p.job = $3 AND p.uid = (SELECT uid FROM processes WHERE proc_id = ($8::bigint >> 32))))"
    "   AND a.start_ns BETWEEN $4::bigint AND $5::bigint"
    " ORDER BY abs(a.start_ns - $6::bigint), a.aid LIMIT $7::bigint";

/* The names of the samples' nodes, by node id. */
static const char nodes_sql[] =
    "SELECT node_id, hwid, iid FROM nodes WHERE node_id = ANY ($1::int[]) ORDER BY node_id";

static int cmp_node(const void *x, const void *y) {
  int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
  return (a > b) - (a < b);
}

/* "{1,2,3}": the distinct nodes of the samples. Caller frees. */
static char *node_array(const struct siox_peer_set *p) {
  int32_t *v = malloc((p->n ? p->n : 1) * sizeof(*v));
  char *s = malloc(3 + (p->n ? p->n : 1) * 12);
  size_t m = 0, off = 0;
  if (!v || !s) {
    free(v);
    free(s);
    return NULL;
  }
  for (size_t i = 0; i < p->n; i++) v[i] = p->s[i].node_id;
  qsort(v, p->n, sizeof(*v), cmp_node);
  s[off++] = '{';
  for (size_t i = 0; i < p->n; i++)
    if (i == 0 || v[i] != v[i - 1]) off += (size_t)sprintf(s + off, "%s%d", m++ ? "," : "", (int)v[i]);
  sprintf(s + off, "}");
  free(v);
  return s;
}

/* Row of node_id in the nodes result (sorted by node id), or -1. */
static int node_row(const PGresult *r, int32_t node_id) {
  int lo = 0, hi = PQntuples(r) - 1;
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2;
    int32_t v = (int32_t)siox_wh_i64(r, mid, 0);
    if (v == node_id) return mid;
    if (v < node_id) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/* Names each sample's node; a sample whose node is gone (none is: node_id
 * is a foreign key) is dropped, as the join dropped it. */
static int name_nodes(PGconn *c, struct siox_peer_set *out, char *err, size_t errlen) {
  char *arr = node_array(out);
  if (!arr) return -ENOMEM;
  const char *params[] = {arr};
  out->nodes = PQexecParams(c, nodes_sql, 1, NULL, params, NULL, NULL, 0);
  free(arr);
  if (PQresultStatus(out->nodes) != PGRES_TUPLES_OK) {
    PGresult *r = out->nodes;
    out->nodes = NULL;
    return siox_wh_failed(r, c, "naming the peers' nodes", err, errlen);
  }
  size_t m = 0;
  for (size_t i = 0; i < out->n; i++) {
    int r = node_row(out->nodes, out->s[i].node_id);
    if (r < 0) continue;
    out->s[m] = out->s[i];
    out->s[m].hwid = PQgetvalue(out->nodes, r, 1);
    out->s[m++].iid = PQgetvalue(out->nodes, r, 2);
  }
  out->n = m;
  return 0;
}

int siox_wh_peers(PGconn *c, const struct siox_peer_query *q, struct siox_peer_set *out, char *err, size_t errlen) {
  char from[24], to[24], mid[24], limit[24], call[24];
  snprintf(call, sizeof(call), "%lld", (long long)q->call_aid);
  snprintf(from, sizeof(from), "%lld", (long long)q->from_ns);
  snprintf(to, sizeof(to), "%lld", (long long)q->to_ns);
  snprintf(mid, sizeof(mid), "%lld", (long long)q->mid_ns);
  snprintf(limit, sizeof(limit), "%ld", q->limit);
  const char *params[] = {q->swid, q->name, q->job ? q->job : "", from, to, mid, limit, call};
  memset(out, 0, sizeof(*out));
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
    out->s[r] = (struct siox_blame_sample){.aid = siox_wh_i64(res, r, 0), .node_id = (int32_t)siox_wh_i64(res, r, 1),
                                           .ns = siox_wh_i64(res, r, 2), .bytes = siox_wh_i64(res, r, 3)};
  }
  int rc = name_nodes(c, out, err, errlen);
  if (rc != 0) siox_wh_peers_free(out);
  return rc;
}

void siox_wh_peers_free(struct siox_peer_set *p) {
  free(p->s);
  PQclear(p->res);
  PQclear(p->nodes);
  p->s = NULL;
  p->res = p->nodes = NULL;
  p->n = 0;
}
