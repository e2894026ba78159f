/*
 * Descriptors -> canonical objects, inside a batch's transaction (called by
 * ingest.c). A descriptor is keyed by (scope, type, value): global-scope ones
 * by value alone, host-scope ones per host, process-scope ones per proc_id.
 * MAP records join two objects (union-find in uf.c, mirrored flattened into
 * objects/descriptors/remote_calls); SEND and RECEIVE records become
 * remote_calls rows for match.c. RELEASE retires a process- or host-scope
 * descriptor, so that a reused fd number starts a new object.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest.h"
#include "match_window.h"
#include "shard_class.h"
#include "shard_owner.h"
#include "siox_record_rules.h"
#include "siox/siox_ontology.h"
#include "siox_client_wire.h"

struct desc {
  int64_t desc_id, object_id; /* object_id: the root */
  int owner;                  /* with peers, a global descriptor's shard (shard_owner.h); else 0 */
};

/* The warehouse key of a descriptor value: scope key and value as text. */
static int desc_key(const struct siox_block *b, int64_t proc_id, uint32_t proc, const struct siox_value *v,
                    char *scope, size_t scap, char **value) {
  const struct siox_attr_info *a = siox_attr_lookup(v->attr);
  if (a->scope == SIOX_SCOPE_GLOBAL) snprintf(scope, scap, "%s", "");
  else if (a->scope == SIOX_SCOPE_HOST) snprintf(scope, scap, "%s", b->processes[proc].host ? b->processes[proc].host : "");
  else snprintf(scope, scap, "%lld", (long long)proc_id);
  size_t n = (v->vtype == SIOX_VT_STR || v->vtype == SIOX_VT_BYTES) ? 2 * (size_t)v->len + 1 : 32;
  char *s = malloc(n);
  if (!s) return -ENOMEM;
  if (v->vtype == SIOX_VT_STR) memcpy(s, v->bytes ? v->bytes : "", v->len), s[v->len] = '\0';
  else if (v->vtype == SIOX_VT_BYTES)
    for (uint32_t i = 0; i < v->len; i++) snprintf(s + 2 * i, 3, "%02x", (unsigned char)v->bytes[i]);
  else if (v->vtype == SIOX_VT_I64) snprintf(s, n, "%lld", (long long)v->v.i64);
  else snprintf(s, n, "%llu", (unsigned long long)v->v.u64);
  if (v->vtype == SIOX_VT_BYTES && v->len == 0) s[0] = '\0';
  *value = s;
  return 0;
}

/* Cache key: scope \x1f type \x1f value. Caller frees. */
static char *cache_key(const char *scope, uint32_t type, const char *value, size_t *len) {
  size_t n = strlen(scope) + strlen(value) + 16;
  char *k = malloc(n);
  if (k) *len = (size_t)snprintf(k, n, "%s\x1f%u\x1f%s", scope, type, value);
  return k;
}

#define DESC_SELECT_SQL \
  "SELECT desc_id, object_id FROM descriptors WHERE scope_key = $1 AND type = $2 AND value = $3 AND NOT released"
#define DESC_CREATE_SQL \
  "WITH o AS (INSERT INTO objects DEFAULT VALUES RETURNING object_id)" \
  " INSERT INTO descriptors (scope_key, type, value, object_id) SELECT $1, $2, $3, object_id FROM o"

/* *created: 1 when this call made the descriptor (and its object). */
static int fetch_or_create(struct siox_db *db, const char *scope, const char *type, const char *value, struct desc *d,
                           int *created) {
  const char *v[] = {scope, type, value};
  PGresult *r = siox_db_query(db->conn, DESC_SELECT_SQL, 3, v);
  *created = 0;
  if (r && PQntuples(r) == 0) {
    PQclear(r);
    /* With peers, another shard's forwarder may create the same global
     * descriptor here in its own transaction (forward.c): the insert then
     * waits for it and skips, and the row is read once committed. */
    r = siox_db_query(db->conn,
                      db->forward ? DESC_CREATE_SQL " ON CONFLICT (scope_key, type, value) WHERE NOT released"
                                    " DO NOTHING RETURNING desc_id, object_id"
                                  : DESC_CREATE_SQL " RETURNING desc_id, object_id",
                      3, v);
    *created = r && PQntuples(r) == 1;
    if (r && PQntuples(r) == 0) PQclear(r), r = siox_db_query(db->conn, DESC_SELECT_SQL, 3, v);
  }
  if (r && PQntuples(r) == 0) PQclear(r), r = NULL;
  if (!r) return -EIO;
  d->desc_id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
  d->object_id = strtoll(PQgetvalue(r, 0, 1), NULL, 10);
  PQclear(r);
  return 0;
}

