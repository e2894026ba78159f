/*
 * One Batch from a daemon -> one warehouse transaction, on the database
 * thread. Idempotent by (daemon_id, seq): a batch at or below the daemon's
 * acked_seq is acknowledged again and not stored. Dictionaries (processes,
 * nodes, types, targets, edges) are upserted and cached; activities and
 * string attributes go in with binary COPY; objects.c adds descriptors.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest.h"
#include "siox/siox_ontology.h"
#include "siox_record_rules.h"
#include "text.h"

#define S(x) ((x) ? (x) : "")

char *siox_i64s(char *buf, int64_t v) {
  snprintf(buf, 24, "%lld", (long long)v);
  return buf;
}

static int bad(struct siox_batch_ctx *x, const char *fmt, unsigned long long a, unsigned long long b) {
  snprintf(x->reason, x->reason_len, fmt, a, b);
  return -EBADMSG;
}

/* Runs a one-row query and returns its first column in *out (when asked). */
static int query1(struct siox_db *db, const char *sql, int n, const char *const *p, int64_t *out) {
  PGresult *r = siox_db_query(db->conn, sql, n, p);
  if (!r) return -EIO;
  int rc = PQntuples(r) == 1 ? 0 : -ENOENT;
  if (rc == 0 && out) *out = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
  PQclear(r);
  return rc;
}

/* ---- validation (before any SQL) ----------------------------------------- */

static void clean(char *s) {
  if (s) siox_text_clean(s, strlen(s));
}

/* A rule of siox_record_rules.h failed: the batch is refused with the
 * rule's reason and the offending id. */
static int broken(struct siox_batch_ctx *x, const char *rule, const char *what, unsigned long long id) {
  snprintf(x->reason, x->reason_len, "%s %llu%s", rule, id, what);
  return -EBADMSG;
}

static int check_value(struct siox_batch_ctx *x, struct siox_value *v, const char *rule) {
  if (rule) return broken(x, rule, "", v->attr);
  if (v->vtype == SIOX_VT_STR && v->bytes) siox_text_clean(v->bytes, v->len);
  return 0;
}

static void clean_strings(struct siox_block *b) {
  for (size_t i = 0; i < b->n_processes; i++)
    clean(b->processes[i].host), clean(b->processes[i].exe), clean(b->processes[i].args), clean(b->processes[i].job);
  for (size_t i = 0; i < b->n_nodes; i++) clean(b->nodes[i].hwid), clean(b->nodes[i].swid), clean(b->nodes[i].iid);
  for (size_t i = 0; i < b->n_types; i++) clean(b->types[i].name);
  for (size_t i = 0; i < b->n_targets; i++) clean(b->targets[i].hwid), clean(b->targets[i].swid);
}

/* The content rules (protocol/record_rules.c), which siox-daemon applies to
 * each client record too; the registry rules (types, nodes, targets) are
 * checked against the warehouse as the transaction resolves them. */
static int validate(struct siox_batch_ctx *x) {
  struct siox_block *b = &x->blk;
  int rc = 0;
  clean_strings(b);
  for (size_t i = 0; rc == 0 && i < b->n_attrs; i++)
    rc = check_value(x, &b->attrs[i], siox_rule_numeric_attr(b->attrs[i].attr, b->attrs[i].vtype));
  for (size_t i = 0; rc == 0 && i < b->n_string_attrs; i++)
    rc = check_value(x, &b->string_attrs[i].value, siox_rule_attr(b->string_attrs[i].value.attr));
  for (size_t i = 0; rc == 0 && i < b->n_node_attrs; i++)
    rc = check_value(x, &b->node_attrs[i].value, siox_rule_attr(b->node_attrs[i].value.attr));
  for (size_t i = 0; rc == 0 && i < b->n_descriptors; i++) {
    struct siox_block_descriptor *d = &b->descriptors[i];
    const char *rule = siox_rule_desc_record(d->kind, d->nvalues, d->aid);
    if (rule) rc = broken(x, rule, " (descriptor record kind)", d->kind);
    for (uint32_t k = 0; rc == 0 && k < d->nvalues && k < 2; k++)
      rc = check_value(x, &d->values[k], siox_rule_desc_value(d->values[k].attr));
  }
  for (size_t i = 0; rc == 0 && i < b->n_activities; i++) {
    const char *rule = siox_rule_aid(b->activities[i].aid, b->activities[i].parent);
    if (rule) rc = broken(x, rule, " (activity aid)", b->activities[i].aid);
  }
  return rc;
}

