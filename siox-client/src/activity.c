/*
 * The hot path: activity start/attributes/stop. An open activity lives on the
 * calling thread's stack (struct siox__open, already in wire layout); stop
 * copies it into the thread's ring. No lock, no system call, no allocation
 * and no atomic read-modify-write here (the thread's first call aside).
 */
#include "client.h"

#define ACT_FIXED (sizeof(struct siox_cw_rec_hdr) + sizeof(struct siox_cw_activity))

/* Index of aid on t's stack, searched from the top, or -1. */
static inline int stack_find(const struct siox__thread *t, siox_aid aid) {
  for (int i = (int)t->depth - 1; i >= 0; i--)
    if (t->stack[i].act.aid == aid) return i;
  return -1;
}

static inline siox_aid start(siox_type_id type, siox_aid parent, int explicit_parent) {
  /* The library's own I/O (wrapped by the layers above) is never traced:
   * checked here so that a wrapper needs no call of its own for it. */
  if (SIOX_UNLIKELY(siox__in_lib)) return 0;
  struct siox__thread *t = siox__thread_get();
  if (SIOX_UNLIKELY(t == NULL)) return 0;
  if (SIOX_UNLIKELY(!siox__enter(t))) return 0;
  siox_aid aid = 0;
  uint32_t ntypes = atomic_load_explicit(&siox__ntypes, memory_order_relaxed);
  if (SIOX_UNLIKELY(type - 1u >= ntypes || t->depth == SIOX_STACK_DEPTH ||
                    (aid = siox__aid_take(t)) == 0)) {
    siox__bump(&t->n_dropped);
    goto out;
  }
  struct siox__open *o = &t->stack[t->depth];
  o->hdr.type = SIOX_REC_ACTIVITY;
  o->hdr.a = type;
  o->act.aid = aid;
  o->act.parent = explicit_parent ? parent : (t->depth ? t->stack[t->depth - 1].act.aid : 0);
  o->act.err = 0;
  o->act.nattr = 0;
  t->depth++;
  o->act.t_start = siox__clock_now(); /* last: bookkeeping stays outside */
out:
  siox__leave(t);
  return aid;
}

SIOX_HOT siox_aid siox_activity_start(siox_type_id type) {
  return start(type, 0, 0);
}

siox_aid siox_activity_start_child(siox_type_id type, siox_aid parent) {
  return start(type, parent, 1);
}

/* Appends one numeric attribute to an open activity of this thread; an aid
 * that is not open here, or a full attribute list, counts a drop. */
static inline void attr_add(siox_aid aid, uint32_t attr, uint32_t vtype, uint64_t bits) {
  struct siox__thread *t = siox__self;
  if (SIOX_UNLIKELY(t == NULL || aid == 0 || !siox__enter(t))) return;
  int i = (t->depth && t->stack[t->depth - 1].act.aid == aid) ? (int)t->depth - 1 : stack_find(t, aid);
  struct siox__open *o = i >= 0 ? &t->stack[i] : NULL;
  if (SIOX_UNLIKELY(o == NULL || o->act.nattr == SIOX_CW_MAX_ATTRS)) {
    siox__bump(&t->n_dropped);
  } else {
    struct siox_cw_attr *a = &o->attrs[o->act.nattr++];
    a->attr = attr;
    a->vtype = vtype;
    a->v.u64 = bits;
  }
  siox__leave(t);
}

void siox_activity_attr_u64(siox_aid aid, uint32_t attr, uint64_t v) {
  attr_add(aid, attr, SIOX_VT_U64, v);
}

void siox_activity_attr_i64(siox_aid aid, uint32_t attr, int64_t v) {
  attr_add(aid, attr, SIOX_VT_I64, (uint64_t)v);
}

void siox_activity_attr_f64(siox_aid aid, uint32_t attr, double v) {
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  attr_add(aid, attr, SIOX_VT_F64, bits);
}

void siox_activity_error(siox_aid aid, int32_t err) {
  struct siox__thread *t = siox__self;
  if (SIOX_UNLIKELY(t == NULL || aid == 0 || !siox__enter(t))) return;
  int i = stack_find(t, aid);
  if (i >= 0) t->stack[i].act.err = err;
  siox__leave(t);
}

/* Writes slot i of t's stack, ended at `now` and followed by the n extra
 * attributes at more, to the ring, and pops it. */
static inline void stop_slot(struct siox__thread *t, int i, uint64_t now, const struct siox_attr *more, unsigned n) {
  struct siox__open *o = &t->stack[i];
  uint32_t own = (uint32_t)(ACT_FIXED + o->act.nattr * sizeof(struct siox_cw_attr));
  uint32_t extra = (uint32_t)(n * sizeof(struct siox_cw_attr));
  o->act.t_end = now;
  o->act.nattr += n;
  o->hdr.words = (uint16_t)((own + extra) / 8);
  if (siox__ring_write2(t, o, own, more, extra) == 0) siox__bump(&t->n_activities);
  siox__start_check(t, now);
  /* Out-of-order stop (nonblocking I/O): close the gap. */
  if ((uint32_t)i != t->depth - 1)
    memmove(&t->stack[i], &t->stack[i + 1], (t->depth - 1 - (uint32_t)i) * sizeof t->stack[0]);
  t->depth--;
}

SIOX_HOT void siox_activity_stop(siox_aid aid) {
  uint64_t now = siox__clock_now();
  struct siox__thread *t = siox__self;
  if (SIOX_UNLIKELY(t == NULL || aid == 0 || !siox__enter(t))) return;
  int i = (t->depth && t->stack[t->depth - 1].act.aid == aid) ? (int)t->depth - 1 : stack_find(t, aid);
  if (SIOX_LIKELY(i >= 0)) stop_slot(t, i, now, NULL, 0);
  siox__leave(t);
}

SIOX_HOT void siox_activity_stop_attrs(siox_aid aid, const struct siox_attr *attrs, unsigned n, int32_t err) {
  _Static_assert(sizeof(struct siox_attr) == sizeof(struct siox_cw_attr), "wire layout");
  uint64_t now = siox__clock_now();
  struct siox__thread *t = siox__self;
  if (SIOX_UNLIKELY(t == NULL || aid == 0 || !siox__enter(t))) return;
  int i = (t->depth && t->stack[t->depth - 1].act.aid == aid) ? (int)t->depth - 1 : stack_find(t, aid);
  if (SIOX_LIKELY(i >= 0)) {
    struct siox__open *o = &t->stack[i];
    unsigned room = SIOX_CW_MAX_ATTRS - o->act.nattr, take = n < room ? n : room;
    for (unsigned k = take; k < n; k++) siox__bump(&t->n_dropped);
    if (err) o->act.err = err;
    stop_slot(t, i, now, attrs, take);
  }
  siox__leave(t);
}

siox_aid siox_activity_current(void) {
  struct siox__thread *t = siox__self;
  return (t && t->depth) ? t->stack[t->depth - 1].act.aid : 0;
}
