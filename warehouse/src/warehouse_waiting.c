/*
 * Warehouse queries of blame's waiting analysis (README.md "Waiting"): what
 * one resource served around a call, and where each request came from; and
 * the history of one kind of operation across all its components, for the
 * kind's latency model.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "warehouse.h"
#include "wh_pg.h"

#include <siox/siox_wh.h>

#define BYTES_EXPR "a.attr_vals[array_position(a.attr_ids, (SELECT id FROM ontology WHERE name = 'io/bytes'))]"

/* The origin of a request is the top of its causal chain (causal_edges
 * upwards, explicit and implicit links, at most 16 levels): the
 * application call whose process and job it served. It is looked up only
 * for the requests overlapping the call [$4, $5): the waiting analysis
 * (waiting.c) charges no other, and walking up from each of a busy
 * brick's thousands of requests in the window was most of blame's time.
 * The node's activities are read by its types through the (type_id,
 * start_ns) index (schema 015, siox_wh_exec_window) from SERVED_LOOKBACK
 * before the interval: start < to alone bounds one side only and read the
 * node's whole history. A request that started earlier than that and
 * still ran in the interval is not seen (a fop is milliseconds; an exact
 * overlap index cost ingest 5x, see 015). The origin's process is joined
 * to those few requests only (top, materialized): joined to every row of
 * s, the planner probed the primary key once per request of the window
 * (7,000 probes for ~90 origins, a third of the statement's time).
 * Those requests also carry when and from which node they joined the
 * queue (wind: their parent over an implicit link, the client fop over a
 * brick fop, the application's call over a client fop; waiting.h
 * queue_from_ns, queue_node), to tell which were ahead of the call there. */
#define SERVED_LOOKBACK_NS "60000000000"

#define QUEUED_EXPR \
  "a.attr_vals[array_position(a.attr_ids, (SELECT id FROM ontology WHERE name = 'glusterfs/queued_ns'))]"

/* The look-back in two parts (schema 027): the last LONG_NS before the
 * interval by activities_type_start, the rest by activities_long, which
 * holds only the activities that lasted more than LONG_NS: one that
 * started earlier than that and still ran in the interval is one of them
 * (the condition spelled as the index's predicate, so the planner sees it
 * applies). The same rows as one scan of the whole look-back, which read
 * three quarters of its rows and pages for the few that qualify. */
#define LONG_NS "1000000000"
#define SERVED_ROW \
    "  SELECT a.aid, a.start_ns, a.end_ns, coalesce(" BYTES_EXPR ", -1) AS bytes, ty.name," \
    "         coalesce(" QUEUED_EXPR ", 0) AS queued" \
    "    FROM activity_types ty JOIN activities a ON a.type_id = ty.type_id"

/* WHERE selects the resource's activities; the rest is shared. $4, $5: the
 * call, the only requests whose origin is walked.
 * The walk goes up one level per step, each level's aids as one array: a
 * step reads the two halves of causal_edges by "= ANY (the level's
 * aids)", and top's and wind's rows are read by the aids they need, the
 * same way. A coordinator sends each such read to every shard at once as
 * one parameterised remote scan (postgres_fdw ships the array as a
 * parameter); a row-by-row join with causal_edges shipped no key for the
 * activities half (it fetched every shard's activities with a parent, per
 * step) and read wind's causal_links in child_aid order from the start,
 * minutes at 10M. On one warehouse the arrays are index probes too, and
 * they keep the planner's estimate of the walk small: estimated as
 * millions of rows, wind hashed the whole activities table (0.3-1 s per
 * read at 3M). Each request's origin is its deepest level, the least
 * origin aid among equally deep ones (a request with two parents). */
