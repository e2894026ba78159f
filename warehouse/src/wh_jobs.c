/*
 * `siox jobs`: triage over many jobs in the manner of IOMiner. Per job
 * (uid, job id): processes, bytes read and written and I/O time of the
 * calls the application made itself (no explicit parent), bandwidth by the
 * slowest process, the worst component (the one outside the job that spent
 * the most time serving it, through causal links) and the factors: small
 * requests, non-consecutive access, collective share, bricks used and
 * processes per brick. SQL groups by (process, layer, operation), with the
 * summary's patterns (wh_job.h), so the two agree. A job's sums are
 * stored (wh_jobs_store.c) and read back while its stamp holds, so a listing
 * groups only the activities of jobs that are new or changed since.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wh_job.h"
#include "wh_jobs.h"
#include "wh_pg.h"

#define SMALL_REQUEST "65536" /* bytes: a data call moving less is a small request */
#define ATTR(name) "a.attr_vals[array_position(a.attr_ids, (SELECT id FROM ontology WHERE name = '" name "'))]"

/* pass: the process is listed under --since T (first seen at or after T) */
#define PASSES "($1::bigint = 0 OR (extract(epoch FROM first_seen) * 1e9)::bigint >= $1::bigint)"
#define JOB_PROCS "SELECT proc_id, uid, job FROM processes WHERE job <> '' AND " PASSES

/* Per listed job (one process passes): its stamp over all its processes (as
 * wh_job_cache.c's, by their primary-key ranges, counted per process before
 * the processes are grouped, so no million rows are sorted), whether all of them pass
 * (only then are its sums the job's, to store or to read), the passing ones,
 * and its stored counts when the stamp holds. */
#define STAMPS                                                                                                 \
  "SELECT p.uid, p.job, sum(s.n)::bigint AS acts, coalesce(max(s.m), 0) AS max_aid, bool_and(p.pass) AS whole,"  \
  "       string_agg(p.proc_id::text, ',' ORDER BY p.proc_id) FILTER (WHERE p.pass) AS procs"                  \
  "  FROM (SELECT proc_id, uid, job, " PASSES " AS pass FROM processes WHERE job <> '') p,"                    \
  "       LATERAL (SELECT count(*) AS n, max(a.aid) AS m FROM activities a"                                    \
  "                 WHERE a.aid " SIOX_WH_AIDS_OF("p.proc_id") ") s"                                          \
  " GROUP BY p.uid, p.job HAVING bool_or(p.pass)"
static const char stamps_sql[] =
    "WITH st AS (" STAMPS ")"
    " SELECT st.uid, st.job, st.acts, st.max_aid, st.whole, st.procs, g.doc FROM st"
    "   LEFT JOIN job_aggregates g ON g.uid = st.uid AND g.job = st.job AND g.kind = 'jobs' AND g.bins = 0"
    "    AND g.acts = st.acts AND g.max_aid = st.max_aid AND st.whole"
    " ORDER BY st.uid, st.job";
/* a warehouse older than schema 026 has no job_aggregates: nothing stored */
static const char stamps_only_sql[] =
    "SELECT uid, job, acts, max_aid, whole, procs, NULL FROM (" STAMPS ") st ORDER BY uid, job";
static const char has_store_sql[] = "SELECT to_regclass('job_aggregates') IS NOT NULL";

/* consec: the data call starts where the previous one on the same
 * descriptor ended (NULL when it has no offset or no predecessor).
 * Shaped by the profile on a job of 1M activities (README.md, "Job views"):
 * the operation is told once per activity type (ty), not by four regular
 * expressions per activity, which the CTEs' inlining also repeated in every
 * expression that used op; each process's activities are read by its
 * primary-key range; OFFSET 0 keeps cl a subquery, so the window sorts its
 * few scalar columns instead of the attribute arrays they come from; the
 * groups are joined to their jobs after aggregating. */
