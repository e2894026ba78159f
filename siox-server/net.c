/*
 * TCP side of siox-server: the listener and each connection's byte stream.
 * Bytes from daemons (and status queries) are cut into frames here, after
 * the 12-byte header has been validated (siox_frame_hdr_decode); complete
 * frames go to session.c. A bad header or a stream that ends mid-frame
 * closes that connection only.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"
#include "siox_frame.h"

/* Read chunk: small before the Hello, whose frames are at most 64 KiB
 * (limits.c), so an unauthenticated connection holds under 100 KiB. */
#define READ_CHUNK (64u << 10)
#define PREAUTH_CHUNK (16u << 10)

static void on_closed(uv_handle_t *h) {
  struct siox_conn *c = h->data;
  c->tcp.data = NULL; /* handle closed */
  siox_conn_unref(c);
}

void siox_conn_unref(struct siox_conn *c) {
  if (c->pending > 0) c->pending--;
  if (c->pending > 0 || !c->closing || c->tcp.data) return;
  siox_tls_conn_free(c);
  siox_limits_shrunk(c);
  free(c->buf);
  free(c);
}

void siox_conn_close(struct siox_conn *c) {
  if (c->closing) return;
  c->closing = 1;
  c->srv->n.connections--;
  if (c->prev) c->prev->next = c->next;
  else c->srv->conns = c->next;
  if (c->next) c->next->prev = c->prev;
  c->pending++; /* held until on_closed */
  uv_close((uv_handle_t *)&c->tcp, on_closed);
}

struct write_req {
  uv_write_t req;
  struct siox_conn *conn;
  int close_after;
  size_t cost; /* counted in conn->out_bytes until written */
  uint8_t data[];
};

static void drain_frames(struct siox_conn *c);
static void apply_reading(struct siox_conn *c);

static void on_written(uv_write_t *req, int status) {
  struct write_req *w = (struct write_req *)req;
  struct siox_conn *c = w->conn;
  c->out_bytes -= w->cost;
  if ((status < 0 && status != UV_ECANCELED) || w->close_after) siox_conn_close(c);
  free(w);
  /* A peer that reads its replies again: serve the frames kept waiting. */
  if (c->write_full && !c->closing && c->out_bytes <= SIOX_CONN_WRITE_MAX / 2) {
    c->write_full = 0;
    drain_frames(c);
    apply_reading(c);
  }
  siox_conn_unref(c);
}

/* Counts a reply's n bytes against the connection's write queue. A peer
 * that does not read its replies (a Ping flood) stops being read. */
static void account_write(struct siox_conn *c, struct write_req *w, size_t n) {
  w->cost = sizeof *w + n;
  c->out_bytes += w->cost;
  if (c->out_bytes > SIOX_CONN_WRITE_MAX && !w->close_after) c->write_full = 1;
}

/* Queues n bytes as they are (ciphertext of a TLS connection). */
static void write_raw(struct siox_conn *c, const uint8_t *p, size_t n, int close_after) {
  struct write_req *w = malloc(sizeof *w + n);
  if (!w) {
    siox_log("%s: out of memory for a reply; closing", c->peer);
    siox_conn_close(c);
    return;
  }
  memcpy(w->data, p, n);
  w->conn = c;
  w->close_after = close_after;
  account_write(c, w, n);
  uv_buf_t b = uv_buf_init((char *)w->data, (unsigned)n);
  c->pending++;
  int rc = uv_write(&w->req, (uv_stream_t *)&c->tcp, &b, 1, on_written);
  if (rc < 0) on_written(&w->req, rc);
}

/* TLS hook: encrypts the frame w holds and sends the ciphertext instead. */
static void send_sealed(struct siox_conn *c, struct write_req *w, size_t n) {
  uint8_t *out;
  size_t outlen;
  if (siox_tls_seal(c, w->data, n, &out, &outlen) != 0) {
    siox_log("%s: TLS: cannot encrypt a reply; closing", c->peer);
    free(w);
    siox_conn_close(c);
    return;
  }
  write_raw(c, out, outlen, w->close_after);
  free(out);
  free(w);
}

