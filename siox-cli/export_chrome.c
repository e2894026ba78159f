/*
 * `siox export --format chrome-trace` (export_out.h): Chrome's trace
 * event format, object form, which Perfetto and chrome://tracing open.
 * Times are microseconds since the job's first activity (otherData.t0_ns
 * says when that was): absolute nanoseconds since 1970 do not fit a double
 * with sub-microsecond precision. Each number is written from its exact
 * decimal text.
 */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export_out.h"
#include "siox/siox_wh.h"

/* The tracks already named: (proc_id, node_id) pairs, node_id -1 for the
 * process itself. Open addressing; a job has few tracks, each row looks up
 * two. */
struct track_set {
  uint64_t *k; /* key + 1; 0 empty */
  size_t cap, n;
};

static uint64_t track_key(int32_t proc, int32_t node) { return ((uint64_t)(uint32_t)proc << 32 | (uint32_t)node) + 1; }

static size_t slot(const struct track_set *t, uint64_t key) {
  size_t i = (size_t)(key * 0x9E3779B97F4A7C15ULL) & (t->cap - 1);
  while (t->k[i] && t->k[i] != key) i = (i + 1) & (t->cap - 1);
  return i;
}

/* 1 when key was new (now added), 0 when known, -ENOMEM. */
static int track_add(struct track_set *t, uint64_t key) {
  if (2 * (t->n + 1) > t->cap) {
    struct track_set g = {calloc(t->cap ? 2 * t->cap : 64, sizeof(uint64_t)), t->cap ? 2 * t->cap : 64, 0};
    if (!g.k) return -ENOMEM;
    for (size_t i = 0; i < t->cap; i++)
      if (t->k[i]) g.k[slot(&g, t->k[i])] = t->k[i], g.n++;
    free(t->k);
    *t = g;
  }
  size_t i = slot(t, key);
  if (t->k[i]) return 0;
  t->k[i] = key;
  t->n++;
  return 1;
}

struct writer {
  FILE *f;
  size_t events;
  int64_t t0;
  struct track_set tracks;
};

