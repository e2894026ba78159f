/*
 * Blame's waiting step in words and JSON (blame_wait.h): where the call's
 * time went at the resource (its own service, queued behind whom,
 * unexplained), the kind's model, and the class with its evidence.
 */
#include "blame_wait_report.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "format.h"
#include "json_build.h"

static const char *dur(int64_t ns, char *buf, size_t len) { return siox_fmt_duration(ns, buf, len); }

/* "job B (pids 12, 13)" for the origins of one job, in order of charge. */
static void job_pids(FILE *f, const struct siox_wait *w, const char *job) {
  const char *sep = "";
  for (size_t i = 0; i < w->nby; i++) {
    if (strcmp(w->by[i].job, job) != 0) continue;
    fprintf(f, "%s%s:%d", sep, w->by[i].host, w->by[i].pid);
    sep = ", ";
  }
}

/* One line per job the call queued behind. */
static void queued_lines(FILE *f, const struct siox_blame_wait *o) {
  const struct siox_wait *w = o->queue;
  char d[32], m[32], node[512];
  if (w->nby && o->queue_at != o->resource)
    fprintf(f, "  (queued at %s, one level up:)\n", siox_fmt_node(o->queue_at, node, sizeof(node)));
  if (o->chan_at)
    fprintf(f, "  (exact queue intervals: %s of it in the FUSE channel of %s, before the call's fops reached the "
            "client; %s in the connection to and the queue of the resource)\n",
            dur(o->chan_w.queued_ns, d, sizeof(d)), siox_fmt_node(o->chan_at, node, sizeof(node)),
            dur(o->w.queued_ns, m, sizeof(m)));
  for (size_t i = 0; i < w->nby; i++) {
    const char *job = w->by[i].job;
    bool seen = false;
    for (size_t k = 0; k < i && !seen; k++) seen = strcmp(w->by[k].job, job) == 0;
    if (seen) continue;
    int64_t ns = 0;
    size_t req = 0;
    double share = 0;
    for (size_t k = i; k < w->nby; k++)
      if (strcmp(w->by[k].job, job) == 0) ns += w->by[k].charged_ns, req += w->by[k].requests, share += w->by[k].share;
    fprintf(f, "  %s queued behind %zu request%s of %s%s%s (", dur(ns, d, sizeof(d)), req, req == 1 ? "" : "s",
            job[0] ? "job " : "processes without a job", job, w->by[i].same_job ? ", its own job" : "");
    job_pids(f, w, job);
    fprintf(f, "), %.0f%% of the wait, each taking ~%s there (confidence %.2f)\n", 100 * share,
            dur(w->by[i].median_service_ns, m, sizeof(m)), w->by[i].confidence);
  }
}

void siox_blame_wait_text(FILE *f, const struct siox_blame_wait *o, const struct siox_act *root) {
  const struct siox_act *x = o->resource;
  char node[512], a[32], e[32], b[32];
  if (!x) {
    fprintf(f, "Its own exclusive time: %s.\n", dur(root->exclusive_ns, a, sizeof(a)));
    return;
  }
  const struct siox_wait *w = &o->w;
  fprintf(f, "%s at %s:\n", dur(w->total_ns, a, sizeof(a)), siox_fmt_node(x, node, sizeof(node)));
  fprintf(f, "  %s in it serving this call's %zu request%s (%s %s)", dur(w->own_ns, a, sizeof(a)), w->own_requests,
          w->own_requests == 1 ? "" : "s", x->name, siox_fmt_bytes(o->own_bytes, b, sizeof(b)));
  if (o->kind.have && x->bytes >= 0)
    fprintf(f, "; one %s of %s took %s, %s expected by its kind's model (%.1fx)", x->name,
            siox_fmt_bytes(x->bytes, b, sizeof(b)), dur(x->inclusive_ns, a, sizeof(a)),
            dur((int64_t)(o->own_expected_s * 1e9), e, sizeof(e)), o->own_ratio);
  fprintf(f, "\n");
  if (o->in_connection_ns > 0)
    fprintf(f, "  (%s of its own request before the component below took it: in the connection, counted as waiting)\n",
            dur(o->in_connection_ns, a, sizeof(a)));
  queued_lines(f, o);
  fprintf(f, "  %s unexplained (the call was not served there and the resource was idle)\n",
          dur(o->unexplained_ns, a, sizeof(a)));
  if (o->ops)
    fprintf(f, "Its %zu other %s around the call (+/- %lld s) took a median of %s%s", o->ops, x->name,
            SIOX_AROUND_NS / 1000000000LL, dur(o->ops_median_ns, a, sizeof(a)), o->ops_ratio > 0 ? "" : ".\n");
  if (o->ops && o->ops_ratio > 0) fprintf(f, ", %.1fx its kind's model.\n", o->ops_ratio);
  if (o->kind.have)
    fprintf(f, "Kind model (%s %s on %zu components, %zu samples): %s + %s per MiB.\n", x->swid, x->name,
            o->kind.nodes, o->kind.samples, dur((int64_t)(o->kind.a_s * 1e9), a, sizeof(a)),
            dur((int64_t)(o->kind.b_s * 1048576 * 1e9), b, sizeof(b)));
  else
    fprintf(f, "Kind model: none (%s %s history on %zu component%s; needs %d).\n", x->swid, x->name, o->kind.nodes,
            o->kind.nodes == 1 ? "" : "s", SIOX_KIND_MIN_NODES);
}

