/*
 * Hint link: the daemon's second TCP connection to siox-server, used only
 * for HintQuery / HintReply (hints.c). Batches go over the uplink, and the
 * server stops reading that stream while batches wait for the database; a
 * hint query queued behind them would miss the MPI_File_open's timeout.
 * This connection authenticates like the uplink (Hello with the daemon id
 * and token) and then carries nothing but queries, so an answer takes one
 * round trip plus one lookup. Reconnects with backoff (100 ms .. 2 s);
 * while it is down, hints.c answers "server down" at once.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "siox.pb-c.h"
#include "siox_frame.h"

#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 2000

enum link_state { LINK_DOWN, LINK_RESOLVING, LINK_CONNECTING, LINK_HELLO, LINK_READY };

struct hint_link {
  struct daemon *d;
  enum link_state state;
  uv_tcp_t tcp;
  bool tcp_open, stopping;
  uv_connect_t connect_req;
  uv_getaddrinfo_t gai_req;
  uv_timer_t retry;
  unsigned backoff_ms;
  uint8_t *rbuf; /* owned: bytes of an incomplete server frame */
  size_t rlen, rcap;
  struct siox_tls_pipe *tls; /* tls_link.c: NULL without --tls */
};

struct frame_write {
  uv_write_t w;
  uint8_t buf[]; /* header + payload */
};

static void link_drop(struct hint_link *l, const char *why);
static void start_connect(struct hint_link *l);

static void on_written(uv_write_t *w, int status) {
  struct hint_link *l = w->data;
  free(w);
  if (status < 0 && status != UV_ECANCELED) link_drop(l, uv_strerror(status));
}

static int write_fw(struct hint_link *l, struct frame_write *fw, size_t n) {
  fw->w.data = l;
  uv_buf_t b = uv_buf_init((char *)fw->buf, (unsigned)n);
  int rc = uv_write(&fw->w, (uv_stream_t *)&l->tcp, &b, 1, on_written);
  if (rc < 0) free(fw);
  return rc;
}

/* Queues a copy of n bytes (TLS handshake or sealed records). */
static int write_copy(struct hint_link *l, const uint8_t *p, size_t n) {
  struct frame_write *fw = malloc(sizeof *fw + n);
  if (!fw) return -ENOMEM;
  memcpy(fw->buf, p, n);
  return write_fw(l, fw, n);
}

static int send_frame(struct hint_link *l, uint16_t type, const ProtobufCMessage *msg) {
  size_t n = protobuf_c_message_get_packed_size(msg);
  struct frame_write *fw = malloc(sizeof *fw + SIOX_FRAME_HDR_LEN + n);
  if (!fw) return -ENOMEM;
  siox_frame_hdr_encode(fw->buf, type, (uint32_t)n);
  protobuf_c_message_pack(msg, fw->buf + SIOX_FRAME_HDR_LEN);
  if (!l->tls) return write_fw(l, fw, SIOX_FRAME_HDR_LEN + n);
  uint8_t *sealed;
  size_t slen;
  int rc = tls_link_seal(l->tls, fw->buf, SIOX_FRAME_HDR_LEN + n, &sealed, &slen);
  free(fw);
  if (rc == 0) rc = write_copy(l, sealed, slen);
  free(sealed);
  return rc;
}

int hint_link_send(struct hint_link *l, uint16_t type, const ProtobufCMessage *msg) {
  return l && l->state == LINK_READY ? send_frame(l, type, msg) : -ENOTCONN;
}

bool hint_link_connected(const struct hint_link *l) { return l && l->state == LINK_READY; }

/* ---------------------------------------------------------------------------
 * Reading
 * ------------------------------------------------------------------------- */
static void dispatch(struct hint_link *l, uint16_t type, const uint8_t *p, size_t n) {
  if (type == SIOX_FRAME_HINT_REPLY && l->state == LINK_READY) {
    hints_on_reply(l->d, p, n);
  } else if (type == SIOX_FRAME_HELLO_REPLY && l->state == LINK_HELLO) {
    l->state = LINK_READY; /* acked_seq is the uplink's business */
    l->backoff_ms = BACKOFF_MIN_MS;
  } else if (type == SIOX_FRAME_ERROR) {
    Siox__Error *m = siox__error__unpack(NULL, n, p);
    fprintf(stderr, "siox-daemon: hint link: server says: %s\n", m && m->reason ? m->reason : "(unreadable)");
    siox__error__free_unpacked(m, NULL);
    link_drop(l, "server error");
  } else {
    link_drop(l, "unexpected frame from the server");
  }
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *out) {
  struct hint_link *l = h->data;
  if (l->tls) return tls_link_alloc(out);
  if (l->rcap - l->rlen < suggested) {
    uint8_t *nb = realloc(l->rbuf, l->rlen + suggested);
    if (!nb) {
      *out = uv_buf_init(NULL, 0);
      return;
    }
    l->rbuf = nb;
    l->rcap = l->rlen + suggested;
  }
  *out = uv_buf_init((char *)l->rbuf + l->rlen, (unsigned)(l->rcap - l->rlen));
}

static int send_hello(struct hint_link *l);

/* TLS hook: decrypts into rbuf, answers the handshake, says Hello once it
 * is done. <0: dropped. */
static int tls_in(struct hint_link *l, ssize_t nread, const uv_buf_t *buf) {
  uint8_t *out;
  size_t outlen;
  int rc = tls_link_input(l->tls, buf, nread, &l->rbuf, &l->rlen, &l->rcap, &out, &outlen);
  if (rc == 0 && outlen) rc = write_copy(l, out, outlen);
  free(out);
  if (rc == 0 && l->state == LINK_CONNECTING && tls_link_ready(l->tls)) rc = send_hello(l);
  if (rc < 0) link_drop(l, "TLS failure");
  return rc;
}