/* The descriptor (scope, type, value): cache, then warehouse (created if
 * new); d->object_id is its root. The cache key in *key (caller frees).
 * With peers, a new object's owner set is known without a query (its one
 * name's owner, none for a local name): a MAP of a new fd to a path then
 * costs the join no lookup (shard_class.c). */
static int find_desc(struct siox_db *db, const char *scope, uint32_t attr, const char *value, struct desc *d,
                     char **key, size_t *klen) {
  char type[16];
  int rc = 0, created = 0;
  snprintf(type, sizeof type, "%u", attr);
  if (!(*key = cache_key(scope, attr, value, klen))) return -ENOMEM;
  uint64_t *hit = siox_hmap_get(&db->descs, *key, *klen);
  if (hit) d->desc_id = (int64_t)hit[0], d->object_id = (int64_t)hit[1];
  else if ((rc = fetch_or_create(db, scope, type, value, d, &created)) == 0)
    rc = siox_hmap_put(&db->descs, *key, *klen, (uint64_t)d->desc_id, (uint64_t)d->object_id);
  if (rc == 0 && created && db->forward) {
    struct siox_shards s = {{0, 0}};
    if (!*scope) siox_shards_add(&s, siox_shard_owner(attr, value, db->nshards));
    rc = siox_hmap_put(&db->owners, &d->object_id, sizeof d->object_id, s.m[0], s.m[1]);
  }
  if (rc == 0) d->object_id = siox_uf_find(&db->objects, d->object_id);
  return rc;
}

/* Resolves one descriptor value (creating it if new); with release set,
 * retires it instead when it is not of global scope. */
static int resolve(struct siox_db *db, const struct siox_block *b, int64_t proc_id, uint32_t proc,
                   const struct siox_value *v, struct desc *d, int release) {
  char scope[300], *value = NULL, *key = NULL;
  size_t klen = 0;
  int rc = desc_key(b, proc_id, proc, v, scope, sizeof scope, &value);
  if (rc) return rc;
  rc = find_desc(db, scope, v->attr, value, d, &key, &klen);
  /* Only global descriptors pair across hosts; host- and process-scope ones
   * pair within one daemon, hence one shard. */
  d->owner = db->forward && siox_attr_lookup(v->attr)->scope == SIOX_SCOPE_GLOBAL
                 ? siox_shard_owner(v->attr, value, db->nshards)
                 : 0;
  if (rc == 0 && release && siox_attr_lookup(v->attr)->scope != SIOX_SCOPE_GLOBAL) {
    char id[24];
    const char *p[] = {siox_i64s(id, d->desc_id)};
    PGresult *r = siox_db_query(db->conn, "UPDATE descriptors SET released = true WHERE desc_id = $1", 1, p);
    rc = r ? 0 : -EIO;
    PQclear(r);
    siox_hmap_del(&db->descs, key, klen);
  }
  free(key);
  free(value);
  return rc;
}

/* Joins the objects of a MAP's two descriptors, in memory and in the
 * warehouse (flattened: every row moves to the surviving root, and moved
 * remote calls get a fresh rc_id so that the matcher looks at them again).
 * Remote calls of the current batch are not stored yet: copy_remote_calls
 * resolves their roots after the last MAP. With peers the join may send
 * stored senders to more owners, and a MAP recorded here (tell) is told to
 * every peer (shard_class.c). */
static int join(struct siox_db *db, int64_t a, int64_t b, int tell) {
  int64_t loser, win = siox_uf_union(&db->objects, a, b, &loser);
  if (win < 0) return (int)win;
  if (!loser) return 0;
  if (db->forward) {
    int rc = siox_class_join(db, win, loser, tell);
    if (rc) return rc;
  }
  char w[24], l[24];
  const char *p[] = {siox_i64s(w, win), siox_i64s(l, loser)};
  static const char *const sql[] = {
      "UPDATE objects SET merged_into = $1 WHERE object_id = $2 OR merged_into = $2",
      "UPDATE descriptors SET object_id = $1 WHERE object_id = $2",
      "UPDATE remote_calls SET object_id = $1, rc_id = nextval('remote_calls_rc_id_seq'), in_memory = false"
      " WHERE object_id = $2"};
  for (size_t i = 0; i < sizeof sql / sizeof sql[0]; i++) {
    PGresult *r = siox_db_query(db->conn, sql[i], 2, p);
    if (!r) return -EIO;
    PQclear(r);
  }
  db->sql_left = 1;
  /* The moved calls are new to the SQL matcher (in_memory = false), which
   * sees both objects' whole history; the window follows the merge so that
   * what it decides later sees both objects' calls too. */
  if (db->mw) siox_mw_merge(db->mw, loser, win);
  return 0;
}

