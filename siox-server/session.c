/*
 * The daemon <-> server conversation, one complete frame at a time (net.c
 * cuts them): Hello with its credential first, then Batch, Ping, StatusRequest.
 * Hello and Batch become jobs for the database thread (worker.c); their
 * replies (HelloReply, Ack, Error) are sent when the job comes back.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server.h"
#include "siox_block.h"
#include "siox_frame.h"
#include "text.h"

/* Batches of one connection waiting for the database before we stop
 * reading from it: bounds memory, and TCP pushes back on the daemon. */
#define MAX_PENDING_BATCHES 4

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- Hello ---------------------------------------------------------------- */

/* A Hello travels: loop (unpacked) -> libuv threadpool (authenticated:
 * munge_decode talks to munged and must not stall the loop) -> loop
 * (hint links answered; other live sessions checked for the daemon id) ->
 * database thread (ownership in the warehouse, acked_seq) -> loop (reply). */
struct hello_job {
  struct siox_job base;
  uv_work_t auth;
  struct siox_conn *conn;
  Siox__Hello *msg;
  struct siox_owner who;
  int rc;
  uint64_t acked;
  char why[320];
};

static void hello_free(struct hello_job *h) {
  siox__hello__free_unpacked(h->msg, NULL);
  siox_conn_unref(h->conn);
  free(h);
}

static void hello_run(struct siox_job *j, struct siox_db *db) {
  struct hello_job *h = (struct hello_job *)j;
  h->rc = siox_ingest_hello(db, h->msg->daemon_id, &h->who, &h->acked, h->why, sizeof h->why);
}

/* Refuses a daemon id that another identity holds (logged with both). */
static void refuse_owned(struct siox_conn *c, const struct hello_job *h, const char *other) {
  char mine[320], why[800];
  siox_owner_describe(&h->who, mine, sizeof mine);
  snprintf(why, sizeof why, "daemon id %llu belongs to %s; refused for %s", (unsigned long long)h->msg->daemon_id,
           other, mine);
  siox_conn_reject(c, why);
}

static void hello_done(struct siox_job *j, struct siox_db *db) {
  struct hello_job *h = (struct hello_job *)j;
  struct siox_conn *c = h->conn;
  (void)db;
  if (h->rc == -EACCES) {
    refuse_owned(c, h, h->why);
  } else if (h->rc != 0) {
    c->srv->n.db_errors++;
    siox_conn_refuse(c, SIOX__ERROR_KIND__ERROR_RETRY_LATER, 0, "database unavailable; retry later");
  } else if (!c->closing) {
    c->authenticated = 1;
    Siox__HelloReply r = SIOX__HELLO_REPLY__INIT;
    r.acked_seq = h->acked;
    r.server_version = "siox-server 0.1";
    siox_conn_send(c, SIOX_FRAME_HELLO_REPLY, &r.base);
    char who[320];
    siox_log("%s: daemon %llu (%s) connected, acked_seq %llu; identity: %s", c->peer, (unsigned long long)c->daemon_id,
             c->hostname, (unsigned long long)h->acked, siox_owner_describe(&h->who, who, sizeof who));
  }
  hello_free(h);
}

/* Another live session of this daemon id that authenticated under a
 * different identity (owner set: accepted, or its Hello still at the
 * database); its first batch may not be stored yet, so the warehouse may
 * not know the owner. NULL when there is none. */
static const struct siox_conn *live_rival(const struct siox_conn *c, uint64_t id, const struct siox_owner *who) {
  for (const struct siox_conn *o = c->srv->conns; o; o = o->next)
    if (o != c && o->owner.auth[0] && !o->hint_link && o->daemon_id == id && !siox_owner_equal(&o->owner, who))
      return o;
  return NULL;
}

static void auth_work(uv_work_t *w) {
  struct hello_job *h = w->data;
  h->rc = siox_auth_hello(&h->conn->srv->auth, h->msg, &h->who, h->why, sizeof h->why);
}

