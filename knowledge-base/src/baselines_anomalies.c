/*
 * Anomalies (siox_kb_baselines.h): every component active in a window,
 * its recent latencies ranked against its own baseline with the window's
 * folded activities taken out of the histogram. Reads only.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <siox/siox_kb_baselines.h>

#include "baselines_fold.h"

/* r: the window's activities (sc: size class); rs: their per-key summary;
 * bh: the baseline histogram minus the window's folded part; scored: the
 * ranks; up: how many of the window's activities lie above the baseline's
 * p99. */
static const char anomalies_sql[] =
    "WITH r AS (SELECT a.aid, a.node_id, a.type_id, (a.end_ns - a.start_ns)::float8 AS ns, kb_size_class(a.bytes) sc,"
    "   a.end_ns <= (SELECT watermark_ns FROM kb_fold_state WHERE name = 'baselines') AS folded"
    "  FROM siox_activities_started($1::bigint, $2::bigint) a),"
    " rs AS (SELECT node_id, type_id, sc, count(*) n,"
    "   percentile_cont(0.5) WITHIN GROUP (ORDER BY ns) p50, percentile_cont(0.9) WITHIN GROUP (ORDER BY ns) p90,"
    "   (array_agg(aid ORDER BY ns DESC))[1:3] ex FROM r GROUP BY 1, 2, 3),"
    " rh AS (SELECT node_id, type_id, sc, kb_hist_bucket(ns) bucket, count(*) c FROM r WHERE folded GROUP BY 1, 2, 3, 4),"
    " bh AS (SELECT h.node_id, h.type_id, h.size_class sc, array_agg(h.bucket ORDER BY h.bucket) bk,"
    "   array_agg(h.count - coalesce(rh.c, 0) ORDER BY h.bucket) ct"
    "  FROM kb_baseline_hist h JOIN rs ON rs.node_id = h.node_id AND rs.type_id = h.type_id AND rs.sc = h.size_class"
    "  LEFT JOIN rh ON rh.node_id = h.node_id AND rh.type_id = h.type_id AND rh.sc = h.size_class"
    "   AND rh.bucket = h.bucket GROUP BY 1, 2, 3),"
    " scored AS (SELECT rs.*, coalesce((SELECT sum(x) FROM unnest(bh.ct) x), 0)::bigint base_n,"
    "   kb_hist_quantile(bh.bk, bh.ct, 0.5) b50, kb_hist_quantile(bh.bk, bh.ct, 0.99) b99,"
    "   kb_hist_rank(bh.bk, bh.ct, rs.p50) rank FROM rs LEFT JOIN bh USING (node_id, type_id, sc)),"
    " up AS (SELECT r.node_id, r.type_id, r.sc, count(*) c FROM r JOIN scored s USING (node_id, type_id, sc)"
    "   WHERE r.ns > s.b99 GROUP BY 1, 2, 3)"
    " SELECT s.node_id, s.type_id, s.sc, n.hwid, n.swid, n.iid, t.name, s.n, s.p50, s.p90, s.base_n,"
    "        s.b50, s.b99, s.rank, coalesce(up.c, 0), array_to_string(s.ex, ' ')"
    "   FROM scored s JOIN siox_nodes() n ON n.node_id = s.node_id"
    "   JOIN siox_activity_types() t ON t.type_id = s.type_id"
    "   LEFT JOIN up ON up.node_id = s.node_id AND up.type_id = s.type_id AND up.sc = s.sc"
    "  ORDER BY (s.base_n >= $3::bigint AND s.n >= $4::bigint) DESC, s.rank DESC NULLS LAST, s.n DESC";

static double num(PGresult *r, int row, int col) {
  return PQgetisnull(r, row, col) ? 0 : strtod(PQgetvalue(r, row, col), NULL);
}

static void copy(char *dst, size_t cap, const char *src) {
  snprintf(dst, cap, "%s", src);
}

static void fill(PGresult *r, int i, const struct siox_kb_anomaly_rule *rule, struct siox_kb_anomaly *a) {
  memset(a, 0, sizeof *a);
  a->node_id = atoi(PQgetvalue(r, i, 0));
  a->type_id = atoi(PQgetvalue(r, i, 1));
  a->size_class = atoi(PQgetvalue(r, i, 2));
  copy(a->hwid, sizeof a->hwid, PQgetvalue(r, i, 3));
  copy(a->swid, sizeof a->swid, PQgetvalue(r, i, 4));
  copy(a->iid, sizeof a->iid, PQgetvalue(r, i, 5));
  copy(a->name, sizeof a->name, PQgetvalue(r, i, 6));
  a->n = (int64_t)num(r, i, 7);
  a->p50_ns = num(r, i, 8);
  a->p90_ns = num(r, i, 9);
  a->base_n = (int64_t)num(r, i, 10);
  a->base_p50_ns = num(r, i, 11);
  a->base_p99_ns = num(r, i, 12);
  a->percentile = 100.0 * num(r, i, 13);
  a->ratio = a->base_p50_ns > 0 ? a->p50_ns / a->base_p50_ns : 0;
  a->above_base_p99 = a->n ? num(r, i, 14) / (double)a->n : 0;
  const char *p = PQgetvalue(r, i, 15);
  for (int k = 0; k < 3 && *p; k++) {
    char *end;
    a->slowest_aids[k] = strtoll(p, &end, 10);
    p = end;
  }
  a->abnormal = a->base_n >= SIOX_KB_MIN_BASELINE && a->n >= rule->min_samples && a->percentile >= rule->percentile &&
                a->ratio >= rule->min_ratio;
}

int siox_kb_anomalies(PGconn *c, int64_t since_ns, int64_t until_ns, const struct siox_kb_anomaly_rule *rule,
                      struct siox_kb_anomaly **out, size_t *n, char *err, size_t errcap) {
  static const struct siox_kb_anomaly_rule defaults = {.percentile = 95, .min_ratio = 2, .min_samples = 5};
  if (!rule) rule = &defaults;
  char p[4][24];
  snprintf(p[0], sizeof p[0], "%" PRId64, since_ns);
  snprintf(p[1], sizeof p[1], "%" PRId64, until_ns);
  snprintf(p[2], sizeof p[2], "%d", SIOX_KB_MIN_BASELINE);
  snprintf(p[3], sizeof p[3], "%" PRId64, rule->min_samples);
  const char *params[4] = {p[0], p[1], p[2], p[3]};
  *out = NULL;
  *n = 0;
  PGresult *r = PQexecParams(c, anomalies_sql, 4, NULL, params, NULL, NULL, 0);
  if (PQresultStatus(r) != PGRES_TUPLES_OK) {
    kb_pq_fail(r, "finding anomalies", err, errcap);
    PQclear(r);
    return -1;
  }
  int rows = PQntuples(r), abnormal = 0;
  if (rows && !(*out = calloc((size_t)rows, sizeof **out))) {
    PQclear(r);
    if (err && errcap) snprintf(err, errcap, "finding anomalies: out of memory");
    return -1;
  }
  for (int i = 0; i < rows; i++) {
    fill(r, i, rule, &(*out)[i]);
    abnormal += (*out)[i].abnormal;
  }
  *n = (size_t)rows;
  PQclear(r);
  return abnormal;
}
