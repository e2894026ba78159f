/*
 * A job's I/O-layer activities as rows (wh/job_rows.h): the queries
 * libsiox-workload's extractor and libsiox-kb's findings analysis used to
 * run themselves. Each query has a column map; siox_wh_job_row reads row i
 * through it, so the rows live once, in the PGresult.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job_rows.h"
#include "wh_pg.h"

#define ATTR(name) "a.attr_vals[array_position(a.attr_ids, (SELECT id FROM ontology WHERE name = '" name "'))]"
#define PATH_ID "(SELECT id FROM ontology WHERE name = 'posix/path')"

/* The columns a row may have; a query's map says where each is (-1: not
 * selected). */
enum col {
  C_AID, C_PARENT, C_PROC, C_ERR, C_SWID, C_NAME, C_START, C_END, C_OFFSET, C_BYTES, C_RESULT, C_FD, C_COLL,
  C_RANK, C_STDIO, C_PATH, C_SENT_PATH, C_CALL_PATH, C_HINTS, C_IO_COMPONENT, C_VIEW_BLOCK, C_VIEW_EXTENT, C_N
};

struct siox_wh_job_rows {
  PGresult *res;
  const int *map; /* C_N entries; NULL for process rows */
};

/* siox_wl_extract's rows (workload/README.md, "Extraction"). */
static const char trace_sql[] =
    "SELECT a.aid, coalesce(a.parent_aid, 0), a.proc_id, n.swid, t.name, a.start_ns, a.end_ns, a.err,"
    "       " ATTR("io/offset") ", " ATTR("io/bytes") ", " ATTR("io/result") ", " ATTR("posix/fd") ","
    "       " ATTR("mpi/collective") ", " ATTR("mpi/rank") ", " ATTR("stdio/file") ","
    "       (SELECT x.value FROM activity_text_attrs x WHERE x.aid = a.aid AND x.attr_id = " PATH_ID " LIMIT 1),"
    "       (SELECT d.value FROM remote_calls r JOIN descriptors d ON d.desc_id = r.desc_id"
    "         WHERE r.aid = a.aid AND r.kind = 'S' AND d.type = " PATH_ID " LIMIT 1),"
    "       " ATTR("mpi/view_block") ", " ATTR("mpi/view_extent")
    "  FROM activities a"
    "  JOIN processes p ON p.proc_id = a.proc_id"
    "  JOIN nodes n ON n.node_id = a.node_id"
    "  JOIN activity_types t ON t.type_id = a.type_id"
    " WHERE p.job = $1 AND n.swid IN ('POSIX', 'stdio', 'MPI-IO', 'MPI')"
    " ORDER BY a.proc_id, a.start_ns, a.aid";
static const int trace_map[C_N] = {
    [C_AID] = 0,     [C_PARENT] = 1,  [C_PROC] = 2,   [C_SWID] = 3,      [C_NAME] = 4,        [C_START] = 5,
    [C_END] = 6,     [C_ERR] = 7,     [C_OFFSET] = 8, [C_BYTES] = 9,     [C_RESULT] = 10,     [C_FD] = 11,
    [C_COLL] = 12,   [C_RANK] = 13,   [C_STDIO] = 14, [C_PATH] = 15,     [C_SENT_PATH] = 16,  [C_CALL_PATH] = -1,
    [C_HINTS] = -1,  [C_IO_COMPONENT] = -1, [C_VIEW_BLOCK] = 17, [C_VIEW_EXTENT] = 18};

static const char owners_sql[] = "SELECT string_agg(DISTINCT uid::text, ', ') FROM processes WHERE job = $1";

/* The findings analysis's processes (knowledge-base/README.md, "What is
 * read"): when some are MPI ranks (they made MPI-IO calls), only those:
 * `siox run -- mpirun ...` traces the launcher and shells too, which are
 * not the application (its exe keys the hints) and whose little I/O would
 * make every rank look like a straggler. */
