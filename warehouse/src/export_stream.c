/*
 * A job's rows for an export, streamed (export.h): the query is a cursor in
 * a read-only transaction, FETCHed BATCH rows at a time, so the client holds
 * at most one batch whatever the job's size; the server does the set work.
 * (libpq's single-row mode, used before, made one PGresult per row, with
 * its own copy of the column descriptions: most of the export's time.)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "wh_pg.h"

/* The export's activity set, shared by the three queries: the job's
 * processes' activities by aid range (aid = proc_id << 32 | seq, so the
 * primary key answers), then what their implicit links reached, followed
 * through every causal edge (UNION: each activity once, and cycles end). */
#define JOB_SET                                                                                           \
  "WITH RECURSIVE procs AS (SELECT proc_id FROM processes"                                                \
  "                          WHERE job = $1 OR (job = '' AND 'proc:' || proc_id = $1)),"                  \
  " own AS (SELECT a.aid FROM procs p JOIN activities a"                                                  \
  "          ON a.aid " SIOX_WH_AIDS_OF("p.proc_id") "),"   \
  " reached(aid) AS (SELECT l.child_aid FROM own o JOIN causal_links l ON l.parent_aid = o.aid"           \
  "   UNION SELECT e.child_aid FROM reached r JOIN causal_edges e ON e.parent_aid = r.aid),"              \
  " acts AS (SELECT aid FROM own UNION SELECT aid FROM reached)"

/* The set is computed once per job and connection into a temporary table
 * (the session's own, dropped when it ends), with statistics: the three
 * queries read it instead of each recomputing the recursion (an export
 * makes two or three passes), and the planner sees its true size (the
 * recursion's estimate is off by orders of magnitude, which chose merge
 * joins over the whole activities index). */
#define SET_TABLE "pg_temp.siox_export_set"
static const char set_exists_sql[] = "SELECT to_regclass('" SET_TABLE "') IS NOT NULL";
static const char set_create_sql[] = "CREATE TEMP TABLE siox_export_set (job text NOT NULL, aid bigint NOT NULL)";
static const char set_has_sql[] = "SELECT EXISTS (SELECT 1 FROM " SET_TABLE " WHERE job = $1)";
static const char set_clear_sql[] = "TRUNCATE " SET_TABLE;
static const char set_fill_sql[] = "INSERT INTO " SET_TABLE " (job, aid) " JOB_SET " SELECT $1, aid FROM acts";
static const char set_analyze_sql[] = "ANALYZE " SET_TABLE;

/* Each query is a cursor the stream FETCHes from in batches. */
#define CURSOR "DECLARE siox_export NO SCROLL CURSOR FOR "

static const char acts_sql[] = CURSOR
    " SELECT a.aid, coalesce(a.parent_aid, 0), a.proc_id, coalesce(p.pid, 0), coalesce(p.host, ''),"
    "        coalesce(p.exe, ''), coalesce(p.job, ''), a.node_id, n.hwid, n.swid, n.iid, ty.name,"
    "        a.start_ns, a.end_ns, a.err,"
    "        coalesce(a.attr_vals[array_position(a.attr_ids, (SELECT id FROM ontology WHERE name = 'io/bytes'))], -1)"
    "   FROM " SET_TABLE " s JOIN activities a ON a.aid = s.aid"
    "   JOIN nodes n ON n.node_id = a.node_id"
    "   JOIN activity_types ty ON ty.type_id = a.type_id"
    "   LEFT JOIN processes p ON p.proc_id = a.proc_id";

static const char links_sql[] = CURSOR
    " SELECT e.parent_aid, e.child_aid, e.kind = 'implicit', e.confidence, e.flags,"
    "        pa.proc_id, pa.node_id, pa.start_ns, pa.end_ns, ch.proc_id, ch.node_id, ch.start_ns"
    "   FROM " SET_TABLE " s JOIN causal_edges e ON e.child_aid = s.aid"
    "   JOIN activities ch ON ch.aid = e.child_aid"
    "   JOIN activities pa ON pa.aid = e.parent_aid"
    "  WHERE e.parent_aid IN (SELECT aid FROM " SET_TABLE ")";

