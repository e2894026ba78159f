/*
 * A job's extent: its time span (blame leaves the whole run out of a
 * component's baseline) and whether it exists at all. A job is keyed by
 * (uid, job id): another user's processes that carry the same id are not
 * part of it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "warehouse.h"
#include "wh_pg.h"

/* Activities are found by aid range per process (aid = proc_id << 32 | seq),
 * which the primary key answers without a scan by time. */
static const char span_sql[] =
    "SELECT min(a.start_ns), max(a.end_ns) FROM processes p, activities a"
    " WHERE (CASE WHEN $2 <> '' THEN p.job = $2 AND p.uid = (SELECT uid FROM processes WHERE proc_id = ($1::bigint >> 32))"
    "             ELSE p.proc_id = ($1::bigint >> 32) END)"
    "   AND a.aid " SIOX_WH_AIDS_OF("p.proc_id");

int siox_wh_job_span(PGconn *c, int64_t aid, const char *job, int64_t *from, int64_t *to, char *err, size_t errlen) {
  char a[24];
  snprintf(a, sizeof a, "%" PRId64, aid);
  const char *params[2] = {a, job ? job : ""};
  PGresult *r = siox_wh_query(c, "reading the job's span", span_sql, 2, params, err, errlen);
  if (!r) return -EIO;
  int found = PQntuples(r) == 1 && !PQgetisnull(r, 0, 0);
  if (found) {
    int64_t s = siox_wh_i64(r, 0, 0), e = siox_wh_i64(r, 0, 1);
    if (s < *from) *from = s;
    if (e > *to) *to = e;
  }
  PQclear(r);
  return found ? 0 : -ENOENT;
}

int siox_wh_job_exists(PGconn *c, const char *job, char *err, size_t errlen) {
  const char *params[1] = {job};
  PGresult *r = siox_wh_query(c, "looking the job up",
                              "SELECT 1 FROM processes WHERE job = $1 OR (job = '' AND 'proc:' || proc_id = $1) LIMIT 1",
                              1, params, err, errlen);
  if (!r) return -EIO;
  int n = PQntuples(r);
  PQclear(r);
  return n > 0;
}

/* The job's own processes only (no aid to take the uid from): what the
 * caller may see of them (row-level security keeps other users' out). */
static const char window_sql[] =
    "SELECT min(a.start_ns), max(a.end_ns) FROM processes p, activities a WHERE p.job = $1"
    "   AND a.aid " SIOX_WH_AIDS_OF("p.proc_id");

int siox_wh_job_window(PGconn *c, const char *job, int64_t *from, int64_t *to, char *err, size_t errlen) {
  const char *params[1] = {job};
  PGresult *r = siox_wh_query(c, "reading the job's time window", window_sql, 1, params, err, errlen);
  if (!r) return -EIO;
  int found = PQntuples(r) == 1 && !PQgetisnull(r, 0, 0);
  if (found) {
    *from = siox_wh_i64(r, 0, 0);
    *to = siox_wh_i64(r, 0, 1);
  } else {
    snprintf(err, errlen, "no activity of job '%s' in the warehouse", job);
  }
  PQclear(r);
  return found ? 0 : -ENOENT;
}