#define JOB_PROCS_CTE                                                                                  \
  "jp AS (SELECT p.proc_id, p.host, p.exe, p.args, EXISTS (SELECT 1 FROM activities a"                 \
  "          JOIN nodes n ON n.node_id = a.node_id"                                                    \
  "         WHERE a.aid " SIOX_WH_AIDS_OF("p.proc_id") \
  "           AND n.swid = 'MPI-IO') AS mpi"                                                           \
  "    FROM processes p WHERE p.job = $1 OR (p.job = '' AND 'proc:' || p.proc_id = $1)),"              \
  " procs AS (SELECT * FROM jp WHERE mpi OR NOT EXISTS (SELECT 1 FROM jp q WHERE q.mpi))"

static const char procs_sql[] = "WITH " JOB_PROCS_CTE " SELECT proc_id, host, exe, args FROM procs ORDER BY proc_id";

static const char analysis_sql[] =
    "WITH ids AS (SELECT (SELECT id FROM ontology WHERE name = 'io/bytes') b,"
    "   (SELECT id FROM ontology WHERE name = 'io/offset') o,"
    "   (SELECT id FROM ontology WHERE name = 'mpi/collective') co,"
    "   (SELECT id FROM ontology WHERE name = 'posix/path') pa,"
    "   (SELECT id FROM ontology WHERE name = 'mpi/hints') hi,"
    "   (SELECT id FROM ontology WHERE name = 'mpi/io_component') ic),"
    " " JOB_PROCS_CTE
    " SELECT a.aid, a.proc_id, coalesce(a.parent_aid, 0), n.swid, t.name, a.start_ns, a.end_ns,"
    "   a.attr_vals[array_position(a.attr_ids, ids.b)],"
    "   a.attr_vals[array_position(a.attr_ids, ids.o)],"
    "   a.attr_vals[array_position(a.attr_ids, ids.co)],"
    "   (SELECT d.value FROM remote_calls rc JOIN descriptors d ON d.desc_id = rc.desc_id"
    "     WHERE rc.aid = a.aid AND d.type = ids.pa LIMIT 1),"
    "   (SELECT x.value FROM activity_text_attrs x WHERE x.aid = a.aid AND x.attr_id = ids.pa LIMIT 1),"
    "   (SELECT x.value FROM activity_text_attrs x WHERE x.aid = a.aid AND x.attr_id = ids.hi LIMIT 1),"
    "   (SELECT x.value FROM activity_text_attrs x WHERE x.aid = a.aid AND x.attr_id = ids.ic LIMIT 1)"
    "  FROM ids, procs p JOIN activities a"
    "    ON a.aid " SIOX_WH_AIDS_OF("p.proc_id")
    "  JOIN nodes n ON n.node_id = a.node_id JOIN activity_types t ON t.type_id = a.type_id"
    " WHERE n.swid IN ('MPI', 'MPI-IO', 'POSIX', 'stdio') ORDER BY a.aid";
static const int analysis_map[C_N] = {
    [C_AID] = 0,    [C_PROC] = 1,      [C_PARENT] = 2, [C_SWID] = 3,    [C_NAME] = 4,       [C_START] = 5,
    [C_END] = 6,    [C_BYTES] = 7,     [C_OFFSET] = 8, [C_COLL] = 9,    [C_CALL_PATH] = 10, [C_PATH] = 11,
    [C_HINTS] = 12, [C_IO_COMPONENT] = 13, [C_ERR] = -1, [C_RESULT] = -1, [C_FD] = -1,      [C_RANK] = -1,
    [C_STDIO] = -1, [C_SENT_PATH] = -1, [C_VIEW_BLOCK] = -1, [C_VIEW_EXTENT] = -1};

static long run(PGconn *c, const char *what, const char *sql, const char *job, const int *map,
                struct siox_wh_job_rows **out, char *err, size_t errlen) {
  *out = NULL;
  struct siox_wh_job_rows *r = malloc(sizeof(*r));
  if (!r) return snprintf(err, errlen, "%s: out of memory", what), -ENOMEM;
  const char *params[] = {job};
  if (!(r->res = siox_wh_query(c, what, sql, 1, params, err, errlen))) return free(r), -EIO;
  r->map = map;
  *out = r;
  return PQntuples(r->res);
}

/* A job is keyed by (uid, job id): an id two users' processes carry names
 * two jobs, which one trace cannot mix. */