static const char groups_sql[] =
    "WITH jp AS (SELECT proc_id, uid, job FROM processes WHERE proc_id = ANY ($1::integer[])),"
    " ty AS MATERIALIZED (SELECT type_id, CASE WHEN name ~ '" WHJ_RE_SEEK "' THEN 's'"
    "        WHEN name ~ '" WHJ_RE_NOT_DATA "' THEN 'm' WHEN name ~ '" WHJ_RE_READ "' THEN 'r'"
    "        WHEN name ~ '" WHJ_RE_WRITE "' THEN 'w' ELSE 'm' END AS op FROM activity_types),"
    " cl AS (SELECT a.proc_id, a.aid, a.parent_aid IS NULL AS top, n.swid, ty.op, a.start_ns, a.end_ns,"
    "        " ATTR("io/offset") " AS off, " ATTR("io/result") " AS result, " ATTR("io/bytes") " AS bytes,"
    "        coalesce(" ATTR("posix/fd") ", " ATTR("stdio/file") ") AS fkey, " ATTR("mpi/collective") " AS coll"
    "   FROM jp JOIN activities a ON a.aid " SIOX_WH_AIDS_OF("jp.proc_id")
    "   JOIN nodes n ON n.node_id = a.node_id JOIN ty ON ty.type_id = a.type_id"
    "  WHERE n.swid IN ('HDF5', 'MPI-IO', 'POSIX', 'stdio') OFFSET 0),"
    /* moved: POSIX says it in io/result, the other layers what was asked */
    " io AS (SELECT proc_id, aid, top, swid, op, start_ns, end_ns, off, fkey, coll,"
    "        CASE WHEN op IN ('r', 'w') THEN CASE WHEN swid = 'POSIX' AND result IS NOT NULL"
    "        THEN greatest(result, 0) ELSE bytes END END AS moved FROM cl),"
    " sc AS (SELECT io.*, CASE WHEN moved IS NOT NULL AND off IS NOT NULL THEN off = lag(off + moved)"
    "        OVER (PARTITION BY proc_id, swid, fkey, moved IS NOT NULL AND off IS NOT NULL ORDER BY start_ns, aid)"
    "        END AS consec FROM io),"
    " g AS (SELECT proc_id, swid, op, top, moved IS NOT NULL, count(*), sum(end_ns - start_ns),"
    "        coalesce(sum(moved), 0), count(*) FILTER (WHERE moved < " SMALL_REQUEST "), count(consec),"
    "        count(*) FILTER (WHERE consec), count(*) FILTER (WHERE coll = 1), min(start_ns), max(end_ns)"
    "   FROM sc GROUP BY proc_id, swid, op, top, moved IS NOT NULL)"
    " SELECT jp.uid, jp.job, g.* FROM g JOIN jp USING (proc_id) ORDER BY jp.uid, jp.job, g.proc_id";

/* The components outside the job that served it: up to three causal hops
 * (MPI-IO -> POSIX -> GlusterFS client -> brick). The first hop reads the
 * links of the job's processes by their parents' AID range (aid = proc_id <<
 * 32 | local number, the links' primary key), not by a second pass over the
 * job's activities: groups_sql is the one pass over them. */
static const char served_sql[] =
    "WITH RECURSIVE jp AS (" JOB_PROCS "),"
    " hop(uid, job, aid, depth) AS ("
    "   SELECT jp.uid, jp.job, l.child_aid, 1 FROM jp JOIN causal_links l"
    "     ON l.parent_aid " SIOX_WH_AIDS_OF("jp.proc_id")
    "   UNION"
    "   SELECT h.uid, h.job, c.aid, h.depth + 1 FROM hop h"
    "     JOIN causal_links l ON l.parent_aid = h.aid JOIN activities c ON c.aid = l.child_aid"
    "    WHERE h.depth < 3)"
    " SELECT h.uid, h.job, n.hwid, n.swid, n.iid, count(DISTINCT c.aid), sum(c.end_ns - c.start_ns)"
    "   FROM (SELECT DISTINCT uid, job, aid FROM hop) h JOIN activities c ON c.aid = h.aid"
    "   JOIN processes cp ON cp.proc_id = c.proc_id JOIN nodes n ON n.node_id = c.node_id"
    "  WHERE cp.job <> h.job"
    "  GROUP BY 1, 2, 3, 4, 5";

struct job {
  char *job;
  int64_t uid;
  struct whjs_counts c;
  int64_t proc_ns; /* the current process's top-level call time, while grouping */
  int32_t last_proc;
  int64_t bricks, worst_ns;
  char worst[256];
  char uid_s[24], acts[24], max_aid[24]; /* its stamp */
  int whole; /* all its processes are listed: its counts are the job's */
  int stored; /* its counts came from job_aggregates */
};