/* ---- dictionaries ------------------------------------------------------------ */

static int upsert_process(struct siox_batch_ctx *x, const struct siox_block_process *p, int64_t *proc_id) {
  uint64_t key[3] = {x->msg->daemon_id, p->pid, p->nonce};
  uint64_t *hit = siox_hmap_get(&x->db->procs, key, sizeof key);
  if (hit) return *proc_id = (int64_t)hit[0], 0;
  char d[24], pid[24], uid[24], nonce[24];
  const char *host = p->host && p->host[0] ? p->host : x->hostname;
  const char *v[] = {siox_i64s(d, (int64_t)x->msg->daemon_id), host, siox_i64s(pid, p->pid), siox_i64s(uid, p->uid),
                     siox_i64s(nonce, (int64_t)p->nonce), S(p->exe), S(p->args), S(p->job)};
  int rc = query1(x->db,
                  "INSERT INTO processes (daemon_id, host, pid, uid, nonce, exe, args, job)"
                  " VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (daemon_id, pid, nonce) DO UPDATE SET"
                  " exe = COALESCE(NULLIF(EXCLUDED.exe, ''), processes.exe),"
                  " args = COALESCE(NULLIF(EXCLUDED.args, ''), processes.args),"
                  " job = COALESCE(NULLIF(EXCLUDED.job, ''), processes.job) RETURNING proc_id",
                  8, v, proc_id);
  if (rc == 0) rc = siox_hmap_put(&x->db->procs, key, sizeof key, (uint64_t)*proc_id, 0);
  return rc;
}

static int upsert_node(struct siox_batch_ctx *x, const struct siox_block_node *n) {
  int64_t proc_id = x->proc_ids[n->proc], node_id;
  struct siox_key2 k = {(uint64_t)proc_id, n->unid};
  if (siox_hmap_get(&x->db->nodes, &k, sizeof k)) return 0;
  char p[24], u[24];
  const char *v[] = {S(n->hwid), S(n->swid), S(n->iid), siox_i64s(p, proc_id), siox_i64s(u, n->unid)};
  int rc = query1(x->db,
                  "WITH n AS (INSERT INTO nodes (hwid, swid, iid) VALUES ($1, $2, $3)"
                  "  ON CONFLICT (hwid, swid, iid) DO UPDATE SET hwid = EXCLUDED.hwid RETURNING node_id)"
                  " INSERT INTO process_nodes (proc_id, unid, node_id) SELECT $4, $5, node_id FROM n"
                  " ON CONFLICT (proc_id, unid) DO UPDATE SET node_id = EXCLUDED.node_id RETURNING node_id",
                  5, v, &node_id);
  if (rc == 0) rc = siox_hmap_put(&x->db->nodes, &k, sizeof k, (uint64_t)node_id, 0);
  return rc;
}

int siox_node_of(struct siox_db *db, int64_t proc_id, uint32_t unid, int64_t *node_id) {
  struct siox_key2 k = {(uint64_t)proc_id, unid};
  uint64_t *hit = siox_hmap_get(&db->nodes, &k, sizeof k);
  if (hit) return *node_id = (int64_t)hit[0], 0;
  char p[24], u[24];
  const char *v[] = {siox_i64s(p, proc_id), siox_i64s(u, unid)};
  int rc = query1(db, "SELECT node_id FROM process_nodes WHERE proc_id = $1 AND unid = $2", 2, v, node_id);
  if (rc == 0) rc = siox_hmap_put(&db->nodes, &k, sizeof k, (uint64_t)*node_id, 0);
  return rc;
}

static int upsert_type(struct siox_batch_ctx *x, const struct siox_block_type *t) {
  int64_t proc_id = x->proc_ids[t->proc], node_id, type_id;
  struct siox_key2 k = {(uint64_t)proc_id, t->type_id};
  if (siox_hmap_get(&x->db->types, &k, sizeof k)) return 0;
  int rc = siox_node_of(x->db, proc_id, t->unid, &node_id);
  if (rc == -ENOENT) return bad(x, "activity type %llu " SIOX_RULE_UNKNOWN_NODE " (%llu)", t->type_id, t->unid);
  if (rc) return rc;
  char n[24], p[24], l[24];
  const char *v[] = {siox_i64s(n, node_id), S(t->name), siox_i64s(p, proc_id), siox_i64s(l, t->type_id)};
  rc = query1(x->db,
              "WITH t AS (INSERT INTO activity_types (node_id, name) VALUES ($1, $2)"
              "  ON CONFLICT (node_id, name) DO UPDATE SET name = EXCLUDED.name RETURNING type_id)"
              " INSERT INTO process_types (proc_id, local_type, type_id, node_id) SELECT $3, $4, type_id, $1 FROM t"
              " ON CONFLICT (proc_id, local_type) DO UPDATE SET type_id = EXCLUDED.type_id,"
              " node_id = EXCLUDED.node_id RETURNING type_id",
              4, v, &type_id);
  if (rc == 0) rc = siox_hmap_put(&x->db->types, &k, sizeof k, (uint64_t)type_id, (uint64_t)node_id);
  return rc;
}

