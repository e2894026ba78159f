/*
 * Uplink: the daemon's one TCP connection to siox-server. Hello tells the
 * server who we are; HelloReply says which batch it stored last, so the
 * spool is trimmed and the rest resent in seq order. A bounded window of
 * batches is in flight; Acks are cumulative and unlink spool files. On any
 * error the connection is dropped and retried with backoff (100 ms .. 2 s,
 * back to 100 ms only once an Ack shows progress); nothing is lost or
 * reordered because the spool is the only send queue, and the server stores
 * only the batch right after the last one it acked.
 *
 * The server's Error says what to do (its kind): RETRY_LATER (the database
 * failed; the batch and everything after it are resent after the backoff)
 * or REJECTED (batch seq can never be stored): that batch is quarantined
 * (quarantine.c) and a Skip is sent in its place, so the batches after it
 * are stored and the loss is recorded in the warehouse.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "siox.pb-c.h"
#include "siox_frame.h"

#define WINDOW 8           /* batches in flight */
#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 2000
#define PING_MS 2000
#define PING_FIRST_MS 10 /* spacing of the first CLOCK_SYNC_FIRST pings */

enum uplink_state { UP_DOWN, UP_RESOLVING, UP_CONNECTING, UP_HELLO, UP_READY };

struct uplink {
  struct daemon *d;
  enum uplink_state state;
  uv_tcp_t tcp;
  bool tcp_open;
  uv_connect_t connect_req;
  uv_getaddrinfo_t gai_req;
  uv_timer_t retry, ping;
  unsigned pings; /* sent on this connection */
  unsigned backoff_ms;
  uint8_t *rbuf; /* owned: bytes of an incomplete server frame */
  size_t rlen, rcap;
  uint64_t sent; /* highest seq written on this connection */
  unsigned inflight;
  bool stopping;
  struct siox_tls_pipe *tls; /* tls_link.c: NULL without --tls */
};

struct frame_write {
  uv_write_t w;
  uint8_t *buf; /* owned: header + payload */
};

static void uplink_drop(struct uplink *u, const char *why);
static void pump(struct uplink *u);
static void on_ping(uv_timer_t *t);

/* ---------------------------------------------------------------------------
 * Writing frames
 * ------------------------------------------------------------------------- */
static void on_written(uv_write_t *w, int status) {
  struct frame_write *fw = (struct frame_write *)w;
  struct uplink *u = w->data;
  free(fw->buf);
  free(fw);
  if (status < 0 && status != UV_ECANCELED)
    uplink_drop(u, uv_strerror(status));
}

/* Queues n bytes of buf (owned: freed when the write completes). */
static int write_owned(struct uplink *u, uint8_t *buf, size_t n) {
  struct frame_write *fw = malloc(sizeof *fw);
  if (!fw) {
    free(buf);
    return -ENOMEM;
  }
  fw->buf = buf;
  fw->w.data = u;
  uv_buf_t b = uv_buf_init((char *)buf, (unsigned)n);
  int rc = uv_write(&fw->w, (uv_stream_t *)&u->tcp, &b, 1, on_written);
  if (rc < 0) {
    free(buf);
    free(fw);
  }
  return rc;
}

/* Packs msg into a frame of `type` (sealed with TLS when on) and queues it. */
static int send_msg(struct uplink *u, uint16_t type, const ProtobufCMessage *msg) {
  size_t n = protobuf_c_message_get_packed_size(msg);
  uint8_t *buf = malloc(SIOX_FRAME_HDR_LEN + n);
  if (!buf)
    return -ENOMEM;
  siox_frame_hdr_encode(buf, type, (uint32_t)n);
  protobuf_c_message_pack(msg, buf + SIOX_FRAME_HDR_LEN);
  n += SIOX_FRAME_HDR_LEN;
  if (u->tls) {
    uint8_t *sealed;
    int rc = tls_link_seal(u->tls, buf, n, &sealed, &n);
    free(buf);
    if (rc < 0)
      return rc;
    buf = sealed;
  }
  return write_owned(u, buf, n);
}