static void auth_done(uv_work_t *w, int status) {
  struct hello_job *h = w->data;
  struct siox_conn *c = h->conn;
  if (status != 0 && h->rc == 0) h->rc = -EACCES, snprintf(h->why, sizeof h->why, "authentication cancelled");
  if (c->closing) return hello_free(h);
  if (h->rc != 0) {
    char why[400];
    snprintf(why, sizeof why, "authentication failed: %s", h->why);
    siox_conn_reject(c, why);
    return hello_free(h);
  }
  const struct siox_conn *rival = live_rival(c, h->msg->daemon_id, &h->who);
  if (rival) {
    char other[320];
    refuse_owned(c, h, siox_owner_describe(&rival->owner, other, sizeof other));
    return hello_free(h);
  }
  c->owner = h->who;
  c->daemon_id = h->msg->daemon_id;
  snprintf(c->hostname, sizeof c->hostname, "%s", h->msg->hostname ? h->msg->hostname : "");
  if (h->msg->hint_link) { /* no batches on it: no ownership to check */
    char who[320];
    siox_log("%s: daemon %llu (%s) hint link; identity: %s", c->peer, (unsigned long long)c->daemon_id, c->hostname,
             siox_owner_describe(&h->who, who, sizeof who));
    c->authenticated = 1;
    siox_hints_on_hello(c, h->msg);
    h->msg = NULL;
    return hello_free(h);
  }
  h->base.run = hello_run;
  h->base.done = hello_done;
  siox_worker_submit(&c->srv->worker, &h->base); /* keeps the connection reference */
}

static int on_hello(struct siox_conn *c, const uint8_t *p, size_t len) {
  if (c->hello_done) return siox_conn_reject(c, "second Hello on one connection"), -EPROTO;
  Siox__Hello *m = siox__hello__unpack(NULL, len, p);
  if (!m) return siox_conn_reject(c, "undecodable Hello"), -EBADMSG;
  struct hello_job *h = calloc(1, sizeof *h);
  if (!h) return siox__hello__free_unpacked(m, NULL), siox_conn_reject(c, "out of memory"), -ENOMEM;
  c->hello_done = 1;
  h->conn = c;
  h->msg = m;
  h->auth.data = h;
  c->pending++;
  int rc = uv_queue_work(c->srv->loop, &h->auth, auth_work, auth_done);
  if (rc != 0) {
    h->rc = -EACCES;
    snprintf(h->why, sizeof h->why, "cannot queue the check: %s", uv_strerror(rc));
    auth_done(&h->auth, 0);
  }
  return 0;
}

/* ---- Batch ------------------------------------------------------------------ */

/* A batch travels: loop (envelope unpacked) -> libuv threadpool (block
 * decoded, overlapping the database thread's work on earlier batches) ->
 * loop (released to the database thread in arrival order) -> db thread.
 * A Skip (a batch the daemon quarantined) takes the same queue, already
 * "decoded", so that it never overtakes the batches before it. */
struct batch_job {
  struct siox_job base;
  struct siox_decode_wait slot; /* limits.c: a decode slot, held until batch_done */
  uv_work_t decode;
  struct batch_job *next_decoding;
  int decoded;
  struct siox_conn *conn;
  Siox__Batch *msg;  /* a Batch, or */
  Siox__Skip *skip;  /* a Skip */
  struct siox_block blk;
  int decode_rc;
  const char *why;
  int rc;
  int match_soon; /* siox_match_wanted after it: a pass soon has work */
  struct siox_ingest_result res;
};

static uint64_t job_seq(const struct batch_job *b) { return b->msg ? b->msg->seq : b->skip->seq; }

/* After one failure, nothing more of this connection is stored: its later
 * batches would land past the failed one (see siox_conn.db_failed). */