static int add_mapping(struct siox_db *db, int64_t proc_id, const struct siox_block_descriptor *r, int64_t from,
                       int64_t to) {
  char p[24], n[24], a[24], f[24], t[24];
  int64_t node_id;
  int have_node = r->node && siox_node_of(db, proc_id, r->node, &node_id) == 0;
  const char *v[] = {siox_i64s(p, proc_id), have_node ? siox_i64s(n, node_id) : NULL,
                     r->aid ? siox_i64s(a, siox_global_aid(proc_id, r->aid)) : NULL, siox_i64s(f, from), siox_i64s(t, to)};
  /* A resent batch (db->resend) maps again what is already stored: its
   * mappings are staged, and stored by count (store_mappings_resent). */
  PGresult *res = siox_db_query(db->conn,
                                db->resend ? "INSERT INTO siox_stage_map VALUES ($1, $2, $3, $4, $5)"
                                           : "INSERT INTO descriptor_mappings VALUES ($1, $2, $3, $4, $5)",
                                5, v);
  PQclear(res);
  return res ? 0 : -EIO;
}

/* Of k identical mappings (process, node, activity, both descriptors) a
 * resent batch staged, those past the number stored already are stored:
 * a MAP of an activity may be stored before its activity (an earlier
 * batch) or come in a batch after it, so the activity's being new says
 * nothing. One scan of the process's stored mappings (no index). */
#define MAP_SAME "proc_id, node_id, aid, from_desc, to_desc"
static int stage_mappings(struct siox_db *db) {
  return siox_db_exec(db->conn, "CREATE TEMP TABLE IF NOT EXISTS siox_stage_map ON COMMIT DELETE ROWS AS"
                                " SELECT " MAP_SAME " FROM descriptor_mappings WITH NO DATA");
}

static int store_mappings_resent(struct siox_db *db) {
  return siox_db_exec(db->conn,
                      "INSERT INTO descriptor_mappings (" MAP_SAME ") SELECT s.proc_id, s.node_id, s.aid, s.from_desc,"
                      " s.to_desc FROM (SELECT *, row_number() OVER (PARTITION BY " MAP_SAME ") AS nth"
                      " FROM siox_stage_map) s LEFT JOIN (SELECT " MAP_SAME ", count(*) AS n FROM descriptor_mappings"
                      " WHERE proc_id IN (SELECT proc_id FROM siox_stage_map) GROUP BY " MAP_SAME ") c"
                      " ON (c.proc_id, c.from_desc, c.to_desc) = (s.proc_id, s.from_desc, s.to_desc)"
                      " AND c.node_id IS NOT DISTINCT FROM s.node_id AND c.aid IS NOT DISTINCT FROM s.aid"
                      " WHERE s.nth > COALESCE(c.n, 0)");
}

/* Target (hwid, swid) of a SEND: cache, then process_targets (ingest.c
 * fills it from the batch's target records). */
static int target_of(struct siox_db *db, int64_t proc_id, uint32_t target, const char **hw, const char **sw) {
  *hw = *sw = "";
  if (target == 0) return 0; /* no target named: any receiver */
  struct siox_key2 k = {(uint64_t)proc_id, target};
  uint64_t *hit = siox_hmap_get(&db->targets, &k, sizeof k);
  if (hit) return *hw = db->target_names[2 * hit[0]], *sw = db->target_names[2 * hit[0] + 1], 0;
  char p[24], t[24];
  const char *v[] = {siox_i64s(p, proc_id), siox_i64s(t, target)};
  PGresult *r = siox_db_query(db->conn, "SELECT hwid, swid FROM process_targets WHERE proc_id = $1 AND target_id = $2", 2, v);
  if (!r) return -EIO;
  int rc = PQntuples(r) == 1 ? 0 : -ENOENT;
  if (rc == 0 && db->n_targets == db->cap_targets) {
    size_t ncap = db->cap_targets ? 2 * db->cap_targets : 64;
    char **nn = realloc(db->target_names, 2 * ncap * sizeof *nn);
    if (nn) db->target_names = nn, db->cap_targets = ncap;
    else rc = -ENOMEM;
  }
  if (rc == 0) {
    size_t i = db->n_targets++;
    db->target_names[2 * i] = strdup(PQgetvalue(r, 0, 0));
    db->target_names[2 * i + 1] = strdup(PQgetvalue(r, 0, 1));
    if (!db->target_names[2 * i] || !db->target_names[2 * i + 1]) rc = -ENOMEM;
    else rc = siox_hmap_put(&db->targets, &k, sizeof k, i, 0);
    if (rc == 0) *hw = db->target_names[2 * i], *sw = db->target_names[2 * i + 1];
  }
  PQclear(r);
  return rc;
}