/* (type_id, node_id) of a process-local activity type: cache, then process_types. */
static int type_of(struct siox_batch_ctx *x, int64_t proc_id, uint32_t local, uint64_t out[2]) {
  struct siox_key2 k = {(uint64_t)proc_id, local};
  uint64_t *hit = siox_hmap_get(&x->db->types, &k, sizeof k);
  if (hit) return out[0] = hit[0], out[1] = hit[1], 0;
  char p[24], l[24];
  const char *v[] = {siox_i64s(p, proc_id), siox_i64s(l, local)};
  PGresult *r = siox_db_query(x->db->conn, "SELECT type_id, node_id FROM process_types WHERE proc_id = $1 AND local_type = $2", 2, v);
  if (!r) return -EIO;
  int rc = PQntuples(r) == 1 ? 0 : bad(x, SIOX_RULE_UNKNOWN_TYPE " (type %llu, process %llu)", local, (unsigned long long)proc_id);
  if (rc == 0) {
    out[0] = strtoull(PQgetvalue(r, 0, 0), NULL, 10);
    out[1] = strtoull(PQgetvalue(r, 0, 1), NULL, 10);
    rc = siox_hmap_put(&x->db->types, &k, sizeof k, out[0], out[1]);
  }
  PQclear(r);
  return rc;
}

static int upsert_target(struct siox_batch_ctx *x, const struct siox_block_target *t) {
  char p[24], id[24];
  const char *v[] = {siox_i64s(p, x->proc_ids[t->proc]), siox_i64s(id, t->target_id), S(t->hwid), S(t->swid)};
  struct siox_key2 k = {(uint64_t)x->proc_ids[t->proc], t->target_id};
  siox_hmap_del(&x->db->targets, &k, sizeof k); /* a redefinition wins */
  PGresult *r = siox_db_query(x->db->conn,
                              "INSERT INTO process_targets (proc_id, target_id, hwid, swid) VALUES ($1, $2, $3, $4)"
                              " ON CONFLICT (proc_id, target_id) DO UPDATE SET hwid = EXCLUDED.hwid, swid = EXCLUDED.swid",
                              4, v);
  PQclear(r);
  return r ? 0 : -EIO;
}

static int upsert_edge(struct siox_batch_ctx *x, const struct siox_block_edge *e) {
  int64_t proc_id = x->proc_ids[e->proc], from, to;
  int rc = siox_node_of(x->db, proc_id, e->from, &from);
  if (rc == 0) rc = siox_node_of(x->db, proc_id, e->to, &to);
  if (rc == -ENOENT) return bad(x, "edge %llu -> %llu " SIOX_RULE_UNKNOWN_NODE, e->from, e->to);
  if (rc) return rc;
  struct siox_key2 k = {(uint64_t)from, (uint64_t)to};
  if (siox_hmap_get(&x->db->edges, &k, sizeof k)) return 0;
  char f[24], t[24];
  const char *v[] = {siox_i64s(f, from), siox_i64s(t, to)};
  PGresult *r = siox_db_query(x->db->conn, "INSERT INTO edges VALUES ($1, $2) ON CONFLICT DO NOTHING", 2, v);
  PQclear(r);
  return r ? siox_hmap_put(&x->db->edges, &k, sizeof k, 1, 0) : -EIO;
}

