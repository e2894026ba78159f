/*
 * Causal trees in memory (graph.h). The warehouse loader or a test adds
 * activities; siox_tree_finish links them and computes the figures every
 * view shows: inclusive and exclusive time and the critical path. Pure: no
 * I/O, so the rules in README.md "Times" are tested on synthetic trees.
 */
#include "graph.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct siox_tree *siox_tree_create(void) { return calloc(1, sizeof(struct siox_tree)); }

static void attr_free(struct siox_attr *at) {
  free(at->name);
  free(at->unit);
  if (at->kind == SIOX_AV_TEXT) free(at->v.text);
}

static void act_free(struct siox_act *a) {
  for (size_t i = 0; i < a->nattrs; i++) attr_free(&a->attrs[i]);
  free(a->attrs);
  free(a->children);
  free(a->flags);
  free(a->hwid);
  free(a->swid);
  free(a->iid);
  free(a->name);
  free(a->host);
  free(a->job);
}

void siox_tree_destroy(struct siox_tree *t) {
  if (!t) return;
  for (size_t i = 0; i < t->n; i++) act_free(&t->acts[i]);
  free(t->acts);
  free(t->by_aid);
  free(t);
}

/* strdup that maps NULL to "" so printers never see NULL. */
static char *dup0(const char *s) { return strdup(s ? s : ""); }

static int act_copy(struct siox_act *a, const struct siox_act_info *in) {
  memset(a, 0, sizeof(*a));
  a->aid = in->aid;
  a->parent = in->parent;
  a->link = in->link;
  a->confidence = in->confidence;
  a->node_id = in->node_id;
  a->proc_id = in->proc_id;
  a->pid = in->pid;
  a->start_ns = in->start_ns;
  a->end_ns = in->end_ns;
  a->err = in->err;
  a->bytes = -1;
  a->flags = dup0(in->flags);
  a->hwid = dup0(in->hwid);
  a->swid = dup0(in->swid);
  a->iid = dup0(in->iid);
  a->name = dup0(in->name);
  a->host = dup0(in->host);
  a->job = dup0(in->job);
  if (!a->flags || !a->hwid || !a->swid || !a->iid || !a->name || !a->host || !a->job) {
    act_free(a);
    return -ENOMEM;
  }
  return 0;
}

int siox_tree_add(struct siox_tree *t, const struct siox_act_info *info) {
  if (t->finished) return -EINVAL;
  if (t->n == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 64;
    struct siox_act *p = realloc(t->acts, cap * sizeof(*p));
    if (!p) return -ENOMEM;
    t->acts = p;
    t->cap = cap;
  }
  int rc = act_copy(&t->acts[t->n], info);
  if (rc == 0) t->n++;
  return rc;
}

/* ---- index and linking ------------------------------------------------ */

static int cmp_aid(const void *x, const void *y) {
  const struct siox_act *a = *(struct siox_act *const *)x, *b = *(struct siox_act *const *)y;
  return (a->aid > b->aid) - (a->aid < b->aid);
}

static int cmp_start(const void *x, const void *y) {
  const struct siox_act *a = *(struct siox_act *const *)x, *b = *(struct siox_act *const *)y;
  if (a->start_ns != b->start_ns) return (a->start_ns > b->start_ns) - (a->start_ns < b->start_ns);
  return (a->aid > b->aid) - (a->aid < b->aid);
}

struct siox_act *siox_tree_find(const struct siox_tree *t, int64_t aid) {
  if (!t->by_aid) return NULL;
  struct siox_act key = {.aid = aid}, *kp = &key;
  if (t->n == 0) return NULL;
  struct siox_act **hit = bsearch(&kp, t->by_aid, t->n, sizeof(*t->by_aid), cmp_aid);
  return hit ? *hit : NULL;
}

/* Two passes over the parent pointers: count, then fill, so each child
 * array is allocated once at its final size. */
static int link_children(struct siox_tree *t) {
  size_t *count = calloc(t->n ? t->n : 1, sizeof(*count));
  if (!count) return -ENOMEM;
  for (size_t i = 0; i < t->n; i++) {
    struct siox_act *p = t->acts[i].parent ? siox_tree_find(t, t->acts[i].parent) : NULL;
    if (p && p != &t->acts[i]) count[p - t->acts]++;
  }
  int rc = 0;
  for (size_t i = 0; i < t->n && rc == 0; i++) {
    if (count[i] && !(t->acts[i].children = calloc(count[i], sizeof(struct siox_act *)))) rc = -ENOMEM;
  }
  for (size_t i = 0; i < t->n && rc == 0; i++) {
    struct siox_act *p = t->acts[i].parent ? siox_tree_find(t, t->acts[i].parent) : NULL;
    if (p && p != &t->acts[i]) p->children[p->nchildren++] = &t->acts[i];
  }
  for (size_t i = 0; i < t->n && rc == 0; i++)
    if (t->acts[i].nchildren > 1) qsort(t->acts[i].children, t->acts[i].nchildren, sizeof(struct siox_act *), cmp_start);
  free(count);
  return rc;
}

/* ---- times ------------------------------------------------------------ */

static int cmp_iv(const void *x, const void *y) {
  const struct siox_interval *a = x, *b = y;
  return (a->start > b->start) - (a->start < b->start);
}

