/*
 * Blame of a job (`siox blame --job J`, siox_blame_job_run): its slowest
 * calls that nothing caused, each blamed (siox_blame_call_run) and summed
 * (blame_job.c), and the document `siox blame --job J --json` prints and
 * `siox web` serves (siox_blame_job_json).
 */
#include <errno.h>
#include <stdio.h>

#include "blame_doc.h"
#include "json_build.h"

/* One call blamed and charged into j. */
static int add_call(PGconn *c, const struct siox_blame_opts *o, int64_t aid, struct siox_job_blame *j, char *err,
                    size_t errlen) {
  struct siox_blame_call k;
  int rc = siox_blame_call_run(c, o, aid, &k, err, errlen);
  if (!rc && siox_job_add_call(j, k.b.path[0], &k.w, k.via.used ? k.via.root_aid : 0, k.via.root_ns) != 0)
    rc = -ENOMEM, snprintf(err, errlen, "out of memory");
  siox_blame_call_release(&k);
  return rc;
}

int siox_blame_job_run(PGconn *c, const char *job, long calls, const struct siox_blame_opts *o,
                       struct siox_job_blame *j, char *err, size_t errlen) {
  struct siox_top_query q = {.limit = calls, .job = job, .roots_only = 1};
  struct siox_top top = {0};
  *j = (struct siox_job_blame){0};
  int rc = siox_wh_top(c, &q, &top, err, errlen);
  if (rc) return rc;
  if (!top.n) {
    snprintf(err, errlen, "job '%s' has no activities in the warehouse (see `siox top`)", job);
    rc = -ENOENT;
  }
  for (size_t i = 0; i < top.n && !rc; i++) rc = add_call(c, o, top.rows[i].aid, j, err, errlen);
  siox_wh_top_free(&top);
  siox_job_sort(j);
  return rc;
}

json_object *siox_blame_job_json(const char *job, const struct siox_job_blame *j) {
  json_object *o = json_object_new_object(), *arr = json_object_new_array();
  siox_json_str(o, "job", job);
  siox_json_int(o, "calls", (int64_t)j->calls);
  siox_json_dbl(o, "total_s", (double)j->total_ns / 1e9);
  siox_json_dbl(o, "unexplained_s", (double)j->unexplained_ns / 1e9);
  for (size_t i = 0; i < j->n; i++) {
    const struct siox_job_entry *e = &j->e[i];
    json_object *x = json_object_new_object(), *ex = json_object_new_array();
    siox_json_str(x, "kind", e->is_job ? "job" : "component");
    siox_json_str(x, "name", e->key);
    siox_json_dbl(x, "time_s", (double)e->ns / 1e9);
    siox_json_int(x, "calls", (int64_t)e->calls);
    siox_json_str(x, "class", siox_class_name(siox_job_entry_class(e)));
    for (size_t k = 0; k < e->nexamples; k++) json_object_array_add(ex, json_object_new_int64(e->examples[k]));
    json_object_object_add(x, "example_aids", ex);
    json_object_array_add(arr, x);
  }
  json_object_object_add(o, "entries", arr);
  return o;
}

int siox_blame_job_document(PGconn *c, const char *job, long calls, const struct siox_blame_opts *o,
                            json_object **out, char *err, size_t errlen) {
  struct siox_job_blame j;
  int rc = siox_blame_job_run(c, job, calls, o, &j, err, errlen);
  *out = rc ? NULL : siox_blame_job_json(job, &j);
  siox_job_release(&j);
  return rc;
}
