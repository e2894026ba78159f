/*
 * The peer samples blame compares a suspect with (siox_wh_peers): the
 * activities of its kind nearest in time to it within the call's window,
 * at most a limit of them (20,000), nearest first.
 *
 * Read ring by ring (issue 10, blame latency): first the samples within a
 * quarter of the window's reach of the suspect, then the next ring out,
 * and so on until the limit is met or the window is read. Every sample of
 * a ring is farther than every sample of the rings inside it, and each
 * ring is read nearest first up to what is still missing, so the rings
 * read in turn give the same samples in the same order as one read of the
 * whole window. On a busy kind the limit is met well inside the window:
 * at 10M activities a brick's writev had 40-48k samples in the ±10 s
 * window, its 20,000 nearest within 2.5-5.7 s. One read of the window
 * read and ordered them all (a top-N heap sort of 48k rows kept 20k: a
 * third of the statement); the rings read about half, sorting each ring
 * by quicksort.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "warehouse.h"
#include "wh_pg.h"

#include <siox/siox_wh.h>

/* Server-side processes (bricks, devices) serve every job and carry none,
 * so "same job" admits them too. A job is keyed by (uid, job id): another
 * user's processes that carry the same id are not in it. The kind (SWID
 * and name) is the list of its type ids (a type belongs to one node): the
 * window is then read by the (type_id, start_ns) index (schema 015,
 * siox_wh_exec_window), not every activity in it. One ring: start times
 * more than $9 and at most $10 ns from $6 (two ranges of the index; $9 =
 * -1 for the innermost ring, whose two ranges meet at $6), within the
 * window [$4, $5]. The call's uid ($8) and io/bytes' ontology id ($11)
 * are read before (context_sql), so the branch carries no subquery on a
 * table of the whole site. Through a coordinator the branch runs once per
 * shard (siox_wh_fanout): a node, its types, its processes and their
 * activities live on one shard, so postgres_fdw ships each branch whole,
 * join, filters, ORDER BY and LIMIT, and each shard sends its nearest
 * samples only; the outer ORDER BY keeps the nearest of those, the same
 * rows as one read of the whole site, since (distance, aid) orders every
 * row. Over the partitioned parents the join to processes and the LIMIT
 * stayed at the coordinator: every shard sent every sample of the window
 * (117k rows at 10M activities). The nodes' names are read apart
 * (nodes_sql), for the few nodes the samples are on: joined to the kept
 * samples in SQL, the planner (expecting a few hundred rows) looped over
 * the nodes for each of the 20,000 (440,000 comparisons, 40% of the
 * statement), and joined before the sort it did so for each of the
 * window's tens of thousands. */
static const char ring_branch[] =
    "(SELECT a.aid, a.node_id, a.start_ns, a.end_ns - a.start_ns AS ns,"
    "        a.attr_vals[array_position(a.attr_ids, $11::int)] AS bytes"
    "   FROM {S}activities a"
    "   LEFT JOIN {S}processes p ON p.proc_id = a.proc_id"
    "  WHERE a.type_id = ANY (ARRAY(SELECT ty.type_id FROM {S}activity_types ty"
    "                                 JOIN {S}nodes tn ON tn.node_id = ty.node_id"
    "                                WHERE tn.swid = $1 AND ty.name = $2))"
    "    AND (p.job IS NULL OR p.job = '' OR (p.job = $3 AND p.uid = $8::int))"
    "    AND (a.start_ns BETWEEN greatest($4::bigint, $6::bigint - $10::bigint) AND $6::bigint - $9::bigint - 1"
    "         OR a.start_ns BETWEEN $6::bigint + $9::bigint + 1 AND least($5::bigint, $6::bigint + $10::bigint))"
    "  ORDER BY abs(a.start_ns - $6::bigint), a.aid LIMIT $7::bigint)";

#define RING_HEAD "WITH a AS MATERIALIZED ("
#define RING_TAIL ") SELECT aid, node_id, ns, coalesce(bytes, -1) FROM a ORDER BY abs(start_ns - $6::bigint), aid LIMIT $7::bigint"

/* The call's uid (NULL when its process is unknown: then only job-less
 * processes match, as the subquery gave) and io/bytes' ontology id. */
