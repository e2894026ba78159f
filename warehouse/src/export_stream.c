/*
 * A job's rows for an export, streamed (export.h). libpq's single-row mode
 * hands over one row per PGresult, so the client holds one row at a time
 * whatever the job's size; the server does the set work.
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
  "          ON a.aid BETWEEN (p.proc_id::bigint << 32) AND ((p.proc_id::bigint << 32) | 4294967295)),"   \
  " reached(aid) AS (SELECT l.child_aid FROM own o JOIN causal_links l ON l.parent_aid = o.aid"           \
  "   UNION SELECT e.child_aid FROM reached r JOIN causal_edges e ON e.parent_aid = r.aid),"              \
  " acts AS (SELECT aid FROM own UNION SELECT aid FROM reached)"

static const char acts_sql[] = JOB_SET
    " SELECT a.aid, coalesce(a.parent_aid, 0), a.proc_id, coalesce(p.pid, 0), coalesce(p.host, ''),"
    "        coalesce(p.exe, ''), coalesce(p.job, ''), a.node_id, n.hwid, n.swid, n.iid, ty.name,"
    "        a.start_ns, a.end_ns, a.err,"
    "        coalesce(a.attr_vals[array_position(a.attr_ids, (SELECT id FROM ontology WHERE name = 'io/bytes'))], -1)"
    "   FROM acts s JOIN activities a ON a.aid = s.aid"
    "   JOIN nodes n ON n.node_id = a.node_id"
    "   JOIN activity_types ty ON ty.type_id = a.type_id"
    "   LEFT JOIN processes p ON p.proc_id = a.proc_id";

static const char links_sql[] = JOB_SET
    " SELECT e.parent_aid, e.child_aid, e.kind = 'implicit', e.confidence, e.flags,"
    "        pa.proc_id, pa.node_id, pa.start_ns, pa.end_ns, ch.proc_id, ch.node_id, ch.start_ns"
    "   FROM acts s JOIN causal_edges e ON e.child_aid = s.aid"
    "   JOIN activities ch ON ch.aid = e.child_aid"
    "   JOIN activities pa ON pa.aid = e.parent_aid"
    "  WHERE e.parent_aid IN (SELECT aid FROM acts)";

/* u64 attributes are stored as two's complement bigints. */
static const char attrs_sql[] = JOB_SET
    " SELECT a.aid, o.name, o.unit,"
    "        CASE WHEN o.type = 'u64' AND a.attr_vals[i] < 0"
    "             THEN (a.attr_vals[i]::numeric + 18446744073709551616)::text ELSE a.attr_vals[i]::text END"
    "   FROM acts s JOIN activities a ON a.aid = s.aid, generate_subscripts(a.attr_ids, 1) i, ontology o"
    "  WHERE o.id = a.attr_ids[i]"
    " UNION ALL"
    " SELECT a.aid, o.name, o.unit, a.real_vals[i]::text"
    "   FROM acts s JOIN activities a ON a.aid = s.aid, generate_subscripts(a.real_ids, 1) i, ontology o"
    "  WHERE o.id = a.real_ids[i]"
    " UNION ALL"
    " SELECT t.aid, o.name, o.unit, t.value"
    "   FROM acts s JOIN activity_text_attrs t ON t.aid = s.aid JOIN ontology o ON o.id = t.attr_id";

struct siox_wh_stream {
  PGconn *c;
  enum siox_wh_export_what what;
  PGresult *row; /* the current row's result, cleared on the next call */
  int done;      /* the server sent the whole set */
  int in_tx;     /* export_open began a transaction */
  struct siox_wh_xact act;
  struct siox_wh_xlink link;
  struct siox_wh_xattr attr;
};

int siox_wh_export_open(PGconn *c, enum siox_wh_export_what what, const char *job, struct siox_wh_stream **out,
                        char *err, size_t errlen) {
  static const char *const sql[] = {acts_sql, links_sql, attrs_sql};
  *out = NULL;
  struct siox_wh_stream *s = calloc(1, sizeof *s);
  if (!s) return -ENOMEM;
  s->c = c;
  s->what = what;
  /* The recursive set's row estimate is far too high (each level is
   * assumed to multiply), which makes PostgreSQL JIT-compile the query:
   * seconds of compilation for a plan that runs in less. Off for this
   * transaction only; the stream's close ends it. */
  PGresult *r = PQexec(c, "BEGIN; SET LOCAL jit = off");
  if (PQresultStatus(r) != PGRES_COMMAND_OK) {
    siox_wh_failed(r, c, "starting the export", err, errlen);
    free(s);
    return -EIO;
  }
  PQclear(r);
  s->in_tx = 1;
  const char *params[1] = {job};
  if (!PQsendQueryParams(c, sql[what], 1, NULL, params, NULL, NULL, 0) || !PQsetSingleRowMode(c)) {
    siox_wh_failed(NULL, c, "starting the export", err, errlen);
    siox_wh_stream_close(s);
    return -EIO;
  }
  *out = s;
  return 0;
}