#define SERVED_SQL(WHERE) \
    "WITH RECURSIVE s AS (" \
    SERVED_ROW \
    "   WHERE " WHERE \
    "     AND a.start_ns >= $2::bigint - " LONG_NS " AND a.start_ns < $3::bigint AND a.end_ns > $2::bigint" \
    "  UNION ALL" \
    SERVED_ROW \
    "   WHERE " WHERE \
    "     AND a.start_ns >= $2::bigint - " SERVED_LOOKBACK_NS \
    "     AND a.start_ns < least($2::bigint - " LONG_NS ", $3::bigint)" \
    "     AND a.end_ns > $2::bigint AND a.end_ns - a.start_ns > " LONG_NS \
    "), up(d, aids, curs) AS (" \
    "  SELECT 0, array_agg(aid), array_agg(aid) FROM s WHERE s.end_ns > $4::bigint AND s.start_ns < $5::bigint" \
    "  UNION ALL" \
    "  SELECT up.d + 1, x.aids, x.curs FROM up CROSS JOIN LATERAL (" \
    "    SELECT array_agg(o.aid) AS aids, array_agg(e.parent_aid) AS curs" \
    "      FROM unnest(up.aids, up.curs) o(aid, cur) JOIN (" \
    "        SELECT a.aid AS child_aid, a.parent_aid FROM activities a" \
    "         WHERE a.aid = ANY (up.curs) AND a.parent_aid IS NOT NULL" \
    "        UNION ALL" \
    "        SELECT l.child_aid, l.parent_aid FROM causal_links l WHERE l.child_aid = ANY (up.curs)" \
    "      ) e ON e.child_aid = o.cur) x" \
    "   WHERE up.d < 16 AND x.aids IS NOT NULL" \
    "), t AS (" \
    "  SELECT DISTINCT ON (o.aid) o.aid, o.cur FROM up, unnest(up.aids, up.curs) o(aid, cur)" \
    "   ORDER BY o.aid, up.d DESC, o.cur" \
    "), top AS MATERIALIZED (" \
    "  SELECT t.aid, t.cur, p.pid, p.host, p.job FROM t" \
    "    LEFT JOIN activities r ON r.aid = t.cur AND r.aid = ANY (ARRAY(SELECT cur FROM t))" \
    "    LEFT JOIN processes p ON p.proc_id = r.proc_id" \
    "), l AS MATERIALIZED (" \
    "  SELECT l.child_aid, l.parent_aid, l.confidence FROM causal_links l" \
    "   WHERE l.child_aid = ANY ((SELECT aids FROM up WHERE d = 0)::bigint[])" \
    "), wind AS MATERIALIZED (" \
    "  SELECT DISTINCT ON (l.child_aid) l.child_aid AS aid, w.start_ns, w.node_id" \
    "    FROM l JOIN activities w ON w.aid = l.parent_aid AND w.aid = ANY (ARRAY(SELECT parent_aid FROM l))" \
    "   ORDER BY l.child_aid, l.confidence DESC, l.parent_aid)" \
    "SELECT s.aid, s.start_ns, s.end_ns, s.bytes, coalesce(t.cur, s.aid), coalesce(t.pid, 0), coalesce(t.host, '')," \
    "       coalesce(t.job, ''), s.name, s.queued, coalesce(w.start_ns, 0), coalesce(w.node_id, 0)" \
    "  FROM s LEFT JOIN top t ON t.aid = s.aid LEFT JOIN wind w ON w.aid = s.aid ORDER BY s.start_ns, s.aid"

static const char served_sql[] = SERVED_SQL("ty.node_id = $1::int AND a.node_id = $1::int");

/* The FUSE channel of one mount: every fop of the client process proc_id
 * ($6) on the nodes of its layer on that host (one per subvolume). */
static const char served_proc_sql[] =
    SERVED_SQL("ty.node_id IN (SELECT n.node_id FROM nodes n JOIN nodes m ON m.node_id = $1::int"
               "  AND n.swid = m.swid AND n.hwid = m.hwid) AND a.proc_id = $6::int");

static int served(PGconn *c, const char *sql, int32_t node_id, int32_t proc_id, int64_t from_ns, int64_t to_ns,
                  int64_t call_from_ns, int64_t call_to_ns, struct siox_served_set *out, char *err, size_t errlen) {
  char node[16], from[24], to[24], cfrom[24], cto[24], proc[16];
  snprintf(node, sizeof(node), "%d", node_id);
  snprintf(from, sizeof(from), "%lld", (long long)from_ns);
  snprintf(to, sizeof(to), "%lld", (long long)to_ns);
  snprintf(cfrom, sizeof(cfrom), "%lld", (long long)call_from_ns);
  snprintf(cto, sizeof(cto), "%lld", (long long)call_to_ns);
  snprintf(proc, sizeof(proc), "%d", proc_id);
  const char *params[] = {node, from, to, cfrom, cto, proc};
  /* In binary: a busy brick's few seconds are thousands of requests, ten
   * values each, printed by the server and parsed here as text before. */
  PGresult *res = siox_wh_exec_window_binary(c, sql, proc_id ? 6 : 5, params);
  if (PQresultStatus(res) != PGRES_TUPLES_OK)
    return siox_wh_failed(res, c, "finding what the resource served", err, errlen);
  out->n = (size_t)PQntuples(res);
  out->s = calloc(out->n + 1, sizeof(*out->s));
  out->names = calloc(out->n + 1, sizeof(*out->names));
  if (!out->s || !out->names) {
    free(out->s);
    free(out->names);
    PQclear(res);
    return -ENOMEM;
  }
  out->res = res;
  for (int r = 0; r < (int)out->n; r++) {
    /* Text values in binary are their bytes; libpq ends each with a NUL. */
    out->s[r] = (struct siox_served){
        .aid = siox_wh_bin_i64(res, r, 0), .start_ns = siox_wh_bin_i64(res, r, 1),
        .end_ns = siox_wh_bin_i64(res, r, 2), .bytes = siox_wh_bin_i64(res, r, 3),
        .origin = siox_wh_bin_i64(res, r, 4), .pid = (int32_t)siox_wh_bin_i64(res, r, 5),
        .host = PQgetvalue(res, r, 6), .job = PQgetvalue(res, r, 7), .queued_ns = siox_wh_bin_i64(res, r, 9),
        .queue_from_ns = siox_wh_bin_i64(res, r, 10), .queue_node = (int32_t)siox_wh_bin_i64(res, r, 11)};
    out->names[r] = PQgetvalue(res, r, 8);
  }
  return 0;
}

