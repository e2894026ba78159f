/*
 * Parsing of time arguments (see time_arg.h): the windows of `siox
 * anomalies`, `siox capacity` and siox web's /api/component.
 */
#include "time_arg.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int64_t siox_time_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int parse_age(const char *s, int64_t now_ns, int64_t *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || end == s || *s == '-' || *s == '+' || v < 0 || end[0] == '\0' || end[1] != '\0') return -EINVAL;
  long long unit;
  switch (*end) {
  case 's': unit = 1; break;
  case 'm': unit = 60; break;
  case 'h': unit = 3600; break;
  case 'd': unit = 86400; break;
  default: return -EINVAL;
  }
  /* Ten years is more history than any warehouse holds; it also keeps the
   * product far from overflowing. */
  if (v > 3650LL * 86400 / unit) return -EINVAL;
  *out = now_ns - v * unit * 1000000000LL;
  return 0;
}

static int parse_iso(const char *s, int64_t *out) {
  static const char *const formats[] = {"%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M",
                                        "%Y-%m-%d"};
  for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *end = strptime(s, formats[i], &tm);
    if (!end || (*end && strcmp(end, "Z") != 0)) continue;
    *out = (int64_t)timegm(&tm) * 1000000000LL;
    return 0;
  }
  return -EINVAL;
}

int siox_time_arg(const char *s, int64_t now_ns, int64_t *out) {
  if (strcmp(s, "now") == 0) {
    *out = now_ns;
    return 0;
  }
  if (s[0] == '@') {
    char *end;
    errno = 0;
    long long v = strtoll(s + 1, &end, 10);
    if (errno || end == s + 1 || *end || v < 0 || v > 9000000000LL) return -EINVAL; /* past 2255: a typo */
    *out = v * 1000000000LL;
    return 0;
  }
  if (parse_age(s, now_ns, out) == 0) return 0;
  return parse_iso(s, out);
}
