/*
 * The in-memory matcher's window; see match_window.h for what it promises
 * and README.md ("Implicit links in memory") for why.
 *
 * Entries live in a ring in arrival order; an entry's id is its position
 * in that order, so eviction is FIFO and every index list (ids in arrival
 * order) loses a prefix: a list keeps where its live ids begin. The index
 * maps (object, kind, block) to a list, where block is a 1 MiB byte block
 * of a ranged call, WIDE for a range over more than MAX_SPAN blocks, UNR
 * for a call without range, and ALL for every call of the object (what an
 * unranged call overlaps).
 */
#include "match_window.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "link.h"

#define BLOCK_SHIFT 20
#define MAX_SPAN 16
#define B_ALL INT64_MIN
#define B_UNR (INT64_MIN + 1)
#define B_WIDE (INT64_MIN + 2)

enum { F_SQL = 1, F_NEW = 2, F_DIRTY = 4 };

struct entry {
  int64_t aid, object, offset, length, start, end;
  uint64_t id, stamp; /* stamp: the last query that visited it (dedup across blocks) */
  uint32_t hw, sw, daemon;
  char kind;
  uint8_t flags;
  uint32_t call; /* index in the current batch (F_NEW) */
  /* A receive's links as the window last stored them (sorted by parent):
   * what a new decision is compared with. The SQL matcher never holds
   * other links of it: its links change only where the window knows (see
   * siox_mw_merge for the exception, handled there). */
  struct siox_link *links;
  uint32_t nlinks;
};

struct list {
  uint64_t *ids;
  uint32_t begin, len, cap;
};

struct slot {
  int64_t object, block;
  uint32_t list; /* index + 1; 0: empty slot */
  char kind;
};

struct daemon {
  uint64_t id;
  int64_t unc;
};

struct name {
  char *s;
};

struct siox_mw {
  struct entry *ring;
  uint64_t mask, head, next; /* live ids: [head, next) */
  int64_t retain, late, floor, max_end, max_unc;
  int started;
  struct slot *slots;
  size_t nslots, used;
  struct list *lists;
  size_t nlists, cap_lists;
  uint64_t evicted_since_sweep, query;
  struct daemon *daemons;
  uint32_t ndaemons;
  struct name *names;
  uint32_t nnames, cap_names;
  struct siox_link_cand *cand;
  int64_t *cand_s; /* sender aid per candidate, for the per-sender dedup */
  size_t ncand, cap_cand;
  struct siox_link *links;
  size_t cap_links;
  uint64_t *dirty;
  size_t ndirty, cap_dirty;
  uint32_t *marks; /* the batch's calls decide() marked (in_memory 2) */
  size_t nmarks, cap_marks;
  struct siox_mw_call *calls; /* the current batch */
};

/* ---- small helpers ------------------------------------------------------- */

static int grow(void **p, size_t *cap, size_t need, size_t size) {
  if (need <= *cap) return 0;
  size_t n = *cap ? *cap : 64;
  while (n < need) n *= 2;
  void *q = realloc(*p, n * size);
  if (!q) return -ENOMEM;
  *p = q, *cap = n;
  return 0;
}

static struct entry *get(struct siox_mw *w, uint64_t id) {
  return id >= w->head && id < w->next ? &w->ring[id & w->mask] : NULL;
}