struct jobs {
  struct job *j;
  size_t n, cap;
};

static struct job *job_get(struct jobs *js, int64_t uid, const char *name) {
  for (size_t i = js->n; i-- > 0;)
    if (js->j[i].uid == uid && strcmp(js->j[i].job, name) == 0) return &js->j[i];
  if (js->n == js->cap) {
    size_t cap = js->cap ? 2 * js->cap : 16;
    struct job *n = realloc(js->j, cap * sizeof(*n));
    if (!n) return NULL;
    js->j = n, js->cap = cap;
  }
  struct job *j = &js->j[js->n];
  *j = (struct job){.job = strdup(name), .uid = uid, .c.first_ns = INT64_MAX, .last_proc = -1};
  if (!j->job) return NULL;
  js->n++;
  return j;
}

/* One (process, layer, name, top) group into its job. Groups come ordered
 * by process, so a process's I/O time is complete when the next begins. */
static void add_group(struct job *j, const PGresult *res, int r) {
  struct whjs_counts *c = &j->c;
  int32_t proc = (int32_t)siox_wh_i64(res, r, 2);
  if (proc != j->last_proc) c->procs++, j->last_proc = proc, j->proc_ns = 0;
  const char *swid = PQgetvalue(res, r, 3), op = PQgetvalue(res, r, 4)[0];
  int top = PQgetvalue(res, r, 5)[0] == 't';
  int64_t n = siox_wh_i64(res, r, 7), ns = siox_wh_i64(res, r, 8), bytes = siox_wh_i64(res, r, 9);
  /* as in the summary: a read or write without a byte count moved no data */
  int data = (op == 'r' || op == 'w') && PQgetvalue(res, r, 6)[0] == 't';
  c->activities += n;
  if (siox_wh_i64(res, r, 14) < c->first_ns) c->first_ns = siox_wh_i64(res, r, 14);
  if (siox_wh_i64(res, r, 15) > c->last_ns) c->last_ns = siox_wh_i64(res, r, 15);
  if (data) {
    c->follows += siox_wh_i64(res, r, 11), c->consec += siox_wh_i64(res, r, 12);
    if (strcmp(swid, "MPI-IO") == 0) c->mpiio_data += n, c->coll += siox_wh_i64(res, r, 13);
  }
  if (!top) return;
  c->calls += n;
  j->proc_ns += ns;
  if (j->proc_ns > c->io_ns) c->io_ns = j->proc_ns;
  if (!data) return;
  c->data += n, c->small += siox_wh_i64(res, r, 10);
  if (op == 'r') c->bytes_read += bytes;
  else c->bytes_written += bytes;
}

/* The listed jobs, with their stamps and, where they hold, their stored
 * counts; procs gets the processes whose activities must be grouped, as a
 * PostgreSQL array literal ("{}" when none). */
static int read_stamps(PGconn *c, const char *since, struct jobs *js, char **procs, char *err, size_t errlen) {
  PGresult *res = siox_wh_query(c, "looking for job_aggregates", has_store_sql, 0, NULL, err, errlen);
  if (!res) return -EIO;
  int has = PQgetvalue(res, 0, 0)[0] == 't';
  PQclear(res);
  const char *params[] = {since};
  res = siox_wh_query(c, "counting the jobs' activities", has ? stamps_sql : stamps_only_sql, 1, params, err,
                      errlen);
  if (!res) return -EIO;
  size_t len = 3;
  for (int r = 0; r < PQntuples(res); r++) len += (size_t)PQgetlength(res, r, 5) + 1;
  char *list = *procs = malloc(len);
  int rc = list ? 0 : -ENOMEM;
  size_t off = 0;
  if (list) list[off++] = '{';
  for (int r = 0; !rc && r < PQntuples(res); r++) {
    struct job *j = job_get(js, siox_wh_i64(res, r, 0), PQgetvalue(res, r, 1));
    if (!j) {
      rc = -ENOMEM;
      break;
    }
    snprintf(j->uid_s, sizeof(j->uid_s), "%s", PQgetvalue(res, r, 0));
    snprintf(j->acts, sizeof(j->acts), "%s", PQgetvalue(res, r, 2));
    snprintf(j->max_aid, sizeof(j->max_aid), "%s", PQgetvalue(res, r, 3));
    j->whole = PQgetvalue(res, r, 4)[0] == 't';
    if (!PQgetisnull(res, r, 6)) j->stored = whjs_counts_parse(PQgetvalue(res, r, 6), &j->c) == 0;
    if (j->stored) continue;
    j->c = (struct whjs_counts){.first_ns = INT64_MAX}; /* a document that did not parse may have filled some */
    off += (size_t)sprintf(list + off, "%s%s", off > 1 ? "," : "", PQgetvalue(res, r, 5));
  }
  if (list) list[off++] = '}', list[off] = '\0';
  PQclear(res);
  return rc;
}

