/*
 * HOST:PORT (siox_hostport.h), the one parser every component uses.
 */
#include "siox_hostport.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

/* The port: 1 to 5 digits, at most 65535. -1 when not. */
static int port_of(const char *s, size_t n) {
  if (n == 0 || n > 5) return -1;
  long p = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return -1;
    p = p * 10 + (s[i] - '0');
  }
  return p <= 65535 ? (int)p : -1;
}

int siox_hostport_parse(const char *s, size_t n, char *host, size_t cap, int *port) {
  const char *colon = NULL;
  for (size_t i = 0; i < n; i++)
    if (s[i] == ':') colon = s + i;
  if (!colon) return -EINVAL;
  int p = port_of(colon + 1, (size_t)(s + n - colon - 1));
  const char *h = s;
  size_t hn = (size_t)(colon - s);
  bool bracketed = hn >= 2 && h[0] == '[' && h[hn - 1] == ']';
  if (bracketed) h++, hn -= 2;
  /* An unbracketed host with a colon is an IPv6 address whose port cannot
   * be told from its last group. */
  if (p < 0 || hn == 0 || hn >= cap || (!bracketed && memchr(h, ':', hn))) return -EINVAL;
  memcpy(host, h, hn);
  host[hn] = '\0';
  *port = p;
  return 0;
}