static uint64_t hash3(int64_t o, int64_t b, char k) {
  uint64_t h = (uint64_t)o * 0x9E3779B97F4A7C15ull ^ ((uint64_t)b + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
  h ^= (uint64_t)(unsigned char)k * 0x165667B19E3779F9ull;
  return h ^ (h >> 29);
}

/* ---- the index ------------------------------------------------------------------ */

static int rehash(struct siox_mw *w, size_t n) {
  struct slot *s = calloc(n, sizeof *s);
  if (!s) return -ENOMEM;
  for (size_t i = 0; i < w->nslots; i++) {
    if (!w->slots[i].list) continue;
    size_t j = hash3(w->slots[i].object, w->slots[i].block, w->slots[i].kind) & (n - 1);
    while (s[j].list) j = (j + 1) & (n - 1);
    s[j] = w->slots[i];
  }
  free(w->slots);
  w->slots = s, w->nslots = n;
  return 0;
}

/* The list of (object, kind, block); with make, created when missing. */
static struct list *find(struct siox_mw *w, int64_t object, char kind, int64_t block, int make) {
  if (w->nslots == 0) {
    if (!make || rehash(w, 1024)) return NULL;
  }
  size_t j = hash3(object, block, kind) & (w->nslots - 1);
  for (; w->slots[j].list; j = (j + 1) & (w->nslots - 1)) {
    struct slot *s = &w->slots[j];
    if (s->object == object && s->block == block && s->kind == kind) return &w->lists[s->list - 1];
  }
  if (!make) return NULL;
  if ((w->used + 1) * 2 > w->nslots) {
    if (rehash(w, w->nslots * 2)) return NULL;
    return find(w, object, kind, block, make);
  }
  if (grow((void **)&w->lists, &w->cap_lists, w->nlists + 1, sizeof *w->lists)) return NULL;
  w->lists[w->nlists] = (struct list){0};
  w->slots[j] = (struct slot){object, block, (uint32_t)++w->nlists, kind};
  w->used++;
  return &w->lists[w->nlists - 1];
}

/* Skips the evicted prefix of l (and compacts it when it is most of l). */
static void trim(struct siox_mw *w, struct list *l) {
  while (l->begin < l->len && l->ids[l->begin] < w->head) l->begin++;
  if (l->begin > 32 && l->begin * 2 > l->len) {
    memmove(l->ids, l->ids + l->begin, (l->len - l->begin) * sizeof *l->ids);
    l->len -= l->begin, l->begin = 0;
  }
}

/* Inserts id keeping the list in id order (appends, but for a merge). */
static int list_add(struct list *l, uint64_t id) {
  if (l->len == l->cap) {
    uint32_t n = l->cap ? 2 * l->cap : 4;
    uint64_t *p = realloc(l->ids, n * sizeof *p);
    if (!p) return -ENOMEM;
    l->ids = p, l->cap = n;
  }
  uint32_t i = l->len;
  while (i > l->begin && l->ids[i - 1] > id) i--;
  memmove(l->ids + i + 1, l->ids + i, (l->len - i) * sizeof *l->ids);
  l->ids[i] = id, l->len++;
  return 0;
}

static int64_t block_of(int64_t off) { return (int64_t)((uint64_t)off >> BLOCK_SHIFT); }

/* The blocks an entry is listed under, besides ALL: first..last, or one
 * of UNR, WIDE (first == last then). */
static void blocks(int64_t off, int64_t len, int64_t *first, int64_t *last) {
  if (len <= 0) *first = *last = B_UNR;
  else if (block_of(off + len - 1) - block_of(off) >= MAX_SPAN) *first = *last = B_WIDE;
  else *first = block_of(off), *last = block_of(off + len - 1);
}

static int index_add(struct siox_mw *w, const struct entry *e) {
  int64_t b0, b1;
  blocks(e->offset, e->length, &b0, &b1);
  struct list *l = find(w, e->object, e->kind, B_ALL, 1);
  if (!l || list_add(l, e->id)) return -ENOMEM;
  for (int64_t b = b0; b <= b1; b++)
    if (!(l = find(w, e->object, e->kind, b, 1)) || list_add(l, e->id)) return -ENOMEM;
  return 0;
}

/* Calls fn for each live entry of kind on object whose byte range may
 * overlap [off, off + len) (len 0: any), once each. Stops at fn's nonzero. */
typedef int (*visit_fn)(struct siox_mw *w, struct entry *e, void *ctx);

static int visit_list(struct siox_mw *w, struct list *l, visit_fn fn, void *ctx) {
  if (!l) return 0;
  trim(w, l);
  for (uint32_t i = l->begin; i < l->len; i++) {
    struct entry *e = get(w, l->ids[i]);
    if (!e || e->stamp == w->query) continue;
    e->stamp = w->query;
    int rc = fn(w, e, ctx);
    if (rc) return rc;
  }
  return 0;
}

static int visit(struct siox_mw *w, int64_t object, char kind, int64_t off, int64_t len, visit_fn fn, void *ctx) {
  int64_t b0, b1;
  blocks(off, len, &b0, &b1);
  w->query++;
  if (b0 == B_UNR || b0 == B_WIDE) return visit_list(w, find(w, object, kind, B_ALL, 0), fn, ctx);
  int rc = visit_list(w, find(w, object, kind, B_UNR, 0), fn, ctx);
  if (rc == 0) rc = visit_list(w, find(w, object, kind, B_WIDE, 0), fn, ctx);
  for (int64_t b = b0; rc == 0 && b <= b1; b++) rc = visit_list(w, find(w, object, kind, b, 0), fn, ctx);
  return rc;
}

/* Drops the lists that hold nothing live (after many evictions). */
void siox_mw_reset(struct siox_mw *w);
static void sweep(struct siox_mw *w) {
  size_t keep = 0;
  uint32_t *map = malloc((w->nlists + 1) * sizeof *map);
  if (!map) return;
  for (size_t i = 0; i < w->nlists; i++) {
    trim(w, &w->lists[i]);
    if (w->lists[i].begin == w->lists[i].len) {
      free(w->lists[i].ids), map[i] = 0;
      continue;
    }
    w->lists[keep] = w->lists[i], map[i] = (uint32_t)++keep;
  }
  for (size_t i = 0; i < w->nslots; i++)
    if (w->slots[i].list) w->slots[i].list = map[w->slots[i].list - 1];
  free(map);
  w->nlists = keep;
  struct slot *old = w->slots;
  size_t n = w->nslots, want = 1024;
  while (want < 2 * keep + 2) want *= 2;
  struct slot *s = calloc(want, sizeof *s);
  if (!s) {
    return siox_mw_reset(w); /* the old table has holes now: start over */
  }
  w->slots = s, w->nslots = want, w->used = 0;
  for (size_t i = 0; i < n; i++) {
    if (!old[i].list) continue;
    size_t j = hash3(old[i].object, old[i].block, old[i].kind) & (want - 1);
    while (s[j].list) j = (j + 1) & (want - 1);
    s[j] = old[i], w->used++;
  }
  free(old);
}

/* ---- entries ------------------------------------------------------------------- */

/* The oldest entry leaves: nothing below the floor is in the window. */
static void drop_oldest(struct siox_mw *w) {
  struct entry *e = &w->ring[w->head & w->mask];
  if (e->end + 1 > w->floor) w->floor = e->end + 1;
  free(e->links), e->links = NULL, e->nlinks = 0;
  w->head++, w->evicted_since_sweep++;
}

static void evict(struct siox_mw *w) {
  while (w->head < w->next) {
    struct entry *e = &w->ring[w->head & w->mask];
    if (w->next - w->head <= w->mask && e->end >= w->max_end - w->retain) break;
    drop_oldest(w);
  }
  if (w->evicted_since_sweep > (w->mask + 1) / 2) sweep(w), w->evicted_since_sweep = 0;
}

static struct entry *add(struct siox_mw *w, const struct entry *src) {
  if (w->next - w->head > w->mask) drop_oldest(w);
  struct entry *e = &w->ring[w->next & w->mask];
  *e = *src;
  e->id = w->next++;
  e->stamp = 0, e->links = NULL, e->nlinks = 0;
  if (e->end > w->max_end) w->max_end = e->end;
  return index_add(w, e) ? NULL : e;
}

/* ---- the rules (match.c's candidates_sql, one pair at a time) ---------------- */

static int64_t maxw(const struct siox_mw *w) { return 2 * w->max_unc + SIOX_MW_SLACK_NS; }

/* Every possible sender of r is in the window (or new to the SQL matcher). */
static int r_complete(const struct siox_mw *w, const struct entry *r) {
  return r->start - w->late - maxw(w) >= w->floor;
}

/* Every possible receive of s is in the window. */
static int s_complete(const struct siox_mw *w, const struct entry *s) { return s->start - SIOX_MW_READAHEAD_NS >= w->floor; }

static int bytes_meet(const struct entry *s, const struct entry *r) {
  if (s->length == 0 || r->length == 0) return 1;
  return s->offset < r->offset + r->length && r->offset < s->offset + s->length;
}

/* The index conditions alone: what a pair with a ghost may be. */
static int near(const struct siox_mw *w, const struct entry *s, const struct entry *r) {
  return bytes_meet(s, r) && s->start <= r->start + SIOX_MW_READAHEAD_NS && s->end >= r->start - w->late - maxw(w);
}

/* Whether s is a candidate for r, and as what (c filled). */
static int candidate(const struct siox_mw *w, const struct entry *s, const struct entry *r, struct siox_link_cand *c) {
  if (s->aid == r->aid || !near(w, s, r)) return 0;
  if ((s->hw && s->hw != r->hw) || (s->sw && s->sw != r->sw)) return 0;
  /* One daemon's calls share its host clock: no clock widening between
   * them (match.c's CAND_WHERE). */
  int64_t ww = SIOX_MW_SLACK_NS;
  if (s->daemon != r->daemon) ww += w->daemons[s->daemon].unc + w->daemons[r->daemon].unc;
  int cls;
  if (r->start >= s->start - ww && r->end <= s->end + ww) cls = SIOX_LINK_INSIDE;
  else if (r->start < s->start - ww && r->start >= s->start - SIOX_MW_READAHEAD_NS) cls = SIOX_LINK_BEFORE;
  else if (w->late > 0 && r->start >= s->start - ww && r->end > s->end + ww && r->start <= s->end + ww + w->late)
    cls = SIOX_LINK_AFTER;
  else return 0;
  int64_t ov = 0;
  if (s->length > 0 && r->length > 0) {
    int64_t hi = s->offset + s->length < r->offset + r->length ? s->offset + s->length : r->offset + r->length;
    int64_t lo = s->offset > r->offset ? s->offset : r->offset;
    ov = hi > lo ? hi - lo : 0;
  }
  *c = (struct siox_link_cand){
      .parent = s->aid,
      .cls = cls,
      .overlap = (uint64_t)ov,
      .contains = r->length == 0 ||
                  (s->length > 0 && s->offset <= r->offset && s->offset + s->length >= r->offset + r->length),
      .s_ranged = s->length > 0,
      .strict = r->start >= s->start && r->end <= s->end,
  };
  return 1;
}

/* ---- deciding a receive ---------------------------------------------------------- */

struct gather {
  struct entry *r;
  int sql; /* a ghost or SQL-owned sender meets r */
};

static int gather_one(struct siox_mw *w, struct entry *s, void *ctx) {
  struct gather *g = ctx;
  struct siox_link_cand c;
  if (s->flags & F_SQL) {
    if (near(w, s, g->r)) g->sql = 1;
    return 0;
  }
  if (!candidate(w, s, g->r, &c)) return 0;
  size_t n = w->ncand;
  if (grow((void **)&w->cand, &w->cap_cand, n + 1, sizeof *w->cand)) return -ENOMEM;
  w->cand[n] = c;
  w->ncand = n + 1;
  if ((s->flags & F_NEW) && w->calls[s->call].in_memory == 1) {
    if (grow((void **)&w->marks, &w->cap_marks, w->nmarks + 1, sizeof *w->marks)) return -ENOMEM;
    w->calls[s->call].in_memory = 2; /* a candidate of r: see drop_new_senders */
    w->marks[w->nmarks++] = s->call;
  }
  return 0;
}

static int cand_cmp(const void *a, const void *b) {
  const struct siox_link_cand *x = a, *y = b;
  return (x->parent > y->parent) - (x->parent < y->parent);
}

/* One row per sender (a sender with several records on the object keeps
 * its best), in sender order, as match.c's compute() sees them. */
static size_t dedup(struct siox_link_cand *c, size_t n, uint64_t r_len) {
  if (n > 1) qsort(c, n, sizeof *c, cand_cmp); /* c may be NULL when n is 0 */
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    if (m && c[m - 1].parent == c[i].parent) {
      if (siox_link_cand_better(&c[i], &c[m - 1], r_len)) c[m - 1] = c[i];
      continue;
    }
    c[m++] = c[i];
  }
  return m;
}