static int upsert_node_attr(struct siox_batch_ctx *x, const struct siox_block_node_attr *a) {
  int64_t node_id;
  int rc = siox_node_of(x->db, x->proc_ids[a->proc], a->unid, &node_id);
  if (rc == -ENOENT) return bad(x, "node attribute %llu%.0llu: " SIOX_RULE_UNKNOWN_NODE, a->unid, 0);
  if (rc) return rc;
  char n[24], id[24], num[40];
  const struct siox_value *v = &a->value;
  const char *text = NULL;
  if (v->vtype == SIOX_VT_U64) snprintf(num, sizeof num, "%llu", (unsigned long long)v->v.u64);
  else if (v->vtype == SIOX_VT_I64) snprintf(num, sizeof num, "%lld", (long long)v->v.i64);
  else if (v->vtype == SIOX_VT_F64) snprintf(num, sizeof num, "%.17g", v->v.f64);
  else text = v->bytes ? v->bytes : "";
  const char *p[] = {siox_i64s(n, node_id), siox_i64s(id, v->attr), text ? NULL : num, text};
  PGresult *r = siox_db_query(x->db->conn,
                              "INSERT INTO node_attributes VALUES ($1, $2, $3, $4) ON CONFLICT (node_id, attr_id)"
                              " DO UPDATE SET value_num = EXCLUDED.value_num, value_text = EXCLUDED.value_text",
                              4, p);
  PQclear(r);
  return r ? 0 : -EIO;
}

static int dictionaries(struct siox_batch_ctx *x) {
  struct siox_block *b = &x->blk;
  int rc = 0;
  for (size_t i = 0; rc == 0 && i < b->n_processes; i++) rc = upsert_process(x, &b->processes[i], &x->proc_ids[i]);
  for (size_t i = 0; rc == 0 && i < b->n_nodes; i++) rc = upsert_node(x, &b->nodes[i]);
  for (size_t i = 0; rc == 0 && i < b->n_types; i++) rc = upsert_type(x, &b->types[i]);
  for (size_t i = 0; rc == 0 && i < b->n_targets; i++) rc = upsert_target(x, &b->targets[i]);
  for (size_t i = 0; rc == 0 && i < b->n_edges; i++) rc = upsert_edge(x, &b->edges[i]);
  for (size_t i = 0; rc == 0 && i < b->n_node_attrs; i++) rc = upsert_node_attr(x, &b->node_attrs[i]);
  return rc;
}

/* ---- facts: activities and string attributes --------------------------------- */

static void copy_attrs(struct siox_copybuf *c, const struct siox_value *a, uint32_t n) {
  uint32_t ni = 0;
  for (uint32_t i = 0; i < n; i++) ni += a[i].vtype != SIOX_VT_F64;
  siox_copybuf_array(c, SIOX_PG_INT4_OID, ni, 4);
  for (uint32_t i = 0; i < n; i++)
    if (a[i].vtype != SIOX_VT_F64) siox_copybuf_i32(c, (int32_t)a[i].attr);
  siox_copybuf_array(c, SIOX_PG_INT8_OID, ni, 8);
  for (uint32_t i = 0; i < n; i++)
    if (a[i].vtype != SIOX_VT_F64) siox_copybuf_i64(c, (int64_t)a[i].v.u64); /* u64: two's complement */
  siox_copybuf_array(c, SIOX_PG_INT4_OID, n - ni, 4);
  for (uint32_t i = 0; i < n; i++)
    if (a[i].vtype == SIOX_VT_F64) siox_copybuf_i32(c, (int32_t)a[i].attr);
  siox_copybuf_array(c, SIOX_PG_FLOAT8_OID, n - ni, 8);
  for (uint32_t i = 0; i < n; i++)
    if (a[i].vtype == SIOX_VT_F64) siox_copybuf_f64(c, a[i].v.f64);
}

static int build_activities(struct siox_batch_ctx *x) {
  struct siox_copybuf *c = &x->db->copy;
  const struct siox_block *b = &x->blk;
  int64_t off = x->msg->clock_offset_ns, last_proc = -1;
  uint32_t last_type = 0;
  uint64_t tn[2] = {0, 0};
  siox_copybuf_start(c);
  for (size_t i = 0; i < b->n_activities; i++) {
    const struct siox_block_activity *a = &b->activities[i];
    int64_t proc_id = x->proc_ids[a->proc];
    if (proc_id != last_proc || a->type_id != last_type) {
      int rc = type_of(x, proc_id, a->type_id, tn);
      if (rc) return rc;
      last_proc = proc_id, last_type = a->type_id;
    }
    siox_copybuf_row(c, 12);
    siox_copybuf_i64(c, siox_global_aid(proc_id, a->aid));
    siox_copybuf_i32(c, (int32_t)proc_id);
    if (a->parent) siox_copybuf_i64(c, siox_global_aid(proc_id, a->parent));
    else siox_copybuf_null(c);
    siox_copybuf_i32(c, (int32_t)tn[1]);
    siox_copybuf_i32(c, (int32_t)tn[0]);
    siox_copybuf_i64(c, a->start_ns + off);
    siox_copybuf_i64(c, a->end_ns + off);
    siox_copybuf_i32(c, a->err);
    copy_attrs(c, b->attrs + a->attr_first, a->nattr);
  }
  return siox_copybuf_finish(c);
}

