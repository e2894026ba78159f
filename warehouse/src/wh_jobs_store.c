/*
 * `siox jobs`'s stored per-job counts (kind 'jobs' of job_aggregates, schema
 * 026 and 028; README.md, "Job views"). A listing reads a job's stored
 * counts when its stamp still holds and groups the activities of the other
 * jobs only; a job computed afresh is stored for the next listing. The
 * counts, not the row of the list, are stored: the served figures (worst
 * component, bricks) come from causal links that can arrive after the job's
 * own activities, so they are read on every listing (a few ms).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "wh_jobs.h"
#include "wh_pg.h"

#define FIELDS(X)                                                                                              \
  X(activities) X(calls) X(first_ns) X(last_ns) X(bytes_read) X(bytes_written) X(io_ns) X(procs) X(data)      \
  X(small) X(follows) X(consec) X(mpiio_data) X(coll)

json_object *whjs_counts_json(const struct whjs_counts *c) {
  json_object *o = json_object_new_object();
#define PUT(f) json_object_object_add(o, #f, json_object_new_int64(c->f));
  FIELDS(PUT)
#undef PUT
  return o;
}

int whjs_counts_parse(const char *doc, struct whjs_counts *c) {
  json_object *o = json_tokener_parse(doc), *v;
  int rc = o ? 0 : -EINVAL;
#define GET(f)                                                                                                 \
  if (!rc && json_object_object_get_ex(o, #f, &v) && json_object_is_type(v, json_type_int))                    \
    c->f = json_object_get_int64(v);                                                                           \
  else rc = -EINVAL;
  FIELDS(GET)
#undef GET
  json_object_put(o);
  return rc;
}

/* Only the job's own 'jobs' row: its summary and heatmap rows keep their
 * own stamps (wh_job_cache.c drops them when they no longer hold). */
static const char put_sql[] =
    "INSERT INTO job_aggregates (uid, job, kind, bins, acts, max_aid, doc) VALUES ($1, $2, 'jobs', 0, $3, $4, $5)"
    " ON CONFLICT (uid, job, kind, bins) DO UPDATE"
    "   SET acts = EXCLUDED.acts, max_aid = EXCLUDED.max_aid, doc = EXCLUDED.doc, updated_at = now()";

void whjs_store(PGconn *c, const char *uid, const char *job, const char *acts, const char *max_aid,
                const struct whjs_counts *counts) {
  json_object *doc = whjs_counts_json(counts);
  const char *params[] = {uid, job, acts, max_aid, json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN)};
  char err[256];
  PQclear(siox_wh_query(c, "storing a job's counts", put_sql, 5, params, err, sizeof(err)));
  json_object_put(doc);
}