/* Only the marked calls are visited: a pass over the whole batch per
 * receive made a batch's decisions quadratic in its size. */
static void clear_marks(struct siox_mw *w) {
  for (size_t i = 0; i < w->nmarks; i++)
    if (w->calls[w->marks[i]].in_memory == 2) w->calls[w->marks[i]].in_memory = 1;
  w->nmarks = 0;
}

/* The batch's senders that are candidates of a receive the SQL matcher
 * takes over must be new to it too, or it would not see them. */
static void drop_new_senders(struct siox_mw *w) {
  for (size_t i = 0; i < w->nmarks; i++)
    if (w->calls[w->marks[i]].in_memory == 2) w->calls[w->marks[i]].in_memory = 0;
  w->nmarks = 0;
}

static int same_link(const struct siox_link *a, const struct siox_link *b) {
  return a->parent == b->parent && a->confidence == b->confidence && a->overlap == b->overlap && a->flags == b->flags;
}

static const struct siox_link *with_parent(const struct siox_link *l, size_t n, int64_t parent) {
  for (size_t i = 0; i < n; i++)
    if (l[i].parent == parent) return &l[i];
  return NULL;
}

/* r's new links are w->links[0..m): out gets what changed since r's last
 * decision (links to upsert, stale ones). */
static int store(struct siox_mw *w, struct entry *r, size_t m, struct siox_mw_out *out) {
  const struct siox_link *nl = w->links, *ol = r->links;
  size_t on = r->nlinks;
  if (grow((void **)&out->links, &out->cap_links, out->nlinks + m, sizeof *out->links) ||
      grow((void **)&out->stale, &out->cap_stale, out->nstale + on, sizeof *out->stale))
    return -ENOMEM;
  for (size_t i = 0; i < m; i++) {
    const struct siox_link *was = with_parent(ol, on, nl[i].parent);
    if (!was || !same_link(was, &nl[i]))
      out->links[out->nlinks++] = (struct siox_mw_link){nl[i].parent, r->aid, nl[i].confidence, nl[i].overlap, nl[i].flags, !was};
  }
  for (size_t i = 0; i < on; i++)
    if (!with_parent(nl, m, ol[i].parent)) out->stale[out->nstale++] = (struct siox_mw_link){.parent = ol[i].parent, .child = r->aid};
  /* A receive decided by the window is its activity's only receive record
   * (objects.c's window_receive), and only the window links it: its row
   * is matched exactly when the window's last decision gave it a link. */
  if (!(r->flags & F_NEW)) out->unmatched += (m == 0) - (on == 0);
  struct siox_link *keep = m ? malloc(m * sizeof *keep) : NULL;
  if (m && !keep) return -ENOMEM;
  if (m) memcpy(keep, nl, m * sizeof *keep);
  free(r->links);
  r->links = keep, r->nlinks = (uint32_t)m;
  return 0;
}

