/*
 * Latency baselines: folds the activities that ended since the last fold
 * into per-component histograms (kb_baseline_hist) and summaries
 * (kb_baselines, schema 008). siox-server runs it after its analyses;
 * `siox blame` and `siox anomalies` score latencies against the result.
 */
#include <stdio.h>

#include <siox/siox_kb.h>

#include "baselines_fold.h"

/* The window's activities with their size class and latency; dropped at
 * commit. */
static const char batch_create_sql[] =
    "CREATE TEMP TABLE kb_bl_batch (node_id integer, type_id integer, size_class smallint,"
    " ns double precision, b bigint, bucket smallint) ON COMMIT DROP";

static const char batch_sql[] =
    "INSERT INTO kb_bl_batch SELECT node_id, type_id, kb_size_class(b) AS size_class, ns, b, kb_hist_bucket(ns) AS bucket FROM ("
    "  SELECT a.node_id, a.type_id, (a.end_ns - a.start_ns)::double precision AS ns, a.bytes AS b"
    "    FROM" KB_FOLD_ACTIVITIES " a) x";

static const char hist_sql[] =
    "INSERT INTO kb_baseline_hist AS h (node_id, type_id, size_class, bucket, count)"
    " SELECT node_id, type_id, size_class, bucket, count(*) FROM kb_bl_batch GROUP BY 1, 2, 3, 4"
    " ON CONFLICT (node_id, type_id, size_class, bucket) DO UPDATE SET count = h.count + excluded.count";

static const char sums_sql[] =
    "INSERT INTO kb_baselines AS s (node_id, type_id, size_class, n, sum_ns, min_ns, max_ns, sum_b, sum_bb, sum_bns)"
    " SELECT node_id, type_id, size_class, count(*), sum(ns), min(ns), max(ns),"
    "        coalesce(sum(b), 0), coalesce(sum(b::float8 * b), 0), coalesce(sum(b * ns), 0)"
    "   FROM kb_bl_batch GROUP BY 1, 2, 3"
    " ON CONFLICT (node_id, type_id, size_class) DO UPDATE SET n = s.n + excluded.n,"
    "   sum_ns = s.sum_ns + excluded.sum_ns, min_ns = least(s.min_ns, excluded.min_ns),"
    "   max_ns = greatest(s.max_ns, excluded.max_ns), sum_b = s.sum_b + excluded.sum_b,"
    "   sum_bb = s.sum_bb + excluded.sum_bb, sum_bns = s.sum_bns + excluded.sum_bns, updated_at = now()";

/* Percentiles only of the baselines this fold touched. */
static const char pct_sql[] =
    "UPDATE kb_baselines s SET p50_ns = kb_hist_quantile(h.bk, h.ct, 0.5),"
    "  p90_ns = kb_hist_quantile(h.bk, h.ct, 0.9), p99_ns = kb_hist_quantile(h.bk, h.ct, 0.99)"
    " FROM (SELECT node_id, type_id, size_class, array_agg(bucket ORDER BY bucket) bk,"
    "              array_agg(count ORDER BY bucket) ct FROM kb_baseline_hist"
    "        WHERE (node_id, type_id, size_class) IN (SELECT node_id, type_id, size_class FROM kb_bl_batch)"
    "        GROUP BY 1, 2, 3) h"
    " WHERE s.node_id = h.node_id AND s.type_id = h.type_id AND s.size_class = h.size_class";

int siox_kb_baselines_update(PGconn *c, int64_t settle_ns, char *err, size_t errcap) {
  struct kb_fold_window w;
  int rc = kb_fold_begin(c, "baselines", settle_ns, &w, err, errcap);
  if (rc <= 0) return rc;
  long n = -1;
  if (kb_fold_step(c, batch_create_sql, err, errcap) < 0 || (n = kb_fold_exec(c, batch_sql, &w, err, errcap)) < 0 ||
      kb_fold_step(c, hist_sql, err, errcap) < 0 || kb_fold_step(c, sums_sql, err, errcap) < 0 ||
      kb_fold_step(c, pct_sql, err, errcap) < 0)
    goto fail;
  if (kb_fold_commit(c, "baselines", &w, n, err, errcap) < 0) return -1;
  return (int)n;
fail:
  kb_fold_abort(c);
  return -1;
}