int siox_wh_served(PGconn *c, int32_t node_id, int64_t from_ns, int64_t to_ns, int64_t call_from_ns,
                   int64_t call_to_ns, struct siox_served_set *out, char *err, size_t errlen) {
  return served(c, served_sql, node_id, 0, from_ns, to_ns, call_from_ns, call_to_ns, out, err, errlen);
}

int siox_wh_served_proc(PGconn *c, int32_t node_id, int32_t proc_id, int64_t from_ns, int64_t to_ns,
                        int64_t call_from_ns, int64_t call_to_ns, struct siox_served_set *out, char *err,
                        size_t errlen) {
  return served(c, served_proc_sql, node_id, proc_id, from_ns, to_ns, call_from_ns, call_to_ns, out, err, errlen);
}

void siox_wh_served_free(struct siox_served_set *s) {
  free(s->s);
  free(s->names);
  PQclear(s->res);
  s->s = NULL;
  s->names = NULL;
  s->res = NULL;
}

/* Per node, its latest samples: one slow node with many operations does
 * not crowd the others out of the history. Per node its one type of that
 * name (a type belongs to one node), read newest first by the
 * (type_id, start_ns) index (schema 015): a node without the type gives
 * nothing, as before. The order is spelled on (type_id, start_ns), which
 * only that index serves (activities_start is a BRIN). The bound is
 * start_ns < $3 with type_id = the type, not the row comparison
 * (type_id, start_ns) < (type, $3): with both on type_id, btree did not
 * end the backward scan at the type's first entry, so a type with fewer
 * than LIMIT operations before the call (any call in the timeline's first
 * minutes, where no kept model exists yet and blame fits one) read every
 * lower type's entries: 16,000 buffers, 50-550 ms at 10M activities,
 * instead of 2 ms. Same rows in the same order.
 * Through a coordinator the statement runs once per shard (siox_wh_fanout):
 * a node, its types and its activities live on one shard, so each shard's
 * branch is the whole answer for its nodes, and postgres_fdw ships each
 * node's read with its ORDER BY and LIMIT, the type a parameter (each
 * shard sends its LIMIT rows per node; it would ship no row comparison).
 * Over the partitioned parents, the LIMIT stayed at the coordinator and
 * every shard sent every operation of the type (4-10 s per blame at 10M). */
static const char kind_branch[] =
    "(SELECT n.node_id, x.ns, x.bytes FROM {S}nodes n"
    "  JOIN {S}activity_types t ON t.node_id = n.node_id AND t.name = $2"
    "  CROSS JOIN LATERAL ("
    "    SELECT a.end_ns - a.start_ns AS ns, coalesce(" BYTES_EXPR ", -1) AS bytes"
    "      FROM {S}activities a"
    "     WHERE a.type_id = t.type_id AND a.start_ns < $3::bigint AND a.err = 0"
    "     ORDER BY a.type_id DESC, a.start_ns DESC LIMIT $4::bigint) x"
    " WHERE n.swid = $1)";

int siox_wh_kind_samples(PGconn *c, const char *swid, const char *name, int64_t to_ns, long per_node,
                         struct siox_kind_set *out, char *err, size_t errlen) {
  char to[24], lim[24];
  snprintf(to, sizeof(to), "%lld", (long long)to_ns);
  snprintf(lim, sizeof(lim), "%ld", per_node);
  const char *params[] = {swid, name, to, lim};
  char *sql = siox_wh_fanout(c, kind_branch, err, errlen);
  if (!sql) return -EIO;
  PGresult *res = PQexecParams(c, sql, 4, NULL, params, NULL, NULL, 0);
  free(sql);
  if (PQresultStatus(res) != PGRES_TUPLES_OK)
    return siox_wh_failed(res, c, "loading the kind's history", err, errlen);
  out->n = (size_t)PQntuples(res);
  out->s = calloc(out->n + 1, sizeof(*out->s));
  if (!out->s) {
    PQclear(res);
    return -ENOMEM;
  }
  for (int r = 0; r < (int)out->n; r++)
    out->s[r] = (struct siox_kind_sample){.node_id = (int32_t)siox_wh_i64(res, r, 0),
                                          .ns = siox_wh_i64(res, r, 1), .bytes = siox_wh_i64(res, r, 2)};
  PQclear(res);
  return 0;
}

void siox_wh_kind_free(struct siox_kind_set *k) {
  free(k->s);
  k->s = NULL;
  k->n = 0;
}
