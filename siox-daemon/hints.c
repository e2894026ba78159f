/*
 * Hint delivery, daemon side: an MPI_File_open (libsiox-mpi, via
 * libsiox-client) opens a short connection whose first frame is
 * SIOX_CW_HINTS. The daemon answers from its cache, or forwards the
 * question to siox-server as a HintQuery over its hint link (hint_link.c)
 * and answers every client waiting on that key when the HintReply arrives.
 * It never lets a client wait on a server that is away: no link means
 * "server down" at once, and a forwarded query unanswered for SERVER_WAIT_MS gets the same.
 * (The client bounds its own wait too; this bounds the daemon's memory.)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon.h"
#include "siox.pb-c.h"
#include "siox_frame.h"

#define SERVER_WAIT_MS 2000
#define SWEEP_MS 250
#define CACHE_MAX 256
#define MAX_PENDING 256 /* distinct questions in flight to the server */

struct hint_waiter {
  struct hint_waiter *next;
  struct session *s;
};

/* One question forwarded to the server, and who waits for its answer. */
struct hint_pending {
  struct hint_pending *next;
  uint64_t id;
  char *key; /* owned, hint_cache_key */
  size_t key_len;
  int64_t deadline_ms;
  struct hint_waiter *waiters;
};

struct hints {
  struct hint_cache cache;
  struct hint_pending *pending;
  size_t n_pending;
  uint64_t next_id;
  uv_timer_t sweep;
  int64_t queries, cache_hits, forwarded;
};

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void answer(struct session *s, const struct hint_answer *a) {
  session_set_hint_waiting(s, false);
  session_reply_and_close(s, SIOX_CW_HINTS, a, sizeof a->r + a->r.n * sizeof a->hints[0]);
}

static void answer_status(struct session *s, uint32_t status) {
  struct hint_answer a;
  memset(&a.r, 0, sizeof a.r);
  a.r.status = status;
  answer(s, &a);
}

/* ---------------------------------------------------------------------------
 * Pending questions
 * ------------------------------------------------------------------------- */

/* Unlinks p, answers its waiters with a (or just status when a is NULL),
 * frees it. */
static void pending_finish(struct hints *h, struct hint_pending **pp, const struct hint_answer *a, uint32_t status) {
  struct hint_pending *p = *pp;
  *pp = p->next;
  h->n_pending--;
  while (p->waiters) {
    struct hint_waiter *w = p->waiters;
    p->waiters = w->next;
    if (a) answer(w->s, a);
    else answer_status(w->s, status);
    free(w);
  }
  free(p->key);
  free(p);
}

static struct hint_pending *pending_find_key(struct hints *h, const char *key, size_t len) {
  for (struct hint_pending *p = h->pending; p; p = p->next)
    if (p->key_len == len && memcmp(p->key, key, len) == 0) return p;
  return NULL;
}

static int pending_add_waiter(struct hint_pending *p, struct session *s) {
  struct hint_waiter *w = calloc(1, sizeof *w);
  if (!w) return -ENOMEM;
  w->s = s;
  w->next = p->waiters;
  p->waiters = w;
  session_set_hint_waiting(s, true);
  return 0;
}

static void on_sweep(uv_timer_t *t) {
  struct daemon *d = t->data;
  struct hints *h = d->hints;
  int64_t now = now_ms();
  for (struct hint_pending **pp = &h->pending; *pp;) {
    if ((*pp)->deadline_ms <= now) pending_finish(h, pp, NULL, SIOX_HINTS_SERVER_DOWN);
    else pp = &(*pp)->next;
  }
  if (!h->pending) uv_timer_stop(&h->sweep);
}

/* ---------------------------------------------------------------------------
 * Queries from clients
 * ------------------------------------------------------------------------- */
struct query {
  const char *s[4]; /* exe, args, path, component; NUL-terminated copies */
  char *buf;        /* owned */
};