int64_t siox_exclusive_ns(int64_t start, int64_t end, struct siox_interval *iv, size_t n) {
  if (end <= start) return 0;
  size_t m = 0;
  for (size_t i = 0; i < n; i++) { /* clip to the parent, drop what is left empty */
    int64_t s = iv[i].start > start ? iv[i].start : start;
    int64_t e = iv[i].end < end ? iv[i].end : end;
    if (s < e) iv[m++] = (struct siox_interval){s, e};
  }
  if (m > 1) qsort(iv, m, sizeof(*iv), cmp_iv);
  int64_t covered = 0, cs = 0, ce = 0;
  for (size_t i = 0; i < m; i++) {
    if (i == 0 || iv[i].start > ce) { /* a gap: close the running union */
      covered += ce - cs;
      cs = iv[i].start;
      ce = iv[i].end;
    } else if (iv[i].end > ce) {
      ce = iv[i].end;
    }
  }
  covered += ce - cs;
  return (end - start) - covered;
}

struct siox_act *siox_act_critical_child(const struct siox_act *a) {
  struct siox_act *best = NULL;
  for (size_t i = 0; i < a->nchildren; i++) {
    struct siox_act *c = a->children[i];
    if (!best || c->end_ns > best->end_ns ||
        (c->end_ns == best->end_ns &&
         (c->inclusive_ns > best->inclusive_ns || (c->inclusive_ns == best->inclusive_ns && c->aid < best->aid))))
      best = c;
  }
  return best;
}

/* Depth-first from the root; recursion depth is bounded by the loader's
 * depth limit, and each activity has one parent, so this terminates. */
static int compute(struct siox_act *a, int depth) {
  a->depth = depth;
  a->inclusive_ns = a->end_ns > a->start_ns ? a->end_ns - a->start_ns : 0;
  struct siox_interval *iv = malloc((a->nchildren ? a->nchildren : 1) * sizeof(*iv));
  if (!iv) return -ENOMEM;
  for (size_t i = 0; i < a->nchildren; i++) {
    iv[i] = (struct siox_interval){a->children[i]->start_ns, a->children[i]->end_ns};
    int rc = compute(a->children[i], depth + 1);
    if (rc) {
      free(iv);
      return rc;
    }
  }
  a->exclusive_ns = siox_exclusive_ns(a->start_ns, a->end_ns, iv, a->nchildren);
  free(iv);
  return 0;
}

static size_t count_from(const struct siox_act *a) {
  size_t n = 1;
  for (size_t i = 0; i < a->nchildren; i++) n += count_from(a->children[i]);
  return n;
}

size_t siox_tree_size(const struct siox_tree *t) { return t->root ? count_from(t->root) : 0; }

int siox_tree_finish(struct siox_tree *t, int64_t root_aid) {
  if (t->finished) return -EINVAL;
  t->by_aid = malloc((t->n ? t->n : 1) * sizeof(*t->by_aid));
  if (!t->by_aid) return -ENOMEM;
  for (size_t i = 0; i < t->n; i++) t->by_aid[i] = &t->acts[i];
  if (t->n > 1) qsort(t->by_aid, t->n, sizeof(*t->by_aid), cmp_aid);
  t->finished = true;
  t->root = siox_tree_find(t, root_aid);
  if (!t->root) return -ENOENT;
  /* The root's own parent (if any) lies outside this tree. */
  t->root->parent = 0;
  t->root->link = SIOX_LINK_ROOT;
  int rc = link_children(t);
  if (rc == 0) rc = compute(t->root, 0);
  if (rc) return rc;
  for (struct siox_act *a = t->root; a; a = siox_act_critical_child(a)) a->critical = true;
  t->unreachable = t->n - siox_tree_size(t);
  return 0;
}

/* ---- attributes ------------------------------------------------------- */

static struct siox_attr *attr_push(struct siox_act *a, const char *name, const char *unit) {
  struct siox_attr *p = realloc(a->attrs, (a->nattrs + 1) * sizeof(*p));
  if (!p) return NULL;
  a->attrs = p;
  struct siox_attr *at = &p[a->nattrs];
  memset(at, 0, sizeof(*at));
  at->name = dup0(name);
  at->unit = dup0(unit && *unit ? unit : "-");
  if (!at->name || !at->unit) {
    free(at->name);
    free(at->unit);
    return NULL;
  }
  a->nattrs++;
  return at;
}

int siox_act_add_num(struct siox_act *a, const char *name, const char *unit, enum siox_attr_kind kind, int64_t i,
                     double f) {
  if (kind == SIOX_AV_TEXT) return -EINVAL;
  struct siox_attr *at = attr_push(a, name, unit);
  if (!at) return -ENOMEM;
  at->kind = kind;
  if (kind == SIOX_AV_F64)
    at->v.f = f;
  else
    at->v.i = i; /* u64 shares the bits */
  if (strcmp(at->name, "io/bytes") == 0 && kind != SIOX_AV_F64) a->bytes = i;
  return 0;
}

int siox_act_add_text(struct siox_act *a, const char *name, const char *unit, const char *text) {
  struct siox_attr *at = attr_push(a, name, unit);
  if (!at) return -ENOMEM;
  at->kind = SIOX_AV_TEXT;
  if (!(at->v.text = dup0(text))) {
    a->nattrs--;
    attr_free(at);
    return -ENOMEM;
  }
  return 0;
}

void siox_tree_mark(struct siox_tree *t, const struct siox_act *const *path, size_t n, const struct siox_act *mark) {
  for (size_t i = 0; i < t->n; i++) t->acts[i].critical = false;
  for (size_t i = 0; i < n; i++) {
    struct siox_act *a = siox_tree_find(t, path[i]->aid);
    if (a) a->critical = true;
  }
  for (struct siox_act *a = mark ? siox_tree_find(t, mark->aid) : NULL; a; a = siox_tree_find(t, a->parent)) {
    a->critical = true;
    if (a == t->root) break;
  }
}

char *siox_act_component(const struct siox_act *a, char *buf, size_t len) {
  if (a->iid[0])
    snprintf(buf, len, "%s %s#%s", a->hwid, a->swid, a->iid);
  else
    snprintf(buf, len, "%s %s", a->hwid, a->swid);
  return buf;
}