static void send_frame(struct siox_conn *c, uint16_t type, const ProtobufCMessage *msg, int close_after) {
  if (c->closing) return;
  size_t len = msg ? protobuf_c_message_get_packed_size(msg) : 0;
  struct write_req *w = malloc(sizeof *w + SIOX_FRAME_HDR_LEN + len);
  if (!w) {
    siox_log("%s: out of memory for a reply; closing", c->peer);
    siox_conn_close(c);
    return;
  }
  siox_frame_hdr_encode(w->data, type, (uint32_t)len);
  if (msg) protobuf_c_message_pack(msg, w->data + SIOX_FRAME_HDR_LEN);
  w->conn = c;
  w->close_after = close_after;
  if (c->tls) return send_sealed(c, w, SIOX_FRAME_HDR_LEN + len);
  account_write(c, w, SIOX_FRAME_HDR_LEN + len);
  uv_buf_t b = uv_buf_init((char *)w->data, (unsigned)(SIOX_FRAME_HDR_LEN + len));
  c->pending++;
  int rc = uv_write(&w->req, (uv_stream_t *)&c->tcp, &b, 1, on_written);
  if (rc < 0) on_written(&w->req, rc);
}

void siox_conn_send(struct siox_conn *c, uint16_t type, const ProtobufCMessage *msg) { send_frame(c, type, msg, 0); }

/* Sends Error{reason, kind, seq} and closes once it is written. Returns 1,
 * or 0 when the connection was already closing (nothing sent). */
static int error_close(struct siox_conn *c, const char *reason, Siox__ErrorKind kind, uint64_t seq) {
  if (c->closing) return 0;
  siox_conn_read(c, 0);
  Siox__Error e = SIOX__ERROR__INIT;
  e.reason = (char *)reason;
  e.kind = kind;
  e.seq = seq;
  send_frame(c, SIOX_FRAME_ERROR, &e.base, 1);
  return 1;
}

/* bad_frames counts what the peer sent wrong, once per connection: nothing
 * when the connection is already closing (an earlier reject counted it). */
void siox_conn_reject(struct siox_conn *c, const char *reason) {
  if (c->closing) return;
  siox_log("%s: rejected: %s; closing connection", c->peer, reason);
  c->srv->n.bad_frames++;
  error_close(c, reason, SIOX__ERROR_KIND__ERROR_UNSPECIFIED, 0);
}

void siox_conn_refuse(struct siox_conn *c, Siox__ErrorKind kind, uint64_t seq, const char *reason) {
  if (c->closing) return;
  siox_log("%s: %s; closing connection", c->peer, reason);
  error_close(c, reason, kind, seq);
}

/* Room for the rest of the frame in progress (drain_frames leaves the
 * buffer starting at a frame whose header it has accepted) plus a chunk:
 * one realloc per large frame, never more than limits.c granted. */
static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf) {
  struct siox_conn *c = h->data;
  size_t chunk = c->authenticated ? READ_CHUNK : PREAUTH_CHUNK, need = c->len + chunk;
  (void)hint;
  if (c->tls) { /* ciphertext goes to a scratch buffer; plaintext to c->buf */
    *buf = uv_buf_init(malloc(READ_CHUNK), READ_CHUNK);
    if (!buf->base) buf->len = 0;
    return;
  }
  if (c->len >= SIOX_FRAME_HDR_LEN) {
    struct siox_frame_hdr fh;
    if (siox_frame_hdr_decode(c->buf, &fh, NULL) == 0 && SIOX_FRAME_HDR_LEN + fh.length + chunk > need)
      need = SIOX_FRAME_HDR_LEN + fh.length + chunk;
  }
  if (need > c->cap) {
    size_t ncap = need > SIOX_CONN_SMALL_BUF || 2 * chunk < need ? need : 2 * chunk;
    uint8_t *nb = siox_limits_grow(c, ncap) == 0 ? realloc(c->buf, ncap) : NULL;
    if (!nb) {
      *buf = uv_buf_init(NULL, 0); /* libuv reports UV_ENOBUFS */
      return;
    }
    c->buf = nb;
    c->cap = ncap;
  }
  *buf = uv_buf_init((char *)c->buf + c->len, (unsigned)(c->cap - c->len));
}