static void batch_run(struct siox_job *j, struct siox_db *db) {
  struct batch_job *b = (struct batch_job *)j;
  struct siox_conn *c = b->conn;
  if (c->db_failed) {
    b->rc = -ECANCELED;
    return;
  }
  if (b->msg) b->rc = siox_ingest_batch(db, b->msg, c->hostname, &c->owner, &b->blk, b->decode_rc, b->why, &b->res);
  else b->rc = siox_ingest_skip(db, b->skip, c->hostname, &c->owner, &b->res);
  if (b->rc != 0) c->db_failed = 1;
  b->match_soon = siox_match_wanted(db);
}

static void decode_work(uv_work_t *w) {
  struct batch_job *b = w->data;
  b->decode_rc = siox_block_decode_limited(b->msg->block.data, b->msg->block.len, b->msg->raw_bytes,
                                           b->conn->srv->lim.decode_mem, &b->blk, &b->why);
}

/* Hands decoded batches to the database thread, never overtaking an
 * earlier batch of the same connection that is still being decoded. */
static void release_decoded(struct siox_conn *c) {
  while (c->decoding && c->decoding->decoded) {
    struct batch_job *head = c->decoding;
    if (!(c->decoding = head->next_decoding)) c->decoding_tail = NULL;
    siox_worker_submit(&c->srv->worker, &head->base);
  }
}

static void decode_done(uv_work_t *w, int status) {
  struct batch_job *b = w->data;
  (void)status;
  b->decoded = 1;
  release_decoded(b->conn);
}

/* What the daemon is told when a batch was not stored. */
static void batch_refused(struct batch_job *b) {
  struct siox_conn *c = b->conn;
  struct siox_server *s = c->srv;
  char why[400];
  uint64_t seq = job_seq(b);
  switch (b->rc) {
  case -ECANCELED: return; /* an earlier batch failed; that Error was sent */
  case -EBADMSG:
    s->n.batches_rejected++;
    snprintf(why, sizeof why, "batch %llu rejected, never acceptable: %s", (unsigned long long)seq, b->res.reason);
    siox_conn_refuse(c, SIOX__ERROR_KIND__ERROR_REJECTED, seq, why);
    return;
  case -EACCES: /* another identity stored under this daemon id first */
    siox_conn_refuse(c, SIOX__ERROR_KIND__ERROR_UNSPECIFIED, seq, b->res.reason);
    return;
  case -ERANGE:
    s->n.batches_out_of_order++;
    siox_conn_refuse(c, SIOX__ERROR_KIND__ERROR_RETRY_LATER, seq, b->res.reason);
    return;
  default:
    s->n.db_errors++;
    snprintf(why, sizeof why, "database error; batch %llu not stored, retry later", (unsigned long long)seq);
    siox_conn_refuse(c, SIOX__ERROR_KIND__ERROR_RETRY_LATER, seq, why);
  }
}

/* A decode slot is ours (limits.c bounds how many blocks are decoded or
 * waiting for the database at once). */
static void decode_start(struct siox_decode_wait *w) {
  struct batch_job *b = (struct batch_job *)((char *)w - offsetof(struct batch_job, slot));
  int rc = uv_queue_work(b->conn->srv->loop, &b->decode, decode_work, decode_done);
  if (rc != 0) { /* cannot happen with a valid loop; decode inline rather than lose order */
    decode_work(&b->decode);
    decode_done(&b->decode, rc);
  }
}