static int send_batch(struct uplink *u, const struct spool_batch *b) {
  Siox__Batch m = SIOX__BATCH__INIT;
  int64_t off = 0;
  uint64_t unc = 0;
  clock_sync_best(&u->d->clock, clock_host_ns(u->d), &off, &unc);
  m.daemon_id = u->d->daemon_id;
  m.seq = b->h.seq;
  m.clock_offset_ns = off;
  m.clock_uncertainty_ns = unc;
  m.activities = b->h.activities;
  m.raw_bytes = b->h.raw_bytes;
  m.block.data = b->block;
  m.block.len = b->h.block_len;
  int rc = send_msg(u, SIOX_FRAME_BATCH, &m.base);
  if (rc == 0) {
    u->sent = b->h.seq;
    u->inflight++;
  }
  return rc;
}

/* A quarantined batch's stand-in: the server records the loss and acks. */
static int send_skip(struct uplink *u, uint64_t seq) {
  char reason[512];
  Siox__Skip m = SIOX__SKIP__INIT;
  m.daemon_id = u->d->daemon_id;
  m.seq = seq;
  m.reason = reason;
  quarantine_info(u->d, seq, &m.activities, reason, sizeof reason);
  int rc = send_msg(u, SIOX_FRAME_SKIP, &m.base);
  if (rc == 0) {
    fprintf(stderr, "siox-daemon: batch %" PRIu64 " is quarantined; sending Skip (%u activities)\n", seq, m.activities);
    u->sent = seq;
    u->inflight++;
  }
  return rc;
}

/* A batch carries the clock offset known when it is sent, and the server
 * moves its times by it; before the first Pong that would be 0 with an
 * uncertainty of 0, so a batch spooled before the first connection (a
 * server outage at the daemon's start) would keep this host's clock error
 * and be matched with no widening. Batches wait for CLOCK_SYNC_FIRST
 * samples, taken PING_FIRST_MS apart after HelloReply while nothing else
 * is in flight (about 70 ms); later connections keep the estimate. */
static bool clock_known(const struct uplink *u) { return u->d->clock.n >= CLOCK_SYNC_FIRST; }

/* Sends spooled batches (or Skips) after u->sent while the window has room. */
static void pump(struct uplink *u) {
  struct spool *s = &u->d->spool;
  if (u->state != UP_READY || !clock_known(u))
    return;
  for (size_t i = 0; i < s->n && u->inflight < WINDOW; i++) {
    const struct spool_entry *e = spool_at(s, i);
    if (e->seq <= u->sent)
      continue;
    struct spool_batch b;
    int rc;
    if (e->quarantined) {
      rc = send_skip(u, e->seq);
    } else if ((rc = spool_read(s, e->seq, &b)) == 0) {
      rc = send_batch(u, &b);
      spool_batch_free(&b);
    }
    if (rc < 0) {
      fprintf(stderr, "siox-daemon: sending batch %" PRIu64 ": %s\n", e->seq, strerror(-rc));
      uplink_drop(u, "send failed");
      return;
    }
  }
}

void uplink_kick(struct uplink *u) { pump(u); }

/* The batch just sealed is in memory: send it without reading it back when
 * it is next in line. */
void uplink_offer(struct uplink *u, const struct spool_batch *b) {
  if (u->state != UP_READY || u->inflight >= WINDOW || !clock_known(u))
    return;
  const struct spool *s = &u->d->spool;
  bool next = s->n > 0 && spool_at(s, s->n - 1)->seq == b->h.seq && (s->n == 1 || spool_at(s, s->n - 2)->seq <= u->sent);
  if (!next) {
    pump(u);
    return;
  }
  if (send_batch(u, b) < 0)
    uplink_drop(u, "send failed");
}

/* ---------------------------------------------------------------------------
 * Reading frames
 * ------------------------------------------------------------------------- */
