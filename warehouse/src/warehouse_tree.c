/*
 * Loading one causal tree from the warehouse: the activity, everything it
 * caused (explicit and implicit links: the causal_edges view's two halves) down to a
 * depth limit, with node, type, process and attributes named by the
 * ontology. The result is a graph.c tree; the views and blame work on that.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "warehouse.h"
#include "wh_pg.h"

/* An activity reached along two paths (several parents, as with collective
 * buffering) is shown once: under the shallowest, most confident parent.
 * The depth limit also ends any cycle a bad link could make.
 * Each level looks its children up by index (LATERAL, the two halves of
 * causal_edges spelled out): joining the view instead let the planner hash
 * the whole warehouse once per level (seconds at 200k activities), and
 * row-level security's per-row test made that worse for users. The rows
 * are then fetched by "aid = ANY (the tree's aids)", which a coordinator
 * sends to each shard (postgres_fdw pushes the array down as a parameter);
 * the plain join made it pull every shard's whole activities table, its
 * estimate of the recursive CTE being too large for a nested loop. */
static const char tree_sql[] =
    "WITH RECURSIVE t(aid, parent_aid, kind, confidence, flags, depth) AS ("
    "  SELECT $1::bigint, NULL::bigint, 'root'::text, 1.0::real, ''::text, 0"
    "  UNION ALL"
    "  SELECT e.child_aid, e.parent_aid, e.kind, e.confidence, e.flags, t.depth + 1"
    "    FROM t, LATERAL ("
    "      SELECT a.parent_aid, a.aid AS child_aid, 'explicit'::text AS kind, 1.0::real AS confidence,"
    "             ''::text AS flags FROM activities a WHERE a.parent_aid = t.aid"
    "      UNION ALL"
    "      SELECT l.parent_aid, l.child_aid, 'implicit', l.confidence, l.flags"
    "        FROM causal_links l WHERE l.parent_aid = t.aid) e"
    "   WHERE t.depth < $2::int"
    "), u AS ("
    "  SELECT DISTINCT ON (aid) aid, parent_aid, kind, confidence, flags, depth"
    "    FROM t ORDER BY aid, depth, confidence DESC, kind"
    ")"
    "SELECT u.aid, u.parent_aid, u.kind, u.confidence, u.flags,"
    "       a.proc_id, a.node_id, a.start_ns, a.end_ns, a.err,"
    "       n.hwid, n.swid, n.iid, ty.name, p.host, p.job, p.pid"
    "  FROM u JOIN activities a ON a.aid = u.aid AND a.aid = ANY (ARRAY(SELECT aid FROM u))"
    "  JOIN activity_types ty ON ty.type_id = a.type_id"
    "  JOIN nodes n ON n.node_id = a.node_id"
    "  LEFT JOIN processes p ON p.proc_id = a.proc_id";

/* Numeric attributes live in parallel arrays in the activity row; text ones
 * in their own table. k: 0 integer, 1 float, 2 text. */
static const char attrs_sql[] =
    "SELECT x.aid, x.id, o.name, o.unit, o.type, x.vi, x.vf, x.vt, x.k FROM ("
    "  SELECT a.aid, a.attr_ids[i] AS id, a.attr_vals[i] AS vi, NULL::float8 AS vf, NULL::text AS vt, 0 AS k"
    "    FROM activities a, generate_subscripts(a.attr_ids, 1) i WHERE a.aid = ANY($1::bigint[])"
    "  UNION ALL"
    "  SELECT a.aid, a.real_ids[i], NULL, a.real_vals[i], NULL, 1"
    "    FROM activities a, generate_subscripts(a.real_ids, 1) i WHERE a.aid = ANY($1::bigint[])"
    "  UNION ALL"
    "  SELECT t.aid, t.attr_id, NULL, NULL, t.value, 2"
    "    FROM activity_text_attrs t WHERE t.aid = ANY($1::bigint[])"
    ") x LEFT JOIN ontology o ON o.id = x.id ORDER BY x.aid, x.k, x.id";

static enum siox_link_kind link_kind(const char *k) {
  if (strcmp(k, "explicit") == 0) return SIOX_LINK_EXPLICIT;
  if (strcmp(k, "implicit") == 0) return SIOX_LINK_IMPLICIT;
  return SIOX_LINK_ROOT;
}