static void batch_done(struct siox_job *j, struct siox_db *db) {
  struct batch_job *b = (struct batch_job *)j;
  struct siox_conn *c = b->conn;
  struct siox_server *s = c->srv;
  int rc = b->rc, match_soon = b->match_soon;
  (void)db;
  if (rc == 0) {
    if (b->res.duplicate) s->n.batches_duplicate++;
    else if (b->skip) s->n.batches_skipped++, s->n.activities_skipped += b->skip->activities;
    else s->n.batches_ingested++;
    s->n.activities_ingested += (int64_t)b->res.activities;
    if (b->skip && !b->res.duplicate)
      siox_log("%s: daemon %llu skipped batch %llu (%u activities, quarantined by the daemon: %s)", c->peer,
               (unsigned long long)c->daemon_id, (unsigned long long)b->skip->seq, b->skip->activities,
               b->skip->reason ? b->skip->reason : "");
    Siox__Ack a = SIOX__ACK__INIT;
    a.seq = job_seq(b);
    siox_conn_send(c, SIOX_FRAME_ACK, &a.base);
  } else {
    batch_refused(b);
  }
  siox_conn_read(c, 1);
  if (b->msg) siox__batch__free_unpacked(b->msg, NULL);
  if (b->skip) siox__skip__free_unpacked(b->skip, NULL);
  siox_block_free(&b->blk);
  if (b->msg) siox_limits_decode_release(s); /* a Skip held no decode slot */
  siox_conn_unref(c);
  free(b);
  /* Remote calls the window left to SQL may have arrived: match soon
   * rather than at the next tick. A batch the window decided whole needs
   * no pass (a quick pass a batch was 1.1 us of a pair's 8.3 in
   * bench_match); the next tick moves the watermark. */
  if (rc == 0 && match_soon && !s->match_pending)
    uv_timer_start(&s->match_timer, siox_session_match_tick, 20, s->opt->match_ms);
}

/* Queues b behind the connection's earlier batches. */
static struct batch_job *batch_job_new(struct siox_conn *c) {
  struct batch_job *b = calloc(1, sizeof *b);
  if (!b) return NULL;
  b->base.run = batch_run;
  b->base.done = batch_done;
  b->conn = c;
  siox_block_init(&b->blk);
  b->decode.data = b;
  if (++c->pending >= MAX_PENDING_BATCHES) siox_conn_read(c, 0);
  if (c->decoding_tail) c->decoding_tail->next_decoding = b;
  else c->decoding = b;
  c->decoding_tail = b;
  return b;
}

static int on_batch(struct siox_conn *c, const uint8_t *p, size_t len) {
  if (!c->authenticated) return siox_conn_reject(c, "Batch before an accepted Hello"), -EPROTO;
  if (c->hint_link) return siox_conn_reject(c, "Batch on a hint link"), -EPROTO;
  Siox__Batch *m = siox__batch__unpack(NULL, len, p);
  if (!m) return siox_conn_reject(c, "undecodable Batch"), -EBADMSG;
  if (m->daemon_id != c->daemon_id) {
    siox__batch__free_unpacked(m, NULL);
    return siox_conn_reject(c, "Batch daemon_id differs from Hello"), -EPROTO;
  }
  struct batch_job *b = batch_job_new(c);
  if (!b) return siox__batch__free_unpacked(m, NULL), siox_conn_reject(c, "out of memory"), -ENOMEM;
  b->msg = m;
  b->slot.start = decode_start;
  siox_limits_decode_acquire(c->srv, &b->slot);
  return 0;
}

static int on_skip(struct siox_conn *c, const uint8_t *p, size_t len) {
  if (!c->authenticated || c->hint_link) return siox_conn_reject(c, "Skip before an accepted Hello or on a hint link"), -EPROTO;
  Siox__Skip *m = siox__skip__unpack(NULL, len, p);
  if (!m) return siox_conn_reject(c, "undecodable Skip"), -EBADMSG;
  if (m->daemon_id != c->daemon_id) {
    siox__skip__free_unpacked(m, NULL);
    return siox_conn_reject(c, "Skip daemon_id differs from Hello"), -EPROTO;
  }
  if (m->reason) siox_text_clean(m->reason, strlen(m->reason)); /* goes into a text column */
  struct batch_job *b = batch_job_new(c);
  if (!b) return siox__skip__free_unpacked(m, NULL), siox_conn_reject(c, "out of memory"), -ENOMEM;
  b->skip = m;
  b->decoded = 1;
  release_decoded(c);
  return 0;
}

