/*
 * What the storage model of capacity planning is calibrated from (issue 13
 * section 3; capacity/README.md): the service samples of the GlusterFS
 * bricks and clients, the recorded file -> brick placement and the
 * bandwidth nodes declare.
 *
 * A brick activity is its own service time (nothing is below it in the
 * trace). A client activity's exclusive time is its time minus that of the
 * brick activity it is linked to (the network and the brick's part): the
 * client's own work, which is what queues in its FUSE channel. Client
 * activities with no linked brick activity are left out: their exclusive
 * time is unknown. A client sample names the brick of its linked activity
 * (via): the model leaves out the reads that queued behind another request
 * to the same brick (capacity/README.md "Reads queued behind another").
 */
#include "siox/siox_wh.h"
#include "wh_pg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BYTES "a.attr_vals[array_position(a.attr_ids, (SELECT id FROM ontology WHERE name = 'io/bytes'))]"

static const char samples_sql[] =
    "SELECT n.hwid, n.swid = 'GlusterFS-brick', t.name, coalesce(" BYTES ", 0), a.start_ns,"
    "       a.end_ns - a.start_ns,"
    "       CASE WHEN n.swid = 'GlusterFS-client' THEN b.ns ELSE 0 END,"
    "       coalesce((SELECT min(coalesce(o.merged_into, o.object_id)) FROM remote_calls rc"
    "                   JOIN objects o ON o.object_id = rc.object_id WHERE rc.aid = a.aid), 0),"
    "       b.hwid"
    "  FROM activities a JOIN nodes n ON n.node_id = a.node_id JOIN activity_types t ON t.type_id = a.type_id"
    /* A client activity's linked brick activities, read once for both
     * columns: the brick's time and which brick (NULLs for a brick's row). */
    "  CROSS JOIN LATERAL (SELECT max(c.end_ns - c.start_ns) AS ns, min(cn.hwid) AS hwid"
    "     FROM causal_links l JOIN activities c ON c.aid = l.child_aid JOIN nodes cn ON cn.node_id = c.node_id"
    "    WHERE n.swid = 'GlusterFS-client' AND l.parent_aid = a.aid AND cn.swid = 'GlusterFS-brick') b"
    " WHERE n.swid IN ('GlusterFS-brick', 'GlusterFS-client') AND a.err = 0"
    "   AND a.start_ns >= $1::bigint AND a.start_ns < $2::bigint"
    " ORDER BY a.start_ns";

/* Per path, the brick that received the most remote calls on its object
 * (a path's own brick; lookups of a name also reach others rarely). */
static const char placement_sql[] =
    "SELECT DISTINCT ON (path) path, hwid FROM ("
    "  SELECT d.value AS path, n.hwid, count(*) AS calls"
    "    FROM descriptors d JOIN objects o ON o.object_id = d.object_id"
    "    JOIN remote_calls rc ON rc.object_id = coalesce(o.merged_into, d.object_id) AND rc.kind = 'R'"
    "    JOIN activities a ON a.aid = rc.aid JOIN nodes n ON n.node_id = a.node_id"
    "   WHERE n.swid = 'GlusterFS-brick' AND d.type = (SELECT id FROM ontology WHERE name = 'posix/path')"
    "     AND a.start_ns >= $1::bigint AND a.start_ns < $2::bigint"
    "   GROUP BY 1, 2) x"
    " ORDER BY path, calls DESC, hwid";

/* The volume's POSIX data calls: those a GlusterFS client request of the
 * same node overlapped (the model keys a client by that hwid). */
static const char posix_sql[] =
    "SELECT n.hwid, t.name = 'pwrite', " BYTES ", a.start_ns, a.end_ns"
    "  FROM activities a JOIN nodes n ON n.node_id = a.node_id JOIN activity_types t ON t.type_id = a.type_id"
    " WHERE n.swid = 'POSIX' AND t.name IN ('pread', 'pwrite') AND a.err = 0 AND " BYTES " > 0"
    "   AND a.start_ns >= $1::bigint AND a.start_ns < $2::bigint"
    "   AND EXISTS (SELECT 1 FROM activities c JOIN nodes cn ON cn.node_id = c.node_id"
    "                JOIN activity_types ct ON ct.type_id = c.type_id"
    "               WHERE cn.swid = 'GlusterFS-client' AND cn.hwid = n.hwid AND ct.name IN ('readv', 'writev')"
    "                 AND c.start_ns >= a.start_ns AND c.start_ns < a.end_ns)"
    " ORDER BY a.start_ns";

/* The collective opens and closes of MPI-IO. */
static const char mpi_sql[] =
    "SELECT t.name = 'MPI_File_close', a.end_ns - a.start_ns"
    "  FROM activities a JOIN activity_types t ON t.type_id = a.type_id"
    " WHERE t.name IN ('MPI_File_open', 'MPI_File_close') AND a.err = 0"
    "   AND a.start_ns >= $1::bigint AND a.start_ns < $2::bigint";

static const char hosts_sql[] =
    "SELECT DISTINCT n.hwid, p.host FROM nodes n JOIN process_nodes pn ON pn.node_id = n.node_id"
    "  JOIN processes p ON p.proc_id = pn.proc_id"
    " WHERE n.swid IN ('GlusterFS-brick', 'GlusterFS-client') ORDER BY 1, 2";