int siox_wh_export_t0(PGconn *c, const char *job, int64_t *t0, char *err, size_t errlen) {
  const char *params[1] = {job};
  PGresult *r = siox_wh_query(c, "finding the job's start",
                              "SELECT min(a.start_ns) FROM processes p JOIN activities a"
                              "  ON a.aid BETWEEN (p.proc_id::bigint << 32) AND ((p.proc_id::bigint << 32) | 4294967295)"
                              " WHERE p.job = $1 OR (p.job = '' AND 'proc:' || p.proc_id = $1)",
                              1, params, err, errlen);
  if (!r) return -EIO;
  int found = PQntuples(r) == 1 && !PQgetisnull(r, 0, 0);
  if (found) *t0 = siox_wh_i64(r, 0, 0);
  PQclear(r);
  return found ? 0 : -ENOENT;
}

static const char *str(const PGresult *r, int col) { return PQgetvalue(r, 0, col); }

static void decode(struct siox_wh_stream *s) {
  const PGresult *r = s->row;
  switch (s->what) {
  case SIOX_WH_EXPORT_ACTIVITIES:
    s->act = (struct siox_wh_xact){
        .aid = siox_wh_i64(r, 0, 0), .parent_aid = siox_wh_i64(r, 0, 1),
        .proc_id = (int32_t)siox_wh_i64(r, 0, 2), .pid = (int32_t)siox_wh_i64(r, 0, 3),
        .host = str(r, 4), .exe = str(r, 5), .job = str(r, 6), .node_id = (int32_t)siox_wh_i64(r, 0, 7),
        .hwid = str(r, 8), .swid = str(r, 9), .iid = str(r, 10), .name = str(r, 11),
        .start_ns = siox_wh_i64(r, 0, 12), .end_ns = siox_wh_i64(r, 0, 13), .err = (int32_t)siox_wh_i64(r, 0, 14),
        .bytes = siox_wh_i64(r, 0, 15)};
    break;
  case SIOX_WH_EXPORT_LINKS:
    s->link = (struct siox_wh_xlink){
        .parent_aid = siox_wh_i64(r, 0, 0), .child_aid = siox_wh_i64(r, 0, 1), .is_implicit = str(r, 2)[0] == 't',
        .confidence = siox_wh_f64(r, 0, 3), .flags = str(r, 4), .parent_proc = (int32_t)siox_wh_i64(r, 0, 5),
        .parent_node = (int32_t)siox_wh_i64(r, 0, 6), .parent_start_ns = siox_wh_i64(r, 0, 7),
        .parent_end_ns = siox_wh_i64(r, 0, 8), .child_proc = (int32_t)siox_wh_i64(r, 0, 9),
        .child_node = (int32_t)siox_wh_i64(r, 0, 10), .child_start_ns = siox_wh_i64(r, 0, 11)};
    break;
  case SIOX_WH_EXPORT_ATTRIBUTES:
    s->attr = (struct siox_wh_xattr){
        .aid = siox_wh_i64(r, 0, 0), .name = str(r, 1), .unit = str(r, 2), .value = str(r, 3)};
    break;
  }
}

int siox_wh_stream_next(struct siox_wh_stream *s, const struct siox_wh_xact **act, const struct siox_wh_xlink **link,
                        const struct siox_wh_xattr **attr, char *err, size_t errlen) {
  PQclear(s->row);
  s->row = PQgetResult(s->c);
  ExecStatusType st = PQresultStatus(s->row);
  if (s->row && st == PGRES_SINGLE_TUPLE) {
    decode(s);
    if (act) *act = &s->act;
    if (link) *link = &s->link;
    if (attr) *attr = &s->attr;
    return 1;
  }
  if (!s->row || st == PGRES_TUPLES_OK) return s->done = 1, 0; /* the end (an empty result closes the set) */
  PGresult *bad = s->row;
  s->row = NULL;
  s->done = 1;
  return siox_wh_failed(bad, s->c, "reading the export", err, errlen);
}

void siox_wh_stream_close(struct siox_wh_stream *s) {
  if (!s) return;
  PQclear(s->row);
  if (!s->done) { /* closed early (the reader failed): stop the server rather than read the rest */
    char why[256];
    PGcancel *k = PQgetCancel(s->c);
    if (k) PQcancel(k, why, sizeof why), PQfreeCancel(k);
  }
  for (PGresult *r; (r = PQgetResult(s->c));) PQclear(r); /* the connection is usable again */
  if (s->in_tx) PQclear(PQexec(s->c, "ROLLBACK")); /* read only: nothing to keep */
  free(s);
}
