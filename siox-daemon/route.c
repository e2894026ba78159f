/*
 * Which siox-server a daemon sends to, when a site has several (shards,
 * issue 15 §2): --server A,B,C lists them, and the daemon takes entry
 * (daemon id mod count), the id being the 64-bit number of
 * STATE/daemon.id. The rule needs nothing but the daemon's own id, so
 * every daemon and every admin computes the same answer, and a daemon keeps
 * its server (and its acked_seq there) for as long as the list is the same.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "siox_hostport.h"

/* HOST:PORT or [V6]:PORT, the n bytes at s; a server's port is never 0. */
static int parse_entry(const char *s, size_t n, char *host, size_t cap, int *port) {
  int rc = siox_hostport_parse(s, n, host, cap, port);
  return rc == 0 && *port == 0 ? -EINVAL : rc;
}

int daemon_server_count(const char *list) {
  int n = 1;
  for (const char *p = list; *p; p++) n += *p == ',';
  return n;
}

int daemon_server_entry(const char *list, int i, char *host, size_t cap, int *port) {
  const char *s = list;
  for (; i > 0; i--) {
    s = strchr(s, ',');
    if (!s) return -EINVAL;
    s++;
  }
  const char *e = strchr(s, ',');
  return parse_entry(s, e ? (size_t)(e - s) : strlen(s), host, cap, port);
}

int daemon_server_check(const char *list) {
  char host[256];
  int port, n = daemon_server_count(list);
  for (int i = 0; i < n; i++)
    if (daemon_server_entry(list, i, host, sizeof host, &port) < 0) return -EINVAL;
  return 0;
}

int daemon_route(struct daemon_config *c, uint64_t daemon_id) {
  int n = daemon_server_count(c->server_list);
  int i = (int)(daemon_id % (uint64_t)n);
  int rc = daemon_server_entry(c->server_list, i, c->server_host, sizeof c->server_host, &c->server_port);
  if (rc == 0 && n > 1)
    fprintf(stderr, "siox-daemon: server %d of %d (daemon id %016" PRIx64 " mod %d): %s:%d\n", i + 1, n, daemon_id, n,
            c->server_host, c->server_port);
  return rc;
}