/* A SEND or RECEIVE waiting for the batch's COPY. Its object id is only the
 * root at the time of the record: a later MAP of the same batch may merge it
 * away, so copy_remote_calls resolves it again. hw/sw point into
 * db->target_names, which live until the caches are cleared. */
struct rc_row {
  int64_t aid, object_id, desc_id, offset, length;
  int64_t start, end; /* the activity's interval; has_times 0: not in this batch */
  int64_t node_id;    /* a receive's node (from its activity's type); 0: unknown */
  const char *hw, *sw;
  int owner;              /* its descriptor's owner shard (struct desc), else 0 */
  struct siox_shards fan; /* with owner: the shards it goes to, here included (fan_out) */
  char kind, has_times, in_memory;
};

struct rc_rows {
  struct rc_row *v;
  size_t n, cap;
};

static int remote_call(struct siox_db *db, int64_t proc_id, const struct siox_block_descriptor *r, const struct desc *d,
                       struct rc_rows *rows) {
  const char *hw = "", *sw = "";
  if (r->kind == SIOX_DESC_SEND) {
    int rc = target_of(db, proc_id, r->node, &hw, &sw);
    if (rc) return rc;
  }
  if (rows->n == rows->cap) {
    size_t ncap = rows->cap ? 2 * rows->cap : 64;
    struct rc_row *nv = realloc(rows->v, ncap * sizeof *nv);
    if (!nv) return -ENOMEM;
    rows->v = nv, rows->cap = ncap;
  }
  rows->v[rows->n++] = (struct rc_row){.aid = siox_global_aid(proc_id, r->aid), .object_id = d->object_id,
                                       .desc_id = d->desc_id, .offset = (int64_t)r->offset, .length = (int64_t)r->length,
                                       .hw = hw, .sw = sw, .owner = d->owner,
                                       .kind = r->kind == SIOX_DESC_SEND ? 'S' : 'R'};
  return 0;
}

static int rc_cmp(const void *a, const void *b) {
  int64_t x = ((const struct rc_row *)a)->aid, y = ((const struct rc_row *)b)->aid;
  return (x > y) - (x < y);
}

/* Gives each remote call its activity's interval when the activity is in
 * the same block (the usual case: the client writes the activity right
 * after its send/receive record), clock-corrected as ingest.c stores it.
 * The matcher fills in the rest when their activity arrives. The rows are
 * sorted by aid (their order does not matter to the COPY) and each
 * activity looks for its rows: an activity may have several (a POSIX write
 * under collective MPI-IO receives and sends). */
static void add_times(struct siox_db *db, const struct siox_block *b, const int64_t *proc_ids, int64_t clock_offset,
                      struct rc_rows *rows) {
  struct rc_row *v = rows->v, *end = rows->v + rows->n;
  qsort(v, rows->n, sizeof *v, rc_cmp);
  for (size_t i = 0; i < b->n_activities; i++) {
    const struct siox_block_activity *a = &b->activities[i];
    struct rc_row key = {.aid = siox_global_aid(proc_ids[a->proc], a->aid)};
    struct rc_row *hit = bsearch(&key, v, rows->n, sizeof *v, rc_cmp);
    if (!hit) continue;
    while (hit > v && hit[-1].aid == key.aid) hit--;
    /* ingest.c's COPY of the activities cached every type of the batch */
    struct siox_key2 k = {(uint64_t)proc_ids[a->proc], a->type_id};
    uint64_t *tn = siox_hmap_get(&db->types, &k, sizeof k);
    for (; hit < end && hit->aid == key.aid; hit++) {
      hit->start = a->start_ns + clock_offset, hit->end = a->end_ns + clock_offset, hit->has_times = 1;
      hit->node_id = tn ? (int64_t)tn[1] : 0;
    }
  }
}

#define RC_COLUMNS \
  "aid, kind, object_id, desc_id, offset_b, length_b, target_hwid, target_swid, start_ns, end_ns, in_memory"
/* With peers, also whether a receive went to its owner elsewhere (schema 033). */
#define RC_COLUMNS_AWAY RC_COLUMNS ", away"

