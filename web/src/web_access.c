/*
 * Who may talk to `siox web`: it listens on loopback by default; a --listen
 * beyond loopback needs --allow CIDR[,CIDR...] and then serves loopback and
 * those networks only, refused at accept (MHD's accept policy). Every viewer
 * sees what the user who runs the server may see in the warehouse.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "siox_hostport.h"
#include "web.h"

int web_parse_listen(const char *s, struct sockaddr_storage *addr, socklen_t *len, char *err, size_t errlen) {
  char host[256];
  int port;
  if (siox_hostport_parse(s, strlen(s), host, sizeof(host), &port) != 0) {
    snprintf(err, errlen, "--listen: '%s' is not HOST:PORT (an IPv4 address, or [IPv6], and a port)", s);
    return -EINVAL;
  }
  memset(addr, 0, sizeof(*addr));
  struct sockaddr_in *v4 = (struct sockaddr_in *)addr;
  struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)addr;
  if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons((uint16_t)port);
    *len = sizeof(*v4);
    return 0;
  }
  if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons((uint16_t)port);
    *len = sizeof(*v6);
    return 0;
  }
  snprintf(err, errlen, "--listen: '%s' is not an IP address (names are not resolved: say which interface)", host);
  return -EINVAL;
}

static int parse_net(const char *s, struct web_net *n) {
  char buf[128];
  const char *slash = strchr(s, '/');
  size_t l = slash ? (size_t)(slash - s) : strlen(s);
  if (l == 0 || l >= sizeof(buf)) return -EINVAL;
  memcpy(buf, s, l);
  buf[l] = '\0';
  memset(n, 0, sizeof(*n));
  if (inet_pton(AF_INET, buf, n->addr) == 1) n->family = AF_INET;
  else if (inet_pton(AF_INET6, buf, n->addr) == 1) n->family = AF_INET6;
  else return -EINVAL;
  int max = n->family == AF_INET ? 32 : 128;
  char *end;
  long p = slash ? strtol(slash + 1, &end, 10) : max;
  if (slash && (!slash[1] || *end || p < 0 || p > max)) return -EINVAL;
  n->prefix = (int)p;
  return 0;
}

int web_parse_allow(struct web *w, const char *s, char *err, size_t errlen) {
  char *copy = strdup(s), *save = NULL;
  if (!copy) return -ENOMEM;
  int rc = 0;
  w->nnets = 0;
  for (char *tok = strtok_r(copy, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
    if (w->nnets == WEB_MAX_NETS || parse_net(tok, &w->nets[w->nnets]) != 0) {
      snprintf(err, errlen, "--allow: '%s' is not a network (CIDR such as 10.1.0.0/16 or fd00::/8; at most %d)", tok,
               WEB_MAX_NETS);
      rc = -EINVAL;
    } else {
      w->nnets++;
    }
  }
  if (!rc && w->nnets == 0) snprintf(err, errlen, "--allow: no network given"), rc = -EINVAL;
  free(copy);
  return rc;
}

static bool prefix_match(const unsigned char *a, const unsigned char *b, int bits) {
  int full = bits / 8, rest = bits % 8;
  if (memcmp(a, b, (size_t)full) != 0) return false;
  if (!rest) return true;
  unsigned char mask = (unsigned char)(0xff << (8 - rest));
  return (a[full] & mask) == (b[full] & mask);
}

bool web_is_loopback(const struct sockaddr *a) {
  if (a->sa_family == AF_INET) return (ntohl(((const struct sockaddr_in *)a)->sin_addr.s_addr) >> 24) == 127;
  if (a->sa_family == AF_INET6) {
    const struct in6_addr *x = &((const struct sockaddr_in6 *)a)->sin6_addr;
    return IN6_IS_ADDR_LOOPBACK(x) || (IN6_IS_ADDR_V4MAPPED(x) && x->s6_addr[12] == 127);
  }
  return false;
}

enum MHD_Result web_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen) {
  const struct web *w = cls;
  (void)addrlen;
  if (web_is_loopback(addr)) return MHD_YES;
  for (size_t i = 0; i < w->nnets; i++) {
    const struct web_net *n = &w->nets[i];
    if (addr->sa_family == AF_INET && n->family == AF_INET &&
        prefix_match((const unsigned char *)&((const struct sockaddr_in *)addr)->sin_addr, n->addr, n->prefix))
      return MHD_YES;
    if (addr->sa_family == AF_INET6 && n->family == AF_INET6 &&
        prefix_match(((const struct sockaddr_in6 *)addr)->sin6_addr.s6_addr, n->addr, n->prefix))
      return MHD_YES;
  }
  return MHD_NO;
}
