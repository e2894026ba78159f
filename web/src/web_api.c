/*
 * The JSON API (README.md, "API"). Each document is the CLI's --json one,
 * built by the library function the CLI calls: jobs, summary, heatmap and
 * findings from libsiox-warehouse and libsiox-kb on a connection of the
 * request's own (requests run on several threads, a connection serves one
 * at a time); blame (siox_blame_doc.h), graph and top (documents.h) and
 * capacity (siox_kb_capacity.h) on a warm pooled connection (web_pool.c).
 * A malformed query is 400, an unknown activity or job 404.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "siox/siox_blame_doc.h"
#include "siox/siox_kb.h"
#include "siox/siox_kb_baselines.h"
#include "siox/siox_kb_capacity.h"
#include "siox/siox_wh.h"
#include "time_arg.h"
#include "web.h"

static const char *arg(struct MHD_Connection *c, const char *k) {
  return MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, k);
}

/* A decimal integer in [min, max] with nothing after it. */
static int parse_i64(const char *s, long long min, long long max, long long *out) {
  char *end;
  errno = 0;
  long long v = s && *s ? strtoll(s, &end, 10) : 0;
  if (!s || !*s || errno || *end || v < min || v > max) return -EINVAL;
  *out = v;
  return 0;
}

static enum MHD_Result wh_failed(struct MHD_Connection *c, int rc, const char *err) {
  if (rc == -ENOENT) return web_reply_error(c, MHD_HTTP_NOT_FOUND, "%s", err);
  if (rc == -EINVAL) return web_reply_error(c, MHD_HTTP_CONFLICT, "%s", err);
  if (rc == -ECONNREFUSED || rc == -EACCES) return web_reply_error(c, MHD_HTTP_BAD_GATEWAY, "%s", err);
  return web_reply_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", err);
}

/* A document the libraries build on a warehouse connection of its own
 * (requests run on several threads; a connection serves one). */
typedef int (*wh_doc_fn)(struct siox_wh *wh, const void *args, json_object **doc, char *err, size_t errlen);

/* Opens the warehouse, has fn build the document, closes it, and answers:
 * the document, or the error of the open or of fn (wh_failed). */
static enum MHD_Result with_wh(const struct web *w, struct MHD_Connection *c, wh_doc_fn fn, const void *args) {
  char err[2048] = "out of memory";
  struct siox_wh *wh;
  json_object *doc = NULL;
  int rc = siox_wh_open(w->o->conninfo, &wh, err, sizeof(err));
  if (rc) return wh_failed(c, rc, err);
  rc = fn(wh, args, &doc, err, sizeof(err));
  siox_wh_close(wh);
  if (rc) return json_object_put(doc), wh_failed(c, rc, err);
  return web_reply_json(c, MHD_HTTP_OK, doc);
}

static const char *need_job(struct MHD_Connection *c) {
  const char *job = arg(c, "job");
  return job && *job ? job : NULL;
}

/* A job and a bin count, for the documents that take them. */
struct job_args {
  const char *job;
  int bins;
};

/* The bins parameter: *bins (the default) when absent, else 1..4096. */
static int parse_bins(struct MHD_Connection *c, int *bins) {
  const char *b = arg(c, "bins");
  long long v = *bins;
  if (b && parse_i64(b, 1, 4096, &v)) return -EINVAL;
  *bins = (int)v;
  return 0;
}

static int jobs_doc(struct siox_wh *wh, const void *args, json_object **doc, char *err, size_t errlen) {
  int rc = siox_wh_jobs(wh, args, doc, err, errlen);
  if (!rc && siox_kb_count_findings(siox_wh_pg(wh), json_object_object_get(*doc, "jobs"), err, errlen)) rc = -EIO;
  return rc;
}