/* A resent batch (a daemon that lost its state sends stored batches again
 * under new seqs): of k identical calls of one activity staged, those past
 * the number stored already are stored. Keying on the activity's being new
 * (ingest.c's siox_new, gone) was wrong both ways: a call stored before its
 * activity (an earlier batch) was stored twice when the resend brought the
 * activity, and a call whose activity comes in a later batch was never
 * stored. The calls stored are listed in siox_rc_new (copy_outbox forwards
 * those). Left: an activity with two identical calls, the first stored
 * earlier and the second resent without the first, keeps one row (records
 * carry no identity of their own; README, "Ingest"). */
#define RC_SAME "aid, kind, desc_id, offset_b, length_b, target_hwid, target_swid"
#define RESENT_SQL(cols)                                                                                               \
  {"CREATE TEMP TABLE IF NOT EXISTS siox_stage_rc ON COMMIT DELETE ROWS AS SELECT " cols                               \
   " FROM remote_calls WITH NO DATA;"                                                                                  \
   " CREATE TEMP TABLE IF NOT EXISTS siox_rc_new ON COMMIT DELETE ROWS AS SELECT " RC_SAME                             \
   " FROM remote_calls WITH NO DATA",                                                                                  \
   "COPY siox_stage_rc (" cols ") FROM STDIN (FORMAT binary)",                                                         \
   "WITH ins AS (INSERT INTO remote_calls (" cols ") SELECT " cols " FROM (SELECT *, row_number() OVER (PARTITION BY " \
   RC_SAME ") AS nth FROM siox_stage_rc) s WHERE s.nth > (SELECT count(*) FROM remote_calls r WHERE (" RC_SAME ") ="  \
   " (s.aid, s.kind, s.desc_id, s.offset_b, s.length_b, s.target_hwid, s.target_swid)) RETURNING " RC_SAME ")"        \
   " INSERT INTO siox_rc_new SELECT * FROM ins"}
static int copy_remote_calls_resent(struct siox_db *db, const struct siox_copybuf *c) {
  static const char *const sql[2][3] = {RESENT_SQL(RC_COLUMNS), RESENT_SQL(RC_COLUMNS_AWAY)};
  const char *const *q = sql[db->forward != 0];
  if (siox_db_exec(db->conn, q[0]) || siox_db_copy(db->conn, q[1], c->p, c->len) || siox_db_exec(db->conn, q[2]))
    return -EIO;
  return 0;
}

/* COPYs the batch's remote calls, each under its object's union-find root
 * as of now, after every MAP of the batch: the matcher compares object ids
 * as they are stored, so a pre-merge id would never meet its partner. */
static int copy_remote_calls(struct siox_db *db, const struct rc_rows *rows) {
  struct siox_copybuf *c = &db->copy2;
  siox_copybuf_start(c);
  for (size_t i = 0; i < rows->n; i++) {
    const struct rc_row *w = &rows->v[i];
    siox_copybuf_row(c, db->forward ? 12 : 11);
    siox_copybuf_i64(c, w->aid);
    siox_copybuf_text(c, &w->kind, 1);
    siox_copybuf_i64(c, siox_uf_find(&db->objects, w->object_id));
    siox_copybuf_i64(c, w->desc_id);
    siox_copybuf_i64(c, w->offset);
    siox_copybuf_i64(c, w->length);
    siox_copybuf_text(c, w->hw, strlen(w->hw));
    siox_copybuf_text(c, w->sw, strlen(w->sw));
    if (w->has_times) siox_copybuf_i64(c, w->start), siox_copybuf_i64(c, w->end);
    else siox_copybuf_null(c), siox_copybuf_null(c);
    siox_copybuf_bool(c, w->in_memory);
    if (!w->in_memory) db->sql_left = 1;
    if (db->forward) siox_copybuf_bool(c, w->kind == 'R' && w->owner && w->owner != db->shard);
  }
  int rc = siox_copybuf_finish(c);
  if (rc == 0 && !db->resend)
    rc = siox_db_copy(db->conn, db->forward ? "COPY remote_calls (" RC_COLUMNS_AWAY ") FROM STDIN (FORMAT binary)"
                                            : "COPY remote_calls (" RC_COLUMNS ") FROM STDIN (FORMAT binary)",
                      c->p, c->len);
  else if (rc == 0)
    rc = copy_remote_calls_resent(db, c);
  return rc;
}

#define OB_COLUMNS "owner, aid, kind, desc_id, offset_b, length_b, target_hwid, target_swid"

