/*
 * The job page of `siox web` (siox_wh_job_page): the summary and the
 * heatmap from one load of the job. Each of siox_wh_job_summary and
 * siox_wh_job_heatmap reads the job's activities and resolves their files
 * and ranks, the whole cost of either on a big job; the page needs both, so
 * it pays for that once.
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
  struct whj j;
  int rc = whj_load(siox_wh_pg(wh), job, &j, err, errlen);
  if (rc) return rc;
  json_object *summary = NULL, *heatmap = NULL;
  rc = whj_summary(&j, job, &summary, err, errlen);
  if (!rc) rc = whj_heatmap(&j, job, bins, &heatmap, err, errlen);
  whj_free(&j);
  if (rc) return json_object_put(summary), rc;
  json_object *doc = json_object_new_object();
  json_object_object_add(doc, "job", json_object_new_string(job));
  json_object_object_add(doc, "summary", summary);
  json_object_object_add(doc, "heatmap", heatmap);
  *out = doc;
  return 0;
}
