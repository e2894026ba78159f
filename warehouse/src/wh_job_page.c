/*
 * The job page of `siox web` (siox_wh_job_page): the summary and the
 * heatmap, stored ones when they still hold (wh_job_cache.c), else both
 * from one load of the job: reading its activities and resolving their
 * files and ranks is the whole cost of either on a big job.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>

#include "wh_job.h"

int siox_wh_job_page(struct siox_wh *wh, const char *job, int bins, struct json_object **out, char *err,
                     size_t errlen) {
  if (bins < 1 || bins > 4096) {
    snprintf(err, errlen, "bins must be in 1..4096, not %d", bins);
    return -EINVAL;
  }
  json_object *summary = NULL, *heatmap = NULL;
  int rc = whj_docs(siox_wh_pg(wh), job, &summary, bins, &heatmap, err, errlen);
  if (rc) return rc;
  json_object *doc = json_object_new_object();
  json_object_object_add(doc, "job", json_object_new_string(job));
  json_object_object_add(doc, "summary", summary);
  json_object_object_add(doc, "heatmap", heatmap);
  *out = doc;
  return 0;
}
