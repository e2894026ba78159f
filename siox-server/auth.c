/*
 * Who is at the other end of a connection (--auth): MUNGE credentials,
 * per-daemon tokens, or nothing. The checks may block on munged, so
 * session.c runs them on the libuv threadpool, never on the loop. The
 * result is a struct siox_owner: the identity that a daemon id's first
 * stored batch binds to that id (ingest.c, table daemons, owner_*).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <munge.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hello_cred.h"
#include "server.h"

#define MAX_CRED 4096 /* a MUNGE credential with our payload is ~300 bytes */

/* ---- token file ------------------------------------------------------------ */

static int add_token(struct siox_auth *a, uint64_t id, const char *tok, size_t len) {
  for (size_t i = 0; i < a->n_tokens; i++)
    if (a->tokens[i].daemon_id == id) return -EEXIST;
  struct siox_token *t = realloc(a->tokens, (a->n_tokens + 1) * sizeof *t);
  if (!t) return -ENOMEM;
  a->tokens = t;
  t = &a->tokens[a->n_tokens];
  if (!(t->secret = malloc(len))) return -ENOMEM;
  memcpy(t->secret, tok, len);
  t->len = len;
  t->daemon_id = id;
  a->n_tokens++;
  return 0;
}

/* One line: "DAEMON_ID TOKEN" (hex id as in the daemon's daemon.id), blank,
 * or a '#' comment. Returns 0, 1 for a line without a token, or <0. */
static int parse_line(struct siox_auth *a, char *line) {
  char *p = line + strspn(line, " \t");
  p[strcspn(p, "\r\n")] = '\0';
  if (*p == '\0' || *p == '#') return 0;
  char *end;
  errno = 0;
  uint64_t id = strtoull(p, &end, 16);
  if (errno || end == p || (*end != ' ' && *end != '\t')) return 1;
  char *tok = end + strspn(end, " \t");
  size_t len = strcspn(tok, " \t");
  if (len == 0 || tok[len + strspn(tok + len, " \t")] != '\0') return 1;
  return add_token(a, id, tok, len);
}

static int read_tokens(struct siox_auth *a, const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return siox_log("token file %s: %s", path, strerror(errno)), -errno;
  char line[4096];
  int rc = 0, lineno = 0;
  while (rc == 0 && fgets(line, sizeof line, f)) {
    lineno++;
    if ((rc = parse_line(a, line)) == 1)
      siox_log("token file %s:%d: expected 'DAEMON_ID TOKEN' (one line per daemon; a single shared token is no"
               " longer accepted: each token authenticates only its own daemon id)", path, lineno);
    else if (rc == -EEXIST) siox_log("token file %s:%d: a second token for one daemon id", path, lineno);
  }
  fclose(f);
  if (rc == 0 && a->n_tokens == 0) siox_log("token file %s holds no token", path), rc = -EINVAL;
  return rc == 1 ? -EINVAL : rc;
}

/* ---- setup ------------------------------------------------------------------ */

int siox_auth_init(struct siox_auth *a, const struct siox_server_options *o) {
  memset(a, 0, sizeof *a);
  a->mode = o->auth;
  a->munge_socket = o->munge_socket;
  switch (a->mode) {
  case SIOX_AUTH_TOKEN: return read_tokens(a, o->token_file);
  case SIOX_AUTH_NONE:
    siox_log("WARNING: --auth none: daemons are not authenticated; anyone who reaches %s:%d can send batches"
             " as any unowned daemon id and read the counters. Use it for tests only.", o->host, o->port);
    return 0;
  case SIOX_AUTH_MUNGE: break;
  }
  siox_log("authentication: MUNGE (socket %s)", a->munge_socket ? a->munge_socket : "libmunge's default");
  return 0;
}

void siox_auth_free(struct siox_auth *a) {
  for (size_t i = 0; i < a->n_tokens; i++) free(a->tokens[i].secret);
  free(a->tokens);
  a->tokens = NULL;
  a->n_tokens = 0;
}

/* ---- checks ------------------------------------------------------------------ */

/* Constant time in the secret: no early exit on the first mismatch. */
static int same_secret(const struct siox_token *t, const ProtobufCBinaryData *b) {
  if (b->len != t->len) return 0;
  unsigned char diff = 0;
  for (size_t i = 0; i < b->len; i++) diff |= b->data[i] ^ t->secret[i];
  return diff == 0;
}

static int check_token(const struct siox_auth *a, const Siox__Hello *m, struct siox_owner *who, char *why, size_t wl) {
  for (size_t i = 0; i < a->n_tokens; i++) {
    if (a->tokens[i].daemon_id != m->daemon_id) continue;
    if (!same_secret(&a->tokens[i], &m->token)) break;
    snprintf(who->auth, sizeof who->auth, "token");
    snprintf(who->host, sizeof who->host, "%s", m->hostname ? m->hostname : "");
    return 0;
  }
  snprintf(why, wl, "bad token for daemon %016" PRIx64, m->daemon_id);
  return -EACCES;
}

