/*
 * The jobs whose page is not stored yet (siox_wh_job_unviewed): `siox web`
 * computes their documents in the background, so that the first view of a
 * big job reads stored documents instead of loading the job (README.md,
 * "Stored aggregates"). A listing (`siox jobs`, the jobs page) stores each
 * whole job's sums under its stamp (kind 'jobs'); a job whose sums have kept
 * their stamp for a while has ended, or paused, and the view computed now
 * will hold. Storing a page's documents drops the job's rows of other stamps
 * (wh_job_cache.c), so a job that went on meanwhile leaves this list until a
 * listing stores its new sums: nothing is computed twice for one stamp.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "siox/siox_wh.h"
#include "wh_pg.h"

/* $1 bins, $2 seconds the stamp held, $3 how many */
static const char unviewed_sql[] =
    "SELECT g.job, g.uid, g.acts, g.max_aid FROM job_aggregates g"
    " WHERE g.kind = 'jobs' AND g.updated_at < now() - make_interval(secs => $2::int)"
    "   AND (NOT EXISTS (SELECT 1 FROM job_aggregates s WHERE s.uid = g.uid AND s.job = g.job"
    "                       AND s.kind = 'summary' AND s.acts = g.acts AND s.max_aid = g.max_aid)"
    "     OR NOT EXISTS (SELECT 1 FROM job_aggregates h WHERE h.uid = g.uid AND h.job = g.job"
    "                       AND h.kind = 'heatmap' AND h.bins = $1::int AND h.acts = g.acts AND h.max_aid = g.max_aid))"
    " ORDER BY g.updated_at DESC LIMIT $3::int";

static const char has_store_sql[] = "SELECT to_regclass('job_aggregates') IS NOT NULL";

static void free_list(struct siox_wh_unviewed *u, size_t n) {
  for (size_t i = 0; i < n; i++) free(u[i].job);
  free(u);
}

int siox_wh_job_unviewed(struct siox_wh *wh, int bins, int settle_s, size_t max, struct siox_wh_unviewed **out,
                         size_t *n, char *err, size_t errlen) {
  *out = NULL;
  *n = 0;
  PGconn *c = siox_wh_pg(wh);
  PGresult *res = siox_wh_query(c, "looking for job_aggregates", has_store_sql, 0, NULL, err, errlen);
  if (!res) return -EIO;
  int has = PQgetvalue(res, 0, 0)[0] == 't';
  PQclear(res);
  if (!has) return 0; /* a warehouse older than schema 026 stores nothing */
  char b[16], s[16], m[24];
  snprintf(b, sizeof(b), "%d", bins);
  snprintf(s, sizeof(s), "%d", settle_s);
  snprintf(m, sizeof(m), "%zu", max);
  const char *params[] = {b, s, m};
  if (!(res = siox_wh_query(c, "listing the jobs not viewed yet", unviewed_sql, 3, params, err, errlen))) return -EIO;
  size_t rows = (size_t)PQntuples(res);
  struct siox_wh_unviewed *u = rows ? calloc(rows, sizeof(*u)) : NULL;
  if (rows && !u) return PQclear(res), -ENOMEM;
  for (size_t i = 0; i < rows; i++) {
    if (!(u[i].job = strdup(PQgetvalue(res, (int)i, 0)))) return PQclear(res), free_list(u, i), -ENOMEM;
    u[i].uid = atoi(PQgetvalue(res, (int)i, 1));
    u[i].acts = strtoll(PQgetvalue(res, (int)i, 2), NULL, 10);
    u[i].max_aid = strtoll(PQgetvalue(res, (int)i, 3), NULL, 10);
  }
  PQclear(res);
  *out = u;
  *n = rows;
  return 0;
}

void siox_wh_unviewed_free(struct siox_wh_unviewed *u, size_t n) { free_list(u, n); }