static void hex(char *out, const char *in, size_t n) {
  static const char d[] = "0123456789abcdef";
  for (size_t i = 0; i < n; i++) out[2 * i] = d[(unsigned char)in[i] >> 4], out[2 * i + 1] = d[in[i] & 15];
  out[2 * n] = '\0';
}

static int build_string_attrs(struct siox_batch_ctx *x) {
  struct siox_copybuf *c = &x->db->copy2;
  const struct siox_block *b = &x->blk;
  siox_copybuf_start(c);
  for (size_t i = 0; i < b->n_string_attrs; i++) {
    const struct siox_block_string_attr *s = &b->string_attrs[i];
    siox_copybuf_row(c, 3);
    siox_copybuf_i64(c, siox_global_aid(x->proc_ids[s->proc], s->aid));
    siox_copybuf_i32(c, (int32_t)s->value.attr);
    if (siox_attr_lookup(s->value.attr)->type == SIOX_VT_BYTES) {
      char *h = malloc(2 * (size_t)s->value.len + 1);
      if (!h) return -ENOMEM;
      hex(h, s->value.bytes, s->value.len);
      siox_copybuf_text(c, h, 2 * (size_t)s->value.len);
      free(h);
    } else {
      siox_copybuf_text(c, s->value.bytes ? s->value.bytes : "", s->value.bytes ? s->value.len : 0);
    }
  }
  return siox_copybuf_finish(c);
}

#define COPY_ACTIVITIES \
  " (aid, proc_id, parent_aid, node_id, type_id, start_ns, end_ns, err, attr_ids, attr_vals, real_ids, real_vals)"

/* Activities already stored (a daemon that lost its state and resent them
 * under new seqs) would fail the plain COPY; this path keeps the first copy.
 * The rows that hang off an activity (text attributes here, remote calls,
 * descriptor mappings and the outbox in objects.c) are not keyed on the
 * activity's being new: the client writes them at once, so one may be
 * stored before its activity, or come in a batch after it. Each is stored
 * by count instead (db->resend): of k identical rows staged, those past the
 * number stored already. */
static int copy_facts_dedup(struct siox_batch_ctx *x) {
  PGconn *c = x->db->conn;
  siox_log("batch %llu: some activities already stored; keeping the first copies", (unsigned long long)x->msg->seq);
  if (siox_db_exec(c, "CREATE TEMP TABLE IF NOT EXISTS siox_stage (LIKE activities) ON COMMIT DELETE ROWS") ||
      siox_db_copy(c, "COPY siox_stage" COPY_ACTIVITIES " FROM STDIN (FORMAT binary)", x->db->copy.p, x->db->copy.len) ||
      siox_db_exec(c, "INSERT INTO activities SELECT * FROM siox_stage ON CONFLICT (aid) DO NOTHING"))
    return -EIO;
  x->db->resend = 1;
  return 0;
}

static int copy_text_attrs(struct siox_batch_ctx *x) {
  PGconn *c = x->db->conn;
  if (!x->db->resend)
    return siox_db_copy(c, "COPY activity_text_attrs (aid, attr_id, value) FROM STDIN (FORMAT binary)",
                        x->db->copy2.p, x->db->copy2.len);
  if (siox_db_exec(c, "CREATE TEMP TABLE IF NOT EXISTS siox_stage_text ON COMMIT DELETE ROWS AS"
                      " SELECT aid, attr_id, value FROM activity_text_attrs WITH NO DATA") ||
      siox_db_copy(c, "COPY siox_stage_text (aid, attr_id, value) FROM STDIN (FORMAT binary)", x->db->copy2.p,
                   x->db->copy2.len) ||
      siox_db_exec(c, "INSERT INTO activity_text_attrs (aid, attr_id, value) SELECT aid, attr_id, value FROM"
                      " (SELECT *, row_number() OVER (PARTITION BY aid, attr_id, value) AS nth FROM siox_stage_text) s"
                      " WHERE s.nth > (SELECT count(*) FROM activity_text_attrs t"
                      " WHERE (t.aid, t.attr_id, t.value) = (s.aid, s.attr_id, s.value))"))
    return -EIO;
  return 0;
}

