/*
 * The daemon's proof of identity in a Hello (--auth): a fresh MUNGE
 * credential per connection, whose payload (protocol/hello_cred.h) binds the
 * daemon id and host name, so the server can refuse a credential made for
 * another daemon and munged refuses a replayed one; or the daemon's token.
 */
#include <errno.h>
#include <munge.h>
#include <stdio.h>
#include <string.h>

#include "daemon.h"
#include "hello_cred.h"
#include "siox.pb-c.h"

static int munge_credential(const struct daemon *d, char **cred) {
  char payload[SIOX_CRED_PAYLOAD_MAX];
  int n = siox_hello_cred_payload(payload, sizeof payload, d->daemon_id, d->hostname, clock_realtime_ns());
  if (n < 0)
    return fprintf(stderr, "siox-daemon: host name too long for a credential\n"), -EACCES;
  munge_ctx_t ctx = munge_ctx_create();
  if (!ctx)
    return fprintf(stderr, "siox-daemon: munge: out of memory\n"), -EACCES;
  munge_err_t e = EMUNGE_SUCCESS;
  if (d->cfg.munge_socket)
    e = munge_ctx_set(ctx, MUNGE_OPT_SOCKET, d->cfg.munge_socket);
  if (e == EMUNGE_SUCCESS)
    e = munge_encode(cred, ctx, payload, n);
  if (e != EMUNGE_SUCCESS) {
    const char *why = munge_ctx_strerror(ctx);
    fprintf(stderr, "siox-daemon: cannot make a MUNGE credential: %s\n", why ? why : munge_strerror(e));
  }
  munge_ctx_destroy(ctx);
  return e == EMUNGE_SUCCESS ? 0 : -EACCES;
}

int daemon_hello_credential(const struct daemon *d, Siox__Hello *m, char **cred) {
  *cred = NULL;
  switch (d->cfg.auth) {
  case DAEMON_AUTH_TOKEN:
    m->token.data = d->token;
    m->token.len = d->token_len;
    return 0;
  case DAEMON_AUTH_NONE:
    return 0;
  case DAEMON_AUTH_MUNGE:
    break;
  }
  int rc = munge_credential(d, cred);
  if (rc == 0) {
    m->munge_cred.data = (uint8_t *)*cred;
    m->munge_cred.len = strlen(*cred);
  }
  return rc;
}
