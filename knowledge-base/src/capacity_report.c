/*
 * Capacity report (siox_kb_capacity.h): reads the load aggregates of schema
 * 009 over a window and turns them into rates, peaks, utilisation against
 * the highest load ever seen on a component of the same kind, a latency
 * versus load fit, and the growth factor at which each one saturates.
 * Reads only.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <siox/siox_kb_capacity.h>

#include "baselines_fold.h"

/* comp: every component with its label, role and peer group (bricks are
 * compared with bricks, POSIX layers with POSIX layers, hosts with hosts);
 * ever: its busiest bucket in all history; cap: the peer group's; w: the
 * window's buckets; med: the median bucket load of each component, which
 * splits its buckets into a quieter and a busier half. Load is bytes where
 * the component moved bytes, else operations. */
static const char report_sql[] =
    "WITH cfg AS (SELECT bucket_ns::float8 / 1e9 AS bs FROM kb_capacity_config),"
    " comp AS (SELECT DISTINCT k.kind, k.key,"
    "   CASE WHEN k.kind = 'node' THEN n.hwid || ' ' || n.swid || CASE WHEN n.iid <> '' THEN ' ' || n.iid ELSE '' END"
    "        ELSE k.key END AS label,"
    "   CASE WHEN k.kind = 'host' THEN 'client' WHEN k.kind = 'job' THEN 'job'"
    "        WHEN n.swid ILIKE '%brick%' THEN 'brick' WHEN n.swid ILIKE '%device%' OR n.swid ILIKE '%block%' THEN 'device'"
    "        ELSE 'layer' END AS role,"
    "   CASE WHEN k.kind = 'node' THEN 'node:' || n.swid ELSE k.kind END AS grp,"
    "   (SELECT nb.bytes_per_s FROM siox_node_bandwidth() nb WHERE k.kind = 'node' AND nb.node_id = n.node_id) AS nominal"
    "  FROM kb_capacity k LEFT JOIN siox_nodes() n ON k.kind = 'node' AND n.node_id::text = k.key"
    "  WHERE k.bucket_ns >= $1::bigint AND k.bucket_ns < $2::bigint AND ($3 = '' OR k.kind = $3)),"
    " ever AS (SELECT k.kind, k.key, max(k.bytes) mb, max(k.ops) mo FROM kb_capacity k GROUP BY 1, 2),"
    " allgrp AS (SELECT e.*, CASE WHEN e.kind = 'node' THEN 'node:' || n.swid ELSE e.kind END AS grp"
    "  FROM ever e LEFT JOIN siox_nodes() n ON e.kind = 'node' AND n.node_id::text = e.key),"
    " cap AS (SELECT grp, max(mb) mb, max(mo) mo, count(*) members FROM allgrp GROUP BY grp),"
    " w AS (SELECT k.*, c.label, c.role, c.grp, c.nominal, sum(k.bytes) OVER (PARTITION BY k.kind, k.key) > 0 AS by_bytes"
    "  FROM kb_capacity k JOIN comp c USING (kind, key)"
    "  WHERE k.bucket_ns >= $1::bigint AND k.bucket_ns < $2::bigint"
    "    AND ($4 = '' OR CASE WHEN $4 IN ('brick', 'device', 'layer', 'client', 'job') THEN c.role = $4"
    "                         ELSE c.label ILIKE '%' || $4 || '%' OR k.key = $4 END)),"
    " wl AS (SELECT w.*, (CASE WHEN by_bytes THEN bytes ELSE ops END) / cfg.bs AS load,"
    "   CASE WHEN ops > 0 THEN busy_ns / ops END AS lat FROM w, cfg),"
    " med AS (SELECT kind, key, percentile_cont(0.5) WITHIN GROUP (ORDER BY load) m FROM wl GROUP BY 1, 2)"
    " SELECT wl.kind, wl.key, wl.role, wl.label, bool_or(by_bytes), sum(ops), sum(bytes), sum(busy_ns),"
    "   max(load), max(CASE WHEN by_bytes THEN cap.mb ELSE cap.mo END) / max(cfg.bs), max(nominal),"
    "   avg(lat) FILTER (WHERE load <= med.m), avg(lat) FILTER (WHERE load > med.m),"
    "   coalesce(regr_slope(lat, load), 0), coalesce(regr_intercept(lat, load), avg(lat)), max(cap.members)"
    "  FROM wl JOIN med USING (kind, key) JOIN cap USING (grp), cfg"
    "  GROUP BY wl.kind, wl.key, wl.role, wl.label";

static double num(PGresult *r, int row, int col) {
  return PQgetisnull(r, row, col) ? 0 : strtod(PQgetvalue(r, row, col), NULL);
}

/* Derived values: rates over the window, utilisation and the projection. */
static void derive(struct siox_kb_capacity_row *x, double what_if) {
  x->bytes_per_s = (double)x->bytes / x->seconds;
  x->ops_per_s = (double)x->ops / x->seconds;
  x->rate = x->bytes_metric ? x->bytes_per_s : x->ops_per_s;
  x->utilization = x->capacity > 0 ? x->peak / x->capacity : 0;
  x->mean_utilization = x->capacity > 0 ? x->rate / x->capacity : 0;
  x->saturation_factor = x->peak > 0 ? x->capacity / x->peak : INFINITY;
  x->projected_utilization = what_if * x->utilization;
  double lat = x->lat_intercept_ns + x->lat_slope * what_if * x->peak;
  x->projected_lat_ns = lat > 0 ? lat : 0;
}

