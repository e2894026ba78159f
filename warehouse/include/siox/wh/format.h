/*
 * Text formatting shared by the subcommands' human-readable output: times,
 * durations, sizes and attribute values of activities.
 */
#ifndef SIOX_WH_FORMAT_H
#define SIOX_WH_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "graph.h"

/* Each writes into buf (always terminated) and returns buf. */
char *siox_fmt_duration(int64_t ns, char *buf, size_t len);  /* "12.345 ms" */
char *siox_fmt_iso(int64_t ns, char *buf, size_t len);       /* "2024-05-01T12:00:00.123456789Z" */
char *siox_fmt_bytes(int64_t bytes, char *buf, size_t len);  /* "1.0 MiB", "-" when < 0 */
char *siox_fmt_attr(const struct siox_attr *at, char *buf, size_t len); /* the value, with unit */
char *siox_fmt_node(const struct siox_act *a, char *buf, size_t len);   /* "hwid SWID[#iid]" */
/* Seconds per byte as "X ms/MiB", the way people read device speed. */
char *siox_fmt_per_byte(double s_per_byte, char *buf, size_t len);

#endif