/* ---- Ping, StatusRequest -------------------------------------------------- */

static int on_ping(struct siox_conn *c, const uint8_t *p, size_t len) {
  int64_t t2 = now_ns();
  Siox__Ping *m = siox__ping__unpack(NULL, len, p);
  if (!m) return siox_conn_reject(c, "undecodable Ping"), -EBADMSG;
  Siox__Pong r = SIOX__PONG__INIT;
  r.t1 = m->t1;
  r.t2 = t2;
  siox__ping__free_unpacked(m, NULL);
  r.t3 = now_ns();
  siox_conn_send(c, SIOX_FRAME_PONG, &r.base);
  return 0;
}

/* full: every counter; else only db_ok, the health `siox status` needs
 * (nothing about what was stored, by whom, or how often). */
static void send_status(struct siox_conn *c, int full) {
  struct siox_server *s = c->srv;
  static const struct siox_forward_stats none;
  const struct siox_forward_stats *fw = s->fwd ? siox_forward_stats(s->fwd) : &none;
  struct {
    const char *name;
    int64_t v;
  } v[] = {{"db_ok", s->worker.db_ok},
           {"connections", s->n.connections},
           {"batches_ingested", s->n.batches_ingested},
           {"batches_duplicate", s->n.batches_duplicate},
           {"activities_ingested", s->n.activities_ingested},
           {"bad_frames", s->n.bad_frames},
           {"links_implicit", s->n.links_implicit + s->worker.db.links_memory},
           {"links_memory", s->worker.db.links_memory},
           {"match_busy_us", s->worker.db.match_busy_ns / 1000},
           {"match_cpu_us", s->worker.db.match_cpu_ns / 1000},
           {"receives_unmatched", s->n.receives_unmatched},
           {"db_errors", s->n.db_errors},
           {"db_reconnects", s->worker.db_reconnects + (s->hints_on ? s->hint_worker.db_reconnects : 0)},
           {"db_restarts", siox_pg_restarts()},
           {"batches_rejected", s->n.batches_rejected},
           {"batches_out_of_order", s->n.batches_out_of_order},
           {"batches_skipped", s->n.batches_skipped},
           {"activities_skipped", s->n.activities_skipped},
           {"hint_queries", s->n.hint_queries},
           {"hint_sets_served", s->n.hint_sets_served},
           {"connections_refused", s->n.connections_refused},
           {"connections_evicted", s->n.connections_evicted},
           {"connections_timed_out", s->n.connections_timed_out},
           {"forward_pending", fw->pending},
           {"forward_done", fw->forwarded},
           {"forward_peers_down", fw->peers_down}};
  enum { N = sizeof v / sizeof v[0] };
  Siox__Counter cs[N], *cp[N];
  for (int i = 0; i < N; i++) {
    siox__counter__init(&cs[i]);
    cs[i].name = (char *)v[i].name;
    cs[i].value = v[i].v;
    cp[i] = &cs[i];
  }
  Siox__StatusReply r = SIOX__STATUS_REPLY__INIT;
  r.role = "server";
  /* Healthy means the server can store: the database is part of it. */
  r.health = s->worker.db_ok ? "ok" : "database unreachable; reconnecting (batches wait in the daemons' spools)";
  r.uptime_s = (uint64_t)(now_ns() - (int64_t)s->started_ns) / 1000000000u;
  r.n_counters = full ? N : 1;
  r.counters = cp;
  siox_conn_send(c, SIOX_FRAME_STATUS_REPLY, &r.base);
}

/* A StatusRequest's MUNGE credential, checked on the threadpool. */
struct status_job {
  uv_work_t work;
  struct siox_conn *conn;
  Siox__StatusRequest *msg;
  int rc;
  char why[320];
};

