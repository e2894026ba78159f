/*
 * `siox summary --job J`: a darshan-parser-like summary of one job, per
 * layer and per file (operations, bytes, access sizes, sequential and
 * consecutive share, seeks, cumulative and slowest time, ranks), the job's
 * totals from its top-level calls, and the critical files by the sweep line
 * (wh_critical_files.c). Built as the JSON document both front ends show.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wh_job.h"

/* darshan's access-size buckets */
#define NHIST 10
static const int64_t hist_upper[NHIST - 1] = {100, 1024, 10240, 102400, 1048576, 4194304, 10485760, 104857600,
                                              1073741824};
static const char *const hist_names[NHIST] = {"0-100", "100-1K", "1K-10K", "10K-100K", "100K-1M",
                                              "1M-4M", "4M-10M", "10M-100M", "100M-1G", "1G+"};

struct stats {
  uint64_t ops, reads, writes, seeks, hist[NHIST];
  uint64_t follows, seq, consec; /* data ops after another on the same file and process */
  int64_t bytes_read, bytes_written, cum_ns, slowest_ns, slowest_aid;
  uint8_t *ranks; /* bitset of nranks bits */
};

/* last end offset of (process, layer, file), for sequential and consecutive */
struct cursor {
  int32_t proc;
  int64_t end;
};

struct summary {
  const struct whj *j;
  size_t nfiles1;     /* files + 1: the last one is "no file known" */
  struct stats *st;   /* [layer][file]; row nfiles1 - 1 of a layer is its unknown file */
  struct stats *lay;  /* [layer] */
  struct cursor *cur; /* [layer][file] */
  uint8_t *bits;
};

static int hist_bucket(int64_t b) {
  int i = 0;
  while (i < NHIST - 1 && b >= hist_upper[i]) i++;
  return i;
}

static void count(struct stats *s, const struct whj_act *a, size_t rankbytes, struct cursor *c) {
  int64_t dur = a->end_ns - a->start_ns;
  s->ops++;
  s->cum_ns += dur;
  if (dur > s->slowest_ns || s->slowest_aid == 0) s->slowest_ns = dur, s->slowest_aid = a->aid;
  if (a->rank >= 0 && (size_t)a->rank / 8 < rankbytes) s->ranks[a->rank / 8] |= (uint8_t)(1u << (a->rank % 8));
  if (a->op == WHJ_SEEK) s->seeks++;
  if (a->op != WHJ_READ && a->op != WHJ_WRITE) return;
  int64_t b = a->bytes != WHJ_NONE ? a->bytes : 0;
  if (a->op == WHJ_READ) s->reads++, s->bytes_read += b;
  else s->writes++, s->bytes_written += b;
  s->hist[hist_bucket(b)]++;
  if (!c || a->offset == WHJ_NONE) return;
  if (c->proc == a->proc && c->end != WHJ_NONE) {
    s->follows++;
    s->seq += a->offset >= c->end;
    s->consec += a->offset == c->end;
  }
  c->proc = a->proc;
  c->end = a->offset + b;
}

static int summary_init(struct summary *m, const struct whj *j) {
  m->j = j;
  m->nfiles1 = j->nfiles + 1;
  size_t cells = j->nlayers * m->nfiles1, rb = ((size_t)j->nranks + 7) / 8;
  m->st = calloc(cells, sizeof(*m->st));
  m->lay = calloc(j->nlayers ? j->nlayers : 1, sizeof(*m->lay));
  m->cur = malloc(cells * sizeof(*m->cur));
  m->bits = calloc((cells + j->nlayers) * (rb ? rb : 1), 1);
  if (!m->st || !m->lay || !m->cur || !m->bits) return -ENOMEM;
  for (size_t i = 0; i < cells; i++) {
    m->st[i].ranks = m->bits + i * rb;
    m->cur[i] = (struct cursor){-1, WHJ_NONE};
  }
  for (size_t l = 0; l < j->nlayers; l++) m->lay[l].ranks = m->bits + (cells + l) * rb;
  for (size_t i = 0; i < j->n; i++) {
    const struct whj_act *a = &j->a[i];
    size_t cell = a->layer * m->nfiles1 + (a->file >= 0 ? (size_t)a->file : j->nfiles);
    count(&m->st[cell], a, rb, a->file >= 0 ? &m->cur[cell] : NULL);
    count(&m->lay[a->layer], a, rb, NULL);
  }
  /* a layer's sequential figures are its files' */
  for (size_t l = 0; l < j->nlayers; l++)
    for (size_t f = 0; f < m->nfiles1; f++) {
      const struct stats *s = &m->st[l * m->nfiles1 + f];
      m->lay[l].follows += s->follows, m->lay[l].seq += s->seq, m->lay[l].consec += s->consec;
    }
  return 0;
}

