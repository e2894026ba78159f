/*
 * A job's summary and heatmap documents, computed once and kept in
 * job_aggregates (schema 026; README.md, "Job views"). Reading a big job's
 * activities and resolving their files is the whole cost of a view (15 s for
 * 1M activities), and most of a job's views come after it ended. The
 * aggregates are not kept at ingest: files are followed through descriptors
 * across a process's whole life, sequential shares need each access's
 * predecessor, and the critical-file sweep needs every span at once, so no
 * per-batch row could be merged into them.
 *
 * A stored document holds for the stamp it was computed under: the count
 * and the highest AID of the job's activities. Each view counts them again
 * (one index-only pass over the job's AIDs) in the same snapshot as the
 * computation, so a late activity, or a deleted one, makes the view
 * recompute; a stale document is never served.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "wh_job.h"
#include "wh_pg.h"

/* aid = proc_id << 32 | local number: one primary-key range per process.
 * The count is the whole cost of a stored view (every view pays it): it is
 * counted per process in a subquery of its own, and the highest AID read by
 * one index probe, not both aggregated over a join of the job's rows, which
 * took twice as long (80 against 155 ms for 1M activities, medians of 8). */
static const char stamp_sql[] =
    "SELECT min(p.uid), coalesce(sum(c.n), 0)::bigint, coalesce(max(x.m), 0),"
    "       to_regclass('job_aggregates') IS NOT NULL"
    "  FROM processes p,"
    "       LATERAL (SELECT count(*) AS n FROM activities a WHERE a.aid " SIOX_WH_AIDS_OF("p.proc_id") ") c,"
    "       LATERAL (SELECT max(a.aid) AS m FROM activities a WHERE a.aid " SIOX_WH_AIDS_OF("p.proc_id") ") x"
    " WHERE p.job = $1";

static const char get_sql[] = "SELECT doc FROM job_aggregates WHERE uid = $1 AND job = $2 AND kind = $3"
                              " AND bins = $4 AND acts = $5 AND max_aid = $6";

/* One statement: the job's rows of other stamps go, this one is stored. */
static const char put_sql[] =
    "WITH old AS (DELETE FROM job_aggregates WHERE uid = $1 AND job = $2 AND (acts, max_aid) <> ($5, $6))"
    " INSERT INTO job_aggregates (uid, job, kind, bins, acts, max_aid, doc) VALUES ($1, $2, $3, $4, $5, $6, $7)"
    " ON CONFLICT (uid, job, kind, bins) DO UPDATE"
    "   SET acts = EXCLUDED.acts, max_aid = EXCLUDED.max_aid, doc = EXCLUDED.doc, updated_at = now()";

struct stamp {
  char uid[24], acts[24], max_aid[24];
  int has_table; /* an older schema has no job_aggregates: compute, keep nothing */
};

static int read_stamp(PGconn *c, const char *job, struct stamp *s, char *err, size_t errlen) {
  const char *params[] = {job};
  char what[160];
  snprintf(what, sizeof(what), "counting job %s's activities", job);
  PGresult *res = siox_wh_query(c, what, stamp_sql, 1, params, err, errlen);
  if (!res) return -EIO;
  snprintf(s->uid, sizeof(s->uid), "%s", PQgetvalue(res, 0, 0));
  snprintf(s->acts, sizeof(s->acts), "%s", PQgetvalue(res, 0, 1));
  snprintf(s->max_aid, sizeof(s->max_aid), "%s", PQgetvalue(res, 0, 2));
  s->has_table = PQgetvalue(res, 0, 3)[0] == 't' && !PQgetisnull(res, 0, 0);
  PQclear(res);
  return 0;
}

/* The stored document of this stamp, or NULL (none, or unreadable: then it
 * is computed again, which costs time, not correctness). */
static json_object *cache_get(PGconn *c, const char *job, const struct stamp *s, const char *kind, int bins) {
  if (!s->has_table) return NULL;
  char b[16], err[256];
  snprintf(b, sizeof(b), "%d", bins);
  const char *params[] = {s->uid, job, kind, b, s->acts, s->max_aid};
  PGresult *res = siox_wh_query(c, "reading a job's aggregates", get_sql, 6, params, err, sizeof(err));
  json_object *doc = res && PQntuples(res) == 1 ? json_tokener_parse(PQgetvalue(res, 0, 0)) : NULL;
  PQclear(res);
  return doc;
}

/* Stores doc under stamp s. A failure is not the view's: its document is
 * right, only the next view will compute it again (a read-only role, a
 * concurrent view storing the same row). */
static void cache_put(PGconn *c, const char *job, const struct stamp *s, const char *kind, int bins,
                      json_object *doc) {
  if (!s->has_table || !doc) return;
  char b[16], err[256];
  snprintf(b, sizeof(b), "%d", bins);
  const char *params[] = {s->uid, job, kind, b, s->acts, s->max_aid,
                          json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN)};
  PQclear(siox_wh_query(c, "storing a job's aggregates", put_sql, 7, params, err, sizeof(err)));
}

/* The documents the cache did not have, from one load of the job. */
static int compute(PGconn *c, const char *job, json_object **summary, int bins, json_object **heatmap, char *err,
                   size_t errlen) {
  struct whj j;
  int rc = whj_load(c, job, &j, err, errlen);
  if (rc) return rc;
  if (summary && !*summary) rc = whj_summary(&j, job, summary, err, errlen);
  if (!rc && heatmap && !*heatmap) rc = whj_heatmap(&j, job, bins, heatmap, err, errlen);
  whj_free(&j);
  return rc;
}

/* Stamp, look-up and computation in one snapshot, so that the stamp counts
 * exactly the activities the documents were computed from. */
static int in_snapshot(PGconn *c, const char *job, struct stamp *s, json_object **summary, int bins,
                       json_object **heatmap, int *fresh, char *err, size_t errlen) {
  int rc = whj_one_owner(c, job, err, errlen); /* its errors first, as whj_load gives them */
  if (!rc) rc = read_stamp(c, job, s, err, errlen);
  if (rc) return rc;
  if (summary) *summary = cache_get(c, job, s, "summary", 0);
  if (heatmap) *heatmap = cache_get(c, job, s, "heatmap", bins);
  fresh[0] = summary && !*summary;
  fresh[1] = heatmap && !*heatmap;
  if (!fresh[0] && !fresh[1]) return 0;
  return compute(c, job, summary, bins, heatmap, err, errlen);
}

int whj_docs(PGconn *c, const char *job, json_object **summary, int bins, json_object **heatmap, char *err,
             size_t errlen) {
  struct stamp s = {0};
  int fresh[2] = {0, 0};
  if (summary) *summary = NULL;
  if (heatmap) *heatmap = NULL;
  int rc = siox_wh_exec(c, "starting a job view", "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", err, errlen);
  if (rc) return rc;
  rc = in_snapshot(c, job, &s, summary, bins, heatmap, fresh, err, errlen);
  char e2[256];
  int end = siox_wh_exec(c, "ending a job view", rc ? "ROLLBACK" : "COMMIT", e2, sizeof(e2));
  if (!rc && end) rc = end, snprintf(err, errlen, "%s", e2);
  if (!rc && fresh[0]) cache_put(c, job, &s, "summary", 0, *summary);
  if (!rc && fresh[1]) cache_put(c, job, &s, "heatmap", bins, *heatmap);
  if (rc) {
    if (summary) json_object_put(*summary), *summary = NULL;
    if (heatmap) json_object_put(*heatmap), *heatmap = NULL;
  }
  return rc;
}