/* Decides r's links (out), or hands r to the SQL matcher. Returns 0 or
 * -ENOMEM. */
static int decide(struct siox_mw *w, struct entry *r, struct siox_mw_out *out) {
  struct gather g = {r, 0};
  w->ncand = 0;
  clear_marks(w);
  int rc = visit(w, r->object, 'S', r->offset, r->length, gather_one, &g);
  if (rc) return rc;
  if (g.sql || !r_complete(w, r)) {
    r->flags |= F_SQL;
    drop_new_senders(w);
    return 0;
  }
  clear_marks(w);
  size_t n = dedup(w->cand, w->ncand, (uint64_t)r->length);
  if (grow((void **)&w->links, &w->cap_links, n + 1, sizeof *w->links)) return -ENOMEM;
  size_t m = siox_link_confidence(w->cand, n, (uint64_t)r->length, w->links);
  return store(w, r, m, out);
}

/* ---- a new sender meets the receives stored before it --------------------------- */

struct meet {
  struct entry *s;
  struct siox_mw_call *call;
};

static int meet_one(struct siox_mw *w, struct entry *r, void *ctx) {
  struct meet *m = ctx;
  struct siox_link_cand c;
  if (r->flags & F_NEW) return 0; /* decided with this batch's senders */
  if (r->flags & F_SQL) {
    if (near(w, m->s, r)) m->call->in_memory = 0;
    return 0;
  }
  if (!candidate(w, m->s, r, &c)) return 0;
  if (!r_complete(w, r)) {
    r->flags |= F_SQL, m->call->in_memory = 0;
    return 0;
  }
  if (r->flags & F_DIRTY) return 0;
  if (grow((void **)&w->dirty, &w->cap_dirty, w->ndirty + 1, sizeof *w->dirty)) return -ENOMEM;
  r->flags |= F_DIRTY;
  w->dirty[w->ndirty++] = r->id;
  return 0;
}

