/*
 * Scores against the baselines (siox_kb_baselines.h): the percentile rank of
 * one activity's latency, or of each component's recent median, in its own
 * latency histogram with the judged activities taken out. Reads only.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <siox/siox_kb_baselines.h>
#include <siox/siox_wh.h>

#include "baselines_fold.h"

/* The activity's histogram minus itself and minus the folded activities of
 * the same baseline in the excluded window (ex). The window is read by the
 * (type_id, start_ns) index as a bitmap (plain index scans off for this
 * statement, siox_wh_exec_window: the planner otherwise walks
 * activities_start over every node's activities in the window, or ANDs in
 * the type's whole index when "in the window OR the activity itself" is
 * one condition); the activity
 * itself is added when it lies outside the window. ex is computed once
 * (MATERIALIZED: inlined, it was re-aggregated for each bucket of the
 * histogram), and its size class is tested as the byte range of a's class
 * (SIZE_CLASS_IS, the same answer as kb_size_class(bytes) = sc, which
 * formats each of the window's thousands of sizes as a bit string: most of
 * the statement's time). */
#define SIZE_CLASS_IS(B, SC)                                                                        \
  "(CASE WHEN " SC " < 0 THEN " B " IS NULL WHEN " SC " = 0 THEN " B " <= 1 WHEN " SC " > 62 THEN false" \
  " ELSE " B " >= (1::bigint << " SC ") AND (" SC " = 62 OR " B " < (1::bigint << (" SC " + 1))) END)"
static const char score_sql[] =
    "WITH wm AS (SELECT watermark_ns w FROM kb_fold_state WHERE name = 'baselines'),"
    " a AS (SELECT a.aid, a.node_id, a.type_id, (a.end_ns - a.start_ns)::float8 AS ns, kb_size_class(a.bytes) sc"
    "  FROM siox_activity($1::bigint) a),"
    " ex AS MATERIALIZED (SELECT kb_hist_bucket((e.end_ns - e.start_ns)::float8) bucket, count(*) c"
    "  FROM (SELECT e.start_ns, e.end_ns, e.bytes b"
    "          FROM (SELECT e.start_ns, e.end_ns, e.bytes FROM siox_activities_started($2::bigint, $3::bigint) e, a"
    "                 WHERE e.type_id = a.type_id AND e.node_id = a.node_id"
    "                UNION ALL"
    "                SELECT e.start_ns, e.end_ns, e.bytes FROM a, siox_activity(a.aid) e"
    "                 WHERE NOT (e.start_ns >= $2::bigint AND e.start_ns < $3::bigint)) e) e, a"
    "  WHERE e.end_ns <= (SELECT w FROM wm) AND " SIZE_CLASS_IS("e.b", "a.sc")
    "  GROUP BY 1),"
    " h AS (SELECT array_agg(h.bucket ORDER BY h.bucket) bk,"
    "       array_agg(h.count - coalesce(ex.c, 0) ORDER BY h.bucket) ct"
    "  FROM kb_baseline_hist h JOIN a ON h.node_id = a.node_id AND h.type_id = a.type_id AND h.size_class = a.sc"
    "  LEFT JOIN ex ON ex.bucket = h.bucket)"
    " SELECT a.sc, a.ns, coalesce((SELECT sum(x) FROM unnest(h.ct) x), 0), kb_hist_rank(h.bk, h.ct, a.ns),"
    "        kb_hist_quantile(h.bk, h.ct, 0.5), kb_hist_quantile(h.bk, h.ct, 0.9), kb_hist_quantile(h.bk, h.ct, 0.99)"
    "   FROM a, h";

static double num(PGresult *r, int row, int col) {
  return PQgetisnull(r, row, col) ? 0 : strtod(PQgetvalue(r, row, col), NULL);
}

int siox_kb_baseline_score(PGconn *c, int64_t aid, int64_t exclude_from_ns, int64_t exclude_to_ns,
                           struct siox_kb_score *out, char *err, size_t errcap) {
  char p[3][24];
  snprintf(p[0], sizeof p[0], "%" PRId64, aid);
  snprintf(p[1], sizeof p[1], "%" PRId64, exclude_from_ns);
  snprintf(p[2], sizeof p[2], "%" PRId64, exclude_to_ns);
  const char *params[3] = {p[0], p[1], p[2]};
  PGresult *r = siox_wh_exec_window(c, score_sql, 3, params);
  if (PQresultStatus(r) != PGRES_TUPLES_OK) {
    kb_pq_fail(r, "scoring against the baseline", err, errcap);
    PQclear(r);
    return -1;
  }
  memset(out, 0, sizeof *out);
  int found = PQntuples(r) == 1;
  if (found) {
    out->size_class = atoi(PQgetvalue(r, 0, 0));
    out->latency_ns = (int64_t)num(r, 0, 1);
    out->base_n = (int64_t)num(r, 0, 2);
    out->percentile = 100.0 * num(r, 0, 3);
    out->p50_ns = num(r, 0, 4);
    out->p90_ns = num(r, 0, 5);
    out->p99_ns = num(r, 0, 6);
    out->found = out->base_n >= SIOX_KB_MIN_BASELINE;
  }
  PQclear(r);
  return found;
}
