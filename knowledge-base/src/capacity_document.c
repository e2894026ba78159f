/*
 * The document `siox capacity --json` prints and siox web's /api/component
 * serves (siox_kb_capacity.h): the window, the growth projected, the
 * component that saturates first and every component's row of
 * siox_kb_capacity_report, so both front ends answer with the same bytes.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "json_build.h"
#include "siox/siox_kb_capacity.h"

static json_object *row_json(const struct siox_kb_capacity_row *x) {
  json_object *o = json_object_new_object();
  siox_json_str(o, "kind", x->kind);
  siox_json_str(o, "key", x->key);
  siox_json_str(o, "role", x->role);
  siox_json_str(o, "label", x->label);
  siox_json_str(o, "metric", x->bytes_metric ? "bytes/s" : "ops/s");
  siox_json_int(o, "ops", x->ops);
  siox_json_int(o, "bytes", x->bytes);
  siox_json_dbl(o, "bytes_per_s", x->bytes_per_s);
  siox_json_dbl(o, "ops_per_s", x->ops_per_s);
  siox_json_dbl(o, "rate", x->rate);
  siox_json_dbl(o, "peak", x->peak);
  siox_json_dbl(o, "capacity", x->capacity);
  siox_json_str(o, "capacity_source", x->capacity_nominal ? "node/bandwidth"
                                      : x->peers > 1     ? "observed maximum of its kind"
                                                         : "its own observed maximum (no peers)");
  siox_json_int(o, "peers", x->peers);
  siox_json_dbl(o, "utilization", x->utilization);
  siox_json_dbl(o, "mean_utilization", x->mean_utilization);
  siox_json_dbl(o, "busy", x->busy);
  siox_json_dbl(o, "latency_low_s", x->lat_low_ns / 1e9);
  siox_json_dbl(o, "latency_high_s", x->lat_high_ns / 1e9);
  siox_json_dbl(o, "latency_slope_s_per_unit", x->lat_slope / 1e9);
  json_object_object_add(o, "saturation_factor",
                         isinf(x->saturation_factor) ? NULL : json_object_new_double(x->saturation_factor));
  siox_json_dbl(o, "projected_utilization", x->projected_utilization);
  siox_json_dbl(o, "projected_latency_s", x->projected_lat_ns / 1e9);
  return o;
}

json_object *siox_kb_capacity_json(const struct siox_kb_capacity_query *q, const struct siox_kb_capacity_row *r,
                                   size_t n) {
  json_object *o = json_object_new_object(), *arr = json_object_new_array();
  siox_json_int(o, "since_ns", q->since_ns);
  siox_json_int(o, "until_ns", q->until_ns);
  siox_json_dbl(o, "what_if", q->what_if);
  for (size_t i = 0; i < n; i++) json_object_array_add(arr, row_json(&r[i]));
  json_object_object_add(o, "saturates_first", n && !isinf(r[0].saturation_factor) ? row_json(&r[0]) : NULL);
  json_object_object_add(o, "components", arr);
  return o;
}

int siox_kb_capacity_document(PGconn *c, const struct siox_kb_capacity_query *q, json_object **out, char *err,
                              size_t errcap) {
  struct siox_kb_capacity_row *r = NULL;
  size_t n = 0;
  *out = NULL;
  if (siox_kb_capacity_report(c, q, &r, &n, err, errcap) < 0) return -EIO;
  *out = siox_kb_capacity_json(q, r, n);
  free(r);
  return 0;
}
