/*
 * The forwarder (issue 15 §2): a shard's remote calls that another shard
 * owns (shard_owner.c) wait in shard_outbox, written by ingest in the
 * batch's transaction. This thread copies those whose activity is stored
 * (so their interval, node and daemon uncertainty are known) to the owner,
 * in one transaction there that skips what the owner already holds
 * (shard_inbox, keyed by origin shard and outbox id), and deletes them here
 * only after the owner committed. At-least-once transfer plus an idempotent
 * insert: each call reaches its owner exactly once. An owner that is down
 * keeps its rows here (status: forward_pending, forward_peers_down) and gets
 * them when it is back; ingest never waits for it, since this thread has
 * its own connections. Joins of global names (shard_map_outbox, schema
 * 033) go to every peer the same way, before the calls. Protocol:
 * warehouse/README.md, "Cross-shard causality".
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server.h"

#define ROWS_PER_TXN 2000
#define ROUNDS_PER_PEER 16 /* full transactions to one owner before the next owner's turn */
#define BACKOFF_MAX_MS 5000
#define IDLE_MS 100 /* a look at the outbox when the last found nothing (or --match-ms if shorter) */

struct peer {
  const char *conninfo; /* NULL: no such peer (or this shard) */
  PGconn *c;
  int64_t next_try_ms;
  unsigned backoff_ms;
  int down;
};

struct siox_forwarder {
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int stop;
  char *conninfo;
  PGconn *local;
  int shard, nshards, period_ms;
  struct peer peers[SIOX_SERVER_SHARDS_MAX + 1];
  struct siox_forward_stats st;
  struct siox_copybuf buf;
  int64_t maps_next_ms; /* next look at shard_map_outbox: mappings are rare, so not every round while calls flow */
};

/* The outbox rows for one owner whose activity is stored, oldest first:
 * the interval and node come from the activity, the uncertainty from its
 * daemon (the latest, as the local SQL matcher reads it). A row whose
 * activity never comes stays, counted in forward_pending. */
static const char pick_sql[] =
    "SELECT o.ob_id, o.aid, o.kind, d.type, d.value, o.offset_b, o.length_b, o.target_hwid, o.target_swid,"
    " a.start_ns, a.end_ns, n.hwid, n.swid, dm.clock_uncertainty_ns"
    " FROM shard_outbox o JOIN descriptors d ON d.desc_id = o.desc_id JOIN activities a ON a.aid = o.aid"
    " JOIN nodes n ON n.node_id = a.node_id JOIN processes p ON p.proc_id = a.proc_id"
    " JOIN daemons dm ON dm.daemon_id = p.daemon_id"
    " WHERE o.owner = $1 ORDER BY o.ob_id LIMIT $2";

/* On the owner, in one transaction after the COPY into siox_fwd_in. The
 * shared advisory lock comes first: the owner's matcher takes it exclusive
 * so that it never moves its watermark past an rc_id drawn here and not
 * committed (match.c). Rows it already holds are dropped; new global
 * descriptors get an object; the calls go in under their object's root,
 * with origin set. */
static const char *const owner_sql[] = {
    "CREATE TEMP TABLE IF NOT EXISTS siox_fwd_in (origin integer, ob_id bigint, aid bigint, kind text, type integer,"
    " value text, offset_b bigint, length_b bigint, target_hwid text, target_swid text, start_ns bigint,"
    " end_ns bigint, hwid text, swid text, unc_ns bigint) ON COMMIT DELETE ROWS",
    "DELETE FROM siox_fwd_in f USING shard_inbox i WHERE i.origin = f.origin AND i.ob_id = f.ob_id",
    "INSERT INTO shard_inbox (origin, ob_id) SELECT origin, ob_id FROM siox_fwd_in",
    "WITH need AS (SELECT t.type, t.value, nextval('objects_object_id_seq') AS object_id FROM"
    "  (SELECT DISTINCT f.type, f.value FROM siox_fwd_in f WHERE NOT EXISTS (SELECT 1 FROM descriptors d"
    "   WHERE d.scope_key = '' AND d.type = f.type AND d.value = f.value AND NOT d.released)) t),"
    " o AS (INSERT INTO objects (object_id) SELECT object_id FROM need)"
    " INSERT INTO descriptors (scope_key, type, value, object_id) SELECT '', type, value, object_id FROM need"
    " ON CONFLICT (scope_key, type, value) WHERE NOT released DO NOTHING",
    "INSERT INTO remote_calls (aid, kind, object_id, desc_id, offset_b, length_b, target_hwid, target_swid,"
    " start_ns, end_ns, origin)"
    " SELECT f.aid, f.kind::\"char\", COALESCE(o.merged_into, o.object_id), d.desc_id, f.offset_b, f.length_b,"
    " f.target_hwid, f.target_swid, f.start_ns, f.end_ns, f.origin FROM siox_fwd_in f"
    " JOIN descriptors d ON d.scope_key = '' AND d.type = f.type AND d.value = f.value AND NOT d.released"
    " JOIN objects o ON o.object_id = d.object_id",
    "INSERT INTO shard_actors (aid, hwid, swid, unc_ns)"
    " SELECT DISTINCT ON (aid) aid, hwid, swid, unc_ns FROM siox_fwd_in ORDER BY aid, unc_ns DESC"
    " ON CONFLICT (aid) DO UPDATE SET unc_ns = EXCLUDED.unc_ns"};

