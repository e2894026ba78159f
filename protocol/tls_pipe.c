/*
 * OpenSSL through memory BIOs (see tls_pipe.h). rbio holds ciphertext read
 * from the socket until SSL_read consumes it; wbio collects what OpenSSL
 * wants to send (handshake messages and sealed records) until the caller
 * takes it with siox_tls_pipe_output and writes it to the socket.
 */
#include "tls_pipe.h"

#include <arpa/inet.h>
#include <errno.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define READ_STEP (64u << 10)

struct siox_tls_pipe {
  SSL *ssl;
  BIO *rbio, *wbio; /* owned by ssl */
};

static void ssl_err(char *err, size_t errlen, const char *what) {
  unsigned long e = ERR_get_error();
  char buf[256] = "unknown error";
  if (e) ERR_error_string_n(e, buf, sizeof buf);
  snprintf(err, errlen, "%s: %s", what, buf);
  ERR_clear_error();
}

SSL_CTX *siox_tls_server_ctx(const char *cert_file, const char *key_file, char *err, size_t errlen) {
  SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
  if (!ctx) return ssl_err(err, errlen, "SSL_CTX_new"), NULL;
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  const char *what = NULL;
  if (SSL_CTX_use_certificate_chain_file(ctx, cert_file) != 1) what = cert_file;
  else if (SSL_CTX_use_PrivateKey_file(ctx, key_file, SSL_FILETYPE_PEM) != 1) what = key_file;
  else if (SSL_CTX_check_private_key(ctx) != 1) what = "the key does not match the certificate";
  if (!what) return ctx;
  ssl_err(err, errlen, what);
  SSL_CTX_free(ctx);
  return NULL;
}

SSL_CTX *siox_tls_client_ctx(const char *ca_file, char *err, size_t errlen) {
  SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
  if (!ctx) return ssl_err(err, errlen, "SSL_CTX_new"), NULL;
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
  int ok = ca_file ? SSL_CTX_load_verify_locations(ctx, ca_file, NULL) : SSL_CTX_set_default_verify_paths(ctx);
  if (ok == 1) return ctx;
  ssl_err(err, errlen, ca_file ? ca_file : "default CA paths");
  SSL_CTX_free(ctx);
  return NULL;
}

int siox_tls_expect_host(SSL *ssl, const char *host) {
  unsigned char bin[16];
  int is_ip = inet_pton(AF_INET, host, bin) == 1 || inet_pton(AF_INET6, host, bin) == 1;
  if (is_ip) return X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) == 1;
  return SSL_set_tlsext_host_name(ssl, host) == 1 && SSL_set1_host(ssl, host) == 1;
}

struct siox_tls_pipe *siox_tls_pipe_new(SSL_CTX *ctx, int server, const char *host) {
  struct siox_tls_pipe *p = calloc(1, sizeof *p);
  if (!p || !(p->ssl = SSL_new(ctx))) return free(p), NULL;
  p->rbio = BIO_new(BIO_s_mem());
  p->wbio = BIO_new(BIO_s_mem());
  if (!p->rbio || !p->wbio) {
    BIO_free(p->rbio), BIO_free(p->wbio), SSL_free(p->ssl), free(p);
    return NULL;
  }
  SSL_set_bio(p->ssl, p->rbio, p->wbio);
  if (server) {
    SSL_set_accept_state(p->ssl);
    return p;
  }
  SSL_set_connect_state(p->ssl);
  if ((host && !siox_tls_expect_host(p->ssl, host)) || (SSL_do_handshake(p->ssl) != 1 && SSL_get_error(p->ssl, -1) != SSL_ERROR_WANT_READ)) {
    siox_tls_pipe_free(p);
    return NULL;
  }
  return p;
}

void siox_tls_pipe_free(struct siox_tls_pipe *p) {
  if (!p) return;
  SSL_free(p->ssl); /* frees both BIOs */
  free(p);
}

static int grow(uint8_t **buf, size_t len, size_t *cap) {
  if (*cap - len >= READ_STEP) return 0;
  size_t ncap = *cap ? *cap : READ_STEP;
  while (ncap - len < READ_STEP) ncap *= 2;
  uint8_t *nb = realloc(*buf, ncap);
  if (!nb) return -ENOMEM;
  *buf = nb;
  *cap = ncap;
  return 0;
}

int siox_tls_pipe_input(struct siox_tls_pipe *p, const uint8_t *raw, size_t n, uint8_t **buf, size_t *len,
                        size_t *cap, char *why, size_t whylen) {
  if (n && BIO_write(p->rbio, raw, (int)n) != (int)n) return snprintf(why, whylen, "TLS: out of memory"), -EPROTO;
  for (;;) {
    if (grow(buf, *len, cap) != 0) return snprintf(why, whylen, "TLS: out of memory"), -EPROTO;
    int r = SSL_read(p->ssl, *buf + *len, (int)(*cap - *len));
    if (r > 0) {
      *len += (size_t)r;
      continue;
    }
    int e = SSL_get_error(p->ssl, r);
    if (e == SSL_ERROR_WANT_READ) return 0; /* needs more bytes (or handshake output waits) */
    if (e == SSL_ERROR_ZERO_RETURN) return snprintf(why, whylen, "TLS: peer closed the session"), -EPROTO;
    long v = SSL_get_verify_result(p->ssl);
    if (v != X509_V_OK) {
      snprintf(why, whylen, "TLS: certificate verification failed: %s", X509_verify_cert_error_string(v));
      ERR_clear_error();
    } else {
      ssl_err(why, whylen, SSL_is_init_finished(p->ssl) ? "TLS" : "TLS handshake failed (is the peer speaking TLS?)");
    }
    return -EPROTO;
  }
}

int siox_tls_pipe_seal(struct siox_tls_pipe *p, const uint8_t *data, size_t n) {
  if (!SSL_is_init_finished(p->ssl)) return -EPROTO;
  return n == 0 || SSL_write(p->ssl, data, (int)n) == (int)n ? 0 : (ERR_clear_error(), -EPROTO);
}

int siox_tls_pipe_output(struct siox_tls_pipe *p, uint8_t **out, size_t *outlen) {
  *out = NULL;
  *outlen = 0;
  size_t n = BIO_ctrl_pending(p->wbio);
  if (n == 0) return 0;
  if (!(*out = malloc(n))) return -ENOMEM;
  *outlen = (size_t)BIO_read(p->wbio, *out, (int)n);
  return 0;
}

int siox_tls_pipe_ready(const struct siox_tls_pipe *p) { return SSL_is_init_finished(p->ssl); }