/* ---- API ----------------------------------------------------------------------------- */

struct siox_mw *siox_mw_new(size_t cap, int64_t retain_ns, int64_t late_ns) {
  struct siox_mw *w = calloc(1, sizeof *w);
  if (!w || (cap & (cap - 1)) || !(w->ring = malloc(cap * sizeof *w->ring))) return free(w), NULL;
  w->mask = cap - 1, w->retain = retain_ns, w->late = late_ns;
  w->floor = w->max_end = INT64_MIN;
  return w;
}

static void forget(struct siox_mw *w) {
  for (uint64_t id = w->head; id < w->next; id++) {
    struct entry *e = &w->ring[id & w->mask];
    free(e->links), e->links = NULL, e->nlinks = 0;
  }
  for (size_t i = 0; i < w->nlists; i++) free(w->lists[i].ids);
  free(w->lists), free(w->slots);
  w->lists = NULL, w->slots = NULL;
  w->nlists = w->cap_lists = w->nslots = w->used = 0;
  w->head = w->next;
  w->ndirty = 0;
}

void siox_mw_free(struct siox_mw *w) {
  if (!w) return;
  forget(w);
  for (uint32_t i = 0; i < w->nnames; i++) free(w->names[i].s);
  free(w->names), free(w->daemons), free(w->cand), free(w->links), free(w->dirty), free(w->marks), free(w->ring), free(w);
}