/* Decodes a MUNGE credential: payload (malloc'd, NUL-terminated), uid and
 * origin address. 0 or -EACCES with why. */
static int munge_check(const struct siox_auth *a, const ProtobufCBinaryData *cred, char **payload, int *plen,
                       uid_t *uid, char *addr, size_t addrlen, char *why, size_t wl) {
  if (cred->len == 0) return snprintf(why, wl, "no MUNGE credential (server runs --auth munge)"), -EACCES;
  if (cred->len > MAX_CRED) return snprintf(why, wl, "MUNGE credential of %zu bytes is too long", cred->len), -EACCES;
  char *text = malloc(cred->len + 1);
  munge_ctx_t ctx = munge_ctx_create();
  if (!text || !ctx) return free(text), munge_ctx_destroy(ctx), snprintf(why, wl, "out of memory"), -EACCES;
  memcpy(text, cred->data, cred->len);
  text[cred->len] = '\0';
  munge_err_t e = a->munge_socket ? munge_ctx_set(ctx, MUNGE_OPT_SOCKET, a->munge_socket) : EMUNGE_SUCCESS;
  gid_t gid;
  void *buf = NULL;
  if (e == EMUNGE_SUCCESS) e = munge_decode(text, ctx, &buf, plen, uid, &gid);
  struct in_addr in = {0};
  if (e == EMUNGE_SUCCESS && munge_ctx_get(ctx, MUNGE_OPT_ADDR4, &in) == EMUNGE_SUCCESS) inet_ntop(AF_INET, &in, addr, (socklen_t)addrlen);
  if (e != EMUNGE_SUCCESS) {
    const char *m = munge_ctx_strerror(ctx);
    snprintf(why, wl, "MUNGE credential refused: %s", m ? m : munge_strerror(e));
    free(buf);
    buf = NULL;
  }
  munge_ctx_destroy(ctx);
  free(text);
  *payload = buf;
  return e == EMUNGE_SUCCESS ? 0 : -EACCES;
}

static int check_munge(const struct siox_auth *a, const Siox__Hello *m, struct siox_owner *who, char *why, size_t wl) {
  char *payload;
  int plen;
  uid_t uid;
  char addr[INET_ADDRSTRLEN] = "?";
  int rc = munge_check(a, &m->munge_cred, &payload, &plen, &uid, addr, sizeof addr, why, wl);
  if (rc) return rc;
  if (!siox_hello_cred_matches(payload, plen > 0 ? (size_t)plen : 0, m->daemon_id, m->hostname)) {
    snprintf(why, wl, "MUNGE credential of uid %u was not made for daemon %016" PRIx64 " on host '%s'", (unsigned)uid,
             m->daemon_id, m->hostname ? m->hostname : "");
    rc = -EACCES;
  } else {
    snprintf(who->auth, sizeof who->auth, "munge");
    who->uid = (int64_t)uid;
    snprintf(who->host, sizeof who->host, "%s", addr);
  }
  free(payload);
  return rc;
}

int siox_auth_hello(const struct siox_auth *a, const Siox__Hello *m, struct siox_owner *who, char *why, size_t wl) {
  memset(who, 0, sizeof *who);
  who->uid = -1;
  switch (a->mode) {
  case SIOX_AUTH_MUNGE: return check_munge(a, m, who, why, wl);
  case SIOX_AUTH_TOKEN: return check_token(a, m, who, why, wl);
  case SIOX_AUTH_NONE: return 0;
  }
  return -EACCES;
}

int siox_auth_status(const struct siox_auth *a, const ProtobufCBinaryData *cred, char *why, size_t wl) {
  if (a->mode == SIOX_AUTH_NONE) return 0;
  char *payload;
  int plen;
  uid_t uid;
  char addr[INET_ADDRSTRLEN];
  int rc = munge_check(a, cred, &payload, &plen, &uid, addr, sizeof addr, why, wl);
  if (rc) return rc;
  if (!siox_status_cred_matches(payload, plen > 0 ? (size_t)plen : 0))
    snprintf(why, wl, "MUNGE credential of uid %u was not made for a status request", (unsigned)uid), rc = -EACCES;
  free(payload);
  return rc;
}

/* ---- owners ------------------------------------------------------------------ */

int siox_owner_equal(const struct siox_owner *x, const struct siox_owner *y) {
  return !strcmp(x->auth, y->auth) && x->uid == y->uid && !strcmp(x->host, y->host);
}

const char *siox_owner_describe(const struct siox_owner *o, char *buf, size_t len) {
  if (!o->auth[0]) snprintf(buf, len, "no owner (--auth none)");
  else if (o->uid >= 0) snprintf(buf, len, "%s uid %" PRId64 " at %s", o->auth, o->uid, o->host);
  else snprintf(buf, len, "%s of host '%s'", o->auth, o->host);
  return buf;
}