static void on_hello_reply(struct uplink *u, const uint8_t *p, size_t n) {
  Siox__HelloReply *r = siox__hello_reply__unpack(NULL, n, p);
  if (!r || u->state != UP_HELLO) {
    siox__hello_reply__free_unpacked(r, NULL);
    uplink_drop(u, "unexpected or bad HelloReply");
    return;
  }
  struct spool *s = &u->d->spool;
  if (r->acked_seq >= s->next_seq) {
    /* The server has seen seqs we no longer remember (lost state file):
     * never reuse them, or new batches would be dropped as duplicates. */
    fprintf(stderr, "siox-daemon: server acked seq %" PRIu64 " beyond ours; skipping ahead\n", r->acked_seq);
    s->next_seq = r->acked_seq + 1;
  }
  u->d->ctr.batches_acked += (uint64_t)spool_ack(s, r->acked_seq);
  siox__hello_reply__free_unpacked(r, NULL);
  u->sent = 0;
  u->inflight = 0;
  u->state = UP_READY;
  fprintf(stderr, "siox-daemon: connected to %s:%d\n", u->d->cfg.server_host, u->d->cfg.server_port);
  u->pings = 0;
  uv_timer_start(&u->ping, on_ping, 0, 0);
  daemon_backpressure(u->d);
  pump(u);
}

static void on_ack(struct uplink *u, const uint8_t *p, size_t n) {
  Siox__Ack *a = siox__ack__unpack(NULL, n, p);
  if (!a) {
    uplink_drop(u, "bad Ack");
    return;
  }
  int k = spool_ack(&u->d->spool, a->seq);
  siox__ack__free_unpacked(a, NULL);
  if (k < 0) {
    fprintf(stderr, "siox-daemon: recording ack: %s\n", strerror(-k));
    return; /* the files stay; the next ack retries */
  }
  u->d->ctr.batches_acked += (uint64_t)k;
  u->inflight = (unsigned)k > u->inflight ? 0 : u->inflight - (unsigned)k;
  u->backoff_ms = BACKOFF_MIN_MS; /* progress: the next failure retries soon again */
  daemon_backpressure(u->d);
  pump(u);
}

static void on_pong(struct uplink *u, const uint8_t *p, size_t n) {
  int64_t t4 = clock_host_ns(u->d);
  Siox__Pong *m = siox__pong__unpack(NULL, n, p);
  if (!m) {
    uplink_drop(u, "bad Pong");
    return;
  }
  bool waited = !clock_known(u);
  clock_sync_add(&u->d->clock, m->t1, m->t2, m->t3, t4);
  siox__pong__free_unpacked(m, NULL);
  if (waited && clock_known(u))
    pump(u); /* batches waited for an offset to carry */
}

static void on_error_msg(struct uplink *u, const uint8_t *p, size_t n) {
  Siox__Error *m = siox__error__unpack(NULL, n, p);
  const char *reason = m && m->reason ? m->reason : "(unreadable error)";
  if (m && m->kind == SIOX__ERROR_KIND__ERROR_REJECTED && m->seq) {
    fprintf(stderr, "siox-daemon: server rejects batch %" PRIu64 " for good: %s\n", m->seq, reason);
    quarantine_batch(u->d, m->seq, reason);
  } else if (m && m->kind == SIOX__ERROR_KIND__ERROR_RETRY_LATER) {
    fprintf(stderr, "siox-daemon: server says (transient; resending after %u ms): %s\n", u->backoff_ms, reason);
  } else {
    fprintf(stderr, "siox-daemon: server says: %s\n", reason);
  }
  siox__error__free_unpacked(m, NULL);
  uplink_drop(u, "server error");
}

static void dispatch(struct uplink *u, uint16_t type, const uint8_t *p, size_t n) {
  switch (type) {
  case SIOX_FRAME_HELLO_REPLY:
    on_hello_reply(u, p, n);
    break;
  case SIOX_FRAME_ACK:
    on_ack(u, p, n);
    break;
  case SIOX_FRAME_PONG:
    on_pong(u, p, n);
    break;
  case SIOX_FRAME_ERROR:
    on_error_msg(u, p, n);
    break;
  default:
    uplink_drop(u, "unexpected frame type from server");
  }
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *out) {
  struct uplink *u = h->data;
  if (u->tls)
    return tls_link_alloc(out);
  if (u->rcap - u->rlen < suggested) {
    uint8_t *nb = realloc(u->rbuf, u->rlen + suggested);
    if (!nb) {
      *out = uv_buf_init(NULL, 0);
      return;
    }
    u->rbuf = nb;
    u->rcap = u->rlen + suggested;
  }
  *out = uv_buf_init((char *)u->rbuf + u->rlen, (unsigned)(u->rcap - u->rlen));
}

