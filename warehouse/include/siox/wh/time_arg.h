/*
 * Time arguments of the window-taking subcommands (anomalies, capacity,
 * jobs) and of `siox web`'s /api/component, which takes what `siox capacity
 * --since` does (here so that both front ends read them alike):
 * "now", an age ("90s", "15m", "2h", "7d": that long ago), an ISO 8601 UTC
 * time ("2026-11-23T06:00:00Z", seconds and Z optional) or "@SECONDS" since
 * the epoch.
 */
#ifndef SIOX_WH_TIME_ARG_H
#define SIOX_WH_TIME_ARG_H

#include <stdint.h>

/* The help lines that describe the format, for manual pages. */
#define SIOX_TIME_ARG_HELP                                                                              \
  "  T is 'now', an age (90s, 15m, 2h, 7d: that long ago), an ISO 8601 UTC time\n"                    \
  "  (2026-11-23T06:00:00Z; seconds and Z optional) or @SECONDS since the epoch.\n"

/* Parses s into ns since the epoch (UTC), ages relative to now_ns. 0 or
 * -EINVAL. */
int siox_time_arg(const char *s, int64_t now_ns, int64_t *out);

/* Now on this machine's clock, ns since the epoch. */
int64_t siox_time_now_ns(void);

#endif