static void summary_free(struct summary *m) {
  free(m->st);
  free(m->lay);
  free(m->cur);
  free(m->bits);
}

static void put_i64(json_object *o, const char *k, int64_t v) { json_object_object_add(o, k, json_object_new_int64(v)); }
static void put_dbl(json_object *o, const char *k, double v) { json_object_object_add(o, k, json_object_new_double(v)); }

static double share(uint64_t part, uint64_t whole) { return whole ? (double)part / (double)whole : 0; }

static json_object *stats_json(const struct stats *s, int32_t nranks) {
  json_object *o = json_object_new_object(), *h = json_object_new_object(), *r = json_object_new_array();
  put_i64(o, "operations", (int64_t)s->ops);
  put_i64(o, "reads", (int64_t)s->reads);
  put_i64(o, "writes", (int64_t)s->writes);
  put_i64(o, "bytes_read", s->bytes_read);
  put_i64(o, "bytes_written", s->bytes_written);
  for (int i = 0; i < NHIST; i++) put_i64(h, hist_names[i], (int64_t)s->hist[i]);
  json_object_object_add(o, "access_sizes", h);
  put_dbl(o, "sequential_share", share(s->seq, s->follows));
  put_dbl(o, "consecutive_share", share(s->consec, s->follows));
  put_i64(o, "seeks", (int64_t)s->seeks);
  put_i64(o, "cumulative_ns", s->cum_ns);
  put_i64(o, "slowest_ns", s->slowest_ns);
  put_i64(o, "slowest_aid", s->slowest_aid);
  for (int32_t k = 0; k < nranks; k++)
    if (s->ranks[k / 8] & (1u << (k % 8))) json_object_array_add(r, json_object_new_int(k));
  json_object_object_add(o, "ranks", r);
  return o;
}

static json_object *layers_json(const struct summary *m) {
  const struct whj *j = m->j;
  json_object *arr = json_object_new_array();
  for (size_t l = 0; l < j->nlayers; l++) {
    json_object *o = stats_json(&m->lay[l], j->nranks), *files = json_object_new_array();
    json_object_object_add(o, "layer", json_object_new_string(j->layers[l]));
    for (size_t f = 0; f < m->nfiles1; f++) {
      const struct stats *s = &m->st[l * m->nfiles1 + f];
      if (!s->ops) continue;
      json_object *fo = stats_json(s, j->nranks);
      json_object_object_add(fo, "file", f < j->nfiles ? json_object_new_string(j->files[f]) : NULL);
      json_object_array_add(files, fo);
    }
    json_object_object_add(o, "files", files);
    json_object_array_add(arr, o);
  }
  return arr;
}

struct ranked {
  size_t file;
  struct siox_wh_file_share s;
};

static int by_exclusive(const void *x, const void *y) {
  const struct ranked *a = x, *b = y;
  if (a->s.exclusive_ns != b->s.exclusive_ns) return a->s.exclusive_ns > b->s.exclusive_ns ? -1 : 1;
  return a->file < b->file ? -1 : a->file > b->file;
}

/* Every activity with a known file is a span: nested layers on one file
 * overlap and count once, as the sweep counts files, not calls. */