static int send_hello(struct uplink *u);

/* TLS hook: decrypts into rbuf, answers the handshake, says Hello once it
 * is done. <0: dropped. */
static int tls_in(struct uplink *u, ssize_t nread, const uv_buf_t *buf) {
  uint8_t *out;
  size_t outlen;
  int rc = tls_link_input(u->tls, buf, nread, &u->rbuf, &u->rlen, &u->rcap, &out, &outlen);
  if (rc == 0 && outlen)
    rc = write_owned(u, out, outlen);
  else
    free(out);
  if (rc == 0 && u->state == UP_CONNECTING && tls_link_ready(u->tls) && (rc = send_hello(u)) == 0)
    u->state = UP_HELLO;
  if (rc < 0)
    uplink_drop(u, "TLS failure");
  return rc;
}

static void on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf) {
  struct uplink *u = st->data;
  if (nread < 0) {
    if (u->tls)
      free(buf->base);
    uplink_drop(u, nread == UV_EOF ? "server closed the connection" : uv_strerror((int)nread));
    return;
  }
  if (u->tls) {
    if (tls_in(u, nread, buf) < 0)
      return;
  } else {
    u->rlen += (size_t)nread;
  }
  size_t off = 0;
  while (u->tcp_open && u->rlen - off >= SIOX_FRAME_HDR_LEN) {
    struct siox_frame_hdr h;
    const char *why;
    if (siox_frame_hdr_decode(u->rbuf + off, &h, &why) < 0) {
      uplink_drop(u, why);
      return;
    }
    if (u->rlen - off < SIOX_FRAME_HDR_LEN + h.length)
      break;
    dispatch(u, h.type, u->rbuf + off + SIOX_FRAME_HDR_LEN, h.length);
    off += SIOX_FRAME_HDR_LEN + h.length;
  }
  if (!u->tcp_open)
    return;
  memmove(u->rbuf, u->rbuf + off, u->rlen - off);
  u->rlen -= off;
}

/* ---------------------------------------------------------------------------
 * Connection lifecycle
 * ------------------------------------------------------------------------- */
static void start_connect(struct uplink *u);

static void on_retry(uv_timer_t *t) { start_connect(t->data); }

static void schedule_retry(struct uplink *u) {
  u->state = UP_DOWN;
  if (u->stopping)
    return;
  uv_timer_start(&u->retry, on_retry, u->backoff_ms, 0);
  u->backoff_ms = u->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : u->backoff_ms * 2;
}

static void on_tcp_closed(uv_handle_t *h) {
  struct uplink *u = h->data;
  u->tcp_open = false;
  schedule_retry(u);
}

/* Drops the connection (if any); unacked batches stay spooled and are resent
 * after the next HelloReply. */
static void uplink_drop(struct uplink *u, const char *why) {
  uv_timer_stop(&u->ping);
  u->rlen = 0;
  u->inflight = 0;
  if (!u->tcp_open || uv_is_closing((uv_handle_t *)&u->tcp))
    return;
  if (u->state == UP_READY || u->state == UP_HELLO)
    fprintf(stderr, "siox-daemon: server connection lost: %s\n", why);
  u->state = UP_DOWN;
  tls_link_close(&u->tls);
  uv_close((uv_handle_t *)&u->tcp, on_tcp_closed);
}

static int send_hello(struct uplink *u) {
  Siox__Hello m = SIOX__HELLO__INIT;
  m.daemon_id = u->d->daemon_id;
  m.hostname = u->d->hostname;
  m.version = SIOX_DAEMON_VERSION;
  char *cred;
  int rc = daemon_hello_credential(u->d, &m, &cred);
  if (rc == 0)
    rc = send_msg(u, SIOX_FRAME_HELLO, &m.base);
  free(cred);
  return rc;
}

