/*
 * `siox status` probes. Daemon: connect to its unix socket, send one
 * SIOX_CW_STATUS frame with an empty payload, read one SIOX_CW_STATUS frame
 * back holding a packed siox.StatusReply. Server: connect over TCP, send a
 * SIOX_FRAME_STATUS_REQUEST frame signed with a MUNGE credential of the
 * caller, read SIOX_FRAME_STATUS_REPLY (counters only when it verified). Every read
 * is bounded by a timeout and every length checked before use.
 */
#include "status_probe.h"

#include <errno.h>
#include <limits.h>
#include <munge.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <netdb.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "hello_cred.h"
#include "tls_pipe.h"
#include "siox_client_wire.h"
#include "siox_frame.h"
#include "siox_hostport.h"

static void set_timeouts(int fd) {
  struct timeval tv = {.tv_sec = SIOX_PROBE_TIMEOUT_MS / 1000, .tv_usec = (SIOX_PROBE_TIMEOUT_MS % 1000) * 1000};
  /* On Linux SO_SNDTIMEO also bounds connect(). */
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* A probe's connection: a socket, with TLS when ssl is set. */
struct probe_io {
  int fd;
  SSL *ssl;
};

static ssize_t io_read(const struct probe_io *io, void *p, size_t len) {
  if (!io->ssl) return read(io->fd, p, len);
  int n = SSL_read(io->ssl, p, len > INT_MAX ? INT_MAX : (int)len);
  if (n > 0) return n;
  int e = SSL_get_error(io->ssl, n);
  ERR_clear_error();
  if (e == SSL_ERROR_ZERO_RETURN) return 0;
  if (e != SSL_ERROR_SYSCALL) errno = EPROTO;
  else if (errno == 0) return 0;
  return -1;
}

static ssize_t io_write(const struct probe_io *io, const void *p, size_t len) {
  if (!io->ssl) return send(io->fd, p, len, MSG_NOSIGNAL);
  int n = SSL_write(io->ssl, p, len > INT_MAX ? INT_MAX : (int)len);
  if (n > 0) return n;
  if (SSL_get_error(io->ssl, n) != SSL_ERROR_SYSCALL) errno = EPROTO;
  ERR_clear_error();
  return -1;
}

/* 0, or -errno; -ECONNRESET when the peer closed before len bytes came. */
static int read_full(const struct probe_io *io, void *buf, size_t len) {
  uint8_t *p = buf;
  while (len) {
    ssize_t n = io_read(io, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno == EAGAIN ? -ETIMEDOUT : -errno;
    if (n == 0) return -ECONNRESET;
    p += n;
    len -= (size_t)n;
  }
  return 0;
}

static int write_full(const struct probe_io *io, const void *buf, size_t len) {
  const uint8_t *p = buf;
  while (len) {
    ssize_t n = io_write(io, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno == EAGAIN ? -ETIMEDOUT : -errno;
    p += n;
    len -= (size_t)n;
  }
  return 0;
}

static Siox__StatusReply *unpack_reply(const struct probe_io *io, uint32_t len, char *err, size_t errlen) {
  uint8_t *buf = malloc(len ? len : 1);
  if (!buf) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  int rc = read_full(io, buf, len);
  Siox__StatusReply *r = rc ? NULL : siox__status_reply__unpack(NULL, len, buf);
  free(buf);
  if (rc)
    snprintf(err, errlen, "reading the reply: %s", strerror(-rc));
  else if (!r)
    snprintf(err, errlen, "bad reply: not a siox.StatusReply");
  return r;
}

/* ---- daemon ----------------------------------------------------------- */

static int connect_unix(const char *path, char *err, size_t errlen) {
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  if (strlen(path) >= sizeof(sa.sun_path)) {
    snprintf(err, errlen, "socket path too long");
    return -1;
  }
  memcpy(sa.sun_path, path, strlen(path) + 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    snprintf(err, errlen, "socket: %s", strerror(errno));
    return -1;
  }
  set_timeouts(fd);
  if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
    snprintf(err, errlen, "%s", strerror(errno));
    close(fd);
    return -1;
  }
  return fd;
}

/* The client wire's header is in host byte order (both ends on one host). */
static int check_cw_hdr(const struct siox_cw_frame_hdr *h, char *err, size_t errlen) {
  if (h->magic != SIOX_CW_MAGIC || h->version != SIOX_CW_VERSION)
    snprintf(err, errlen, "bad reply: not a SIOX daemon (magic %#x, version %u)", h->magic, h->version);
  else if (h->type != SIOX_CW_STATUS)
    snprintf(err, errlen, "bad reply: frame type %u, expected %u (status)", h->type, SIOX_CW_STATUS);
  else if (h->length > SIOX_CW_MAX_PAYLOAD)
    snprintf(err, errlen, "bad reply: %u bytes is too long", h->length);
  else
    return 0;
  return -EPROTO;
}

Siox__StatusReply *siox_probe_daemon(const char *socket_path, char *err, size_t errlen) {
  int fd = connect_unix(socket_path, err, errlen);
  if (fd < 0) return NULL;
  struct siox_cw_frame_hdr h = {.magic = SIOX_CW_MAGIC, .version = SIOX_CW_VERSION, .type = SIOX_CW_STATUS};
  Siox__StatusReply *r = NULL;
  struct probe_io io = {fd, NULL};
  int rc = write_full(&io, &h, sizeof(h));
  if (rc == 0) rc = read_full(&io, &h, sizeof(h));
  if (rc)
    snprintf(err, errlen, "%s", rc == -ECONNRESET ? "the daemon closed the connection without answering" : strerror(-rc));
  else if (check_cw_hdr(&h, err, errlen) == 0)
    r = unpack_reply(&io, h.length, err, errlen);
  close(fd);
  return r;
}

/* ---- server ----------------------------------------------------------- */

/* "host:port", "[v6]:port"; the port as text for getaddrinfo. 0, or
 * -EINVAL with err set. */
static int split_host_port(const char *s, char *host, size_t hlen, char *port, size_t plen, char *err,
                           size_t errlen) {
  int p;
  if (siox_hostport_parse(s, strlen(s), host, hlen, &p) != 0) {
    snprintf(err, errlen, "'%s' is not HOST:PORT", s);
    return -EINVAL;
  }
  snprintf(port, plen, "%d", p);
  return 0;
}

static int connect_tcp(const char *host_port, char *err, size_t errlen) {
  char host[256], port[8];
  if (split_host_port(host_port, host, sizeof(host), port, sizeof(port), err, errlen)) return -1;
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res, *ai;
  int g = getaddrinfo(host, port, &hints, &res);
  if (g) {
    snprintf(err, errlen, "cannot resolve %s: %s", host_port, gai_strerror(g));
    return -1;
  }
  int fd = -1;
  snprintf(err, errlen, "no address");
  for (ai = res; ai && fd < 0; ai = ai->ai_next) {
    fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) continue;
    set_timeouts(fd);
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
      snprintf(err, errlen, "%s", errno == EINPROGRESS || errno == EAGAIN ? "connect timed out" : strerror(errno));
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(res);
  return fd;
}

/* The server refused: its siox.Error says why. */
static void read_error_frame(const struct probe_io *io, uint32_t len, char *err, size_t errlen) {
  uint8_t *buf = malloc(len ? len : 1);
  Siox__Error *e = buf && read_full(io, buf, len) == 0 ? siox__error__unpack(NULL, len, buf) : NULL;
  snprintf(err, errlen, "the server answered with an error: %s", e && e->reason ? e->reason : "(unreadable)");
  if (e) siox__error__free_unpacked(e, NULL);
  free(buf);
}

/* A MUNGE credential as whoever runs `siox` (the server shows its counters
 * only to authenticated peers); NULL when munged cannot be reached, and the
 * server then answers with its health alone. Socket: $SIOX_MUNGE_SOCKET,
 * else libmunge's default. */
static char *status_credential(void) {
  char payload[SIOX_CRED_PAYLOAD_MAX], *cred = NULL;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  int n = siox_status_cred_payload(payload, sizeof payload, (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec);
  munge_ctx_t ctx = n > 0 ? munge_ctx_create() : NULL;
  if (!ctx) return NULL;
  const char *sock = getenv("SIOX_MUNGE_SOCKET");
  munge_err_t e = sock && *sock ? munge_ctx_set(ctx, MUNGE_OPT_SOCKET, sock) : EMUNGE_SUCCESS;
  if (e == EMUNGE_SUCCESS) e = munge_encode(&cred, ctx, payload, n);
  munge_ctx_destroy(ctx);
  if (e == EMUNGE_SUCCESS) return cred;
  free(cred);
  return NULL;
}

static Siox__StatusReply *server_exchange(const struct probe_io *io, char *err, size_t errlen) {
  Siox__StatusRequest req = SIOX__STATUS_REQUEST__INIT;
  char *cred = status_credential();
  if (cred) req.munge_cred.data = (uint8_t *)cred, req.munge_cred.len = strlen(cred);
  uint8_t in[SIOX_FRAME_HDR_LEN];
  size_t plen = siox__status_request__get_packed_size(&req);
  uint8_t *out = malloc(SIOX_FRAME_HDR_LEN + plen);
  if (!out) return free(cred), snprintf(err, errlen, "out of memory"), NULL;
  siox__status_request__pack(&req, out + SIOX_FRAME_HDR_LEN);
  free(cred);
  siox_frame_hdr_encode(out, SIOX_FRAME_STATUS_REQUEST, (uint32_t)plen);
  int rc = write_full(io, out, SIOX_FRAME_HDR_LEN + plen);
  free(out);
  if (rc == 0) rc = read_full(io, in, sizeof(in));
  if (rc) {
    snprintf(err, errlen, "%s", rc == -ECONNRESET ? "the server closed the connection without answering" : strerror(-rc));
    return NULL;
  }
  struct siox_frame_hdr h;
  const char *why = "";
  if (siox_frame_hdr_decode(in, &h, &why) != 0) return snprintf(err, errlen, "bad reply: %s", why), NULL;
  if (h.type == SIOX_FRAME_ERROR) return read_error_frame(io, h.length, err, errlen), NULL;
  if (h.type != SIOX_FRAME_STATUS_REPLY)
    return snprintf(err, errlen, "bad reply: frame type %u, expected %u", h.type, SIOX_FRAME_STATUS_REPLY), NULL;
  return unpack_reply(io, h.length, err, errlen);
}

/* TLS to a server run with --tls-cert, when $SIOX_TLS_CA names the CA file
 * its certificate must verify against (and name the host of host_port). */
static SSL *tls_start(int fd, const char *host_port, SSL_CTX **ctx, char *err, size_t errlen) {
  char host[256], port[8];
  const char *ca = getenv("SIOX_TLS_CA");
  *ctx = NULL;
  if (!ca || !*ca || split_host_port(host_port, host, sizeof(host), port, sizeof(port), err, errlen)) return NULL;
  SSL *ssl = NULL;
  if ((*ctx = siox_tls_client_ctx(ca, err, errlen)) && (ssl = SSL_new(*ctx)) && SSL_set_fd(ssl, fd) == 1 &&
      siox_tls_expect_host(ssl, host) == 1 && SSL_connect(ssl) == 1)
    return ssl;
  if (ssl || !*ctx) {
    long v = ssl ? SSL_get_verify_result(ssl) : X509_V_OK;
    if (v != X509_V_OK) snprintf(err, errlen, "TLS: certificate verification failed: %s", X509_verify_cert_error_string(v));
    else if (ssl) snprintf(err, errlen, "TLS handshake with %s failed", host_port);
  }
  ERR_clear_error();
  SSL_free(ssl);
  SSL_CTX_free(*ctx);
  *ctx = NULL;
  return NULL;
}

Siox__StatusReply *siox_probe_server(const char *host_port, char *err, size_t errlen) {
  int fd = connect_tcp(host_port, err, errlen);
  if (fd < 0) return NULL;
  SSL_CTX *ctx = NULL;
  struct probe_io io = {fd, tls_start(fd, host_port, &ctx, err, errlen)};
  const char *ca = getenv("SIOX_TLS_CA");
  Siox__StatusReply *r = !io.ssl && ca && *ca ? NULL : server_exchange(&io, err, errlen);
  if (io.ssl) SSL_shutdown(io.ssl), SSL_free(io.ssl);
  SSL_CTX_free(ctx);
  close(fd);
  return r;
}
