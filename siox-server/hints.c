/*
 * Hint answering: a daemon forwards an MPI_File_open's HintQuery; the answer
 * comes from the knowledge base (siox_kb_hints_lookup). Lookups run on a
 * thread and libpq connection of their own (a second struct siox_worker),
 * so a query never waits behind a batch ingest or a matcher pass, and a
 * slow lookup never delays ingest. The daemon bounds its own wait.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <siox/siox_kb.h>

#include "server.h"
#include "siox_client_wire.h"
#include "siox_frame.h"

/* Lookups queued at once; beyond that a query is answered "error" at once
 * rather than queued behind a backlog the asking client has given up on. */
#define MAX_INFLIGHT 64

struct hint_job {
  struct siox_job base;
  struct siox_conn *conn;
  Siox__HintQuery *q;
  struct siox_kb_hintset set;
  int rc; /* siox_kb_hints_lookup's: 1 found, 0 none, -1 error */
  char err[256];
};

static void reply(struct siox_conn *c, uint64_t id, const struct hint_job *j) {
  Siox__HintReply r = SIOX__HINT_REPLY__INIT;
  Siox__Hint hs[SIOX_KB_MAX_HINTS], *hp[SIOX_KB_MAX_HINTS];
  r.id = id;
  r.status = !j ? SIOX_HINTS_ERROR : j->rc > 0 ? SIOX_HINTS_FOUND : j->rc == 0 ? SIOX_HINTS_NONE : SIOX_HINTS_ERROR;
  if (r.status == SIOX_HINTS_FOUND) {
    r.hint_set_id = j->set.hint_set_id;
    r.component = (char *)j->set.component;
    for (size_t i = 0; i < j->set.n; i++) {
      siox__hint__init(&hs[i]);
      hs[i].key = (char *)j->set.hints[i].key;
      hs[i].value = (char *)j->set.hints[i].value;
      hp[i] = &hs[i];
    }
    r.n_hints = j->set.n;
    r.hints = hp;
  }
  siox_conn_send(c, SIOX_FRAME_HINT_REPLY, &r.base);
}

static void lookup_run(struct siox_job *base, struct siox_db *db) {
  struct hint_job *j = (struct hint_job *)base;
  const Siox__HintQuery *q = j->q;
  char run[600] = "";
  if (q->job && *q->job) snprintf(run, sizeof run, "%u:%s", (unsigned)q->uid, q->job);
  j->rc = siox_kb_hints_lookup(db->conn, q->exe, q->args, q->path, q->component, run, &j->set, j->err,
                               sizeof j->err);
}

static void lookup_done(struct siox_job *base, struct siox_db *db) {
  struct hint_job *j = (struct hint_job *)base;
  struct siox_conn *c = j->conn;
  struct siox_server *s = c->srv;
  (void)db;
  s->hints_inflight--;
  if (j->rc < 0) siox_log("%s: hint lookup for %s: %s", c->peer, j->q->path, j->err);
  if (j->rc > 0) s->n.hint_sets_served++;
  if (!c->closing) reply(c, j->q->id, j);
  siox__hint_query__free_unpacked(j->q, NULL);
  siox_conn_unref(c);
  free(j);
}

int siox_hints_on_hello(struct siox_conn *c, Siox__Hello *m) {
  c->hello_done = c->hint_link = 1;
  c->daemon_id = m->daemon_id;
  snprintf(c->hostname, sizeof c->hostname, "%s", m->hostname ? m->hostname : "");
  siox__hello__free_unpacked(m, NULL);
  Siox__HelloReply r = SIOX__HELLO_REPLY__INIT;
  r.server_version = "siox-server 0.1";
  siox_conn_send(c, SIOX_FRAME_HELLO_REPLY, &r.base);
  return 0;
}

int siox_hints_on_query(struct siox_conn *c, const uint8_t *p, size_t len) {
  struct siox_server *s = c->srv;
  if (!c->authenticated) return siox_conn_reject(c, "HintQuery before an accepted Hello"), -EPROTO;
  Siox__HintQuery *q = siox__hint_query__unpack(NULL, len, p);
  if (!q) return siox_conn_reject(c, "undecodable HintQuery"), -EBADMSG;
  s->n.hint_queries++;
  struct hint_job *j = s->hints_inflight < MAX_INFLIGHT && s->hints_on ? calloc(1, sizeof *j) : NULL;
  if (!j) {
    reply(c, q->id, NULL);
    siox__hint_query__free_unpacked(q, NULL);
    return 0;
  }
  j->base.run = lookup_run;
  j->base.done = lookup_done;
  j->conn = c;
  j->q = q;
  c->pending++;
  s->hints_inflight++;
  siox_worker_submit(&s->hint_worker, &j->base);
  return 0;
}

int siox_hints_start(struct siox_server *s, const char *conninfo) {
  int rc = siox_worker_start(&s->hint_worker, s->loop, conninfo, "hints");
  if (rc != 0) return siox_log("cannot connect the hint lookup thread to the database"), rc;
  /* Like the ingest worker's: at shutdown the loop must end without it. */
  uv_unref((uv_handle_t *)&s->hint_worker.async);
  s->hints_on = 1;
  return 0;
}

void siox_hints_stop(struct siox_server *s) {
  if (!s->hints_on) return;
  s->hints_on = 0;
  siox_worker_stop(&s->hint_worker);
}