static void on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf) {
  struct hint_link *l = st->data;
  if (nread < 0) {
    if (l->tls) free(buf->base);
    link_drop(l, nread == UV_EOF ? "server closed the connection" : uv_strerror((int)nread));
    return;
  }
  if (!l->tls) l->rlen += (size_t)nread;
  else if (tls_in(l, nread, buf) < 0) return;
  size_t off = 0;
  while (l->tcp_open && l->state != LINK_DOWN && l->rlen - off >= SIOX_FRAME_HDR_LEN) {
    struct siox_frame_hdr h;
    const char *why;
    if (siox_frame_hdr_decode(l->rbuf + off, &h, &why) < 0) {
      link_drop(l, why);
      return;
    }
    if (l->rlen - off < SIOX_FRAME_HDR_LEN + h.length) break;
    dispatch(l, h.type, l->rbuf + off + SIOX_FRAME_HDR_LEN, h.length);
    off += SIOX_FRAME_HDR_LEN + h.length;
  }
  if (l->state == LINK_DOWN) return; /* dropped: rlen already reset */
  memmove(l->rbuf, l->rbuf + off, l->rlen - off);
  l->rlen -= off;
}

/* ---------------------------------------------------------------------------
 * Connection lifecycle (the uplink's, without spool or clock)
 * ------------------------------------------------------------------------- */
static void on_retry(uv_timer_t *t) { start_connect(t->data); }

static void schedule_retry(struct hint_link *l) {
  l->state = LINK_DOWN;
  if (l->stopping) return;
  uv_timer_start(&l->retry, on_retry, l->backoff_ms, 0);
  l->backoff_ms = l->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : l->backoff_ms * 2;
}

static void on_tcp_closed(uv_handle_t *h) {
  struct hint_link *l = h->data;
  l->tcp_open = false;
  schedule_retry(l);
}

/* Drops the connection; queries waiting for it are answered "server down". */
static void link_drop(struct hint_link *l, const char *why) {
  bool was_ready = l->state == LINK_READY;
  l->rlen = 0;
  l->state = LINK_DOWN;
  tls_link_close(&l->tls);
  hints_link_lost(l->d);
  if (!l->tcp_open || uv_is_closing((uv_handle_t *)&l->tcp)) return;
  if (was_ready) fprintf(stderr, "siox-daemon: hint link lost: %s\n", why);
  uv_close((uv_handle_t *)&l->tcp, on_tcp_closed);
}

static int send_hello(struct hint_link *l) {
  Siox__Hello m = SIOX__HELLO__INIT;
  m.daemon_id = l->d->daemon_id;
  m.hostname = l->d->hostname;
  m.version = SIOX_DAEMON_VERSION;
  m.hint_link = true;
  l->state = LINK_HELLO;
  char *cred;
  int rc = daemon_hello_credential(l->d, &m, &cred);
  if (rc == 0) rc = send_frame(l, SIOX_FRAME_HELLO, &m.base);
  free(cred);
  return rc;
}

static void on_connected(uv_connect_t *req, int status) {
  struct hint_link *l = req->data;
  if (status < 0) {
    link_drop(l, uv_strerror(status));
    return;
  }
  uint8_t *hs;
  size_t hslen;
  int rc = tls_link_open(l->d, &l->tls, &hs, &hslen);
  if (rc == 0 && hslen) rc = write_copy(l, hs, hslen);
  free(hs);
  if (rc == 0) rc = uv_read_start((uv_stream_t *)&l->tcp, on_alloc, on_read);
  if (rc == 0 && !l->tls) rc = send_hello(l); /* with TLS, after the handshake (tls_in) */
  if (rc < 0) link_drop(l, uv_strerror(rc));
}

static void on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *ai) {
  struct hint_link *l = req->data;
  if (status < 0 || l->stopping) {
    uv_freeaddrinfo(ai);
    schedule_retry(l);
    return;
  }
  uv_tcp_init(l->d->loop, &l->tcp);
  l->tcp.data = l;
  l->tcp_open = true;
  uv_tcp_nodelay(&l->tcp, 1);
  l->state = LINK_CONNECTING;
  l->connect_req.data = l;
  int rc = uv_tcp_connect(&l->connect_req, &l->tcp, ai->ai_addr, on_connected);
  uv_freeaddrinfo(ai);
  if (rc < 0) link_drop(l, uv_strerror(rc));
}

static void start_connect(struct hint_link *l) {
  char port[16];
  snprintf(port, sizeof port, "%d", l->d->cfg.server_port);
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
  l->state = LINK_RESOLVING;
  l->gai_req.data = l;
  if (uv_getaddrinfo(l->d->loop, &l->gai_req, on_resolved, l->d->cfg.server_host, port, &hints) < 0)
    schedule_retry(l);
}

int hint_link_start(struct daemon *d) {
  struct hint_link *l = calloc(1, sizeof *l);
  if (!l) return -ENOMEM;
  l->d = d;
  l->backoff_ms = BACKOFF_MIN_MS;
  uv_timer_init(d->loop, &l->retry);
  l->retry.data = l;
  d->hint_link = l;
  start_connect(l);
  return 0;
}

void hint_link_stop(struct hint_link *l) {
  if (!l) return;
  l->stopping = true;
  uv_close((uv_handle_t *)&l->retry, NULL);
  if (l->tcp_open && !uv_is_closing((uv_handle_t *)&l->tcp)) uv_close((uv_handle_t *)&l->tcp, NULL);
  if (l->state == LINK_RESOLVING) uv_cancel((uv_req_t *)&l->gai_req);
}

void hint_link_free(struct hint_link *l) {
  if (!l) return;
  tls_link_close(&l->tls);
  free(l->rbuf);
  free(l);
}
