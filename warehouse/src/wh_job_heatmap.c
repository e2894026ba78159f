/*
 * The job page's heatmap: rank x time, the bytes moved and the I/O time of
 * the job's top-level calls, aggregated here into bins (a job of 1M
 * activities ships ranks x bins numbers). A call spread over several bins
 * is shared among them by overlap, so each row adds up to its rank's totals.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>

#include "wh_job.h"

static void spread(double *bytes, double *ns, int bins, int64_t first, double bin_ns, const struct whj_act *a) {
  int64_t s = a->start_ns - first, e = a->end_ns - first;
  double b = a->bytes != WHJ_NONE && (a->op == WHJ_READ || a->op == WHJ_WRITE) ? (double)a->bytes : 0;
  int lo = (int)(s / bin_ns), hi = (int)(e / bin_ns);
  if (lo >= bins) lo = bins - 1;
  if (hi >= bins) hi = bins - 1;
  if (e <= s) { /* an instant: all in its bin */
    bytes[lo] += b;
    return;
  }
  for (int k = lo; k <= hi; k++) {
    double from = k * bin_ns, to = from + bin_ns;
    double over = (e < to ? e : to) - (s > from ? s : from);
    if (k == bins - 1) over = e - (s > from ? s : from); /* the last bin ends at the job's end */
    if (over <= 0) continue;
    ns[k] += over;
    bytes[k] += b * over / (double)(e - s);
  }
}

static json_object *rows_json(const double *v, int32_t ranks, int bins) {
  json_object *rows = json_object_new_array();
  for (int32_t r = 0; r < ranks; r++) {
    json_object *row = json_object_new_array();
    for (int k = 0; k < bins; k++) json_object_array_add(row, json_object_new_int64((int64_t)(v[(size_t)r * bins + k] + 0.5)));
    json_object_array_add(rows, row);
  }
  return rows;
}

int siox_wh_job_heatmap(struct siox_wh *wh, const char *job, int bins, struct json_object **out, char *err,
                        size_t errlen) {
  if (bins < 1 || bins > 4096) {
    snprintf(err, errlen, "bins must be in 1..4096, not %d", bins);
    return -EINVAL;
  }
  return whj_docs(siox_wh_pg(wh), job, NULL, bins, out, err, errlen);
}

int whj_heatmap(const struct whj *jp, const char *job, int bins, struct json_object **out, char *err, size_t errlen) {
  const struct whj j = *jp;
  size_t cells = (size_t)(j.nranks ? j.nranks : 1) * (size_t)bins;
  double *bytes = calloc(cells, sizeof(*bytes)), *ns = calloc(cells, sizeof(*ns));
  if (!bytes || !ns) {
    free(bytes), free(ns);
    snprintf(err, errlen, "out of memory");
    return -ENOMEM;
  }
  double span = (double)(j.last_ns - j.first_ns), bin_ns = span > 0 ? span / bins : 1;
  for (size_t i = 0; i < j.n; i++) {
    const struct whj_act *a = &j.a[i];
    if (!a->top || a->rank < 0) continue;
    spread(bytes + (size_t)a->rank * bins, ns + (size_t)a->rank * bins, bins, j.first_ns, bin_ns, a);
  }
  json_object *doc = json_object_new_object();
  json_object_object_add(doc, "job", json_object_new_string(job));
  json_object_object_add(doc, "ranks", json_object_new_int(j.nranks));
  json_object_object_add(doc, "bins", json_object_new_int(bins));
  json_object_object_add(doc, "first_ns", json_object_new_int64(j.first_ns));
  json_object_object_add(doc, "last_ns", json_object_new_int64(j.last_ns));
  json_object_object_add(doc, "bin_ns", json_object_new_double(bin_ns));
  json_object_object_add(doc, "bytes", rows_json(bytes, j.nranks, bins));
  json_object_object_add(doc, "time_ns", rows_json(ns, j.nranks, bins));
  free(bytes);
  free(ns);
  *out = doc;
  return 0;
}