static const char context_sql[] =
    "SELECT (SELECT uid FROM processes WHERE proc_id = ($1::bigint >> 32)),"
    "       (SELECT id FROM ontology WHERE name = 'io/bytes')";

/* The names of the samples' nodes, by node id. */
static const char nodes_sql[] =
    "SELECT node_id, hwid, iid FROM nodes WHERE node_id = ANY ($1::int[]) ORDER BY node_id";

static int cmp_node(const void *x, const void *y) {
  int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
  return (a > b) - (a < b);
}

/* "{1,2,3}": the distinct nodes of the samples. Caller frees. */
static char *node_array(const struct siox_peer_set *p) {
  int32_t *v = malloc((p->n ? p->n : 1) * sizeof(*v));
  char *s = malloc(3 + (p->n ? p->n : 1) * 12);
  size_t m = 0, off = 0;
  if (!v || !s) {
    free(v);
    free(s);
    return NULL;
  }
  for (size_t i = 0; i < p->n; i++) v[i] = p->s[i].node_id;
  qsort(v, p->n, sizeof(*v), cmp_node);
  s[off++] = '{';
  for (size_t i = 0; i < p->n; i++)
    if (i == 0 || v[i] != v[i - 1]) off += (size_t)sprintf(s + off, "%s%d", m++ ? "," : "", (int)v[i]);
  sprintf(s + off, "}");
  free(v);
  return s;
}

