/*
 * The database thread. libpq calls block, so every warehouse job (Hello
 * lookups, batch ingest, matcher passes) runs here, one at a time and in
 * submission order, which keeps each daemon's batches in sequence. Results
 * come back to the libuv loop through a uv_async_t.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "match_window.h"
#include "server.h"

void siox_db_caches_clear(struct siox_db *db) {
  siox_hmap_clear(&db->procs);
  siox_hmap_clear(&db->nodes);
  siox_hmap_clear(&db->types);
  siox_hmap_clear(&db->targets);
  siox_hmap_clear(&db->edges);
  siox_hmap_clear(&db->descs);
  siox_hmap_clear(&db->owners);
  siox_uf_clear(&db->objects);
  siox_hmap_clear(&db->node_names);
  if (db->mw) siox_mw_reset(db->mw); /* it may hold calls of a rolled-back batch */
  siox_grant_queue_rollback(&db->grants);
  siox_rc_waiting_unknown(db); /* and may have taken out aids whose activity was rolled back */
  for (size_t i = 0; i < db->n_targets * 2; i++) free(db->target_names[i]);
  db->n_targets = 0;
}

/* The database thread's statements are short: a batch's COPYs, index
 * probes, the matcher's passes. PostgreSQL's JIT compiles any plan it
 * estimates above jit_above_cost, and on a growing warehouse the matcher's
 * queries and the grant pass cross it: each then spent 50-200 ms in LLVM
 * (a fifth of the backend's time in bench_match) to run for a few ms. */
static PGconn *connect_db(const char *conninfo) {
  PGconn *c = siox_db_connect(conninfo, 0);
  if (c && siox_db_exec(c, "SET jit = off") != 0) PQfinish(c), c = NULL;
  return c;
}

#define RECONNECT_MIN_MS 100
#define RECONNECT_MAX_MS 5000

static int64_t mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Reconnects when the database went away (a killed backend, a restarted or
 * crashed postmaster), with exponential backoff: between attempts, jobs fail
 * at once with -EIO and their daemons retry later. When the embedded
 * cluster's postmaster is gone, it is restarted (siox_pg_revive). Each step
 * is logged once, not once per job. */
static void ensure_connected(struct siox_worker *w) {
  struct siox_db *db = &w->db;
  if (db->conn && PQstatus(db->conn) == CONNECTION_OK) return;
  int64_t now = mono_ms();
  if (w->db_ok) {
    siox_log("%s: database connection lost; reconnecting", w->name);
    w->db_ok = 0;
    w->backoff_ms = 0;
    w->attempts = 0;
    w->next_try_ms = now;
  }
  if (now < w->next_try_ms) return;
  if (db->conn) PQfinish(db->conn);
  db->conn = connect_db(db->conninfo);
  if (!db->conn && siox_pg_revive() == 0) db->conn = connect_db(db->conninfo);
  siox_db_caches_clear(db);
  db->grants.all = 1; /* whether the last COMMIT landed is not known */
  db->match_watermark = -1; /* reload from match_state */
  db->activities_arrived = 1;
  db->parked = -1;
  db->sql_left = 1;
  w->attempts++;
  if (db->conn) {
    w->db_reconnects++;
    w->db_ok = 1;
    siox_log("%s: database reconnected (attempt %u)", w->name, w->attempts);
    return;
  }
  w->backoff_ms = w->backoff_ms ? w->backoff_ms * 2 : RECONNECT_MIN_MS;
  if (w->backoff_ms > RECONNECT_MAX_MS) w->backoff_ms = RECONNECT_MAX_MS;
  w->next_try_ms = now + w->backoff_ms;
  siox_log("%s: database unreachable (attempt %u); next attempt in %u ms", w->name, w->attempts, w->backoff_ms);
}

static struct siox_job *pop(struct siox_job **head, struct siox_job **tail) {
  struct siox_job *j = *head;
  if (j && !(*head = j->next)) *tail = NULL;
  return j;
}

static void push(struct siox_job **head, struct siox_job **tail, struct siox_job *j) {
  j->next = NULL;
  if (*tail) (*tail)->next = j;
  else *head = j;
  *tail = j;
}

static void *thread_main(void *arg) {
  struct siox_worker *w = arg;
  pthread_mutex_lock(&w->mu);
  for (;;) {
    struct siox_job *j = pop(&w->in_head, &w->in_tail);
    if (!j) {
      if (w->stop) break;
      pthread_cond_wait(&w->cv, &w->mu);
      continue;
    }
    pthread_mutex_unlock(&w->mu);
    ensure_connected(w);
    j->run(j, &w->db);
    if (PQstatus(w->db.conn) != CONNECTION_OK) ensure_connected(w); /* log the loss now, retry on the next job */
    pthread_mutex_lock(&w->mu);
    push(&w->out_head, &w->out_tail, j);
    uv_async_send(&w->async);
  }
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

static void on_async(uv_async_t *a) {
  struct siox_worker *w = a->data;
  pthread_mutex_lock(&w->mu);
  struct siox_job *list = w->out_head;
  w->out_head = w->out_tail = NULL;
  pthread_mutex_unlock(&w->mu);
  while (list) {
    struct siox_job *next = list->next;
    list->done(list, NULL);
    list = next;
  }
}

int siox_worker_start(struct siox_worker *w, uv_loop_t *loop, const char *conninfo, const char *name) {
  memset(w, 0, sizeof *w);
  w->name = name;
  w->db.conninfo = strdup(conninfo);
  w->db.conn = connect_db(conninfo);
  if (!w->db.conninfo || !w->db.conn) return free(w->db.conninfo), -EIO;
  w->db.match_watermark = -1;
  w->db.activities_arrived = 1; /* remote calls parked by an earlier run may be complete now */
  w->db.parked = -1;
  w->db.sql_left = 1;
  w->db.grants.all = 1; /* the first grant pass reads the links of earlier runs */
  w->db.rc_waiting_unknown = 1; /* receive records an earlier run stored may wait */
  w->db_ok = 1;
  pthread_mutex_init(&w->mu, NULL);
  pthread_cond_init(&w->cv, NULL);
  uv_async_init(loop, &w->async, on_async);
  w->async.data = w;
  int rc = pthread_create(&w->thread, NULL, thread_main, w);
  return rc ? -rc : 0;
}

void siox_worker_submit(struct siox_worker *w, struct siox_job *j) {
  pthread_mutex_lock(&w->mu);
  push(&w->in_head, &w->in_tail, j);
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->mu);
}

void siox_worker_stop(struct siox_worker *w) {
  pthread_mutex_lock(&w->mu);
  w->stop = 1;
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->mu);
  pthread_join(w->thread, NULL);
  on_async(&w->async); /* deliver what finished after the loop stopped */
  uv_close((uv_handle_t *)&w->async, NULL);
  siox_db_caches_clear(&w->db);
  free(w->db.target_names);
  siox_copybuf_free(&w->db.copy);
  siox_copybuf_free(&w->db.copy2);
  siox_mw_free(w->db.mw);
  siox_grant_queue_free(&w->db.grants);
  PQfinish(w->db.conn);
  free(w->db.conninfo);
}
