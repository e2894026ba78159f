/*
 * Builds and checks the text inside MUNGE credentials (see hello_cred.h).
 * The time is not checked here: MUNGE itself refuses an expired credential
 * (its TTL) and a replayed one; it only makes each payload unique.
 */
#include "hello_cred.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int fits(int n, size_t cap) { return n > 0 && (size_t)n < cap ? n : -1; }

int siox_hello_cred_payload(char *buf, size_t cap, uint64_t daemon_id, const char *hostname, int64_t now_ns) {
  return fits(snprintf(buf, cap, "siox-hello 1 id=%016" PRIx64 " host=%s t=%" PRId64, daemon_id, hostname, now_ns), cap);
}

/* 1 when p[0..len) is prefix followed by " t=" and at least one digit only. */
static int prefix_then_time(const char *p, size_t len, const char *prefix) {
  size_t n = strlen(prefix);
  if (len <= n + 3 || memcmp(p, prefix, n) != 0 || memcmp(p + n, " t=", 3) != 0) return 0;
  for (size_t i = n + 3; i < len; i++)
    if (p[i] < '0' || p[i] > '9') return 0;
  return 1;
}

int siox_hello_cred_matches(const void *payload, size_t len, uint64_t daemon_id, const char *hostname) {
  char want[SIOX_CRED_PAYLOAD_MAX];
  int n = snprintf(want, sizeof want, "siox-hello 1 id=%016" PRIx64 " host=%s", daemon_id, hostname ? hostname : "");
  if (n <= 0 || (size_t)n >= sizeof want || !payload) return 0;
  return prefix_then_time(payload, len, want);
}

int siox_status_cred_payload(char *buf, size_t cap, int64_t now_ns) {
  return fits(snprintf(buf, cap, "siox-status 1 t=%" PRId64, now_ns), cap);
}

int siox_status_cred_matches(const void *payload, size_t len) {
  return payload && prefix_then_time(payload, len, "siox-status 1");
}