static int query_parse(const uint8_t *p, uint32_t len, struct query *q) {
  struct siox_cw_hint_query h;
  if (len < sizeof h) return -EBADMSG;
  memcpy(&h, p, sizeof h);
  uint16_t lens[4] = {h.exe_len, h.args_len, h.path_len, h.comp_len};
  size_t total = 0;
  for (int i = 0; i < 4; i++) total += lens[i];
  if (sizeof h + total != len || h.path_len == 0 || h.comp_len == 0 || h.comp_len >= 32) return -EBADMSG;
  if (!(q->buf = malloc(total + 4))) return -ENOMEM;
  const char *src = (const char *)p + sizeof h;
  char *dst = q->buf;
  for (int i = 0; i < 4; i++) {
    memcpy(dst, src, lens[i]);
    dst[lens[i]] = '\0';
    if (strlen(dst) != lens[i]) return free(q->buf), -EBADMSG; /* embedded NUL */
    q->s[i] = dst;
    dst += lens[i] + 1;
    src += lens[i];
  }
  return 0;
}

/* Sends the question to the server; a pending entry then collects waiters. */
static int forward(struct daemon *d, struct session *s, uint32_t uid, const char *job, const struct query *q,
                   char *key, size_t len) {
  struct hints *h = d->hints;
  if (h->n_pending >= MAX_PENDING) return -EBUSY;
  struct hint_pending *p = calloc(1, sizeof *p);
  struct hint_waiter *w = calloc(1, sizeof *w);
  if (!p || !w) return free(p), free(w), -ENOMEM;
  Siox__HintQuery m = SIOX__HINT_QUERY__INIT;
  m.id = p->id = ++h->next_id;
  m.uid = uid;
  m.exe = (char *)q->s[0];
  m.args = (char *)q->s[1];
  m.path = (char *)q->s[2];
  m.component = (char *)q->s[3];
  m.job = (char *)job;
  int rc = hint_link_send(d->hint_link, SIOX_FRAME_HINT_QUERY, &m.base);
  if (rc < 0) return free(p), free(w), rc;
  p->key = key;
  p->key_len = len;
  p->deadline_ms = now_ms() + SERVER_WAIT_MS;
  p->next = h->pending;
  h->pending = p;
  h->n_pending++;
  h->forwarded++;
  if (!uv_is_active((uv_handle_t *)&h->sweep)) uv_timer_start(&h->sweep, on_sweep, SWEEP_MS, SWEEP_MS);
  w->s = s;
  p->waiters = w;
  session_set_hint_waiting(s, true);
  return 0;
}

int hints_query(struct daemon *d, struct session *s, uint32_t uid, const char *job, const uint8_t *payload,
                uint32_t len) {
  struct hints *h = d->hints;
  struct query q;
  char *key = NULL;
  size_t klen;
  int rc = query_parse(payload, len, &q);
  if (rc < 0) return rc == -ENOMEM ? (answer_status(s, SIOX_HINTS_ERROR), 0) : rc;
  h->queries++;
  if (d->cfg.hints_off) {
    answer_status(s, SIOX_HINTS_DISABLED);
    goto out;
  }
  if (hint_cache_key(uid, job, q.s[0], q.s[1], q.s[2], q.s[3], &key, &klen) < 0) {
    answer_status(s, SIOX_HINTS_ERROR);
    goto out;
  }
  const struct hint_answer *hit = hint_cache_get(&h->cache, key, klen, now_ms());
  struct hint_pending *p = hit ? NULL : pending_find_key(h, key, klen);
  if (hit) {
    h->cache_hits++;
    answer(s, hit);
  } else if (p) {
    if (pending_add_waiter(p, s) < 0) answer_status(s, SIOX_HINTS_ERROR);
  } else if ((rc = forward(d, s, uid, job, &q, key, klen)) == 0) {
    key = NULL; /* the pending entry owns it */
  } else {
    answer_status(s, rc == -ENOTCONN ? SIOX_HINTS_SERVER_DOWN : SIOX_HINTS_ERROR);
  }
out:
  free(key);
  free(q.buf);
  return 0;
}

/* ---------------------------------------------------------------------------
 * Answers from the server
 * ------------------------------------------------------------------------- */

/* Copies a HintReply into the client's wire form; -EBADMSG when a key or
 * value would not fit (then nothing of it is served: a cut value would be
 * another hint). */
