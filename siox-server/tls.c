/*
 * TLS for siox-server's connections (--tls-cert/--tls-key), and the rule
 * that a server reachable beyond loopback speaks TLS unless --insecure.
 * net.c calls these hooks around its reads and writes; the OpenSSL work is
 * protocol/tls_pipe.c's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"
#include "tls_pipe.h"

/* 127.0.0.0/8 and ::1 only; anything else (0.0.0.0 included) is reachable
 * from other hosts. */
static int loopback_only(const char *host) {
  struct in_addr a4;
  struct in6_addr a6;
  if (inet_pton(AF_INET, host, &a4) == 1) return (ntohl(a4.s_addr) >> 24) == 127;
  if (inet_pton(AF_INET6, host, &a6) == 1) return IN6_IS_ADDR_LOOPBACK(&a6);
  return !strcmp(host, "localhost");
}

int siox_tls_start(struct siox_server *s) {
  const struct siox_server_options *o = s->opt;
  if (!o->tls_cert) {
    if (loopback_only(o->host)) return 0;
    if (!o->insecure) {
      siox_log("refusing to listen on %s without TLS: daemons' batches and credentials would cross the network in"
               " clear; give --tls-cert and --tls-key (or --insecure to accept that)", o->host);
      return -EPERM;
    }
    siox_log("WARNING: --insecure: listening on %s without TLS", o->host);
    return 0;
  }
  char err[512];
  if (!(s->tls_ctx = siox_tls_server_ctx(o->tls_cert, o->tls_key, err, sizeof err)))
    return siox_log("TLS: %s", err), -EINVAL;
  siox_log("TLS on every connection (certificate %s)", o->tls_cert);
  return 0;
}

void siox_tls_stop(struct siox_server *s) {
  SSL_CTX_free(s->tls_ctx);
  s->tls_ctx = NULL;
}

int siox_tls_accept(struct siox_conn *c) {
  if (!c->srv->tls_ctx) return 0;
  return (c->tls = siox_tls_pipe_new(c->srv->tls_ctx, 1, NULL)) ? 0 : -ENOMEM;
}

void siox_tls_conn_free(struct siox_conn *c) {
  siox_tls_pipe_free(c->tls);
  c->tls = NULL;
}

int siox_tls_read(struct siox_conn *c, const uint8_t *raw, size_t n, uint8_t **out, size_t *outlen) {
  char why[320];
  *out = NULL;
  *outlen = 0;
  if (siox_tls_pipe_input(c->tls, raw, n, &c->buf, &c->len, &c->cap, why, sizeof why) != 0) {
    siox_log("%s: %s; closing", c->peer, why);
    c->srv->n.bad_frames++;
    return -EPROTO;
  }
  return siox_tls_pipe_output(c->tls, out, outlen);
}

int siox_tls_seal(struct siox_conn *c, const uint8_t *plain, size_t n, uint8_t **out, size_t *outlen) {
  int rc = siox_tls_pipe_seal(c->tls, plain, n);
  return rc ? rc : siox_tls_pipe_output(c->tls, out, outlen);
}
