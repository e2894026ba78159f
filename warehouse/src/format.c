/*
 * Text formatting for the `siox` subcommands' human-readable output (graph,
 * top, blame): durations in the unit that fits, absolute times as ISO 8601
 * with nanoseconds in UTC, sizes in binary units.
 */
#include "format.h"

#include <inttypes.h>
#include <stdio.h>
#include <time.h>

char *siox_fmt_duration(int64_t ns, char *buf, size_t len) {
  double v = (double)ns;
  const char *sign = v < 0 ? "-" : "";
  if (v < 0) v = -v;
  if (v < 1e3)
    snprintf(buf, len, "%s%.0f ns", sign, v);
  else if (v < 1e6)
    snprintf(buf, len, "%s%.3f us", sign, v / 1e3);
  else if (v < 1e9)
    snprintf(buf, len, "%s%.3f ms", sign, v / 1e6);
  else
    snprintf(buf, len, "%s%.3f s", sign, v / 1e9);
  return buf;
}

char *siox_fmt_iso(int64_t ns, char *buf, size_t len) {
  /* Floor division so times before 1970 still print a valid fraction. */
  int64_t sec = ns / 1000000000, frac = ns % 1000000000;
  if (frac < 0) {
    frac += 1000000000;
    sec--;
  }
  time_t t = (time_t)sec;
  struct tm tm;
  char day[40];
  if (!gmtime_r(&t, &tm) || !strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm))
    snprintf(day, sizeof(day), "@%" PRId64, sec);
  snprintf(buf, len, "%s.%09" PRId64 "Z", day, frac);
  return buf;
}

char *siox_fmt_bytes(int64_t bytes, char *buf, size_t len) {
  static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 0) {
    snprintf(buf, len, "-");
    return buf;
  }
  double v = (double)bytes;
  size_t u = 0;
  while (v >= 1024 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
    v /= 1024;
    u++;
  }
  if (u == 0)
    snprintf(buf, len, "%" PRId64 " B", bytes);
  else
    snprintf(buf, len, "%.1f %s", v, unit[u]);
  return buf;
}

char *siox_fmt_attr(const struct siox_attr *at, char *buf, size_t len) {
  const char *unit = at->unit[0] && at->unit[0] != '-' ? at->unit : "";
  const char *sp = *unit ? " " : "";
  switch (at->kind) {
  case SIOX_AV_I64: snprintf(buf, len, "%" PRId64 "%s%s", at->v.i, sp, unit); break;
  case SIOX_AV_U64: snprintf(buf, len, "%" PRIu64 "%s%s", at->v.u, sp, unit); break;
  case SIOX_AV_F64: snprintf(buf, len, "%g%s%s", at->v.f, sp, unit); break;
  case SIOX_AV_TEXT: snprintf(buf, len, "\"%s\"", at->v.text); break;
  }
  return buf;
}

char *siox_fmt_node(const struct siox_act *a, char *buf, size_t len) {
  return siox_act_component(a, buf, len); /* the library's key: job blame sums by it */
}

char *siox_fmt_per_byte(double s_per_byte, char *buf, size_t len) {
  double ms_per_mib = s_per_byte * 1048576.0 * 1e3;
  double mib_per_s = s_per_byte > 0 ? 1.0 / (s_per_byte * 1048576.0) : 0;
  snprintf(buf, len, "%.3f ms/MiB (%.1f MiB/s)", ms_per_mib, mib_per_s);
  return buf;
}