/* The shards each globally named call of the batch goes to (with peers):
 * its descriptor's owner and, for a sender, the owner of every other
 * global name of its object (a MAP here or on a peer joined them), each of
 * which decides the receives named by its name. After the batch's last
 * MAP, so that its senders go where their object's names say. */
static int fan_out(struct siox_db *db, struct rc_rows *rows) {
  for (size_t i = 0; i < rows->n; i++) {
    struct rc_row *w = &rows->v[i];
    w->fan = (struct siox_shards){{0, 0}};
    if (!w->owner) continue;
    int rc = w->kind == 'S' ? siox_class_owners(db, siox_uf_find(&db->objects, w->object_id), &w->fan) : 0;
    if (rc) return rc;
    siox_shards_add(&w->fan, w->owner);
  }
  return 0;
}

/* The batch's remote calls other shards own go to shard_outbox, a row per
 * shard (fan_out), in the batch's transaction: the outbox holds a call
 * exactly when it is stored. A resent batch forwards, to each shard, as
 * many copies of a call as it stored (siox_rc_new): the n-th staged row of
 * a shard and call goes when n <= that number. */
static int copy_outbox(struct siox_db *db, const struct rc_rows *rows) {
  struct siox_copybuf *c = &db->copy2;
  size_t n = 0;
  siox_copybuf_start(c);
  for (size_t i = 0; i < rows->n; i++) {
    const struct rc_row *w = &rows->v[i];
    for (int k = 1; w->owner && k <= db->nshards; k++) {
      if (k == db->shard || !siox_shards_has(&w->fan, k)) continue; /* this shard's own, or no owner of it */
      siox_copybuf_row(c, 8);
      siox_copybuf_i32(c, k);
      siox_copybuf_i64(c, w->aid);
      siox_copybuf_text(c, &w->kind, 1);
      siox_copybuf_i64(c, w->desc_id);
      siox_copybuf_i64(c, w->offset);
      siox_copybuf_i64(c, w->length);
      siox_copybuf_text(c, w->hw, strlen(w->hw));
      siox_copybuf_text(c, w->sw, strlen(w->sw));
      n++;
    }
  }
  int rc = siox_copybuf_finish(c);
  if (rc || !n) return rc;
  if (!db->resend) return siox_db_copy(db->conn, "COPY shard_outbox (" OB_COLUMNS ") FROM STDIN (FORMAT binary)", c->p, c->len);
  if (siox_db_exec(db->conn, "CREATE TEMP TABLE IF NOT EXISTS siox_stage_ob ON COMMIT DELETE ROWS AS"
                             " SELECT " OB_COLUMNS " FROM shard_outbox WITH NO DATA") ||
      siox_db_copy(db->conn, "COPY siox_stage_ob (" OB_COLUMNS ") FROM STDIN (FORMAT binary)", c->p, c->len) ||
      siox_db_exec(db->conn, "INSERT INTO shard_outbox (" OB_COLUMNS ") SELECT " OB_COLUMNS " FROM (SELECT *,"
                             " row_number() OVER (PARTITION BY owner, " RC_SAME ") AS nth FROM siox_stage_ob) s"
                             " WHERE s.nth <= (SELECT count(*) FROM siox_rc_new r WHERE (" RC_SAME ") = (s.aid, s.kind,"
                             " s.desc_id, s.offset_b, s.length_b, s.target_hwid, s.target_swid))"))
    return -EIO;
  return 0;
}

static int one_record(struct siox_db *db, const struct siox_block *b, int64_t proc_id,
                      const struct siox_block_descriptor *r, char *reason, size_t rlen, struct rc_rows *rows) {
  struct desc d, to;
  if (r->nvalues < 1 || (r->kind == SIOX_DESC_MAP && r->nvalues < 2))
    return snprintf(reason, rlen, "descriptor record of kind %u without its values", r->kind), -EBADMSG;
  int rc = resolve(db, b, proc_id, r->proc, &r->values[0], &d, r->kind == SIOX_DESC_RELEASE);
  if (rc) return rc;
  switch (r->kind) {
  case SIOX_DESC_CREATE:
  case SIOX_DESC_RELEASE: return 0;
  case SIOX_DESC_MAP:
    if ((rc = resolve(db, b, proc_id, r->proc, &r->values[1], &to, 0)) == 0 &&
        (rc = join(db, d.object_id, to.object_id, 1)) == 0)
      rc = add_mapping(db, proc_id, r, d.desc_id, to.desc_id);
    return rc;
  case SIOX_DESC_SEND:
  case SIOX_DESC_RECEIVE:
    if (!r->aid) return snprintf(reason, rlen, "send/receive record without an activity"), -EBADMSG;
    rc = remote_call(db, proc_id, r, &d, rows);
    if (rc == -ENOENT) return snprintf(reason, rlen, SIOX_RULE_UNKNOWN_TARGET " (target %u)", r->node), -EBADMSG;
    return rc;
  default: return snprintf(reason, rlen, "unknown descriptor record kind %u", r->kind), -EBADMSG;
  }
}