int siox_mw_started(const struct siox_mw *w) { return w->started; }

void siox_mw_start(struct siox_mw *w, int64_t floor, int64_t max_unc) {
  if (floor > w->floor) w->floor = floor;
  if (max_unc > w->max_unc) w->max_unc = max_unc;
  w->started = 1;
}

void siox_mw_reset(struct siox_mw *w) {
  forget(w);
  if (w->max_end != INT64_MIN && w->max_end + 1 > w->floor) w->floor = w->max_end + 1;
}

uint32_t siox_mw_daemon(struct siox_mw *w, uint64_t daemon_id, int64_t unc_ns) {
  uint32_t i = 0;
  while (i < w->ndaemons && w->daemons[i].id != daemon_id) i++;
  if (i == w->ndaemons) {
    struct daemon *d = realloc(w->daemons, (w->ndaemons + 1) * sizeof *d);
    if (!d) return UINT32_MAX;
    w->daemons = d, w->ndaemons++;
    d[i].id = daemon_id;
  }
  w->daemons[i].unc = unc_ns;
  if (unc_ns > w->max_unc) w->max_unc = unc_ns;
  return i;
}

uint32_t siox_mw_intern(struct siox_mw *w, const char *s, int wildcard) {
  if (wildcard && (!s[0] || strcmp(s, "*") == 0)) return 0;
  for (uint32_t i = 0; i < w->nnames; i++)
    if (strcmp(w->names[i].s, s) == 0) return i + 1;
  if (w->nnames == w->cap_names) {
    uint32_t n = w->cap_names ? 2 * w->cap_names : 16;
    struct name *p = realloc(w->names, n * sizeof *p);
    if (!p) return UINT32_MAX;
    w->names = p, w->cap_names = n;
  }
  if (!(w->names[w->nnames].s = strdup(s))) return UINT32_MAX;
  return ++w->nnames;
}

static int batch(struct siox_mw *w, struct siox_mw_call *calls, size_t n, struct siox_mw_out *out) {
  struct entry **e = calloc(n + 1, sizeof *e);
  int rc = e ? 0 : -ENOMEM;
  w->calls = calls, w->ndirty = 0, w->nmarks = 0;
  for (size_t i = 0; rc == 0 && i < n; i++) {
    struct siox_mw_call *c = &calls[i];
    struct entry src = {.aid = c->aid, .object = c->object, .offset = c->offset, .length = c->length,
                        .start = c->start, .end = c->end, .hw = c->hw, .sw = c->sw, .daemon = c->daemon,
                        .kind = c->kind, .flags = F_NEW, .call = (uint32_t)i};
    c->in_memory = 1;
    if (!(e[i] = add(w, &src))) rc = -ENOMEM;
  }
  /* Flags after every add: an add may evict and so raise the floor. */
  for (size_t i = 0; rc == 0 && i < n; i++)
    if (e[i]->kind == 'S' && !s_complete(w, e[i])) calls[i].in_memory = 0;
  for (size_t i = 0; rc == 0 && i < n; i++) {
    if (e[i]->kind != 'R') continue;
    rc = decide(w, e[i], out);
    if (e[i]->flags & F_SQL) calls[i].in_memory = 0;
  }
  for (size_t i = 0; rc == 0 && i < n; i++) {
    if (e[i]->kind != 'S') continue;
    struct meet m = {e[i], &calls[i]};
    rc = visit(w, e[i]->object, 'R', e[i]->offset, e[i]->length, meet_one, &m);
  }
  for (size_t i = 0; rc == 0 && i < w->ndirty; i++) {
    struct entry *r = get(w, w->dirty[i]);
    if (!r) continue;
    r->flags &= (uint8_t)~F_DIRTY;
    rc = decide(w, r, out);
  }
  for (size_t i = 0; e && i < n; i++)
    if (e[i]) e[i]->flags &= (uint8_t)~F_NEW;
  free(e);
  w->calls = NULL;
  return rc;
}