static void status_work(uv_work_t *w) {
  struct status_job *j = w->data;
  j->rc = siox_auth_status(&j->conn->srv->auth, &j->msg->munge_cred, j->why, sizeof j->why);
}

static void status_done(uv_work_t *w, int status) {
  struct status_job *j = w->data;
  if (!j->conn->closing) {
    if (j->rc != 0 || status != 0) siox_log("%s: status request without counters: %s", j->conn->peer, j->why);
    send_status(j->conn, j->rc == 0 && status == 0);
  }
  siox__status_request__free_unpacked(j->msg, NULL);
  siox_conn_unref(j->conn);
  free(j);
}

/* Counters go to an authenticated session, to a request carrying a valid
 * MUNGE status credential (`siox status` signs as whoever runs it), or to
 * anyone under --auth none; all others see only that the server is up. */
static int on_status(struct siox_conn *c, const uint8_t *p, size_t len) {
  Siox__StatusRequest *m = siox__status_request__unpack(NULL, len, p);
  if (!m) return siox_conn_reject(c, "undecodable StatusRequest"), -EBADMSG;
  struct status_job *j = NULL;
  if (c->authenticated || c->srv->auth.mode == SIOX_AUTH_NONE || m->munge_cred.len == 0 ||
      !(j = calloc(1, sizeof *j))) {
    siox__status_request__free_unpacked(m, NULL);
    send_status(c, c->authenticated || c->srv->auth.mode == SIOX_AUTH_NONE);
    return 0;
  }
  j->conn = c;
  j->msg = m;
  j->work.data = j;
  c->pending++;
  if (uv_queue_work(c->srv->loop, &j->work, status_work, status_done) != 0) {
    j->rc = -EAGAIN;
    snprintf(j->why, sizeof j->why, "cannot queue the check");
    status_done(&j->work, 0);
  }
  return 0;
}

int siox_session_frame(struct siox_conn *c, uint16_t type, const uint8_t *payload, size_t len) {
  char why[64];
  switch (type) {
  case SIOX_FRAME_HELLO: return on_hello(c, payload, len);
  case SIOX_FRAME_BATCH: return on_batch(c, payload, len);
  case SIOX_FRAME_SKIP: return on_skip(c, payload, len);
  case SIOX_FRAME_PING: return on_ping(c, payload, len);
  case SIOX_FRAME_STATUS_REQUEST: return on_status(c, payload, len);
  case SIOX_FRAME_HINT_QUERY: return siox_hints_on_query(c, payload, len);
  default:
    snprintf(why, sizeof why, "unexpected frame type %u from a daemon", type);
    siox_conn_reject(c, why);
    return -EPROTO;
  }
}

/* ---- Matcher timer ----------------------------------------------------------- */

struct match_job {
  struct siox_job base;
  struct siox_server *srv;
  int rc;
  struct siox_match_result res;
};

static void match_run(struct siox_job *j, struct siox_db *db) {
  struct match_job *m = (struct match_job *)j;
  m->rc = siox_match_run(db, (int64_t)m->srv->opt->late_ms * 1000000, &m->res);
}

static void match_done(struct siox_job *j, struct siox_db *db) {
  struct match_job *m = (struct match_job *)j;
  (void)db;
  m->srv->match_pending = 0;
  if (m->rc == 0) {
    m->srv->n.links_implicit += (int64_t)m->res.links_new;
    m->srv->n.receives_unmatched = (int64_t)m->res.receives_unmatched;
  }
  free(m);
}

void siox_session_match_tick(uv_timer_t *t) {
  struct siox_server *s = t->data;
  if (s->match_pending) return;
  struct match_job *m = calloc(1, sizeof *m);
  if (!m) return;
  m->base.run = match_run;
  m->base.done = match_done;
  m->srv = s;
  s->match_pending = 1;
  siox_worker_submit(&s->worker, &m->base);
}