/* Mappings another shard must know (schema 033): two global names of one
 * object, sent at once (nothing to wait for), stored once per (origin,
 * outbox id); the owner's database thread joins them (objects.c). */
static const char map_pick_sql[] =
    "SELECT m.ob_id, a.type, a.value, b.type, b.value FROM shard_map_outbox m"
    " JOIN descriptors a ON a.desc_id = m.desc_a JOIN descriptors b ON b.desc_id = m.desc_b"
    " WHERE m.owner = $1 ORDER BY m.ob_id LIMIT $2";
static const char *const map_owner_sql[] = {
    "CREATE TEMP TABLE IF NOT EXISTS siox_map_in (origin integer, ob_id bigint, type_a integer, value_a text,"
    " type_b integer, value_b text) ON COMMIT DELETE ROWS",
    "INSERT INTO shard_map_inbox (origin, ob_id, type_a, value_a, type_b, value_b) SELECT * FROM siox_map_in"
    " ON CONFLICT (origin, ob_id) DO NOTHING"};

/* What goes to an owner: picked here, encoded, stored there by its
 * statements (the first creates the temp table the COPY fills), deleted
 * here once the owner committed. */
struct lane {
  const char *pick, *copy, *del;
  const char *const *owner_sql;
  size_t n_owner_sql;
  int lock; /* the owner's matcher lock, shared: the rows draw rc_ids there */
  int (*encode)(struct siox_forwarder *f, PGresult *r);
};

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A connection with a connect timeout the conninfo may override. */
static PGconn *connect_quietly(const char *conninfo) {
  const char *const keys[] = {"connect_timeout", "fallback_application_name", "dbname", NULL};
  const char *const vals[] = {"5", "siox-server-forward", conninfo, NULL};
  PGconn *c = PQconnectdbParams(keys, vals, 1);
  if (PQstatus(c) == CONNECTION_OK) return PQclear(PQexec(c, "SET client_min_messages = warning")), c;
  PQfinish(c);
  return NULL;
}

/* Owner j's connection, once it is shard j of this site: a --shard-peer
 * naming another shard's database would store the calls where nobody
 * matches them, and they would leave the outbox as delivered. A stalled
 * transaction of ours holds the owner's matcher lock (SIOX_FORWARD_LOCK_KEY)
 * for no longer than the idle timeout. */
static PGconn *connect_owner(const char *conninfo, int j, int n) {
  PGconn *c = connect_quietly(conninfo);
  if (!c) return NULL;
  PGresult *r = siox_db_query(c, "SELECT shard, nshards FROM shard_config", 0, NULL);
  int ok = r && PQntuples(r) == 1 && atoi(PQgetvalue(r, 0, 0)) == j && atoi(PQgetvalue(r, 0, 1)) == n &&
           siox_db_exec(c, "SET idle_in_transaction_session_timeout = '10s'") == 0;
  if (!ok)
    siox_log("forward: --shard-peer %d leads to %s, not shard %d/%d: its calls wait in shard_outbox", j,
             r && PQntuples(r) == 1 ? "another shard" : "a database that is no shard", j, n);
  PQclear(r);
  if (ok) return c;
  PQfinish(c);
  return NULL;
}

/* The picked rows, as binary COPY data for siox_fwd_in. */
static int encode_calls(struct siox_forwarder *f, PGresult *r) {
  struct siox_copybuf *c = &f->buf;
  siox_copybuf_start(c);
  for (int i = 0; i < PQntuples(r); i++) {
    siox_copybuf_row(c, 15);
    siox_copybuf_i32(c, f->shard);
    for (int col = 0; col < 14; col++) {
      const char *v = PQgetvalue(r, i, col);
      /* text columns: kind, value, target hwid/swid, node hwid/swid; type is integer */
      if (col == 2 || col == 4 || col == 7 || col == 8 || col == 11 || col == 12) siox_copybuf_text(c, v, strlen(v));
      else if (col == 3) siox_copybuf_i32(c, (int32_t)strtol(v, NULL, 10));
      else siox_copybuf_i64(c, strtoll(v, NULL, 10));
    }
  }
  return siox_copybuf_finish(c);
}