static int copy_facts(struct siox_batch_ctx *x, int dedup) {
  int rc = build_activities(x);
  if (rc == 0) rc = build_string_attrs(x);
  if (rc) return rc;
  PGconn *c = x->db->conn;
  if (dedup) rc = copy_facts_dedup(x);
  else rc = siox_db_copy(c, "COPY activities" COPY_ACTIVITIES " FROM STDIN (FORMAT binary)", x->db->copy.p, x->db->copy.len);
  if (rc == 0 && x->blk.n_string_attrs) rc = copy_text_attrs(x);
  return rc;
}

/* ---- the transaction ------------------------------------------------------------ */

/* Client counters are cumulative: the larger value wins (a block replayed
 * after a newer one must not move them back). The daemon's drops are deltas
 * of this block: added, once, since a block is ingested once. */
static int upsert_stats(struct siox_batch_ctx *x) {
  for (size_t i = 0; i < x->blk.n_stats; i++) {
    const struct siox_block_stats *s = &x->blk.stats[i];
    char p[24], a[24], r[24], d[24], e[24], sp[24], iv[24];
    const char *v[] = {siox_i64s(p, x->proc_ids[s->proc]),
                       siox_i64s(a, (int64_t)s->activities),
                       siox_i64s(r, (int64_t)s->records),
                       siox_i64s(d, (int64_t)s->dropped),
                       siox_i64s(e, (int64_t)s->dropped_exit),
                       siox_i64s(sp, (int64_t)s->daemon_dropped_spool),
                       siox_i64s(iv, (int64_t)s->daemon_dropped_invalid)};
    PGresult *res = siox_db_query(
        x->db->conn,
        "INSERT INTO client_stats (proc_id, activities, records, dropped, dropped_exit, daemon_dropped_spool,"
        " daemon_dropped_invalid) VALUES ($1, $2, $3, $4, $5, $6, $7)"
        " ON CONFLICT (proc_id) DO UPDATE SET"
        " activities = GREATEST(client_stats.activities, EXCLUDED.activities),"
        " records = GREATEST(client_stats.records, EXCLUDED.records),"
        " dropped = GREATEST(client_stats.dropped, EXCLUDED.dropped),"
        " dropped_exit = GREATEST(client_stats.dropped_exit, EXCLUDED.dropped_exit),"
        " daemon_dropped_spool = client_stats.daemon_dropped_spool + EXCLUDED.daemon_dropped_spool,"
        " daemon_dropped_invalid = client_stats.daemon_dropped_invalid + EXCLUDED.daemon_dropped_invalid,"
        " updated_at = now()",
        7, v);
    if (!res) return -EIO;
    PQclear(res);
  }
  return 0;
}

/* The owner columns' text parameters: NULL (SQL NULL) for no owner. */
struct owner_params {
  char uid[24];
  const char *auth, *uid_p, *host;
};

static void owner_params(const struct siox_owner *o, struct owner_params *p) {
  int owned = o && o->auth[0];
  p->auth = owned ? o->auth : NULL;
  p->uid_p = owned && o->uid >= 0 ? siox_i64s(p->uid, o->uid) : NULL;
  p->host = owned ? o->host : NULL;
}

/* Locks the daemon's row and returns its acked_seq. The first stored batch
 * makes the row, owned by the session's identity; a row owned by another
 * identity is not touched (no row returned: -ENOENT). */
static int lock_daemon(struct siox_batch_ctx *x, int64_t *acked) {
  char d[24], o[24], u[24];
  struct owner_params op;
  owner_params(x->owner, &op);
  const char *v[] = {siox_i64s(d, (int64_t)x->msg->daemon_id), x->hostname, siox_i64s(o, x->msg->clock_offset_ns),
                     siox_i64s(u, (int64_t)x->msg->clock_uncertainty_ns), op.auth, op.uid_p, op.host};
  return query1(x->db,
                "INSERT INTO daemons (daemon_id, hostname, clock_offset_ns, clock_uncertainty_ns, owner_auth, owner_uid,"
                " owner_host) VALUES ($1, $2, $3, $4, $5, $6, $7)"
                " ON CONFLICT (daemon_id) DO UPDATE SET hostname = EXCLUDED.hostname, clock_offset_ns ="
                " EXCLUDED.clock_offset_ns, clock_uncertainty_ns = EXCLUDED.clock_uncertainty_ns, last_seen = now()"
                " WHERE (daemons.owner_auth, daemons.owner_uid, daemons.owner_host) IS NOT DISTINCT FROM"
                " (EXCLUDED.owner_auth, EXCLUDED.owner_uid, EXCLUDED.owner_host)"
                " RETURNING acked_seq",
                7, v, acked);
}