static enum MHD_Result jobs(struct web *w, struct MHD_Connection *c) {
  long long since = 0;
  const char *s = arg(c, "since"), *sort = arg(c, "sort");
  if (s && parse_i64(s, 0, INT64_MAX, &since))
    return web_reply_error(c, MHD_HTTP_BAD_REQUEST, "since must be ns since the epoch, not '%s'", s);
  if (sort && strcmp(sort, "io_time") && strcmp(sort, "bytes") && strcmp(sort, "bandwidth"))
    return web_reply_error(c, MHD_HTTP_BAD_REQUEST, "sort must be io_time, bytes or bandwidth, not '%s'", sort);
  struct siox_wh_jobs_query q = {.since_ns = since, .sort = sort};
  return with_wh(w, c, jobs_doc, &q);
}

static int summary_doc(struct siox_wh *wh, const void *args, json_object **doc, char *err, size_t errlen) {
  return siox_wh_job_summary(wh, ((const struct job_args *)args)->job, doc, err, errlen);
}

static enum MHD_Result summary(struct web *w, struct MHD_Connection *c) {
  struct job_args a = {need_job(c), 0};
  if (!a.job) return web_reply_error(c, MHD_HTTP_BAD_REQUEST, "summary needs ?job=J");
  return with_wh(w, c, summary_doc, &a);
}

static int heatmap_doc(struct siox_wh *wh, const void *args, json_object **doc, char *err, size_t errlen) {
  const struct job_args *a = args;
  return siox_wh_job_heatmap(wh, a->job, a->bins, doc, err, errlen);
}

static enum MHD_Result heatmap(struct web *w, struct MHD_Connection *c) {
  struct job_args a = {need_job(c), 60};
  if (!a.job) return web_reply_error(c, MHD_HTTP_BAD_REQUEST, "heatmap needs ?job=J");
  if (parse_bins(c, &a.bins))
    return web_reply_error(c, MHD_HTTP_BAD_REQUEST, "bins must be a number from 1 to 4096, not '%s'", arg(c, "bins"));
  return with_wh(w, c, heatmap_doc, &a);
}

static int job_doc(struct siox_wh *wh, const void *args, json_object **doc, char *err, size_t errlen) {
  const struct job_args *a = args;
  return siox_wh_job_page(wh, a->job, a->bins, doc, err, errlen);
}

/* The job page's summary and heatmap from one load of the job. */
static enum MHD_Result job(struct web *w, struct MHD_Connection *c) {
  struct job_args a = {need_job(c), 60};
  if (!a.job) return web_reply_error(c, MHD_HTTP_BAD_REQUEST, "job needs ?job=J");
  if (parse_bins(c, &a.bins))
    return web_reply_error(c, MHD_HTTP_BAD_REQUEST, "bins must be a number from 1 to 4096, not '%s'", arg(c, "bins"));
  return with_wh(w, c, job_doc, &a);
}

static int findings_doc(struct siox_wh *wh, const void *args, json_object **doc, char *err, size_t errlen) {
  const char *job = ((const struct job_args *)args)->job;
  json_object *arr = NULL;
  if (siox_kb_job_findings(siox_wh_pg(wh), job, &arr, err, errlen)) return -EIO;
  *doc = json_object_new_object();
  json_object_object_add(*doc, "job", json_object_new_string(job));
  json_object_object_add(*doc, "findings", arr);
  return 0;
}

static enum MHD_Result findings(struct web *w, struct MHD_Connection *c) {
  struct job_args a = {need_job(c), 0};
  if (!a.job) return web_reply_error(c, MHD_HTTP_BAD_REQUEST, "findings needs ?job=J");
  return with_wh(w, c, findings_doc, &a);
}

/* A document the libraries build on a pooled connection (blame, graph, top,
 * capacity: what `siox blame|graph|top|capacity --json` print). */
typedef int (*pg_doc_fn)(PGconn *c, const void *args, json_object **doc, char *err, size_t errlen);

/* The document on a pooled connection; when the warehouse dropped it
 * meanwhile (a restart), the pool's idle ones are closed with it and the
 * request is tried once more on a new one, so a restart costs no request. */