/* A receive the window can take: its interval and node known, and the only
 * receive record of its activity (the SQL matcher joins an activity's
 * receive records on several objects into one candidate set): none other
 * in the batch, nor stored by an earlier one (rc_waiting.c). */
static int window_receive(const struct siox_db *db, const struct rc_rows *rows, size_t i) {
  const struct rc_row *w = &rows->v[i];
  for (size_t k = i; k > 0 && rows->v[k - 1].aid == w->aid; k--)
    if (rows->v[k - 1].kind == 'R') return 0;
  for (size_t k = i + 1; k < rows->n && rows->v[k].aid == w->aid; k++)
    if (rows->v[k].kind == 'R') return 0;
  return w->node_id != 0 && !siox_rc_waiting_has(db, w->aid);
}

/* Receive records stored without their activity go to the SQL matcher:
 * noted, so that the activity's other receive records follow them. With
 * the map unknown, the warehouse is asked about this batch's receives. */
static int note_waiting(struct siox_db *db, const struct rc_rows *rows) {
  int64_t *ask = db->rc_waiting_unknown ? malloc((rows->n + 1) * sizeof *ask) : NULL;
  size_t n = 0;
  if (db->rc_waiting_unknown && !ask) return -ENOMEM;
  for (size_t i = 0; i < rows->n; i++) {
    const struct rc_row *w = &rows->v[i];
    if (w->kind != 'R') continue;
    if (!w->has_times) siox_rc_waiting_add(db, w->aid);
    else if (ask && (n == 0 || ask[n - 1] != w->aid)) ask[n++] = w->aid;
  }
  int rc = siox_rc_waiting_ask(db, ask, n);
  free(ask);
  return rc;
}

/* The batch's activities have arrived: no record of theirs waits now. */
static void arrived(struct siox_db *db, const struct siox_block *b, const int64_t *proc_ids) {
  for (size_t i = 0; db->rc_waiting.n && i < b->n_activities; i++)
    siox_rc_waiting_arrived(db, siox_global_aid(proc_ids[b->activities[i].proc], b->activities[i].aid));
}

/* Tells the window of rows it will not link (a resent batch's): as ghosts,
 * their neighbours are left to the SQL matcher. */
static void ghost_rows(struct siox_db *db, const struct rc_rows *rows) {
  for (size_t i = 0; i < rows->n; i++) {
    const struct rc_row *w = &rows->v[i];
    if (w->has_times)
      siox_mw_ghost(db->mw, w->kind, siox_uf_find(&db->objects, w->object_id), w->start, w->end, w->offset, w->length);
  }
}

/* Links the batch's remote calls in memory (match_memory.c) and marks
 * each row in_memory for the COPY. Calls the window cannot take
 * go in as ghosts first, so that what meets them is left to SQL too. */
static int link_in_memory(struct siox_db *db, uint64_t daemon_id, int64_t unc_ns, struct rc_rows *rows) {
  struct siox_mw_call *calls = malloc((rows->n + 1) * sizeof *calls);
  size_t *at = malloc((rows->n + 1) * sizeof *at), n = 0;
  int rc = calls && at ? note_waiting(db, rows) : -ENOMEM;
  for (size_t i = 0; rc == 0 && i < rows->n; i++) {
    struct rc_row *w = &rows->v[i];
    int64_t root = siox_uf_find(&db->objects, w->object_id);
    if (!w->has_times) continue;
    /* A call this shard owns (a sender: one of its object's names is
     * owned here) may meet other shards' calls, which reach the warehouse
     * outside ingest (forward.c): the SQL matcher links its object, and as
     * a ghost it sends what meets it there too. */
    if ((w->owner && siox_shards_has(&w->fan, db->shard)) || (w->kind == 'R' && !window_receive(db, rows, i))) {
      siox_mw_ghost(db->mw, w->kind, root, w->start, w->end, w->offset, w->length);
      continue;
    }
    struct siox_mw_call *c = &calls[n];
    *c = (struct siox_mw_call){.aid = w->aid, .object = root, .offset = w->offset, .length = w->length,
                               .start = w->start, .end = w->end, .kind = w->kind};
    if (w->kind == 'R') rc = siox_match_memory_node(db, w->node_id, &c->hw, &c->sw);
    else c->hw = siox_mw_intern(db->mw, w->hw, 1), c->sw = siox_mw_intern(db->mw, w->sw, 1);
    if (c->hw == UINT32_MAX || c->sw == UINT32_MAX) rc = -ENOMEM;
    at[n++] = i;
  }
  if (rc == 0) rc = siox_match_memory(db, daemon_id, unc_ns, calls, n);
  for (size_t k = 0; rc == 0 && k < n; k++) rows->v[at[k]].in_memory = (char)calls[k].in_memory;
  free(calls), free(at);
  return rc == -ENOMEM ? -EIO : rc;
}