static int read_groups(PGconn *c, const char *procs, struct jobs *js, char *err, size_t errlen) {
  if (strcmp(procs, "{}") == 0) return 0; /* every job's counts were stored */
  const char *params[] = {procs};
  PGresult *res = siox_wh_query(c, "reading the jobs' I/O", groups_sql, 1, params, err, errlen);
  if (!res) return -EIO;
  int rc = 0;
  for (int r = 0; !rc && r < PQntuples(res); r++) {
    struct job *j = job_get(js, siox_wh_i64(res, r, 0), PQgetvalue(res, r, 1));
    if (!j) rc = -ENOMEM;
    else add_group(j, res, r);
  }
  PQclear(res);
  return rc;
}

static int read_served(PGconn *c, const char *since, struct jobs *js, char *err, size_t errlen) {
  const char *params[] = {since};
  PGresult *res = siox_wh_query(c, "reading the components that served the jobs", served_sql, 1, params, err, errlen);
  if (!res) return -EIO;
  for (int r = 0; r < PQntuples(res); r++) {
    struct job *j = NULL;
    for (size_t i = 0; i < js->n && !j; i++)
      if (js->j[i].uid == siox_wh_i64(res, r, 0) && strcmp(js->j[i].job, PQgetvalue(res, r, 1)) == 0) j = &js->j[i];
    if (!j) continue; /* a job with links but no I/O layer: not listed */
    const char *hwid = PQgetvalue(res, r, 2), *swid = PQgetvalue(res, r, 3), *iid = PQgetvalue(res, r, 4);
    if (strcmp(swid, "GlusterFS-brick") == 0) j->bricks++;
    if (siox_wh_i64(res, r, 6) > j->worst_ns) {
      j->worst_ns = siox_wh_i64(res, r, 6);
      snprintf(j->worst, sizeof(j->worst), "%s %s%s%s", hwid, swid, *iid ? "#" : "", iid);
    }
  }
  PQclear(res);
  return 0;
}

static double bandwidth(const struct job *j) {
  const struct whjs_counts *c = &j->c;
  return c->io_ns > 0 ? (double)(c->bytes_read + c->bytes_written) / ((double)c->io_ns / 1e9) : 0;
}

static int by_key(const void *x, const void *y, void *key) {
  const struct job *a = x, *b = y;
  const char *sort_key = key;
  double va, vb;
  if (!sort_key) va = (double)a->c.first_ns, vb = (double)b->c.first_ns;
  else if (strcmp(sort_key, "io_time") == 0) va = (double)a->c.io_ns, vb = (double)b->c.io_ns;
  else if (strcmp(sort_key, "bytes") == 0)
    va = (double)(a->c.bytes_read + a->c.bytes_written), vb = (double)(b->c.bytes_read + b->c.bytes_written);
  else va = bandwidth(a), vb = bandwidth(b);
  if (va != vb) return va > vb ? -1 : 1;
  return strcmp(a->job, b->job);
}

static void put_i64(json_object *o, const char *k, int64_t v) { json_object_object_add(o, k, json_object_new_int64(v)); }
static void put_dbl(json_object *o, const char *k, double v) { json_object_object_add(o, k, json_object_new_double(v)); }