static int one_owner(PGconn *c, const char *job, char *err, size_t errlen) {
  char what[160];
  snprintf(what, sizeof(what), "reading job %s's processes from the warehouse", job);
  const char *params[] = {job};
  PGresult *res = siox_wh_query(c, what, owners_sql, 1, params, err, errlen);
  if (!res) return -EIO;
  int rc = 0;
  if (PQntuples(res) == 1 && !PQgetisnull(res, 0, 0) && strchr(PQgetvalue(res, 0, 0), ',')) {
    snprintf(err, errlen, "job '%s' names processes of several users (uids %s): two jobs share the id", job,
             PQgetvalue(res, 0, 0));
    rc = -EINVAL;
  }
  PQclear(res);
  return rc;
}

long siox_wh_job_trace_rows(PGconn *c, const char *job, struct siox_wh_job_rows **out, char *err, size_t errlen) {
  *out = NULL;
  int rc = one_owner(c, job, err, errlen);
  if (rc) return rc;
  char what[160];
  snprintf(what, sizeof(what), "reading job %s's activities from the warehouse", job);
  return run(c, what, trace_sql, job, trace_map, out, err, errlen);
}

long siox_wh_job_analysis_procs(PGconn *c, const char *job, struct siox_wh_job_rows **out, char *err,
                                size_t errlen) {
  /* no map: process rows are read by siox_wh_job_proc, not siox_wh_job_row */
  return run(c, "analysis: processes", procs_sql, job, NULL, out, err, errlen);
}

long siox_wh_job_analysis_rows(PGconn *c, const char *job, struct siox_wh_job_rows **out, char *err,
                               size_t errlen) {
  return run(c, "analysis: activities", analysis_sql, job, analysis_map, out, err, errlen);
}

static int64_t num(const struct siox_wh_job_rows *r, int row, enum col k) {
  int c = r->map ? r->map[k] : -1;
  return c < 0 || PQgetisnull(r->res, row, c) ? SIOX_WH_NONE : strtoll(PQgetvalue(r->res, row, c), NULL, 10);
}

static const char *str(const struct siox_wh_job_rows *r, int row, enum col k) {
  int c = r->map ? r->map[k] : -1;
  return c < 0 || PQgetisnull(r->res, row, c) ? NULL : PQgetvalue(r->res, row, c);
}

void siox_wh_job_row(const struct siox_wh_job_rows *r, size_t i, struct siox_wh_job_row *a) {
  int n = (int)i;
  *a = (struct siox_wh_job_row){
      .aid = num(r, n, C_AID),       .parent = num(r, n, C_PARENT),  .proc = (int32_t)num(r, n, C_PROC),
      .err = (int32_t)num(r, n, C_ERR), .swid = str(r, n, C_SWID),   .name = str(r, n, C_NAME),
      .start_ns = num(r, n, C_START), .end_ns = num(r, n, C_END),    .offset = num(r, n, C_OFFSET),
      .bytes = num(r, n, C_BYTES),   .result = num(r, n, C_RESULT),  .fd = num(r, n, C_FD),
      .coll = num(r, n, C_COLL),     .rank = num(r, n, C_RANK),      .stdio = num(r, n, C_STDIO),
      .path = str(r, n, C_PATH),     .sent_path = str(r, n, C_SENT_PATH), .call_path = str(r, n, C_CALL_PATH),
      .hints = str(r, n, C_HINTS),   .io_component = str(r, n, C_IO_COMPONENT),
      .view_block = num(r, n, C_VIEW_BLOCK), .view_extent = num(r, n, C_VIEW_EXTENT)};
}

void siox_wh_job_proc(const struct siox_wh_job_rows *r, size_t i, struct siox_wh_job_proc *p) {
  int n = (int)i;
  *p = (struct siox_wh_job_proc){.proc_id = atoi(PQgetvalue(r->res, n, 0)), .host = PQgetvalue(r->res, n, 1),
                                 .exe = PQgetvalue(r->res, n, 2), .args = PQgetvalue(r->res, n, 3)};
}

void siox_wh_job_rows_free(struct siox_wh_job_rows *r) {
  if (!r) return;
  PQclear(r->res);
  free(r);
}