/* The picked mappings, as binary COPY data for siox_map_in. */
static int encode_maps(struct siox_forwarder *f, PGresult *r) {
  struct siox_copybuf *c = &f->buf;
  siox_copybuf_start(c);
  for (int i = 0; i < PQntuples(r); i++) {
    siox_copybuf_row(c, 6);
    siox_copybuf_i32(c, f->shard);
    siox_copybuf_i64(c, strtoll(PQgetvalue(r, i, 0), NULL, 10));
    for (int col = 1; col < 5; col += 2) {
      siox_copybuf_i32(c, (int32_t)strtol(PQgetvalue(r, i, col), NULL, 10));
      siox_copybuf_text(c, PQgetvalue(r, i, col + 1), strlen(PQgetvalue(r, i, col + 1)));
    }
  }
  return siox_copybuf_finish(c);
}

static const struct lane lanes[] = {
    {map_pick_sql, "COPY siox_map_in FROM STDIN (FORMAT binary)",
     "DELETE FROM shard_map_outbox WHERE ob_id = ANY($1::bigint[])", map_owner_sql,
     sizeof map_owner_sql / sizeof map_owner_sql[0], 0, encode_maps},
    {pick_sql, "COPY siox_fwd_in FROM STDIN (FORMAT binary)", "DELETE FROM shard_outbox WHERE ob_id = ANY($1::bigint[])",
     owner_sql, sizeof owner_sql / sizeof owner_sql[0], 1, encode_calls},
};

/* One transaction on the owner. 0 once it committed, else -EIO (the
 * connection is dropped and the transaction with it). */
static int deliver(struct peer *p, const struct lane *l, const struct siox_copybuf *data) {
  int rc = siox_db_exec(p->c, l->lock ? "BEGIN; SELECT pg_advisory_xact_lock_shared(" SIOX_FORWARD_LOCK_KEY ")" : "BEGIN");
  for (size_t i = 0; rc == 0 && i < l->n_owner_sql; i++) {
    rc = siox_db_exec(p->c, l->owner_sql[i]);
    if (rc == 0 && i == 0) rc = siox_db_copy(p->c, l->copy, data->p, data->len) ? -EIO : 0;
  }
  if (rc == 0) rc = siox_db_exec(p->c, "COMMIT");
  if (rc) PQfinish(p->c), p->c = NULL;
  return rc;
}

/* The ids "{1,2,...}" of the picked rows (column 0). NULL: no memory. */
static char *id_list(PGresult *r) {
  size_t cap = (size_t)PQntuples(r) * 21 + 3, len = 0;
  char *s = malloc(cap);
  if (!s) return NULL;
  s[len++] = '{';
  for (int i = 0; i < PQntuples(r); i++) len += (size_t)snprintf(s + len, cap - len, "%s%s", i ? "," : "", PQgetvalue(r, i, 0));
  snprintf(s + len, cap - len, "}");
  return s;
}

/* Moves up to ROWS_PER_TXN rows of lane l to owner j: the number moved,
 * or -EIO (owner unreachable or failed) or -ENOTCONN (this shard's
 * database). */
static int forward_some(struct siox_forwarder *f, int j, const struct lane *l) {
  struct peer *p = &f->peers[j];
  char owner[16], limit[16];
  snprintf(owner, sizeof owner, "%d", j);
  snprintf(limit, sizeof limit, "%d", ROWS_PER_TXN);
  const char *param[] = {owner, limit};
  PGresult *r = siox_db_query(f->local, l->pick, 2, param);
  if (!r) return -ENOTCONN;
  int n = PQntuples(r), rc = 0;
  if (n == 0) return PQclear(r), 0;
  if (!p->c && !(p->c = connect_owner(p->conninfo, j, f->nshards))) rc = -EIO;
  if (rc == 0 && l->encode(f, r) != 0) rc = -ENOMEM;
  if (rc == 0) rc = deliver(p, l, &f->buf);
  char *ids = rc == 0 ? id_list(r) : NULL;
  PQclear(r);
  if (rc) return rc;
  /* The owner holds them now. A delete lost here (this database gone)
   * sends them again later, and the owner's shard_inbox drops them. */
  const char *del[] = {ids};
  PGresult *d = ids ? siox_db_query(f->local, l->del, 1, del) : NULL;
  free(ids);
  PQclear(d);
  if (!d) return -ENOTCONN;
  f->st.forwarded += n; /* only once they left the outbox: a resent row counts once */
  return n;
}

static void peer_failed(struct siox_forwarder *f, int j) {
  struct peer *p = &f->peers[j];
  p->backoff_ms = p->backoff_ms ? (p->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : p->backoff_ms * 2) : 100;
  p->next_try_ms = now_ms() + p->backoff_ms;
  if (!p->down) siox_log("forward: shard %d unreachable; its remote calls wait in shard_outbox", j);
  p->down = 1;
}