static json_object *job_json(const struct job *j) {
  const struct whjs_counts *c = &j->c;
  json_object *o = json_object_new_object(), *f = json_object_new_object();
  json_object_object_add(o, "job", json_object_new_string(j->job));
  put_i64(o, "uid", j->uid);
  put_i64(o, "processes", c->procs);
  put_i64(o, "activities", c->activities);
  put_i64(o, "calls", c->calls);
  put_i64(o, "first_ns", c->first_ns);
  put_i64(o, "last_ns", c->last_ns);
  put_i64(o, "bytes_read", c->bytes_read);
  put_i64(o, "bytes_written", c->bytes_written);
  put_i64(o, "io_time_ns", c->io_ns);
  put_dbl(o, "bandwidth_bps", bandwidth(j));
  json_object_object_add(o, "worst_component", j->worst[0] ? json_object_new_string(j->worst) : NULL);
  put_dbl(f, "small_requests_share", c->data ? (double)c->small / (double)c->data : 0);
  put_dbl(f, "non_consecutive_share", c->follows ? 1.0 - (double)c->consec / (double)c->follows : 0);
  put_dbl(f, "collective_share", c->mpiio_data ? (double)c->coll / (double)c->mpiio_data : 0);
  json_object_object_add(f, "collective", json_object_new_boolean(c->coll > 0));
  put_i64(f, "bricks", j->bricks);
  put_dbl(f, "processes_per_brick", j->bricks ? (double)c->procs / (double)j->bricks : 0);
  json_object_object_add(o, "factors", f);
  return o;
}

/* Stamps, stored counts, grouping and served components in one snapshot, so
 * that a stamp counts exactly the activities its job's counts come from. */
static int in_snapshot(PGconn *c, const char *since, struct jobs *js, char *err, size_t errlen) {
  char *procs = NULL;
  int rc = read_stamps(c, since, js, &procs, err, errlen);
  if (!rc) rc = read_groups(c, procs, js, err, errlen);
  if (!rc) rc = read_served(c, since, js, err, errlen);
  free(procs);
  return rc;
}

static int read_jobs(PGconn *c, const char *since, struct jobs *js, char *err, size_t errlen) {
  int rc = siox_wh_exec(c, "starting the jobs listing", "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", err,
                        errlen);
  if (rc) return rc;
  rc = in_snapshot(c, since, js, err, errlen);
  char e2[256];
  int end = siox_wh_exec(c, "ending the jobs listing", rc ? "ROLLBACK" : "COMMIT", e2, sizeof(e2));
  if (!rc && end) rc = end, snprintf(err, errlen, "%s", e2);
  for (size_t i = 0; !rc && i < js->n; i++)
    if (js->j[i].whole && !js->j[i].stored) whjs_store(c, js->j[i].uid_s, js->j[i].job, js->j[i].acts,
                                                        js->j[i].max_aid, &js->j[i].c);
  return rc;
}

int siox_wh_jobs(struct siox_wh *wh, const struct siox_wh_jobs_query *q, struct json_object **out, char *err,
                 size_t errlen) {
  if (q->sort && strcmp(q->sort, "io_time") && strcmp(q->sort, "bytes") && strcmp(q->sort, "bandwidth")) {
    snprintf(err, errlen, "unknown sort key '%s' (io_time, bytes or bandwidth)", q->sort);
    return -EINVAL;
  }
  char since[24];
  snprintf(since, sizeof(since), "%lld", (long long)(q->since_ns > 0 ? q->since_ns : 0));
  struct jobs js = {0};
  PGconn *c = siox_wh_pg(wh);
  int rc = read_jobs(c, since, &js, err, errlen);
  if (!rc) {
    qsort_r(js.j, js.n, sizeof(*js.j), by_key, (void *)q->sort);
    json_object *doc = json_object_new_object(), *arr = json_object_new_array();
    /* a job with no activity of an I/O layer is not listed */
    for (size_t i = 0; i < js.n; i++)
      if (js.j[i].c.activities > 0) json_object_array_add(arr, job_json(&js.j[i]));
    json_object_object_add(doc, "jobs", arr);
    *out = doc;
  } else if (rc == -ENOMEM) {
    snprintf(err, errlen, "out of memory listing jobs");
  }
  for (size_t i = 0; i < js.n; i++) free(js.j[i].job);
  free(js.j);
  return rc;
}
