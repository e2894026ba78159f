/* Unit test: protocol/tls_pipe.c without sockets. A server pipe and a client
 * pipe hand their output to each other until the handshake is done; then
 * frames go both ways; a peer that speaks plaintext, and a certificate that
 * names another host, are refused. The certificate (self-signed for
 * 127.0.0.1) is made here with the OpenSSL API. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "tls_pipe.h"

static char dir[] = "/tmp/siox-tls-unit-XXXXXX", cert[64], key[64];

/* Writes a self-signed certificate for IP 127.0.0.1 and its key. */
static int make_cert(void **state) {
  (void)state;
  if (!mkdtemp(dir)) return -1;
  snprintf(cert, sizeof cert, "%s/c.pem", dir);
  snprintf(key, sizeof key, "%s/k.pem", dir);
  EVP_PKEY *pk = EVP_EC_gen("P-256");
  X509 *x = X509_new();
  X509_set_version(x, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
  X509_gmtime_adj(X509_getm_notBefore(x), 0);
  X509_gmtime_adj(X509_getm_notAfter(x), 3600);
  X509_set_pubkey(x, pk);
  X509_NAME *n = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC, (const unsigned char *)"127.0.0.1", -1, -1, 0);
  X509_set_issuer_name(x, n);
  X509V3_CTX v3;
  X509V3_set_ctx(&v3, x, x, NULL, NULL, 0);
  X509_EXTENSION *san = X509V3_EXT_conf_nid(NULL, &v3, NID_subject_alt_name, "IP:127.0.0.1");
  X509_EXTENSION *bc = X509V3_EXT_conf_nid(NULL, &v3, NID_basic_constraints, "critical,CA:TRUE");
  X509_add_ext(x, san, -1);
  X509_add_ext(x, bc, -1);
  X509_EXTENSION_free(san);
  X509_EXTENSION_free(bc);
  int ok = X509_sign(x, pk, EVP_sha256()) > 0;
  FILE *f = fopen(cert, "w");
  ok = ok && f && PEM_write_X509(f, x);
  if (f) fclose(f);
  f = fopen(key, "w");
  ok = ok && f && PEM_write_PrivateKey(f, pk, NULL, NULL, 0, NULL, NULL);
  if (f) fclose(f);
  X509_free(x);
  EVP_PKEY_free(pk);
  return ok ? 0 : -1;
}

static int remove_cert(void **state) {
  (void)state;
  unlink(cert), unlink(key), rmdir(dir);
  return 0;
}

struct end {
  struct siox_tls_pipe *p;
  uint8_t *buf; /* plaintext received */
  size_t len, cap;
};

/* Moves from's output into to; returns to's input result. */
static int pass(struct end *from, struct end *to) {
  uint8_t *out;
  size_t n;
  char why[256];
  assert_int_equal(siox_tls_pipe_output(from->p, &out, &n), 0);
  int rc = siox_tls_pipe_input(to->p, out, n, &to->buf, &to->len, &to->cap, why, sizeof why);
  free(out);
  return rc;
}

static void handshake(struct end *s, struct end *c) {
  for (int i = 0; i < 10 && !(siox_tls_pipe_ready(s->p) && siox_tls_pipe_ready(c->p)); i++) {
    assert_int_equal(pass(c, s), 0);
    assert_int_equal(pass(s, c), 0);
  }
  assert_true(siox_tls_pipe_ready(s->p) && siox_tls_pipe_ready(c->p));
}

static void test_roundtrip(void **state) {
  (void)state;
  char err[256];
  SSL_CTX *sc = siox_tls_server_ctx(cert, key, err, sizeof err), *cc = siox_tls_client_ctx(cert, err, sizeof err);
  assert_non_null(sc);
  assert_non_null(cc);
  struct end s = {.p = siox_tls_pipe_new(sc, 1, NULL)}, c = {.p = siox_tls_pipe_new(cc, 0, "127.0.0.1")};
  assert_false(siox_tls_pipe_seal(c.p, (const uint8_t *)"x", 1) == 0); /* nothing before the handshake */
  handshake(&s, &c);
  static uint8_t big[200000];
  for (size_t i = 0; i < sizeof big; i++) big[i] = (uint8_t)(i * 7);
  assert_int_equal(siox_tls_pipe_seal(c.p, big, sizeof big), 0);
  assert_int_equal(pass(&c, &s), 0);
  assert_int_equal(s.len, sizeof big);
  assert_memory_equal(s.buf, big, sizeof big);
  assert_int_equal(siox_tls_pipe_seal(s.p, (const uint8_t *)"pong", 4), 0);
  assert_int_equal(pass(&s, &c), 0);
  assert_int_equal(c.len, 4);
  assert_memory_equal(c.buf, "pong", 4);
  siox_tls_pipe_free(s.p), siox_tls_pipe_free(c.p);
  free(s.buf), free(c.buf);
  SSL_CTX_free(sc), SSL_CTX_free(cc);
}

static void test_plaintext_peer_refused(void **state) {
  (void)state;
  char err[256], why[256];
  SSL_CTX *sc = siox_tls_server_ctx(cert, key, err, sizeof err);
  struct end s = {.p = siox_tls_pipe_new(sc, 1, NULL)};
  const char frame[] = "SIOX\x01\x00\x01\x00\x00\x00\x10 a plaintext Hello";
  assert_int_not_equal(siox_tls_pipe_input(s.p, (const uint8_t *)frame, sizeof frame, &s.buf, &s.len, &s.cap, why, sizeof why), 0);
  assert_non_null(strstr(why, "handshake"));
  assert_int_equal(s.len, 0);
  siox_tls_pipe_free(s.p);
  free(s.buf);
  SSL_CTX_free(sc);
}

static void test_wrong_host_refused(void **state) {
  (void)state;
  char err[256];
  SSL_CTX *sc = siox_tls_server_ctx(cert, key, err, sizeof err), *cc = siox_tls_client_ctx(cert, err, sizeof err);
  struct end s = {.p = siox_tls_pipe_new(sc, 1, NULL)}, c = {.p = siox_tls_pipe_new(cc, 0, "10.1.2.3")};
  int rc = 0;
  for (int i = 0; i < 10 && rc == 0 && !siox_tls_pipe_ready(c.p); i++) {
    if (pass(&c, &s) != 0) break;
    rc = pass(&s, &c);
  }
  assert_int_not_equal(rc, 0); /* the client refuses a certificate for another address */
  assert_false(siox_tls_pipe_ready(c.p));
  siox_tls_pipe_free(s.p), siox_tls_pipe_free(c.p);
  free(s.buf), free(c.buf);
  SSL_CTX_free(sc), SSL_CTX_free(cc);
}

static void test_bad_files(void **state) {
  (void)state;
  char err[256];
  assert_null(siox_tls_server_ctx("/nonexistent/c.pem", key, err, sizeof err));
  assert_non_null(strstr(err, "/nonexistent/c.pem"));
  assert_null(siox_tls_client_ctx("/nonexistent/ca.pem", err, sizeof err));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_roundtrip),
      cmocka_unit_test(test_plaintext_peer_refused),
      cmocka_unit_test(test_wrong_host_refused),
      cmocka_unit_test(test_bad_files),
  };
  return cmocka_run_group_tests(tests, make_cert, remove_cert);
}