static int pooled_doc(struct web *w, pg_doc_fn fn, const void *args, json_object **doc, char *err, size_t errlen) {
  int rc = -ECONNRESET;
  for (int try = 0; try < 2 && rc == -ECONNRESET; try++) {
    struct siox_wh *wh;
    if ((rc = web_pool_take(w->pool, &wh, err, errlen)) != 0) return rc;
    rc = fn(siox_wh_pg(wh), args, doc, err, errlen);
    if (rc && PQstatus(siox_wh_pg(wh)) != CONNECTION_OK) rc = -ECONNRESET, web_pool_flush(w->pool);
    web_pool_give(w->pool, wh); /* closes a broken one */
  }
  return rc;
}

/* Answers with fn's document, built in-process on a warm pooled connection
 * (web_pool.c): 404 for an unknown activity, 502 for a query that failed. */
static enum MHD_Result with_pool(struct web *w, struct MHD_Connection *c, pg_doc_fn fn, const void *args) {
  char err[2048] = "out of memory";
  json_object *doc = NULL;
  int rc = pooled_doc(w, fn, args, &doc, err, sizeof(err));
  if (!rc) return web_reply_json(c, MHD_HTTP_OK, doc);
  json_object_put(doc);
  if (rc == -ENOENT) return web_reply_error(c, MHD_HTTP_NOT_FOUND, "%s", err);
  if (rc == -ECONNREFUSED || rc == -EACCES) return wh_failed(c, rc, err);
  return web_reply_error(c, rc == -ENOMEM ? MHD_HTTP_INTERNAL_SERVER_ERROR : MHD_HTTP_BAD_GATEWAY, "%s", err);
}

/* What /api/blame asks: one call (aid) or a job's slowest calls (job). */
struct blame_req {
  int64_t aid;
  const char *job;
};

/* The library's document (siox_blame_doc.h), the one `siox blame AID
 * --json` or `siox blame --job J --json` prints. */
static int blame_doc(PGconn *c, const void *args, json_object **doc, char *err, size_t errlen) {
  const struct blame_req *r = args;
  struct siox_blame_opts o = SIOX_BLAME_OPTS_DEFAULT;
  o.score = siox_kb_baseline_score;
  if (r->job) return siox_blame_job_document(c, r->job, SIOX_BLAME_JOB_CALLS, &o, doc, err, errlen);
  return siox_blame_document(c, r->aid, &o, doc, err, errlen);
}

/* ?aid=A or ?job=J. */
static enum MHD_Result blame(struct web *w, struct MHD_Connection *c) {
  const char *aid = arg(c, "aid");
  struct blame_req r = {.job = need_job(c)};
  long long v = 0;
  if (aid && parse_i64(aid, 1, INT64_MAX, &v))
    return web_reply_error(c, MHD_HTTP_BAD_REQUEST, "aid must be a positive integer, not '%s'", aid);
  if (!aid == !r.job) return web_reply_error(c, MHD_HTTP_BAD_REQUEST, "blame needs ?aid=A or ?job=J");
  r.aid = (int64_t)v;
  return with_pool(w, c, blame_doc, &r);
}

/* `siox graph AID --format json`'s document, at its default depth. */
static int graph_doc(PGconn *c, const void *args, json_object **doc, char *err, size_t errlen) {
  return siox_wh_graph_document(c, *(const int64_t *)args, SIOX_WH_GRAPH_DEPTH, doc, err, errlen);
}

static enum MHD_Result graph(struct web *w, struct MHD_Connection *c) {
  const char *raw = arg(c, "aid");
  long long v;
  if (!raw || parse_i64(raw, 1, INT64_MAX, &v))
    return web_reply_error(c, MHD_HTTP_BAD_REQUEST, "graph needs ?aid=A, a positive integer%s%s%s",
                           raw ? ", not '" : "", raw ? raw : "", raw ? "'" : "");
  int64_t aid = (int64_t)v;
  return with_pool(w, c, graph_doc, &aid);
}

static int top_doc(PGconn *c, const void *args, json_object **doc, char *err, size_t errlen) {
  return siox_wh_top_document(c, args, doc, err, errlen);
}