/* u64 attributes are stored as two's complement bigints. */
static const char attrs_sql[] = CURSOR
    " SELECT a.aid, o.name, o.unit,"
    "        CASE WHEN o.type = 'u64' AND a.attr_vals[i] < 0"
    "             THEN (a.attr_vals[i]::numeric + 18446744073709551616)::text ELSE a.attr_vals[i]::text END"
    "   FROM " SET_TABLE " s JOIN activities a ON a.aid = s.aid, generate_subscripts(a.attr_ids, 1) i, ontology o"
    "  WHERE o.id = a.attr_ids[i]"
    " UNION ALL"
    " SELECT a.aid, o.name, o.unit, a.real_vals[i]::text"
    "   FROM " SET_TABLE " s JOIN activities a ON a.aid = s.aid, generate_subscripts(a.real_ids, 1) i, ontology o"
    "  WHERE o.id = a.real_ids[i]"
    " UNION ALL"
    " SELECT t.aid, o.name, o.unit, t.value"
    "   FROM " SET_TABLE " s JOIN activity_text_attrs t ON t.aid = s.aid JOIN ontology o ON o.id = t.attr_id";

/* Rows a FETCH brings: the client holds at most this many (about 1 MB). */
#define BATCH "4096"

struct siox_wh_stream {
  PGconn *c;
  enum siox_wh_export_what what;
  PGresult *batch; /* the current FETCH's rows, cleared by the next one */
  int next, rows;  /* the next row of batch, and how many it has */
  int done;        /* the cursor is exhausted */
  int in_tx;       /* export_open began a transaction */
  struct siox_wh_xact act;
  struct siox_wh_xlink link;
  struct siox_wh_xattr attr;
};

/* The recursive set's row estimate is far too high (each level is assumed
 * to multiply), which makes PostgreSQL JIT-compile the query: seconds of
 * compilation for a plan that runs in less. cursor_tuple_fraction = 1: the
 * whole set is read, so plan for all of it (a cursor's default, 0.1, prefers
 * plans that start fast and finish late). Both for this transaction only;
 * the stream's close ends it (COMMIT: the set stays for the next pass). */
static const char begin_sql[] = "BEGIN; SET LOCAL jit = off; SET LOCAL cursor_tuple_fraction = 1";

/* 1 when the one-value query's answer is true, 0 false, -EIO. */
static int yes(PGconn *c, const char *sql, const char *job, char *err, size_t errlen) {
  const char *params[1] = {job};
  PGresult *r = siox_wh_query(c, "preparing the export", sql, job ? 1 : 0, params, err, errlen);
  if (!r) return -EIO;
  int v = PQntuples(r) == 1 && PQgetvalue(r, 0, 0)[0] == 't';
  PQclear(r);
  return v;
}

static int run(PGconn *c, const char *sql, const char *job, char *err, size_t errlen) {
  const char *params[1] = {job};
  PGresult *r = siox_wh_query(c, "computing the export's set", sql, job ? 1 : 0, params, err, errlen);
  if (!r) return -EIO;
  PQclear(r);
  return 0;
}

/* The job's set in SET_TABLE, computed unless it already holds it. */
static int job_set(PGconn *c, const char *job, char *err, size_t errlen) {
  int rc = yes(c, set_exists_sql, NULL, err, errlen);
  if (rc == 0) rc = run(c, set_create_sql, NULL, err, errlen);
  else if (rc == 1) rc = yes(c, set_has_sql, job, err, errlen);
  if (rc) return rc < 0 ? rc : 0; /* 1: the set is there */
  if ((rc = run(c, set_clear_sql, NULL, err, errlen)) || (rc = run(c, set_fill_sql, job, err, errlen)))
    return rc;
  return run(c, set_analyze_sql, NULL, err, errlen);
}

int siox_wh_export_open(PGconn *c, enum siox_wh_export_what what, const char *job, struct siox_wh_stream **out,
                        char *err, size_t errlen) {
  static const char *const sql[] = {acts_sql, links_sql, attrs_sql};
  *out = NULL;
  struct siox_wh_stream *s = calloc(1, sizeof *s);
  if (!s) return -ENOMEM;
  s->c = c;
  s->what = what;
  PGresult *r = PQexec(c, begin_sql);
  if (PQresultStatus(r) != PGRES_COMMAND_OK) {
    siox_wh_failed(r, c, "starting the export", err, errlen);
    free(s);
    return -EIO;
  }
  PQclear(r);
  s->in_tx = 1;
  if (job_set(c, job, err, errlen) != 0 ||
      !(r = siox_wh_query(c, "starting the export", sql[what], 0, NULL, err, errlen))) {
    siox_wh_stream_close(s);
    return -EIO;
  }
  PQclear(r);
  *out = s;
  return 0;
}

