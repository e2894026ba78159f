/* Job-level blame: the sums (blame_job.h). */
#include "blame_job.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static struct siox_job_entry *find(struct siox_job_blame *j, const char *key, bool is_job) {
  for (size_t i = 0; i < j->n; i++)
    if (j->e[i].is_job == is_job && strcmp(j->e[i].key, key) == 0) return &j->e[i];
  if (j->n == j->cap) {
    size_t cap = j->cap ? 2 * j->cap : 16;
    struct siox_job_entry *e = realloc(j->e, cap * sizeof(*e));
    if (!e) return NULL;
    j->e = e;
    j->cap = cap;
  }
  char *k = strdup(key);
  if (!k) return NULL;
  j->e[j->n] = (struct siox_job_entry){.key = k, .is_job = is_job};
  return &j->e[j->n++];
}

int siox_job_charge(struct siox_job_blame *j, const char *key, bool is_job, enum siox_class cls, int64_t aid,
                    int64_t ns) {
  if (ns <= 0) return 0;
  struct siox_job_entry *e = find(j, key, is_job);
  if (!e) return -ENOMEM;
  e->ns += ns;
  if (e->last_aid == aid) return 0;
  e->last_aid = aid;
  e->calls++;
  e->by_class[cls]++;
  if (e->nexamples < SIOX_JOB_EXAMPLES) e->examples[e->nexamples++] = aid;
  return 0;
}

static int cmp_entry(const void *x, const void *y) {
  const struct siox_job_entry *a = x, *b = y;
  return (a->ns < b->ns) - (a->ns > b->ns);
}

void siox_job_sort(struct siox_job_blame *j) {
  if (j->n > 1) qsort(j->e, j->n, sizeof(*j->e), cmp_entry);
}

enum siox_class siox_job_entry_class(const struct siox_job_entry *e) {
  /* more severe first on ties */
  static const enum siox_class order[] = {SIOX_CLASS_FAULT, SIOX_CLASS_INTERFERENCE, SIOX_CLASS_SELF,
                                          SIOX_CLASS_TRANSIENT, SIOX_CLASS_NORMAL, SIOX_CLASS_NONE};
  enum siox_class best = SIOX_CLASS_NONE;
  size_t most = 0;
  for (size_t i = 0; i < sizeof(order) / sizeof(*order); i++)
    if (e->by_class[order[i]] > most) {
      most = e->by_class[order[i]];
      best = order[i];
    }
  return best;
}

void siox_job_release(struct siox_job_blame *j) {
  for (size_t i = 0; i < j->n; i++) free(j->e[i].key);
  free(j->e);
  *j = (struct siox_job_blame){0};
}

int siox_job_add_call(struct siox_job_blame *j, const struct siox_act *root, const struct siox_blame_wait *w,
                      int64_t via_aid, int64_t via_ns) {
  const struct siox_act *x = w->resource;
  char node[512];
  enum siox_class cls = w->v.cls;
  int rc = 0;
  j->calls++;
  if (via_aid && x) {
    /* A waiting rank's call: all of it went to waiting for the sibling's
     * I/O at the resource (the sibling's own call is counted on its own). */
    j->total_ns += via_ns;
    siox_act_component(x, node, sizeof(node));
    return siox_job_charge(j, node, false, cls, via_aid, via_ns);
  }
  j->total_ns += root->inclusive_ns;
  if (!x) { /* reached no shared resource: nothing to charge */
    j->unexplained_ns += root->inclusive_ns;
    return 0;
  }
  siox_act_component(x, node, sizeof(node));
  int64_t at = w->w.own_ns;
  for (size_t i = 0; i < w->queue->nby && rc == 0; i++) {
    const struct siox_waited_for *q = &w->queue->by[i];
    if (cls == SIOX_CLASS_FAULT || q->same_job)
      at += q->charged_ns;
    else
      rc = siox_job_charge(j, q->job[0] ? q->job : "(no job)", true, cls, root->aid, q->charged_ns);
  }
  if (rc == 0) rc = siox_job_charge(j, node, false, cls, root->aid, at);
  j->unexplained_ns += w->unexplained_ns;
  return rc;
}