/* A header announcing more than limits.c lets this connection send (or
 * more buffer than the global budget has left) is refused before its bytes
 * are read. Returns 0 or -1 after rejecting. */
static int frame_allowed(struct siox_conn *c, const struct siox_frame_hdr *h) {
  char why[160];
  size_t max = siox_limits_frame_max(c);
  if (h->length > max) {
    snprintf(why, sizeof why, "frame of %u bytes %s (limit %zu)", h->length,
             c->authenticated ? "too large" : "before Hello (not yet accepted)", max);
    return siox_conn_reject(c, why), -1;
  }
  if (siox_limits_grow(c, SIOX_FRAME_HDR_LEN + (size_t)h->length + READ_CHUNK) != 0) {
    /* Not the peer's fault: no bad_frames, and the daemon retries. */
    siox_conn_refuse(c, SIOX__ERROR_KIND__ERROR_RETRY_LATER, 0,
                     "server busy: connection buffers at the --memory-mb bound; retry later");
    return -1;
  }
  return 0;
}

/* Cuts complete frames off the front of the buffer; stops early while the
 * peer does not read its replies. */
static void drain_frames(struct siox_conn *c) {
  size_t off = 0;
  while (!c->closing && !c->write_full && c->len - off >= SIOX_FRAME_HDR_LEN) {
    struct siox_frame_hdr h;
    const char *why = "bad header";
    if (siox_frame_hdr_decode(c->buf + off, &h, &why) != 0) {
      siox_conn_reject(c, why);
      return;
    }
    if (frame_allowed(c, &h) != 0) return;
    if (c->len - off < SIOX_FRAME_HDR_LEN + (size_t)h.length) break;
    if (siox_session_frame(c, h.type, c->buf + off + SIOX_FRAME_HDR_LEN, h.length) != 0) return;
    off += SIOX_FRAME_HDR_LEN + h.length;
  }
  if (c->closing) return;
  if (off) memmove(c->buf, c->buf + off, c->len - off);
  c->len -= off;
  if (off && c->len) c->frame_start_ns = siox_limits_now();
  if (c->len == 0 && c->cap > SIOX_CONN_SMALL_BUF) { /* an idle connection holds no large buffer */
    free(c->buf);
    c->buf = NULL;
    c->cap = 0;
    siox_limits_shrunk(c);
  }
}

/* TLS hook: decrypts into c->buf and answers the handshake. <0: closed. */
static int tls_in(struct siox_conn *c, ssize_t n, const uv_buf_t *buf) {
  uint8_t *out = NULL;
  size_t outlen = 0;
  int rc = siox_tls_read(c, (const uint8_t *)buf->base, (size_t)n, &out, &outlen);
  free(buf->base);
  if (rc == 0 && siox_limits_grow(c, c->cap) != 0) { /* plaintext counts against the same budget */
    siox_log("%s: TLS: no buffer budget left for %zu bytes; closing", c->peer, c->cap);
    rc = -ENOBUFS;
  }
  if (rc == 0 && outlen) write_raw(c, out, outlen, 0);
  free(out);
  if (rc != 0) siox_conn_close(c);
  return rc;
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf) {
  struct siox_conn *c = s->data;
  if (c->tls && n > 0) {
    if (tls_in(c, n, buf) == 0) drain_frames(c);
    return;
  }
  if (c->tls) free(buf->base);
  if (n > 0) {
    if (c->len == 0) c->frame_start_ns = siox_limits_now();
    c->len += (size_t)n;
    drain_frames(c);
    apply_reading(c);
  } else if (n == UV_EOF) {
    char why[128];
    if (c->len == 0) return siox_conn_close(c);
    snprintf(why, sizeof why, "truncated frame: stream ended after %zu bytes of a frame", c->len);
    siox_conn_reject(c, why);
  } else if (n < 0) {
    siox_log("%s: read: %s; closing", c->peer, uv_strerror((int)n));
    siox_conn_close(c);
  }
}