static int set_acked(struct siox_batch_ctx *x) {
  char d[24], s[24];
  const char *v[] = {siox_i64s(d, (int64_t)x->msg->daemon_id), siox_i64s(s, (int64_t)x->msg->seq)};
  PGresult *r = siox_db_query(x->db->conn, "UPDATE daemons SET acked_seq = $2 WHERE daemon_id = $1", 2, v);
  PQclear(r);
  return r ? 0 : -EIO;
}

/* The one rule that keeps a failed batch from being skipped: only the batch
 * right after acked_seq may be stored. 0 (store), 1 (duplicate) or -ERANGE
 * (a gap: reason set). */
static int seq_rule(uint64_t seq, uint64_t acked, struct siox_ingest_result *res) {
  res->acked = acked;
  if (seq <= acked) return res->duplicate = 1;
  if (seq == acked + 1) return 0;
  snprintf(res->reason, sizeof res->reason, "batch %llu does not follow acked_seq %llu; resend from %llu",
           (unsigned long long)seq, (unsigned long long)acked, (unsigned long long)acked + 1);
  return -ERANGE;
}

static int transaction(struct siox_batch_ctx *x, struct siox_ingest_result *res, int dedup) {
  int64_t acked = 0;
  x->db->resend = 0;
  int rc = siox_db_exec(x->db->conn, "BEGIN");
  if (rc == 0 && (rc = lock_daemon(x, &acked)) == -ENOENT) {
    snprintf(x->reason, x->reason_len, "daemon id %llu belongs to another identity", (unsigned long long)x->msg->daemon_id);
    rc = -EACCES; /* another session won the id after this one's Hello */
  }
  if (rc == 0 && (rc = seq_rule(x->msg->seq, (uint64_t)acked, res)) != 0) {
    int end = siox_db_exec(x->db->conn, "ROLLBACK");
    return rc < 0 ? rc : end;
  }
  if (rc == 0) rc = dictionaries(x);
  if (rc == 0) rc = copy_facts(x, dedup);
  if (rc == 0) rc = siox_objects_ingest(x->db, &x->blk, x->proc_ids, x->msg->clock_offset_ns, x->msg->daemon_id,
                                          (int64_t)x->msg->clock_uncertainty_ns, x->reason, x->reason_len);
  if (rc == 0) rc = upsert_stats(x);
  if (rc == 0) rc = set_acked(x);
  if (rc == 0) rc = siox_db_exec(x->db->conn, "COMMIT");
  if (rc == 0) {
    siox_grant_queue_commit(&x->db->grants);
    res->activities = x->blk.n_activities;
    x->db->activities_arrived = 1; /* the matcher may wake parked remote calls */
  } else {
    PQclear(PQexec(x->db->conn, "ROLLBACK"));
    siox_db_caches_clear(x->db); /* they may hold ids that were never committed */
  }
  return rc;
}

/* The daemon's acked_seq (0 for a daemon without a row yet). */
static int acked_seq(struct siox_db *db, uint64_t daemon_id, uint64_t *acked) {
  char d[24];
  const char *v[] = {siox_i64s(d, (int64_t)daemon_id)};
  int64_t a = 0;
  int rc = query1(db, "SELECT acked_seq FROM daemons WHERE daemon_id = $1", 1, v, &a);
  *acked = (uint64_t)a;
  return rc == -ENOENT ? 0 : rc;
}

int siox_ingest_batch(struct siox_db *db, const Siox__Batch *m, const char *hostname, const struct siox_owner *owner,
                      struct siox_block *blk, int decode_rc, const char *why, struct siox_ingest_result *res) {
  struct siox_batch_ctx x = {.db = db, .msg = m, .hostname = hostname, .owner = owner, .reason = res->reason,
                             .reason_len = sizeof res->reason};
  uint64_t acked = 0;
  int rc = acked_seq(db, m->daemon_id, &acked);
  if (rc == 0) rc = seq_rule(m->seq, acked, res);
  if (rc) return rc < 0 ? rc : 0; /* 1: duplicate */
  x.blk = *blk; /* borrowed: the caller frees it */
  if (decode_rc != 0) {
    snprintf(res->reason, sizeof res->reason, "undecodable block: %s", why ? why : "?");
    rc = -EBADMSG;
  } else if (x.blk.n_activities != m->activities) {
    rc = bad(&x, "block holds %llu activities, the envelope says %llu", x.blk.n_activities, m->activities);
  } else if ((rc = validate(&x)) == 0) {
    x.proc_ids = calloc(x.blk.n_processes + 1, sizeof *x.proc_ids);
    rc = x.proc_ids ? transaction(&x, res, 0) : -ENOMEM;
    if (rc == -EEXIST) rc = transaction(&x, res, 1);
  }
  free(x.proc_ids);
  return rc == -ENOMEM ? -EIO : rc;
}