static int critical_json(const struct whj *j, json_object *doc) {
  struct siox_wh_span *sp = malloc((j->n + 1) * sizeof(*sp));
  struct siox_wh_file_share *sh = calloc(j->nfiles + 1, sizeof(*sh));
  struct ranked *rk = malloc((j->nfiles + 1) * sizeof(*rk));
  int rc = sp && sh && rk ? 0 : -ENOMEM;
  size_t n = 0;
  int64_t busy = 0;
  for (size_t i = 0; !rc && i < j->n; i++)
    if (j->a[i].file >= 0) sp[n++] = (struct siox_wh_span){j->a[i].start_ns, j->a[i].end_ns, (uint32_t)j->a[i].file};
  if (!rc) rc = siox_wh_critical_files(sp, n, j->nfiles, sh, &busy);
  if (!rc) {
    for (size_t f = 0; f < j->nfiles; f++) rk[f] = (struct ranked){f, sh[f]};
    qsort(rk, j->nfiles, sizeof(*rk), by_exclusive);
    json_object *arr = json_object_new_array();
    for (size_t f = 0; f < j->nfiles; f++) {
      json_object *o = json_object_new_object();
      json_object_object_add(o, "file", json_object_new_string(j->files[rk[f].file]));
      put_i64(o, "exclusive_ns", (int64_t)(rk[f].s.exclusive_ns + 0.5));
      put_i64(o, "busy_ns", rk[f].s.busy_ns);
      put_dbl(o, "share", busy ? rk[f].s.exclusive_ns / (double)busy : 0);
      json_object_array_add(arr, o);
    }
    json_object_object_add(doc, "critical_files", arr);
    put_i64(doc, "busy_ns", busy);
  }
  free(sp);
  free(sh);
  free(rk);
  return rc;
}

/* The job's own figures: bytes and time of its top-level calls; I/O time is
 * the slowest process's, so bandwidth is what the job saw (darshan's
 * "by slowest"). */
static int totals_json(const struct whj *j, json_object *doc) {
  int64_t rd = 0, wr = 0, io = 0, cur = 0;
  uint64_t ops = 0;
  for (size_t i = 0; i < j->n; i++) {
    const struct whj_act *a = &j->a[i];
    if (i > 0 && a->proc != j->a[i - 1].proc) cur = 0;
    if (!a->top) continue;
    ops++;
    cur += a->end_ns - a->start_ns;
    if (cur > io) io = cur;
    if (a->bytes == WHJ_NONE) continue;
    if (a->op == WHJ_READ) rd += a->bytes;
    if (a->op == WHJ_WRITE) wr += a->bytes;
  }
  json_object *t = json_object_new_object();
  put_i64(t, "activities", (int64_t)j->n);
  put_i64(t, "calls", (int64_t)ops);
  put_i64(t, "bytes_read", rd);
  put_i64(t, "bytes_written", wr);
  put_i64(t, "io_time_ns", io);
  put_dbl(t, "bandwidth_bps", io > 0 ? (double)(rd + wr) / ((double)io / 1e9) : 0);
  json_object_object_add(doc, "totals", t);
  return 0;
}

int siox_wh_job_summary(struct siox_wh *wh, const char *job, struct json_object **out, char *err, size_t errlen) {
  return whj_docs(siox_wh_pg(wh), job, out, 0, NULL, err, errlen);
}

int whj_summary(const struct whj *j, const char *job, struct json_object **out, char *err, size_t errlen) {
  struct summary m = {0};
  int rc = summary_init(&m, j);
  json_object *doc = json_object_new_object();
  if (!rc) {
    json_object_object_add(doc, "job", json_object_new_string(job));
    put_i64(doc, "uid", j->uid);
    put_i64(doc, "processes", j->nprocs);
    put_i64(doc, "ranks", j->nranks);
    put_i64(doc, "first_ns", j->first_ns);
    put_i64(doc, "last_ns", j->last_ns);
    rc = totals_json(j, doc);
  }
  if (!rc) {
    json_object_object_add(doc, "layers", layers_json(&m));
    rc = critical_json(j, doc);
  }
  summary_free(&m);
  if (rc) {
    json_object_put(doc);
    if (rc == -ENOMEM) snprintf(err, errlen, "out of memory summarising job %s", job);
    return rc;
  }
  *out = doc;
  return 0;
}