static void fill(PGresult *r, int i, const struct siox_kb_capacity_query *q, struct siox_kb_capacity_row *x) {
  memset(x, 0, sizeof *x);
  snprintf(x->kind, sizeof x->kind, "%s", PQgetvalue(r, i, 0));
  snprintf(x->key, sizeof x->key, "%s", PQgetvalue(r, i, 1));
  snprintf(x->role, sizeof x->role, "%s", PQgetvalue(r, i, 2));
  snprintf(x->label, sizeof x->label, "%s", PQgetvalue(r, i, 3));
  x->bytes_metric = PQgetvalue(r, i, 4)[0] == 't';
  x->ops = (int64_t)num(r, i, 5);
  x->bytes = (int64_t)num(r, i, 6);
  x->seconds = (double)(q->until_ns - q->since_ns) / 1e9;
  x->busy = num(r, i, 7) / 1e9 / x->seconds;
  x->peak = num(r, i, 8);
  x->capacity = num(r, i, 9);
  /* A nominal bandwidth is in bytes/s: it applies only to a byte load. */
  if (x->bytes_metric && num(r, i, 10) > 0) {
    x->capacity = num(r, i, 10);
    x->capacity_nominal = 1;
  }
  x->lat_low_ns = num(r, i, 11);
  x->lat_high_ns = num(r, i, 12);
  x->lat_slope = num(r, i, 13);
  x->lat_intercept_ns = num(r, i, 14);
  x->peers = (int)num(r, i, 15);
  derive(x, q->what_if > 0 ? q->what_if : 1);
}

/* Capacity known only from the component's own best says little about when
 * it saturates: such rows go after those with peers or a nominal figure. */
static int own_only(const struct siox_kb_capacity_row *x) {
  return x->peers <= 1 && !x->capacity_nominal;
}

static int by_saturation(const void *a, const void *b) {
  const struct siox_kb_capacity_row *x = a, *y = b;
  if (own_only(x) != own_only(y)) return own_only(x) - own_only(y);
  if (x->saturation_factor != y->saturation_factor) return x->saturation_factor < y->saturation_factor ? -1 : 1;
  return strcmp(x->label, y->label);
}

int siox_kb_capacity_report(PGconn *c, const struct siox_kb_capacity_query *q, struct siox_kb_capacity_row **out,
                            size_t *n, char *err, size_t errcap) {
  char p[2][24];
  *out = NULL;
  *n = 0;
  if (q->until_ns <= q->since_ns) {
    if (err && errcap) snprintf(err, errcap, "capacity: the window is empty (until <= since)");
    return -1;
  }
  snprintf(p[0], sizeof p[0], "%" PRId64, q->since_ns);
  snprintf(p[1], sizeof p[1], "%" PRId64, q->until_ns);
  const char *params[4] = {p[0], p[1], q->kind ? q->kind : "", q->component ? q->component : ""};
  PGresult *r = PQexecParams(c, report_sql, 4, NULL, params, NULL, NULL, 0);
  if (PQresultStatus(r) != PGRES_TUPLES_OK) {
    kb_pq_fail(r, "capacity report", err, errcap);
    PQclear(r);
    return -1;
  }
  int rows = PQntuples(r);
  if (rows && !(*out = calloc((size_t)rows, sizeof **out))) {
    PQclear(r);
    if (err && errcap) snprintf(err, errcap, "capacity report: out of memory");
    return -1;
  }
  for (int i = 0; i < rows; i++) fill(r, i, q, &(*out)[i]);
  PQclear(r);
  if (rows > 1) qsort(*out, (size_t)rows, sizeof **out, by_saturation); /* no rows: *out is NULL */
  *n = (size_t)rows;
  return rows;
}

/* Every bucket of the window, the empty ones as zero load. */
static const char series_sql[] =
    "SELECT b, coalesce(k.bytes, 0) / (cfg.bucket_ns / 1e9), coalesce(k.ops, 0) / (cfg.bucket_ns / 1e9),"
    "       CASE WHEN k.ops > 0 THEN k.busy_ns / k.ops ELSE 0 END"
    "  FROM kb_capacity_config cfg,"
    "       generate_series(($3::bigint / cfg.bucket_ns) * cfg.bucket_ns, $4::bigint - 1, cfg.bucket_ns) b"
    "  LEFT JOIN kb_capacity k ON k.kind = $1 AND k.key = $2 AND k.bucket_ns = b"
    " ORDER BY b";

int siox_kb_capacity_series(PGconn *c, const char *kind, const char *key, int64_t since_ns, int64_t until_ns,
                            struct siox_kb_capacity_point **out, size_t *n, char *err, size_t errcap) {
  char p[2][24];
  *out = NULL;
  *n = 0;
  snprintf(p[0], sizeof p[0], "%" PRId64, since_ns);
  snprintf(p[1], sizeof p[1], "%" PRId64, until_ns);
  const char *params[4] = {kind, key, p[0], p[1]};
  PGresult *r = PQexecParams(c, series_sql, 4, NULL, params, NULL, NULL, 0);
  if (PQresultStatus(r) != PGRES_TUPLES_OK) {
    kb_pq_fail(r, "capacity series", err, errcap);
    PQclear(r);
    return -1;
  }
  int rows = PQntuples(r);
  if (rows && !(*out = calloc((size_t)rows, sizeof **out))) {
    PQclear(r);
    if (err && errcap) snprintf(err, errcap, "capacity series: out of memory");
    return -1;
  }
  for (int i = 0; i < rows; i++) {
    struct siox_kb_capacity_point *pt = &(*out)[i];
    pt->bucket_ns = strtoll(PQgetvalue(r, i, 0), NULL, 10);
    pt->bytes_per_s = num(r, i, 1);
    pt->ops_per_s = num(r, i, 2);
    pt->mean_lat_ns = num(r, i, 3);
  }
  PQclear(r);
  *n = (size_t)rows;
  return rows;
}