/* Reads when the session wants to and the peer reads its replies. */
static void apply_reading(struct siox_conn *c) {
  int on = c->reading && !c->write_full;
  if (c->closing || on == c->uv_reading) return;
  c->uv_reading = on;
  if (on) {
    c->frame_start_ns = siox_limits_now(); /* a paused partial frame could not progress */
    uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
  } else {
    uv_read_stop((uv_stream_t *)&c->tcp);
  }
}

void siox_conn_read(struct siox_conn *c, int on) {
  if (c->closing) return;
  c->reading = on;
  apply_reading(c);
}

static void peer_name(struct siox_conn *c) {
  struct sockaddr_storage ss;
  int len = sizeof ss;
  char ip[48] = "?";
  int port = 0;
  if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&ss, &len) == 0) {
    if (ss.ss_family == AF_INET6) {
      uv_ip6_name((struct sockaddr_in6 *)&ss, ip, sizeof ip);
      port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    } else {
      uv_ip4_name((struct sockaddr_in *)&ss, ip, sizeof ip);
      port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
    }
  }
  snprintf(c->peer, sizeof c->peer, "%s:%d", ip, port);
}

static void on_connection(uv_stream_t *l, int status) {
  struct siox_server *s = l->data;
  if (status < 0) return siox_log("accept: %s", uv_strerror(status));
  struct siox_conn *c = calloc(1, sizeof *c);
  if (!c) return siox_log("accept: out of memory");
  c->srv = s;
  uv_tcp_init(s->loop, &c->tcp);
  c->tcp.data = c;
  if (uv_accept(l, (uv_stream_t *)&c->tcp) != 0) {
    c->closing = 1;
    c->pending = 1;
    uv_close((uv_handle_t *)&c->tcp, on_closed);
    return;
  }
  uv_tcp_nodelay(&c->tcp, 1);
  peer_name(c);
  if (!siox_limits_admit(s, c)) {
    c->closing = 1;
    c->pending = 1;
    uv_close((uv_handle_t *)&c->tcp, on_closed);
    return;
  }
  c->next = s->conns;
  if (s->conns) s->conns->prev = c;
  s->conns = c;
  s->n.connections++;
  if (siox_tls_accept(c) != 0) return siox_log("%s: TLS: out of memory; closing", c->peer), siox_conn_close(c);
  siox_conn_read(c, 1);
}

int siox_net_start(struct siox_server *s) {
  struct sockaddr_storage addr;
  int rc = uv_ip4_addr(s->opt->host, s->opt->port, (struct sockaddr_in *)&addr);
  if (rc != 0) rc = uv_ip6_addr(s->opt->host, s->opt->port, (struct sockaddr_in6 *)&addr);
  if (rc != 0) return rc;
  uv_tcp_init(s->loop, &s->listener);
  s->listener.data = s;
  if ((rc = uv_tcp_bind(&s->listener, (struct sockaddr *)&addr, 0)) != 0) return rc;
  return uv_listen((uv_stream_t *)&s->listener, 128, on_connection);
}

void siox_net_stop(struct siox_server *s) {
  if (!uv_is_closing((uv_handle_t *)&s->listener)) uv_close((uv_handle_t *)&s->listener, NULL);
  siox_limits_stop(s);
  while (s->conns) siox_conn_close(s->conns);
}
