/*
 * Small pieces of blame's wording shared by its prose, its document and
 * the CLI's text: shares of the call, values in the evidence's unit, the
 * component named.
 */
#include <stdio.h>

#include "blame_doc.h"
#include "format.h"

const char *siox_blame_value_str(const struct siox_blame *b, double v, char *buf, size_t len) {
  if (b->line) {
    snprintf(buf, len, "%.2fx the line", v);
    return buf;
  }
  return b->per_byte ? siox_fmt_per_byte(v, buf, len) : siox_fmt_duration((int64_t)(v * 1e9), buf, len);
}

const char *blame_line_str(const struct siox_blame *b, char *buf, size_t len) {
  char a[32], per[64];
  snprintf(buf, len, "%s + %s", siox_fmt_duration((int64_t)(b->line_a_s * 1e9), a, sizeof(a)),
           siox_fmt_per_byte(b->line_b_s, per, sizeof(per)));
  return buf;
}

const char *blame_measure_str(const struct siox_blame *b) {
  return b->line ? "Against its peers' latency line for its size" : b->per_byte ? "Per byte" : "In all";
}

double siox_blame_share(const struct siox_blame *b, const struct siox_act *a) {
  int64_t total = b->path[0]->inclusive_ns;
  return total > 0 ? 100.0 * (double)a->inclusive_ns / (double)total : 100.0;
}

const struct siox_act *siox_blame_culprit(const struct siox_blame *b, const struct siox_blame_wait *o) {
  if (o->v.cls != SIOX_CLASS_FAULT) return NULL;
  return o->resource ? o->resource : b->suspect;
}