/* Appends one event to the traceEvents array and releases it. */
static int emit(struct writer *w, json_object *ev) {
  const char *s = json_object_to_json_string_ext(ev, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
  int ok = s && fprintf(w->f, "%s\n%s", w->events ? "," : "", s) >= 0;
  json_object_put(ev);
  w->events++;
  return ok ? 0 : -EIO;
}

/* rel nanoseconds as microseconds, from their exact decimal text. */
static json_object *micros(int64_t rel) {
  char text[40];
  const char *sign = rel < 0 ? "-" : "";
  uint64_t a = rel < 0 ? (uint64_t)0 - (uint64_t)rel : (uint64_t)rel;
  snprintf(text, sizeof text, "%s%" PRIu64 ".%03" PRIu64, sign, a / 1000, a % 1000);
  return json_object_new_double_s((double)rel / 1000.0, text);
}

static json_object *event(const char *ph, const char *name, int32_t pid, int32_t tid) {
  json_object *e = json_object_new_object();
  json_object_object_add(e, "ph", json_object_new_string(ph));
  if (name) json_object_object_add(e, "name", json_object_new_string(name));
  json_object_object_add(e, "pid", json_object_new_int(pid));
  json_object_object_add(e, "tid", json_object_new_int(tid));
  return e;
}

static int name_track(struct writer *w, const char *what, int32_t pid, int32_t tid, const char *name, int sort) {
  json_object *e = event("M", what, pid, tid), *args = json_object_new_object();
  json_object_object_add(args, "name", json_object_new_string(name));
  json_object_object_add(e, "args", args);
  int rc = emit(w, e);
  if (rc || sort < 0) return rc;
  /* Layers in the order of their node ids: the application's first. */
  e = event("M", "thread_sort_index", pid, tid);
  args = json_object_new_object();
  json_object_object_add(args, "sort_index", json_object_new_int(sort));
  json_object_object_add(e, "args", args);
  return emit(w, e);
}

static int tracks_of(struct writer *w, const struct siox_wh_xact *a) {
  char name[512];
  int rc = track_add(&w->tracks, track_key(a->proc_id, -1));
  if (rc < 0) return rc;
  if (rc == 1) {
    snprintf(name, sizeof name, "%s pid %d %s%s%s", a->host, a->pid, a->exe, a->job[0] ? " job " : "", a->job);
    if ((rc = name_track(w, "process_name", a->proc_id, 0, name, -1)) != 0) return rc;
  }
  if ((rc = track_add(&w->tracks, track_key(a->proc_id, a->node_id))) < 0) return rc;
  if (rc == 0) return 0;
  snprintf(name, sizeof name, "%s %s%s%s", a->swid, a->hwid, a->iid[0] ? "#" : "", a->iid);
  return name_track(w, "thread_name", a->proc_id, a->node_id, name, a->node_id);
}

static int activity(struct writer *w, const struct siox_wh_xact *a) {
  int rc = tracks_of(w, a);
  if (rc) return rc;
  json_object *e = event("X", a->name, a->proc_id, a->node_id), *args = json_object_new_object();
  json_object_object_add(e, "cat", json_object_new_string(a->swid));
  json_object_object_add(e, "ts", micros(a->start_ns - w->t0));
  json_object_object_add(e, "dur", micros(a->end_ns - a->start_ns));
  json_object_object_add(args, "aid", json_object_new_int64(a->aid));
  if (a->parent_aid) json_object_object_add(args, "parent_aid", json_object_new_int64(a->parent_aid));
  if (a->bytes >= 0) json_object_object_add(args, "bytes", json_object_new_int64(a->bytes));
  if (a->err) json_object_object_add(args, "err", json_object_new_int(a->err));
  json_object_object_add(e, "args", args);
  return emit(w, e);
}

/* A flow from the parent's slice to the child's: the start is bound to the
 * parent at the moment the child began (within the parent's interval), the
 * end to the slice enclosing the child's start (bp "e"): the child itself. */
static int flow(struct writer *w, const struct siox_wh_xlink *l, uint64_t id) {
  char name[64];
  snprintf(name, sizeof name, "%s %.2f", l->is_implicit ? "implicit" : "explicit", l->confidence);
  int64_t at = l->child_start_ns;
  if (at < l->parent_start_ns) at = l->parent_start_ns;
  if (at > l->parent_end_ns) at = l->parent_end_ns;
  json_object *s = event("s", name, l->parent_proc, l->parent_node), *args = json_object_new_object();
  json_object_object_add(s, "cat", json_object_new_string("causal"));
  json_object_object_add(s, "id", json_object_new_int64((int64_t)id));
  json_object_object_add(s, "ts", micros(at - w->t0));
  json_object_object_add(args, "kind", json_object_new_string(l->is_implicit ? "implicit" : "explicit"));
  json_object_object_add(args, "confidence", json_object_new_double(l->confidence));
  if (l->flags[0]) json_object_object_add(args, "flags", json_object_new_string(l->flags));
  json_object_object_add(args, "parent_aid", json_object_new_int64(l->parent_aid));
  json_object_object_add(args, "child_aid", json_object_new_int64(l->child_aid));
  json_object_object_add(s, "args", args);
  int rc = emit(w, s);
  if (rc) return rc;
  json_object *f = event("f", name, l->child_proc, l->child_node);
  json_object_object_add(f, "cat", json_object_new_string("causal"));
  json_object_object_add(f, "id", json_object_new_int64((int64_t)id));
  json_object_object_add(f, "bp", json_object_new_string("e"));
  json_object_object_add(f, "ts", micros(l->child_start_ns - w->t0));
  return emit(w, f);
}

/* Streams one kind of row into the array. */
static int pass(PGconn *c, const char *job, enum siox_wh_export_what what, struct writer *w, char *err,
                size_t errlen) {
  struct siox_wh_stream *s;
  int rc = siox_wh_export_open(c, what, job, &s, err, errlen), more;
  if (rc) return rc;
  uint64_t flows = 0;
  const struct siox_wh_xact *a;
  const struct siox_wh_xlink *l;
  while (rc == 0 && (more = siox_wh_stream_next(s, &a, &l, NULL, err, errlen)) == 1)
    rc = what == SIOX_WH_EXPORT_ACTIVITIES ? activity(w, a) : flow(w, l, ++flows);
  if (rc == 0 && more < 0) rc = more;
  else if (rc == -EIO) snprintf(err, errlen, "writing the trace: %s", strerror(errno));
  else if (rc == -ENOMEM) snprintf(err, errlen, "out of memory");
  siox_wh_stream_close(s);
  return rc;
}

int siox_export_chrome(PGconn *c, const char *job, FILE *f, char *err, size_t errlen) {
  struct writer w = {.f = f};
  int rc = siox_wh_export_t0(c, job, &w.t0, err, errlen);
  if (rc == -ENOENT) snprintf(err, errlen, "job '%s' has no activities in the warehouse (see `siox top`)", job);
  if (rc) return rc;
  json_object *other = json_object_new_object();
  json_object_object_add(other, "source", json_object_new_string("siox export"));
  json_object_object_add(other, "job", json_object_new_string(job));
  char t0[24];
  snprintf(t0, sizeof t0, "%" PRId64, w.t0);
  json_object_object_add(other, "t0_ns", json_object_new_string(t0));
  fprintf(f, "{\"displayTimeUnit\":\"ns\",\"otherData\":%s,\"traceEvents\":[",
          json_object_to_json_string_ext(other, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
  json_object_put(other);
  rc = pass(c, job, SIOX_WH_EXPORT_ACTIVITIES, &w, err, errlen);
  if (rc == 0) rc = pass(c, job, SIOX_WH_EXPORT_LINKS, &w, err, errlen);
  free(w.tracks.k);
  if (rc) return rc;
  if (fprintf(f, "\n]}\n") < 0 || fflush(f) != 0) {
    snprintf(err, errlen, "writing the trace: %s", strerror(errno));
    return -EIO;
  }
  return 0;
}