static json_object *queued_json(const struct siox_wait *w) {
  json_object *arr = json_object_new_array();
  for (size_t i = 0; i < w->nby; i++) {
    const struct siox_waited_for *q = &w->by[i];
    json_object *o = json_object_new_object();
    siox_json_str(o, "relation", "waited-for");
    siox_json_str(o, "job", q->job);
    siox_json_str(o, "host", q->host);
    siox_json_int(o, "pid", q->pid);
    json_object_object_add(o, "same_job", json_object_new_boolean(q->same_job));
    siox_json_int(o, "requests", (int64_t)q->requests);
    siox_json_dbl(o, "charged_s", (double)q->charged_ns / 1e9);
    siox_json_dbl(o, "share", q->share);
    siox_json_dbl(o, "confidence", q->confidence);
    siox_json_dbl(o, "median_service_s", (double)q->median_service_ns / 1e9);
    siox_json_int(o, "example_aid", q->first_aid);
    json_object_array_add(arr, o);
  }
  return arr;
}

static json_object *breakdown_json(const struct siox_blame_wait *o) {
  const struct siox_wait *w = &o->w;
  json_object *j = json_object_new_object();
  siox_json_dbl(j, "total_s", (double)w->total_ns / 1e9);
  siox_json_dbl(j, "own_service_s", (double)w->own_ns / 1e9);
  siox_json_int(j, "own_requests", (int64_t)w->own_requests);
  siox_json_dbl(j, "in_connection_s", (double)o->in_connection_ns / 1e9);
  siox_json_int(j, "own_bytes", o->own_bytes);
  siox_json_dbl(j, "expected_s", o->own_expected_s);
  siox_json_dbl(j, "own_ratio", o->own_ratio);
  const struct siox_wait *q = o->queue;
  siox_json_dbl(j, "queued_s", (double)q->queued_ns / 1e9);
  siox_json_dbl(j, "queued_same_job_s", (double)q->queued_same_job_ns / 1e9);
  siox_json_dbl(j, "queued_other_jobs_s", (double)q->queued_other_jobs_ns / 1e9);
  json_object_object_add(j, "queued_at", siox_json_act_id(o->queue_at));
  /* exact: queued time from recorded queue windows (the FUSE channel and
   * the resource's connection), not inferred from the whole gap. */
  json_object_object_add(j, "exact", json_object_new_boolean(q->exact));
  siox_json_dbl(j, "queued_fuse_channel_s", o->chan_at ? (double)o->chan_w.queued_ns / 1e9 : 0);
  siox_json_dbl(j, "queued_at_resource_s", (double)o->w.queued_ns / 1e9);
  json_object_object_add(j, "queued_behind", queued_json(q));
  siox_json_dbl(j, "unexplained_s", (double)o->unexplained_ns / 1e9);
  siox_json_int(j, "component_ops", (int64_t)o->ops);
  siox_json_dbl(j, "component_ops_median_s", (double)o->ops_median_ns / 1e9);
  siox_json_dbl(j, "component_ops_ratio", o->ops_ratio);
  siox_json_dbl(j, "component_ops_shared_ratio", o->in.ops_shared_ratio);
  siox_json_dbl(j, "collective_wait_s", (double)o->collective_wait_ns / 1e9);
  return j;
}

static json_object *kind_json(const struct siox_blame_wait *o) {
  const struct siox_kind_model *k = &o->kind;
  json_object *j = json_object_new_object();
  json_object_object_add(j, "fitted", json_object_new_boolean(k->have));
  siox_json_dbl(j, "a_s", k->a_s);
  siox_json_dbl(j, "b_s_per_byte", k->b_s);
  siox_json_int(j, "components", (int64_t)k->nodes);
  siox_json_int(j, "samples", (int64_t)k->samples);
  siox_json_str(j, "source", o->kind_refit ? "fitted" : "kept");
  siox_json_int(j, "history_to_ns", o->kind_to_ns);
  return j;
}

void siox_blame_wait_json(json_object *out, const struct siox_blame_wait *o) {
  siox_json_str(out, "class", siox_class_name(o->v.cls));
  siox_json_str(out, "decided_by", siox_evidence_name(o->v.by));
  /* The class the unlinked rule withdrew (README.md "Unlinked time"), so
   * that a script can tell "no verdict: unexplained" over a lone outlier
   * from one over a fault; null when nothing was withdrawn. */
  json_object *wd = NULL;
  if (o->outweighed) {
    wd = json_object_new_object();
    siox_json_str(wd, "class", siox_class_name(o->named.cls));
    siox_json_str(wd, "decided_by", siox_evidence_name(o->named.by));
  }
  json_object_object_add(out, "withdrawn", wd);
  json_object_object_add(out, "resource", o->resource ? siox_json_act_id(o->resource) : NULL);
  json_object_object_add(out, "breakdown", o->resource ? breakdown_json(o) : NULL);
  json_object_object_add(out, "kind_model", o->resource ? kind_json(o) : NULL);
  json_object *jobs = json_object_new_array();
  if (o->v.cls == SIOX_CLASS_INTERFERENCE)
    for (size_t i = 0; i < o->queue->nby; i++)
      if (!o->queue->by[i].same_job) {
        bool seen = false;
        for (size_t k = 0; k < i && !seen; k++) seen = strcmp(o->queue->by[k].job, o->queue->by[i].job) == 0;
        if (!seen) json_object_array_add(jobs, json_object_new_string(o->queue->by[i].job));
      }
  json_object_object_add(out, "interfering_jobs", jobs);
}