static int answer_from_reply(const Siox__HintReply *m, struct hint_answer *a) {
  memset(&a->r, 0, sizeof a->r);
  a->r.status = m->status;
  if (m->status != SIOX_HINTS_FOUND) return m->status <= SIOX_HINTS_ERROR ? 0 : -EBADMSG;
  if (m->n_hints > SIOX_CW_MAX_HINTS || !m->component || strlen(m->component) >= sizeof a->r.component)
    return -EBADMSG;
  a->r.hint_set_id = m->hint_set_id;
  strcpy(a->r.component, m->component);
  for (size_t i = 0; i < m->n_hints; i++) {
    const Siox__Hint *x = m->hints[i];
    if (!x->key || !x->value || strlen(x->key) >= SIOX_CW_HINT_KEY || strlen(x->value) >= SIOX_CW_HINT_VALUE)
      return -EBADMSG;
    strcpy(a->hints[i].key, x->key);
    strcpy(a->hints[i].value, x->value);
  }
  a->r.n = (uint32_t)m->n_hints;
  return 0;
}

void hints_on_reply(struct daemon *d, const uint8_t *p, size_t n) {
  struct hints *h = d->hints;
  Siox__HintReply *m = siox__hint_reply__unpack(NULL, n, p);
  if (!m) {
    fprintf(stderr, "siox-daemon: undecodable HintReply from the server; ignored\n");
    return;
  }
  struct hint_pending **pp = &h->pending;
  while (*pp && (*pp)->id != m->id) pp = &(*pp)->next;
  if (*pp) { /* else: already answered "server down" after SERVER_WAIT_MS */
    struct hint_answer a;
    if (answer_from_reply(m, &a) < 0) {
      fprintf(stderr, "siox-daemon: HintReply %llu does not fit the client wire; serving none\n",
              (unsigned long long)m->id);
      memset(&a.r, 0, sizeof a.r);
      a.r.status = SIOX_HINTS_ERROR;
    } else if (a.r.status == SIOX_HINTS_FOUND || a.r.status == SIOX_HINTS_NONE) {
      hint_cache_put(&h->cache, (*pp)->key, (*pp)->key_len, &a, now_ms());
    }
    pending_finish(h, pp, &a, 0);
  }
  siox__hint_reply__free_unpacked(m, NULL);
}

void hints_link_lost(struct daemon *d) {
  struct hints *h = d->hints;
  while (h && h->pending) pending_finish(h, &h->pending, NULL, SIOX_HINTS_SERVER_DOWN);
}

void hints_session_gone(struct daemon *d, struct session *s) {
  struct hints *h = d->hints;
  for (struct hint_pending *p = h ? h->pending : NULL; p; p = p->next)
    for (struct hint_waiter **ww = &p->waiters; *ww;) {
      struct hint_waiter *w = *ww;
      if (w->s != s) {
        ww = &w->next;
        continue;
      }
      *ww = w->next;
      free(w);
    }
}

void hints_counters(const struct daemon *d, int64_t out[4]) {
  const struct hints *h = d->hints;
  out[0] = h ? h->queries : 0;
  out[1] = h ? h->cache_hits : 0;
  out[2] = h ? h->forwarded : 0;
  out[3] = hint_link_connected(d->hint_link);
}

/* ---------------------------------------------------------------------------
 * Life cycle
 * ------------------------------------------------------------------------- */
int hints_start(struct daemon *d) {
  struct hints *h = calloc(1, sizeof *h);
  if (!h) return -ENOMEM;
  hint_cache_init(&h->cache, d->cfg.hints_ttl_ms, CACHE_MAX);
  uv_timer_init(d->loop, &h->sweep);
  h->sweep.data = d;
  d->hints = h;
  /* With --hints off nothing is forwarded: no second connection either. */
  return d->cfg.hints_off ? 0 : hint_link_start(d);
}

void hints_stop(struct daemon *d) {
  if (!d->hints) return;
  hints_link_lost(d);
  uv_close((uv_handle_t *)&d->hints->sweep, NULL);
  hint_link_stop(d->hint_link);
}

void hints_free(struct daemon *d) {
  struct hints *h = d->hints;
  if (!h) return;
  hint_cache_destroy(&h->cache);
  free(h);
  d->hints = NULL;
  hint_link_free(d->hint_link);
  d->hint_link = NULL;
}
