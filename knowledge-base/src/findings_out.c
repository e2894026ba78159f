/*
 * The analyses' output in memory (findings and per-file hint sets, with
 * json-c evidence) and the job-level cost model they share, before
 * findings_store.c writes them to the knowledge base.
 */
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "findings.h"

struct fnd_finding *fnd_add(struct fnd_out *o, const char *kind, const char *severity, int file,
                            json_object *evidence, double gain_s, const char *fmt, ...) {
  if (o->n == o->cap) {
    size_t cap = o->cap ? 2 * o->cap : 16;
    struct fnd_finding *f = realloc(o->f, cap * sizeof *f);
    if (!f) return json_object_put(evidence), NULL;
    o->f = f, o->cap = cap;
  }
  struct fnd_finding *f = &o->f[o->n++];
  memset(f, 0, sizeof *f);
  snprintf(f->kind, sizeof f->kind, "%s", kind);
  f->severity = severity;
  f->file = file;
  f->evidence = evidence ? evidence : json_object_new_object();
  f->gain_s = gain_s > 0 ? gain_s : 0;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(f->summary, sizeof f->summary, fmt, ap);
  va_end(ap);
  return f;
}

struct fnd_hintset *fnd_set(struct fnd_out *o, int file) {
  for (size_t i = 0; i < o->nsets; i++)
    if (o->sets[i].file == file) return &o->sets[i];
  if (o->nsets == FND_MAX_SETS) return NULL;
  struct fnd_hintset *s = &o->sets[o->nsets++];
  *s = (struct fnd_hintset){.file = file, .hints = json_object_new_object(), .rationale = json_object_new_object(),
                            .evidence = json_object_new_object()};
  return s;
}

void fnd_hint(struct fnd_out *o, int file, const char *key, const char *value, const char *fmt, ...) {
  struct fnd_hintset *s = fnd_set(o, file);
  char why[1024];
  if (!s) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  json_object_object_add(s->hints, key, json_object_new_string(value));
  json_object_object_add(s->rationale, key, json_object_new_string(why));
}

void fnd_out_free(struct fnd_out *o) {
  for (size_t i = 0; i < o->n; i++) json_object_put(o->f[i].evidence);
  for (size_t i = 0; i < o->nsets; i++) {
    json_object_put(o->sets[i].hints);
    json_object_put(o->sets[i].rationale);
    json_object_put(o->sets[i].evidence);
  }
  free(o->f);
  memset(o, 0, sizeof *o);
}

/* At most 5 example AIDs: enough to start `siox blame` / `siox graph`. */
json_object *fnd_aids(const struct fnd_job *j, const int *ops, size_t n) {
  json_object *a = json_object_new_array();
  for (size_t i = 0; i < n && i < 5; i++) json_object_array_add(a, json_object_new_int64(j->ops[ops[i]].aid));
  return a;
}

/* Non-finite numbers become null: JSON (and jsonb) has no NaN. */
void fnd_jnum(json_object *o, const char *key, double v) {
  json_object_object_add(o, key, isfinite(v) ? json_object_new_double(v) : NULL);
}
void fnd_jint(json_object *o, const char *key, int64_t v) { json_object_object_add(o, key, json_object_new_int64(v)); }

/* Length of path's directory part (up to the last '/'). */
static size_t dir_len(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? (size_t)(s - path) : 0;
}

static int in_scope(const struct fnd_job *j, const struct fnd_op *o, int file, enum fnd_scope scope) {
  if (scope == FND_SCOPE_ALL) return 1;
  int f = o->call >= 0 ? j->ops[j->calls[o->call].op].file : -1;
  if (f < 0) return 0;
  if (scope == FND_SCOPE_FILE) return f == file;
  size_t n = dir_len(j->files[file].path);
  return dir_len(j->files[f].path) == n && !strncmp(j->files[f].path, j->files[file].path, n);
}

int fnd_job_cost(const struct fnd_job *j, int file, enum fnd_scope scope, const struct fnd_cost *floor,
                 struct fnd_cost *out) {
  double *x = malloc((j->nops + 1) * sizeof *x), *y = malloc((j->nops + 1) * sizeof *y);
  size_t n = 0;
  int rc = -1;
  if (x && y) {
    for (size_t i = 0; i < j->nops; i++) {
      const struct fnd_op *o = &j->ops[i];
      if (o->layer != FND_POSIX || (o->kind != FND_READ && o->kind != FND_WRITE) || o->bytes <= 0 || o->runtime) continue;
      if (!in_scope(j, o, file, scope)) continue;
      x[n] = (double)o->bytes, y[n++] = (double)(o->end_ns - o->start_ns);
    }
    rc = fnd_cost_fit(x, y, n, floor, out);
  }
  free(x);
  free(y);
  return rc;
}

void fnd_no_sets(const struct fnd_job *j, struct fnd_out *o) {
  (void)j;
  size_t dropped = 0;
  for (size_t i = 0; i < o->nsets; i++) {
    dropped += json_object_object_length(o->sets[i].hints) > 0;
    json_object_put(o->sets[i].hints);
    o->sets[i].hints = json_object_new_object();
  }
  json_object *ev = json_object_new_object();
  fnd_jint(ev, "hint_sets_not_made", (int64_t)dropped);
  fnd_add(o, "hint_set_withdrawn", "warning", -1, ev, 0,
          "this run applied a hint set that was measured slower than the runs without it (or an experiment "
          "without a measured gain) and is withdrawn; no new set is made from this run's data (see `siox hints "
          "--app` for the outcome)");
}