int siox_wh_export_t0(PGconn *c, const char *job, int64_t *t0, char *err, size_t errlen) {
  const char *params[1] = {job};
  PGresult *r = siox_wh_query(c, "finding the job's start",
                              "SELECT min(a.start_ns) FROM processes p JOIN activities a"
                              "  ON a.aid " SIOX_WH_AIDS_OF("p.proc_id")
                              " WHERE p.job = $1 OR (p.job = '' AND 'proc:' || p.proc_id = $1)",
                              1, params, err, errlen);
  if (!r) return -EIO;
  int found = PQntuples(r) == 1 && !PQgetisnull(r, 0, 0);
  if (found) *t0 = siox_wh_i64(r, 0, 0);
  PQclear(r);
  return found ? 0 : -ENOENT;
}

static const char *str(const PGresult *r, int row, int col) { return PQgetvalue(r, row, col); }

static void decode(struct siox_wh_stream *s, int i) {
  const PGresult *r = s->batch;
  switch (s->what) {
  case SIOX_WH_EXPORT_ACTIVITIES:
    s->act = (struct siox_wh_xact){
        .aid = siox_wh_i64(r, i, 0), .parent_aid = siox_wh_i64(r, i, 1),
        .proc_id = (int32_t)siox_wh_i64(r, i, 2), .pid = (int32_t)siox_wh_i64(r, i, 3),
        .host = str(r, i, 4), .exe = str(r, i, 5), .job = str(r, i, 6), .node_id = (int32_t)siox_wh_i64(r, i, 7),
        .hwid = str(r, i, 8), .swid = str(r, i, 9), .iid = str(r, i, 10), .name = str(r, i, 11),
        .start_ns = siox_wh_i64(r, i, 12), .end_ns = siox_wh_i64(r, i, 13), .err = (int32_t)siox_wh_i64(r, i, 14),
        .bytes = siox_wh_i64(r, i, 15)};
    break;
  case SIOX_WH_EXPORT_LINKS:
    s->link = (struct siox_wh_xlink){
        .parent_aid = siox_wh_i64(r, i, 0), .child_aid = siox_wh_i64(r, i, 1), .is_implicit = str(r, i, 2)[0] == 't',
        .confidence = siox_wh_f64(r, i, 3), .flags = str(r, i, 4), .parent_proc = (int32_t)siox_wh_i64(r, i, 5),
        .parent_node = (int32_t)siox_wh_i64(r, i, 6), .parent_start_ns = siox_wh_i64(r, i, 7),
        .parent_end_ns = siox_wh_i64(r, i, 8), .child_proc = (int32_t)siox_wh_i64(r, i, 9),
        .child_node = (int32_t)siox_wh_i64(r, i, 10), .child_start_ns = siox_wh_i64(r, i, 11)};
    break;
  case SIOX_WH_EXPORT_ATTRIBUTES:
    s->attr = (struct siox_wh_xattr){
        .aid = siox_wh_i64(r, i, 0), .name = str(r, i, 1), .unit = str(r, i, 2), .value = str(r, i, 3)};
    break;
  }
}

/* The next FETCH: 0 (s->rows set, 0 at the end) or -EIO. */
static int fetch(struct siox_wh_stream *s, char *err, size_t errlen) {
  PQclear(s->batch);
  s->batch = siox_wh_query(s->c, "reading the export", "FETCH " BATCH " FROM siox_export", 0, NULL, err, errlen);
  s->next = 0;
  s->rows = s->batch ? PQntuples(s->batch) : 0;
  if (!s->batch) return s->done = 1, -EIO;
  if (s->rows == 0) s->done = 1;
  return 0;
}

int siox_wh_stream_next(struct siox_wh_stream *s, const struct siox_wh_xact **act, const struct siox_wh_xlink **link,
                        const struct siox_wh_xattr **attr, char *err, size_t errlen) {
  if (s->done) return 0;
  if (s->next == s->rows) {
    int rc = fetch(s, err, errlen);
    if (rc || s->done) return rc;
  }
  decode(s, s->next++);
  if (act) *act = &s->act;
  if (link) *link = &s->link;
  if (attr) *attr = &s->attr;
  return 1;
}

void siox_wh_stream_close(struct siox_wh_stream *s) {
  if (!s) return;
  PQclear(s->batch);
  /* closes the cursor and keeps the set (a failed transaction rolls back) */
  if (s->in_tx) PQclear(PQexec(s->c, "COMMIT"));
  free(s);
}