int siox_mw_batch(struct siox_mw *w, struct siox_mw_call *calls, size_t n, struct siox_mw_out *out) {
  size_t nl = out->nlinks, ns = out->nstale;
  int64_t um = out->unmatched;
  /* A batch larger than half the window would evict itself while it is
   * decided: the SQL matcher takes it (never at the default sizes). */
  int rc = 2 * n > w->mask + 1 ? -ENOSPC : batch(w, calls, n, out);
  if (rc) {
    for (size_t i = 0; i < n; i++) /* they go to SQL: the floor must rise above them */
      if (calls[i].end > w->max_end) w->max_end = calls[i].end;
    siox_mw_reset(w);
    out->nlinks = nl, out->nstale = ns, out->unmatched = um;
    for (size_t i = 0; i < n; i++) calls[i].in_memory = 0;
    return rc;
  }
  evict(w);
  return 0;
}

void siox_mw_ghost(struct siox_mw *w, char kind, int64_t object, int64_t start, int64_t end, int64_t offset,
                   int64_t length) {
  if (end < w->floor) return; /* nothing the window decides can meet it */
  struct entry src = {.aid = 0, .object = object, .offset = offset, .length = length, .start = start, .end = end,
                      .kind = kind, .flags = F_SQL};
  if (!add(w, &src)) siox_mw_reset(w);
  else evict(w);
}

/* Receives of object: the SQL matcher's from now on. */
static void hand_over(struct siox_mw *w, int64_t object) {
  struct list *l = find(w, object, 'R', B_ALL, 0);
  if (!l) return;
  trim(w, l);
  for (uint32_t i = l->begin; i < l->len; i++) {
    struct entry *e = get(w, l->ids[i]);
    if (e) e->flags |= F_SQL;
  }
}

void siox_mw_merge(struct siox_mw *w, int64_t loser, int64_t win) {
  static const char kinds[] = {'S', 'R'};
  /* The SQL matcher takes the moved calls as new and decides again the
   * receives near them, with links the window would not know of: the
   * receives of both objects are its own from now on (merges come early
   * in a file's life, so few receives are concerned). */
  hand_over(w, loser), hand_over(w, win);
  for (int k = 0; k < 2; k++) {
    struct list *all = find(w, loser, kinds[k], B_ALL, 0);
    if (!all) continue;
    trim(w, all);
    size_t n = all->len - all->begin;
    uint64_t *ids = malloc((n + 1) * sizeof *ids);
    if (!ids) return siox_mw_reset(w);
    if (n) memcpy(ids, all->ids + all->begin, n * sizeof *ids);
    for (size_t i = 0; i < n; i++) {
      struct entry *e = get(w, ids[i]);
      if (!e) continue;
      int64_t b0, b1;
      blocks(e->offset, e->length, &b0, &b1);
      for (int64_t b = b0; b <= b1; b++) {
        struct list *l = find(w, loser, e->kind, b, 0);
        if (l) l->begin = l->len = 0;
      }
      e->object = win;
      if (index_add(w, e)) {
        free(ids);
        return siox_mw_reset(w);
      }
    }
    all = find(w, loser, kinds[k], B_ALL, 0);
    if (all) all->begin = all->len = 0;
    free(ids);
  }
}

void siox_mw_out_free(struct siox_mw_out *o) {
  free(o->links), free(o->stale);
  memset(o, 0, sizeof *o);
}