int siox_objects_ingest(struct siox_db *db, const struct siox_block *b, const int64_t *proc_ids, int64_t clock_offset_ns,
                        uint64_t daemon_id, int64_t unc_ns, char *reason, size_t reason_len) {
  struct rc_rows rows = {NULL, 0, 0};
  int rc = db->resend ? stage_mappings(db) : 0;
  for (size_t i = 0; rc == 0 && i < b->n_descriptors; i++)
    rc = one_record(db, b, proc_ids[b->descriptors[i].proc], &b->descriptors[i], reason, reason_len, &rows);
  if (rc == 0 && db->resend) rc = store_mappings_resent(db);
  if (rc == 0 && rows.n) {
    add_times(db, b, proc_ids, clock_offset_ns, &rows);
    if (db->forward) rc = fan_out(db, &rows);
    /* A resent batch's calls go to the SQL matcher (the window may hold
     * their first copies), but the window must still know them, as ghosts,
     * so that it never decides a receive without a stored sender. */
    if (rc == 0 && db->mw && !db->resend) rc = link_in_memory(db, daemon_id, unc_ns, &rows);
    else if (rc == 0 && db->mw) ghost_rows(db, &rows);
    if (rc == 0) rc = copy_remote_calls(db, &rows);
    if (rc == 0 && db->forward) rc = copy_outbox(db, &rows);
  }
  if (rc == 0 && db->mw) arrived(db, b, proc_ids);
  free(rows.v);
  return rc == -EEXIST ? -EIO : rc;
}

/* One mapping a peer told of (row i of r: origin, ob_id, type_a, value_a,
 * type_b, value_b): both global names resolved here (created if new) and
 * their objects joined, as a MAP recorded here would, but not told again
 * (its origin told every peer). */
static int apply_map(struct siox_db *db, PGresult *r, int i) {
  struct desc a, b;
  char *key = NULL;
  size_t klen;
  int rc = find_desc(db, "", (uint32_t)strtoul(PQgetvalue(r, i, 2), NULL, 10), PQgetvalue(r, i, 3), &a, &key, &klen);
  free(key), key = NULL;
  if (rc == 0) rc = find_desc(db, "", (uint32_t)strtoul(PQgetvalue(r, i, 4), NULL, 10), PQgetvalue(r, i, 5), &b, &key, &klen);
  free(key);
  return rc ? rc : join(db, a.object_id, b.object_id, 0);
}

#define MAPS_PER_TXN "500"

int siox_objects_apply_maps(struct siox_db *db) {
  PGresult *r = siox_db_query(db->conn,
                              "SELECT origin, ob_id, type_a, value_a, type_b, value_b FROM shard_map_inbox"
                              " WHERE NOT applied ORDER BY origin, ob_id LIMIT " MAPS_PER_TXN, 0, NULL);
  if (!r) return -EIO;
  int rc = PQntuples(r) ? siox_db_exec(db->conn, "BEGIN") : 0;
  for (int i = 0; rc == 0 && i < PQntuples(r); i++) {
    const char *p[] = {PQgetvalue(r, i, 0), PQgetvalue(r, i, 1)};
    PGresult *u;
    if ((rc = apply_map(db, r, i)) == 0 &&
        (u = siox_db_query(db->conn, "UPDATE shard_map_inbox SET applied = true WHERE origin = $1 AND ob_id = $2", 2, p)))
      PQclear(u);
    else if (rc == 0)
      rc = -EIO;
  }
  if (rc == 0 && PQntuples(r)) rc = siox_db_exec(db->conn, "COMMIT");
  if (rc) {
    PQclear(PQexec(db->conn, "ROLLBACK"));
    siox_db_caches_clear(db); /* the joins' ids never committed */
    rc = -EIO;
  }
  PQclear(r);
  return rc;
}