/* Row of node_id in the nodes result (sorted by node id), or -1. */
static int node_row(const PGresult *r, int32_t node_id) {
  int lo = 0, hi = PQntuples(r) - 1;
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2;
    int32_t v = (int32_t)siox_wh_i64(r, mid, 0);
    if (v == node_id) return mid;
    if (v < node_id) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/* Names each sample's node; a sample whose node is gone (none is: node_id
 * is a foreign key) is dropped, as the join dropped it. */
static int name_nodes(PGconn *c, struct siox_peer_set *out, char *err, size_t errlen) {
  char *arr = node_array(out);
  if (!arr) return -ENOMEM;
  const char *params[] = {arr};
  out->nodes = PQexecParams(c, nodes_sql, 1, NULL, params, NULL, NULL, 0);
  free(arr);
  if (PQresultStatus(out->nodes) != PGRES_TUPLES_OK) {
    PGresult *r = out->nodes;
    out->nodes = NULL;
    return siox_wh_failed(r, c, "naming the peers' nodes", err, errlen);
  }
  size_t m = 0;
  for (size_t i = 0; i < out->n; i++) {
    int r = node_row(out->nodes, out->s[i].node_id);
    if (r < 0) continue;
    out->s[m] = out->s[i];
    out->s[m].hwid = PQgetvalue(out->nodes, r, 1);
    out->s[m++].iid = PQgetvalue(out->nodes, r, 2);
  }
  out->n = m;
  return 0;
}

/* What every ring of one call's read shares: the statement (one branch per
 * shard) and its context parameters (NULL for SQL NULL). */
struct ring_read {
  const struct siox_peer_query *q;
  char *sql;
  const char *uid, *bytes_id;
  PGresult *context;
};

static const char *value_or_null(const PGresult *r, int col) {
  return PQgetisnull(r, 0, col) ? NULL : PQgetvalue(r, 0, col);
}

static int ring_read_open(PGconn *c, const struct siox_peer_query *q, struct ring_read *rr, char *err, size_t errlen) {
  char call[24];
  snprintf(call, sizeof(call), "%lld", (long long)q->call_aid);
  const char *params[] = {call};
  *rr = (struct ring_read){.q = q};
  rr->context = siox_wh_query(c, "reading the call's uid", context_sql, 1, params, err, errlen);
  if (!rr->context) return -EIO;
  rr->uid = value_or_null(rr->context, 0);
  rr->bytes_id = value_or_null(rr->context, 1);
  char *branches = siox_wh_fanout(c, ring_branch, err, errlen);
  if (!branches) return -EIO;
  size_t cap = strlen(RING_HEAD) + strlen(branches) + strlen(RING_TAIL) + 1;
  rr->sql = malloc(cap);
  if (rr->sql) snprintf(rr->sql, cap, "%s%s%s", RING_HEAD, branches, RING_TAIL);
  free(branches);
  return rr->sql ? 0 : -ENOMEM;
}

static void ring_read_close(struct ring_read *rr) {
  free(rr->sql);
  PQclear(rr->context);
}

/* Reads the ring (inner_ns, outer_ns] around q->mid_ns, nearest first, at
 * most q->limit - out->n samples, appended to out. In binary: 20,000
 * samples are 80,000 numbers, printed by the server and parsed here as
 * text (strtoll was a tenth of the CLI's CPU time for a call). */
static int read_ring(PGconn *c, const struct ring_read *rr, int64_t inner_ns, int64_t outer_ns,
                     struct siox_peer_set *out, char *err, size_t errlen) {
  const struct siox_peer_query *q = rr->q;
  char from[24], to[24], mid[24], limit[24], inner[24], outer[24];
  snprintf(from, sizeof(from), "%lld", (long long)q->from_ns);
  snprintf(to, sizeof(to), "%lld", (long long)q->to_ns);
  snprintf(mid, sizeof(mid), "%lld", (long long)q->mid_ns);
  snprintf(limit, sizeof(limit), "%ld", q->limit - (long)out->n);
  snprintf(inner, sizeof(inner), "%lld", (long long)inner_ns);
  snprintf(outer, sizeof(outer), "%lld", (long long)outer_ns);
  const char *params[] = {q->swid, q->name, q->job ? q->job : "", from,  to,       mid,
                          limit,   rr->uid, inner,                 outer, rr->bytes_id};
  PGresult *res = siox_wh_exec_window_binary(c, rr->sql, 11, params);
  if (PQresultStatus(res) != PGRES_TUPLES_OK) return siox_wh_failed(res, c, "finding peer activities", err, errlen);
  size_t n = (size_t)PQntuples(res);
  struct siox_blame_sample *s = realloc(out->s, (out->n + n + 1) * sizeof(*s));
  if (!s) {
    PQclear(res);
    return -ENOMEM;
  }
  out->s = s;
  for (int r = 0; r < (int)n; r++)
    s[out->n++] = (struct siox_blame_sample){.aid = siox_wh_bin_i64(res, r, 0),
                                             .node_id = (int32_t)siox_wh_bin_i64(res, r, 1),
                                             .ns = siox_wh_bin_i64(res, r, 2), .bytes = siox_wh_bin_i64(res, r, 3)};
  PQclear(res);
  return 0;
}

/* The next ring's outer radius after one reaching outer_ns held got
 * samples in all: where the limit is expected at that density, a quarter
 * more; the whole reach when even that is past it (a kind with fewer
 * samples than the limit takes two reads, not one per doubling). */
static int64_t next_radius(int64_t outer_ns, size_t got, long limit, int64_t reach_ns) {
  double want = got ? (double)outer_ns * (double)limit / (double)got * 1.25 : (double)reach_ns;
  if (want >= (double)reach_ns) return reach_ns;
  return want > (double)outer_ns ? (int64_t)want + 1 : outer_ns + 1;
}

int siox_wh_peers(PGconn *c, const struct siox_peer_query *q, struct siox_peer_set *out, char *err, size_t errlen) {
  memset(out, 0, sizeof(*out));
  /* How far from the suspect the window reaches, on its farther side. */
  int64_t reach = q->mid_ns - q->from_ns > q->to_ns - q->mid_ns ? q->mid_ns - q->from_ns : q->to_ns - q->mid_ns;
  if (reach < 0) reach = 0;
  int64_t inner = -1, outer = reach / 4;
  struct ring_read rr;
  int rc = ring_read_open(c, q, &rr, err, errlen);
  while (rc == 0 && (long)out->n < q->limit) {
    rc = read_ring(c, &rr, inner, outer, out, err, errlen);
    if (outer >= reach) break;
    inner = outer;
    outer = next_radius(outer, out->n, q->limit, reach);
  }
  ring_read_close(&rr);
  if (rc == 0 && !out->s && !(out->s = calloc(1, sizeof(*out->s)))) rc = -ENOMEM;
  if (rc == 0) rc = name_nodes(c, out, err, errlen);
  if (rc != 0) siox_wh_peers_free(out);
  return rc;
}

void siox_wh_peers_free(struct siox_peer_set *p) {
  free(p->s);
  PQclear(p->nodes);
  p->s = NULL;
  p->nodes = NULL;
  p->n = 0;
}
