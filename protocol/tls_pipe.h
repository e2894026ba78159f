/*
 * TLS over a libuv stream (OpenSSL with a pair of memory BIOs): the caller
 * moves bytes between the socket and the pipe, the pipe turns ciphertext
 * into plaintext and back. No socket I/O here, so the same code serves the
 * server's connections and the daemon's uplink and hint link, and libuv
 * stays in charge of the event loop.
 */
#ifndef SIOX_TLS_PIPE_H
#define SIOX_TLS_PIPE_H

#include <openssl/ssl.h>
#include <stddef.h>
#include <stdint.h>

struct siox_tls_pipe;

/* A server context with the PEM certificate (chain) and key; TLS 1.2+.
 * NULL with the reason in err. */
SSL_CTX *siox_tls_server_ctx(const char *cert_file, const char *key_file, char *err, size_t errlen);
/* A client context that verifies the server against the PEM CA file
 * (NULL: the system's default CAs); TLS 1.2+. NULL with err. */
SSL_CTX *siox_tls_client_ctx(const char *ca_file, char *err, size_t errlen);

/* Makes the handshake check that the peer's certificate names host (a DNS
 * name, also sent as SNI, or an IP address). 1 on success. */
int siox_tls_expect_host(SSL *ssl, const char *host);

/* A connection's pipe. Client: host is checked against the certificate
 * (name or IP address) and sent as SNI, and the handshake starts (its
 * first bytes wait in the output). NULL on failure. */
struct siox_tls_pipe *siox_tls_pipe_new(SSL_CTX *ctx, int server, const char *host);
void siox_tls_pipe_free(struct siox_tls_pipe *p);

/* Feeds n bytes read from the socket and appends the plaintext they yield
 * to buf (len bytes used of cap, grown with realloc). 0, or -EPROTO with a
 * reason in why (handshake or record failure: close the connection). */
int siox_tls_pipe_input(struct siox_tls_pipe *p, const uint8_t *raw, size_t n, uint8_t **buf, size_t *len,
                        size_t *cap, char *why, size_t whylen);
/* Encrypts n plaintext bytes (only once the handshake is done); the
 * ciphertext waits in the output. 0 or -EPROTO. */
int siox_tls_pipe_seal(struct siox_tls_pipe *p, const uint8_t *data, size_t n);
/* Takes every byte waiting to be sent (handshake or sealed records) into
 * a malloc'd *out (NULL and 0 when nothing waits). 0 or -ENOMEM. */
int siox_tls_pipe_output(struct siox_tls_pipe *p, uint8_t **out, size_t *outlen);
/* 1 once the handshake has completed. */
int siox_tls_pipe_ready(const struct siox_tls_pipe *p);

#endif