/* `siox top --job J --roots -n N --json`'s document. */
static enum MHD_Result top(struct web *w, struct MHD_Connection *c) {
  const char *job = need_job(c), *n = arg(c, "n");
  long long v = 20;
  if (!job) return web_reply_error(c, MHD_HTTP_BAD_REQUEST, "top needs ?job=J");
  if (n && parse_i64(n, 1, 1000, &v)) return web_reply_error(c, MHD_HTTP_BAD_REQUEST, "n must be 1..1000, not '%s'", n);
  struct siox_top_query q = {.limit = (long)v, .job = job, .roots_only = 1};
  return with_pool(w, c, top_doc, &q);
}

static int capacity_doc(PGconn *c, const void *args, json_object **doc, char *err, size_t errlen) {
  return siox_kb_capacity_document(c, args, doc, err, errlen);
}

/* `siox capacity --since T --component P --json`'s document: the window
 * from T (default 1d) to now. */
static enum MHD_Result component(struct web *w, struct MHD_Connection *c) {
  const char *since = arg(c, "since"), *pat = arg(c, "component");
  const char *t = since && *since ? since : "1d";
  int64_t now = siox_time_now_ns();
  struct siox_kb_capacity_query q = {.until_ns = now, .component = pat && *pat ? pat : "*", .what_if = 1};
  if (siox_time_arg(t, now, &q.since_ns))
    return web_reply_error(c, MHD_HTTP_BAD_REQUEST, "since must be a time (2h, 1d, @SECONDS, ISO 8601), not '%s'", t);
  if (q.since_ns >= q.until_ns)
    return web_reply_error(c, MHD_HTTP_BAD_REQUEST, "the window is empty: since '%s' is not before now", t);
  return with_pool(w, c, capacity_doc, &q);
}

struct latency_args {
  const char *pattern;
  long long since;
  int bins;
};

static int latency_doc(struct siox_wh *wh, const void *args, json_object **doc, char *err, size_t errlen) {
  const struct latency_args *a = args;
  int rc = siox_wh_component_latency(wh, a->pattern, a->since, a->bins, doc, err, errlen);
  json_object *arr = rc ? NULL : json_object_object_get(*doc, "components");
  for (size_t i = 0; !rc && i < json_object_array_length(arr); i++) {
    json_object *o = json_object_array_get_idx(arr, i);
    double p50;
    int64_t n;
    if (siox_kb_node_baseline(siox_wh_pg(wh), json_object_get_int64(json_object_object_get(o, "node_id")), &p50, &n,
                              err, errlen))
      rc = -EIO;
    else
      json_object_object_add(o, "baseline_ns", json_object_new_double(p50)),
          json_object_object_add(o, "baseline_samples", json_object_new_int64(n));
  }
  return rc;
}

/* siox_wh_component_latency's document with each component's baseline from
 * the knowledge base (baseline_ns, baseline_samples). */
static enum MHD_Result latency(struct web *w, struct MHD_Connection *c) {
  const char *s = arg(c, "since");
  struct latency_args a = {arg(c, "component"), 0, 120};
  if (!a.pattern || !*a.pattern) return web_reply_error(c, MHD_HTTP_BAD_REQUEST, "latency needs ?component=PATTERN");
  if (s && parse_i64(s, 0, INT64_MAX, &a.since))
    return web_reply_error(c, MHD_HTTP_BAD_REQUEST, "since must be ns since the epoch, not '%s'", s);
  if (parse_bins(c, &a.bins))
    return web_reply_error(c, MHD_HTTP_BAD_REQUEST, "bins must be a number from 1 to 4096, not '%s'", arg(c, "bins"));
  return with_wh(w, c, latency_doc, &a);
}

enum MHD_Result web_api(struct web *w, struct MHD_Connection *c, const char *path) {
  static const struct {
    const char *name;
    enum MHD_Result (*fn)(struct web *, struct MHD_Connection *);
  } routes[] = {{"jobs", jobs},   {"summary", summary}, {"heatmap", heatmap}, {"job", job}, {"findings", findings},
                {"blame", blame}, {"graph", graph},     {"top", top},         {"component", component},
                {"latency", latency}};
  for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
    if (strcmp(path, routes[i].name) == 0) return routes[i].fn(w, c);
  return web_reply_error(c, MHD_HTTP_NOT_FOUND, "no such API: /api/%s", path);
}