static void peer_ok(struct siox_forwarder *f, int j) {
  struct peer *p = &f->peers[j];
  if (p->down) siox_log("forward: shard %d reachable again", j);
  p->down = 0, p->backoff_ms = 0, p->next_try_ms = 0;
}

/* One turn for every owner that is due. Returns 1 when rows moved. */
static int round_once(struct siox_forwarder *f) {
  int moved = 0, maps = now_ms() >= f->maps_next_ms;
  if (maps) f->maps_next_ms = now_ms() + f->period_ms;
  for (int j = 1; j <= f->nshards; j++) {
    if (!f->peers[j].conninfo || now_ms() < f->peers[j].next_try_ms) continue;
    int n = 0, sent = 0;
    /* Mappings first: the owner then joins before the calls arrive (either
     * order links the same; this one moves fewer rows there). */
    for (size_t l = maps ? 0 : 1; l < sizeof lanes / sizeof lanes[0] && n >= 0; l++) {
      n = ROWS_PER_TXN;
      for (int k = 0; k < ROUNDS_PER_PEER && n == ROWS_PER_TXN; k++) {
        if ((n = forward_some(f, j, &lanes[l])) == -ENOTCONN) return moved;
        if (n < 0) break;
        sent += n;
      }
      if (l == 0 && n == ROWS_PER_TXN) f->maps_next_ms = 0; /* more wait: look again next round */
    }
    /* Nothing to send says nothing about the owner: its state stands. */
    if (n < 0) peer_failed(f, j);
    else if (sent) peer_ok(f, j), moved = 1;
  }
  int64_t down = 0, pending = 0;
  for (int j = 1; j <= f->nshards; j++) down += f->peers[j].down;
  PGresult *r = siox_db_query(f->local, "SELECT (SELECT count(*) FROM shard_outbox) + (SELECT count(*) FROM shard_map_outbox)",
                              0, NULL);
  if (r) pending = strtoll(PQgetvalue(r, 0, 0), NULL, 10), f->st.pending = pending;
  PQclear(r);
  f->st.peers_down = down;
  return moved;
}

/* Sleeps ms; 1 when asked to stop. */
static int nap(struct siox_forwarder *f, int ms) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += ms / 1000;
  until.tv_nsec += (long)(ms % 1000) * 1000000;
  if (until.tv_nsec >= 1000000000) until.tv_sec++, until.tv_nsec -= 1000000000;
  pthread_mutex_lock(&f->mu);
  while (!f->stop && pthread_cond_timedwait(&f->cv, &f->mu, &until) != ETIMEDOUT) {
  }
  int stop = f->stop;
  pthread_mutex_unlock(&f->mu);
  return stop;
}

static void *run(void *arg) {
  struct siox_forwarder *f = arg;
  int moved = 0;
  while (!nap(f, moved ? 1 : f->period_ms)) {
    if (f->local && PQstatus(f->local) != CONNECTION_OK) PQfinish(f->local), f->local = NULL;
    if (!f->local && !(f->local = connect_quietly(f->conninfo))) continue; /* this shard's database: retry */
    moved = round_once(f);
  }
  return NULL;
}

struct siox_forwarder *siox_forward_start(const struct siox_server_options *o, const char *conninfo) {
  if (!o->shard || !o->n_shard_peer) return NULL;
  struct siox_forwarder *f = calloc(1, sizeof *f);
  if (!f || !(f->conninfo = strdup(conninfo))) return free(f), NULL;
  f->shard = o->shard, f->nshards = o->nshards, f->period_ms = o->match_ms < IDLE_MS ? o->match_ms : IDLE_MS;
  for (int j = 1; j <= o->nshards; j++) {
    f->peers[j].conninfo = o->shard_peer[j];
  }
  siox_copybuf_init(&f->buf);
  pthread_mutex_init(&f->mu, NULL);
  pthread_cond_init(&f->cv, NULL);
  if (pthread_create(&f->thread, NULL, run, f) != 0) {
    siox_copybuf_free(&f->buf);
    free(f->conninfo), free(f);
    return NULL;
  }
  return f;
}

const struct siox_forward_stats *siox_forward_stats(const struct siox_forwarder *f) { return &f->st; }

void siox_forward_stop(struct siox_forwarder *f) {
  if (!f) return;
  pthread_mutex_lock(&f->mu);
  f->stop = 1;
  pthread_cond_signal(&f->cv);
  pthread_mutex_unlock(&f->mu);
  pthread_join(f->thread, NULL);
  for (int j = 1; j <= f->nshards; j++) PQfinish(f->peers[j].c);
  PQfinish(f->local);
  siox_copybuf_free(&f->buf);
  pthread_mutex_destroy(&f->mu);
  pthread_cond_destroy(&f->cv);
  free(f->conninfo);
  free(f);
}