static const char declared_sql[] =
    "SELECT n.hwid, na.value_num FROM node_attributes na JOIN nodes n ON n.node_id = na.node_id"
    " WHERE n.swid = 'GlusterFS-brick' AND na.value_num > 0"
    "   AND na.attr_id = (SELECT id FROM ontology WHERE name = 'node/bandwidth')";

static PGresult *query(PGconn *c, const char *sql, int64_t since, int64_t until, char *err, size_t errlen) {
  char a[24], b[24];
  snprintf(a, sizeof a, "%lld", (long long)since);
  snprintf(b, sizeof b, "%lld", (long long)until);
  const char *p[2] = {a, b};
  return siox_wh_query(c, "reading the capacity model's measurements", sql, strchr(sql, '$') ? 2 : 0, p, err, errlen);
}

int siox_wh_capacity_samples(PGconn *c, int64_t since_ns, int64_t until_ns, siox_wh_cap_sample_cb cb, void *ctx,
                             char *err, size_t errlen) {
  PGresult *r = query(c, samples_sql, since_ns, until_ns, err, errlen);
  if (!r) return -EIO;
  int rc = 0;
  for (int i = 0; !rc && i < PQntuples(r); i++) {
    struct siox_wh_cap_sample s = {
        .component = PQgetvalue(r, i, 0),
        .brick = PQgetvalue(r, i, 1)[0] == 't',
        .fop = PQgetvalue(r, i, 2),
        .bytes = strtoull(PQgetvalue(r, i, 3), NULL, 10),
        .start_ns = strtoll(PQgetvalue(r, i, 4), NULL, 10),
        .ns = strtoll(PQgetvalue(r, i, 5), NULL, 10),
        .object = strtoll(PQgetvalue(r, i, 7), NULL, 10),
        .via = PQgetisnull(r, i, 8) ? NULL : PQgetvalue(r, i, 8),
    };
    s.span_ns = s.ns;
    if (!s.brick) {
      if (PQgetisnull(r, i, 6)) continue; /* not linked to its brick: exclusive time unknown */
      s.ns -= strtoll(PQgetvalue(r, i, 6), NULL, 10);
      if (s.ns < 0) s.ns = 0; /* clocks of two processes: the brick's part can come out longer */
    }
    rc = cb(ctx, &s);
  }
  PQclear(r);
  return rc;
}

int siox_wh_capacity_placement(PGconn *c, int64_t since_ns, int64_t until_ns, siox_wh_cap_place_cb cb, void *ctx,
                               char *err, size_t errlen) {
  PGresult *r = query(c, placement_sql, since_ns, until_ns, err, errlen);
  if (!r) return -EIO;
  int rc = 0;
  for (int i = 0; !rc && i < PQntuples(r); i++) rc = cb(ctx, PQgetvalue(r, i, 0), PQgetvalue(r, i, 1));
  PQclear(r);
  return rc;
}

int siox_wh_capacity_posix(PGconn *c, int64_t since_ns, int64_t until_ns, siox_wh_cap_posix_cb cb, void *ctx,
                           char *err, size_t errlen) {
  PGresult *r = query(c, posix_sql, since_ns, until_ns, err, errlen);
  if (!r) return -EIO;
  int rc = 0;
  for (int i = 0; !rc && i < PQntuples(r); i++) {
    struct siox_wh_cap_posix p = {
        .host = PQgetvalue(r, i, 0),
        .write = PQgetvalue(r, i, 1)[0] == 't',
        .bytes = strtoull(PQgetvalue(r, i, 2), NULL, 10),
        .start_ns = strtoll(PQgetvalue(r, i, 3), NULL, 10),
        .end_ns = strtoll(PQgetvalue(r, i, 4), NULL, 10),
    };
    rc = cb(ctx, &p);
  }
  PQclear(r);
  return rc;
}

int siox_wh_capacity_mpi_opens(PGconn *c, int64_t since_ns, int64_t until_ns, siox_wh_cap_mpi_cb cb, void *ctx,
                               char *err, size_t errlen) {
  PGresult *r = query(c, mpi_sql, since_ns, until_ns, err, errlen);
  if (!r) return -EIO;
  int rc = 0;
  for (int i = 0; !rc && i < PQntuples(r); i++)
    rc = cb(ctx, PQgetvalue(r, i, 0)[0] == 't', strtoll(PQgetvalue(r, i, 1), NULL, 10));
  PQclear(r);
  return rc;
}

int siox_wh_capacity_declared(PGconn *c, siox_wh_cap_declared_cb cb, void *ctx, char *err, size_t errlen) {
  PGresult *r = query(c, declared_sql, 0, 0, err, errlen);
  if (!r) return -EIO;
  int rc = 0;
  for (int i = 0; !rc && i < PQntuples(r); i++) rc = cb(ctx, PQgetvalue(r, i, 0), strtod(PQgetvalue(r, i, 1), NULL));
  PQclear(r);
  return rc;
}

int siox_wh_capacity_hosts(PGconn *c, siox_wh_cap_host_cb cb, void *ctx, char *err, size_t errlen) {
  PGresult *r = query(c, hosts_sql, 0, 0, err, errlen);
  if (!r) return -EIO;
  int rc = 0;
  for (int i = 0; !rc && i < PQntuples(r); i++) rc = cb(ctx, PQgetvalue(r, i, 0), PQgetvalue(r, i, 1));
  PQclear(r);
  return rc;
}