int siox_ingest_skip(struct siox_db *db, const Siox__Skip *m, const char *hostname, const struct siox_owner *owner,
                     struct siox_ingest_result *res) {
  char d[24], s[24], a[24];
  const char *v[] = {siox_i64s(d, (int64_t)m->daemon_id), siox_i64s(s, (int64_t)m->seq), siox_i64s(a, m->activities),
                     m->reason ? m->reason : ""};
  struct owner_params op;
  owner_params(owner, &op);
  const char *dv[] = {v[0], hostname, op.auth, op.uid_p, op.host};
  int64_t acked = 0;
  int rc = siox_db_exec(db->conn, "BEGIN");
  if (rc == 0)
    rc = query1(db,
                "INSERT INTO daemons (daemon_id, hostname, owner_auth, owner_uid, owner_host)"
                " VALUES ($1, $2, $3, $4, $5) ON CONFLICT (daemon_id) DO UPDATE SET last_seen = now()"
                " WHERE (daemons.owner_auth, daemons.owner_uid, daemons.owner_host) IS NOT DISTINCT FROM"
                " (EXCLUDED.owner_auth, EXCLUDED.owner_uid, EXCLUDED.owner_host) RETURNING acked_seq",
                5, dv, &acked);
  if (rc == -ENOENT) rc = -EACCES; /* the id belongs to another identity */
  if (rc == 0) rc = seq_rule(m->seq, (uint64_t)acked, res);
  if (rc == 0) {
    PGresult *r = siox_db_query(db->conn,
                                "INSERT INTO quarantined_batches (daemon_id, seq, activities, reason)"
                                " VALUES ($1, $2, $3, $4)",
                                4, v);
    rc = r ? 0 : -EIO;
    PQclear(r);
    r = rc ? NULL : siox_db_query(db->conn, "UPDATE daemons SET acked_seq = $2 WHERE daemon_id = $1", 2, v);
    rc = r ? 0 : -EIO;
    PQclear(r);
    if (rc == 0) rc = siox_db_exec(db->conn, "COMMIT");
    if (rc) PQclear(PQexec(db->conn, "ROLLBACK"));
    return rc;
  }
  PQclear(PQexec(db->conn, "ROLLBACK"));
  return rc < 0 ? rc : 0;
}

int siox_ingest_hello(struct siox_db *db, uint64_t daemon_id, const struct siox_owner *owner, uint64_t *acked,
                      char *other, size_t other_len) {
  char d[24];
  struct owner_params op;
  owner_params(owner, &op);
  const char *v[] = {siox_i64s(d, (int64_t)daemon_id), op.auth, op.uid_p, op.host};
  /* No row is made here: an unknown daemon has acked 0. A row from before
   * schema 14 (no owner) goes to the first identity that says Hello. */
  PGresult *r = siox_db_query(db->conn,
                              "UPDATE daemons SET last_seen = now(),"
                              " owner_auth = CASE WHEN owner_auth IS NULL THEN $2 ELSE owner_auth END,"
                              " owner_uid = CASE WHEN owner_auth IS NULL THEN $3::bigint ELSE owner_uid END,"
                              " owner_host = CASE WHEN owner_auth IS NULL THEN $4 ELSE owner_host END"
                              " WHERE daemon_id = $1 RETURNING acked_seq, owner_auth, owner_uid, owner_host",
                              4, v);
  if (!r) return -EIO;
  *acked = 0;
  int rc = 0;
  if (PQntuples(r) == 1) {
    struct siox_owner row = {.uid = PQgetisnull(r, 0, 2) ? -1 : strtoll(PQgetvalue(r, 0, 2), NULL, 10)};
    snprintf(row.auth, sizeof row.auth, "%s", PQgetvalue(r, 0, 1));
    snprintf(row.host, sizeof row.host, "%s", PQgetvalue(r, 0, 3));
    *acked = (uint64_t)strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    if (!siox_owner_equal(&row, owner)) rc = -EACCES, siox_owner_describe(&row, other, other_len);
  }
  PQclear(r);
  return rc;
}
