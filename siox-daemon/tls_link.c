/*
 * TLS on the daemon's connections to siox-server (--tls, --tls-ca): the
 * uplink and the hint link call these around their reads and writes; the
 * OpenSSL work is protocol/tls_pipe.c's. The server's certificate must
 * verify against --tls-ca (else the system CAs) and name --server's host.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "tls_pipe.h"

#define SCRATCH (64u << 10)

int tls_link_init(struct daemon *d) {
  if (!d->cfg.tls)
    return 0;
  char err[512];
  if (!(d->tls_ctx = siox_tls_client_ctx(d->cfg.tls_ca, err, sizeof err))) {
    fprintf(stderr, "siox-daemon: TLS: %s\n", err);
    return -EINVAL;
  }
  return 0;
}

void tls_link_free(struct daemon *d) {
  SSL_CTX_free(d->tls_ctx);
  d->tls_ctx = NULL;
}

int tls_link_open(const struct daemon *d, struct siox_tls_pipe **p, uint8_t **hs, size_t *hslen) {
  *hs = NULL;
  *hslen = 0;
  if (!d->tls_ctx)
    return 0;
  if (!(*p = siox_tls_pipe_new(d->tls_ctx, 0, d->cfg.server_host)))
    return -ENOMEM;
  return siox_tls_pipe_output(*p, hs, hslen);
}

void tls_link_close(struct siox_tls_pipe **p) {
  siox_tls_pipe_free(*p);
  *p = NULL;
}

void tls_link_alloc(uv_buf_t *out) {
  char *b = malloc(SCRATCH);
  *out = uv_buf_init(b, b ? SCRATCH : 0);
}

int tls_link_input(struct siox_tls_pipe *p, const uv_buf_t *buf, ssize_t n, uint8_t **rbuf, size_t *rlen,
                   size_t *rcap, uint8_t **out, size_t *outlen) {
  char why[320];
  int rc = 0;
  *out = NULL;
  *outlen = 0;
  if (n > 0 && siox_tls_pipe_input(p, (const uint8_t *)buf->base, (size_t)n, rbuf, rlen, rcap, why, sizeof why) != 0) {
    fprintf(stderr, "siox-daemon: %s\n", why);
    rc = -EPROTO;
  }
  free(buf->base);
  if (rc == 0)
    rc = siox_tls_pipe_output(p, out, outlen);
  return rc;
}

bool tls_link_ready(const struct siox_tls_pipe *p) { return !p || siox_tls_pipe_ready(p); }

int tls_link_seal(struct siox_tls_pipe *p, const uint8_t *plain, size_t n, uint8_t **out, size_t *outlen) {
  int rc = siox_tls_pipe_seal(p, plain, n);
  return rc ? rc : siox_tls_pipe_output(p, out, outlen);
}