static int add_rows(struct siox_tree *t, PGresult *res) {
  for (int r = 0; r < PQntuples(res); r++) {
    struct siox_act_info in = {
        .aid = siox_wh_i64(res, r, 0), .parent = siox_wh_i64(res, r, 1),
        .link = link_kind(PQgetvalue(res, r, 2)), .confidence = strtod(PQgetvalue(res, r, 3), NULL),
        .flags = PQgetvalue(res, r, 4), .proc_id = (int32_t)siox_wh_i64(res, r, 5),
        .node_id = (int32_t)siox_wh_i64(res, r, 6), .start_ns = siox_wh_i64(res, r, 7),
        .end_ns = siox_wh_i64(res, r, 8), .err = (int32_t)siox_wh_i64(res, r, 9),
        .hwid = PQgetvalue(res, r, 10), .swid = PQgetvalue(res, r, 11), .iid = PQgetvalue(res, r, 12),
        .name = PQgetvalue(res, r, 13), .host = PQgetvalue(res, r, 14), .job = PQgetvalue(res, r, 15),
        .pid = (int32_t)siox_wh_i64(res, r, 16)};
    int rc = siox_tree_add(t, &in);
    if (rc) return rc;
  }
  return 0;
}

/* "{1,2,3}": the tree's aids as one array parameter. Caller frees. */
static char *aid_array(const struct siox_tree *t) {
  size_t len = 3 + t->n * 21, off = 0;
  char *s = malloc(len);
  if (!s) return NULL;
  s[off++] = '{';
  for (size_t i = 0; i < t->n; i++)
    off += (size_t)snprintf(s + off, len - off, "%s%lld", i ? "," : "", (long long)t->acts[i].aid);
  snprintf(s + off, len - off, "}");
  return s;
}

static int add_attr(struct siox_act *a, const PGresult *res, int r) {
  char fallback[32];
  const char *name = PQgetvalue(res, r, 2), *unit = PQgetvalue(res, r, 3);
  if (PQgetisnull(res, r, 2)) { /* an id the ontology table does not know */
    snprintf(fallback, sizeof(fallback), "attr#%s", PQgetvalue(res, r, 1));
    name = fallback;
  }
  long k = strtol(PQgetvalue(res, r, 8), NULL, 10);
  if (k == 2) return siox_act_add_text(a, name, unit, PQgetvalue(res, r, 7));
  if (k == 1) return siox_act_add_num(a, name, unit, SIOX_AV_F64, 0, strtod(PQgetvalue(res, r, 6), NULL));
  /* u64 values are stored as their two's complement in a bigint. */
  enum siox_attr_kind kind = strcmp(PQgetvalue(res, r, 4), "u64") == 0 ? SIOX_AV_U64 : SIOX_AV_I64;
  return siox_act_add_num(a, name, unit, kind, siox_wh_i64(res, r, 5), 0);
}

static int load_attrs(PGconn *c, struct siox_tree *t, char *err, size_t errlen) {
  char *arr = aid_array(t);
  if (!arr) return -ENOMEM;
  const char *params[] = {arr};
  PGresult *res = PQexecParams(c, attrs_sql, 1, NULL, params, NULL, NULL, 0);
  free(arr);
  if (PQresultStatus(res) != PGRES_TUPLES_OK) return siox_wh_failed(res, c, "loading attributes", err, errlen);
  int rc = 0;
  for (int r = 0; r < PQntuples(res) && rc == 0; r++) {
    struct siox_act *a = siox_tree_find(t, siox_wh_i64(res, r, 0));
    if (a) rc = add_attr(a, res, r);
  }
  PQclear(res);
  return rc;
}

int siox_wh_load_tree(PGconn *c, int64_t aid, int depth, struct siox_tree **out, char *err, size_t errlen) {
  char aid_s[24], depth_s[16];
  snprintf(aid_s, sizeof(aid_s), "%lld", (long long)aid);
  snprintf(depth_s, sizeof(depth_s), "%d", depth);
  const char *params[] = {aid_s, depth_s};
  PGresult *res = PQexecParams(c, tree_sql, 2, NULL, params, NULL, NULL, 0);
  if (PQresultStatus(res) != PGRES_TUPLES_OK) return siox_wh_failed(res, c, "loading the causal tree", err, errlen);
  struct siox_tree *t = siox_tree_create();
  int rc = t ? add_rows(t, res) : -ENOMEM;
  PQclear(res);
  if (rc == 0) rc = siox_tree_finish(t, aid);
  if (rc == -ENOENT) snprintf(err, errlen, "activity %lld is not in the warehouse", (long long)aid);
  if (rc == 0) rc = load_attrs(c, t, err, errlen);
  if (rc) {
    siox_tree_destroy(t);
    return rc;
  }
  *out = t;
  return 0;
}