static void on_connected(uv_connect_t *req, int status) {
  struct uplink *u = req->data;
  if (status < 0) {
    uplink_drop(u, uv_strerror(status));
    return;
  }
  uint8_t *hs;
  size_t hslen;
  int rc = tls_link_open(u->d, &u->tls, &hs, &hslen);
  if (rc == 0 && hslen)
    rc = write_owned(u, hs, hslen);
  else
    free(hs);
  if (rc == 0)
    rc = uv_read_start((uv_stream_t *)&u->tcp, on_alloc, on_read);
  if (rc == 0 && !u->tls)
    rc = send_hello(u);
  if (rc < 0) {
    uplink_drop(u, uv_strerror(rc));
    return;
  }
  u->state = u->tls ? UP_CONNECTING : UP_HELLO; /* with TLS, Hello follows the handshake (tls_in) */
}

static void on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *ai) {
  struct uplink *u = req->data;
  if (status < 0 || u->stopping) {
    if (status < 0)
      fprintf(stderr, "siox-daemon: resolving %s: %s\n", u->d->cfg.server_host, uv_strerror(status));
    uv_freeaddrinfo(ai);
    schedule_retry(u);
    return;
  }
  uv_tcp_init(u->d->loop, &u->tcp);
  u->tcp.data = u;
  u->tcp_open = true;
  uv_tcp_nodelay(&u->tcp, 1);
  u->state = UP_CONNECTING;
  u->connect_req.data = u;
  int rc = uv_tcp_connect(&u->connect_req, &u->tcp, ai->ai_addr, on_connected);
  uv_freeaddrinfo(ai);
  if (rc < 0)
    uplink_drop(u, uv_strerror(rc));
}

static void start_connect(struct uplink *u) {
  char port[16];
  snprintf(port, sizeof port, "%d", u->d->cfg.server_port);
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
  u->state = UP_RESOLVING;
  u->gai_req.data = u;
  int rc = uv_getaddrinfo(u->d->loop, &u->gai_req, on_resolved, u->d->cfg.server_host, port, &hints);
  if (rc < 0) {
    fprintf(stderr, "siox-daemon: resolving %s: %s\n", u->d->cfg.server_host, uv_strerror(rc));
    schedule_retry(u);
  }
}

static void on_ping(uv_timer_t *t) {
  struct uplink *u = t->data;
  Siox__Ping m = SIOX__PING__INIT;
  m.t1 = clock_host_ns(u->d);
  if (send_msg(u, SIOX_FRAME_PING, &m.base) < 0) {
    uplink_drop(u, "ping failed");
    return;
  }
  u->pings++;
  bool first = u->d->clock.n < CLOCK_SYNC_FIRST && u->pings < CLOCK_SYNC_FIRST;
  uv_timer_start(&u->ping, on_ping, first ? PING_FIRST_MS : PING_MS, 0);
}

int uplink_start(struct daemon *d) {
  struct uplink *u = calloc(1, sizeof *u);
  if (!u)
    return -ENOMEM;
  u->d = d;
  u->backoff_ms = BACKOFF_MIN_MS;
  uv_timer_init(d->loop, &u->retry);
  uv_timer_init(d->loop, &u->ping);
  u->retry.data = u->ping.data = u;
  d->uplink = u;
  int rc = quarantine_load(d);
  if (rc < 0)
    fprintf(stderr, "siox-daemon: reading the quarantine: %s\n", strerror(-rc));
  start_connect(u);
  return 0;
}

bool uplink_connected(const struct uplink *u) { return u->state == UP_READY; }

bool uplink_drained(const struct uplink *u) { return u->d->spool.n == 0; }

/* Closes every handle; the struct is freed by uplink_free after the loop
 * has run their close callbacks. */
void uplink_stop(struct uplink *u) {
  u->stopping = true;
  uv_close((uv_handle_t *)&u->retry, NULL);
  uv_close((uv_handle_t *)&u->ping, NULL);
  if (u->tcp_open && !uv_is_closing((uv_handle_t *)&u->tcp))
    uv_close((uv_handle_t *)&u->tcp, NULL);
  if (u->state == UP_RESOLVING)
    uv_cancel((uv_req_t *)&u->gai_req);
}

void uplink_free(struct uplink *u) {
  if (!u)
    return;
  tls_link_close(&u->tls);
  free(u->rbuf);
  free(u);
}
