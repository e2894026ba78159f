/*
 * The analyses' public entry points (siox_kb.h): analyse one job now
 * (`siox hints --analyze`), or every job with new data that ended or has run
 * long enough since its last analysis (siox-server's analysis thread), then
 * fold the baselines and capacity aggregates.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <siox/siox_kb.h>

#include "findings.h"
#include "hints_outcome.h"

/* The newest activity end the pending scan has seen for job (0: none). */
static int64_t seen_end(PGconn *c, const char *job) {
  const char *p[1] = {job};
  PGresult *r = PQexecParams(c, "SELECT seen_end_ns FROM kb_analysis_runs WHERE job = $1", 1, NULL, p, NULL, NULL, 0);
  int64_t v = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 ? strtoll(PQgetvalue(r, 0, 0), NULL, 10) : 0;
  PQclear(r);
  return v;
}

int siox_kb_analyze_job(PGconn *c, const char *job, char *err, size_t errcap) {
  struct fnd_job j;
  struct fnd_out o = {0};
  if (!c || !job || !job[0]) {
    if (err && errcap) snprintf(err, errcap, "analysis: no job given");
    return -1;
  }
  int64_t seen = seen_end(c, job);
  long n = fnd_job_load(c, job, &j, err, errcap);
  int rc = -1;
  int withdrawn = 0;
  /* The outcome of the sets this run applied (or, for a run without hints,
   * of its application's judged sets) is measured first: a set withdrawn
   * now must not be superseded by one made from the same run's data. */
  if (n >= 0 && kb_judge_for_job(c, &j, &withdrawn, err, errcap) < 0) n = -1;
  if (n >= 0) {
    if (seen > j.last_end_ns) j.last_end_ns = seen;
    fnd_analyze_mpiio(&j, &o);
    fnd_analyze_detect(&j, &o);
    if (withdrawn) fnd_no_sets(&j, &o);
    rc = fnd_store(c, &j, &o, err, errcap) < 0 ? -1 : (int)o.n;
  }
  fnd_out_free(&o);
  fnd_job_free(&j);
  return rc;
}

/* Marks every job with activities of the analysed layers that started since
 * the watermark (less the lookback, for rows that arrive late) with the
 * newest end seen. Other layers (file-system servers: the GlusterFS
 * processes' job) are skipped here, so their jobs are not loaded for
 * nothing. */
static const char scan_sql[] =
    "WITH st AS (SELECT watermark_ns, lookback_ns FROM kb_analysis_state WHERE id = 1 FOR UPDATE),"
    " seen AS (SELECT a.job, max(a.end_ns) AS e, max(a.start_ns) AS s"
    "            FROM st, siox_job_activities_since(st.watermark_ns - st.lookback_ns) a"
    "           WHERE a.node_id IN (SELECT node_id FROM siox_nodes() WHERE swid IN ('MPI', 'MPI-IO', 'POSIX', 'stdio'))"
    "           GROUP BY 1),"
    " up AS (INSERT INTO kb_analysis_runs AS r (job, seen_end_ns) SELECT job, e FROM seen"
    "        ON CONFLICT (job) DO UPDATE SET seen_end_ns = greatest(r.seen_end_ns, EXCLUDED.seen_end_ns))"
    " UPDATE kb_analysis_state SET watermark_ns = greatest(watermark_ns, (SELECT coalesce(max(s), 0) FROM seen))"
    " WHERE id = 1";

/* Jobs with unanalysed data that have been quiet idle_s seconds (ended), or
 * whose last analysis (or first sight) is incr_s seconds old (running). */
static const char due_sql[] =
    "SELECT job FROM kb_analysis_runs"
    " WHERE seen_end_ns > analysed_end_ns"
    "   AND (seen_end_ns < (extract(epoch FROM clock_timestamp()) * 1e9)::bigint - $1::bigint * 1000000000"
    "        OR coalesce(analysed_at, first_seen_at) < now() - $2::int * interval '1 second')"
    " ORDER BY seen_end_ns";

int siox_kb_analyze_pending(PGconn *c, int idle_s, int incr_s, int64_t settle_ns, char *err, size_t errcap) {
  char a[16], b[16];
  snprintf(a, sizeof a, "%d", idle_s);
  snprintf(b, sizeof b, "%d", incr_s);
  const char *p[2] = {a, b};
  PGresult *r = PQexec(c, scan_sql);
  if (PQresultStatus(r) == PGRES_COMMAND_OK) {
    PQclear(r);
    r = PQexecParams(c, due_sql, 2, NULL, p, NULL, NULL, 0);
  }
  if (PQresultStatus(r) != PGRES_TUPLES_OK) {
    if (err && errcap) snprintf(err, errcap, "analysis: pending jobs: %s", PQresultErrorMessage(r));
    if (err && errcap) err[strcspn(err, "\n")] = '\0';
    PQclear(r);
    return -1;
  }
  int done = 0, rc = 0;
  for (int i = 0; i < PQntuples(r) && rc == 0; i++) {
    if (siox_kb_analyze_job(c, PQgetvalue(r, i, 0), err, errcap) < 0) rc = -1;
    else done++;
  }
  PQclear(r);
  if (rc < 0) return -1;
  if (siox_kb_baselines_update(c, settle_ns, err, errcap) < 0 || siox_kb_capacity_update(c, settle_ns, err, errcap) < 0)
    return -1;
  return done;
}
