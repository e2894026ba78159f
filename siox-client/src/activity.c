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

/* Inlined into both entry points: siox_activity_start is on every
 * recorded call's path, where a second call and its register saves cost
 * more than the body. */
static inline __attribute__((always_inline)) siox_aid start(siox_type_id type, siox_aid parent,
                                                            int explicit_parent) {
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
  /* depth and the slot in locals: the stores into the slot may alias t,
   * and the compiler would load t->depth and rebuild the address anew. */
  uint32_t depth = t->depth;
  struct siox__open *o = &t->stack[depth];
  o->hdr.type = SIOX_REC_ACTIVITY;
  o->hdr.a = type;
  o->act.aid = aid;
  o->act.parent = explicit_parent ? parent : (depth ? o[-1].act.aid : 0);
  o->act.err = 0;
  o->act.nattr = 0;
  t->depth = depth + 1;
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

/* Copies one 16-byte attribute with two 8-byte moves: the caller built it
 * with 8-byte stores (an array on its stack, just now), and a 16-byte load
 * of two such stores cannot be forwarded from the store buffer (it waits
 * for both to retire). The empty asm keeps the compiler from merging the
 * pair into one 16-byte move again. */
static inline __attribute__((always_inline)) void copy_attr(uint8_t *dst, const uint8_t *src) {
  uint64_t w0, w1;
  __builtin_memcpy(&w0, src, 8);
  __builtin_memcpy(&w1, src + 8, 8);
  __asm__("" : "+r"(w0), "+r"(w1));
  __builtin_memcpy(dst, &w0, 8);
  __builtin_memcpy(dst + 8, &w1, 8);
}

/* Copies n <= SIOX_CW_MAX_ATTRS attributes, unrolled (a loop cost a
 * counter, a compare and a branch per 8 bytes). */
static inline __attribute__((always_inline)) void copy_attrs(uint8_t *dst, const void *src, unsigned n) {
  _Static_assert(SIOX_CW_MAX_ATTRS == 8, "one case per attribute");
  const uint8_t *s = src;
  switch (n) {
  case 8: copy_attr(dst + 112, s + 112); /* fall through */
  case 7: copy_attr(dst + 96, s + 96); /* fall through */
  case 6: copy_attr(dst + 80, s + 80); /* fall through */
  case 5: copy_attr(dst + 64, s + 64); /* fall through */
  case 4: copy_attr(dst + 48, s + 48); /* fall through */
  case 3: copy_attr(dst + 32, s + 32); /* fall through */
  case 2: copy_attr(dst + 16, s + 16); /* fall through */
  case 1: copy_attr(dst, s); /* fall through */
  default: break;
  }
}

/* The ring write of stop_slot when the record fits before the ring's end
 * (all but one in (ring size / record size)): the record is stored from
 * registers and the slot's fields, without patching the slot first (its
 * t_end, nattr and words would be stored and at once loaded back by the
 * copy, each such load stalled on the store buffer). Returns 0, or -1 when
 * the ring's end or its free space is too near: then the caller takes
 * siox__ring_write2, which drops and counts when full. */
static inline __attribute__((always_inline)) int put_direct(struct siox__thread *t, const struct siox__open *o,
                                                           uint64_t now, const struct siox_attr *more,
                                                           unsigned n) {
  uint8_t *buf = t->buf;
  uint64_t head = t->head, mask = t->mask, tail = t->tail_cache, off = head & mask;
  uint32_t own = o->act.nattr, nattr = own + n, bytes = (uint32_t)(ACT_FIXED + nattr * sizeof(struct siox_cw_attr));
  if (SIOX_UNLIKELY(mask + 1 - (head - tail) < bytes || mask + 1 - off < bytes)) return -1;
  uint8_t *p = buf + off;
  /* Built as the wire structs (host byte order), stored whole. */
  struct siox_cw_rec_hdr hdr = {SIOX_REC_ACTIVITY, (uint16_t)(bytes / 8), o->hdr.a};
  struct {
    int32_t err;
    uint32_t nattr;
  } tail_word = {o->act.err, nattr};
  _Static_assert(offsetof(struct siox__open, act) == 8 && offsetof(struct siox_cw_activity, t_end) == 24 &&
                     offsetof(struct siox_cw_activity, err) == 32 && offsetof(struct siox_cw_activity, nattr) == 36 &&
                     sizeof(struct siox_cw_activity) == 40 && sizeof(struct siox_cw_rec_hdr) == 8 &&
                     sizeof tail_word == 8,
                 "ACTIVITY wire layout");
  __builtin_memcpy(p, &hdr, 8);
  __builtin_memcpy(p + 8, &o->act.aid, 8);
  __builtin_memcpy(p + 16, &o->act.parent, 8);
  __builtin_memcpy(p + 24, &o->act.t_start, 8);
  __builtin_memcpy(p + 32, &now, 8);
  __builtin_memcpy(p + 40, &tail_word, 8);
  if (SIOX_UNLIKELY(own)) siox__copy_words(p + ACT_FIXED, (const uint8_t *)o->attrs, own * sizeof(struct siox_cw_attr));
  copy_attrs(p + ACT_FIXED + own * sizeof(struct siox_cw_attr), more, n);
  siox__ring_publish(t, buf, mask, tail, head + bytes);
  return 0;
}

/* Writes slot o of t's stack, ended at `now` and followed by the n extra
 * attributes at more, to the ring (the caller pops it). */
static inline __attribute__((always_inline)) void write_slot(struct siox__thread *t, struct siox__open *o, uint64_t now,
                                                             const struct siox_attr *more, unsigned n) {
  int rc = put_direct(t, o, now, more, n);
  if (SIOX_UNLIKELY(rc != 0)) {
    uint32_t own = (uint32_t)(ACT_FIXED + o->act.nattr * sizeof(struct siox_cw_attr));
    uint32_t extra = (uint32_t)(n * sizeof(struct siox_cw_attr));
    o->act.t_end = now;
    o->act.nattr += n;
    o->hdr.words = (uint16_t)((own + extra) / 8);
    rc = siox__ring_write2(t, o, own, more, extra);
  }
  if (rc == 0) siox__bump(&t->n_activities);
  siox__start_check(t, now);
}

/* Writes slot i of t's stack (see write_slot) and pops it. */
static inline __attribute__((always_inline)) void stop_slot(struct siox__thread *t, int i, uint64_t now,
                                                            const struct siox_attr *more, unsigned n) {
  write_slot(t, &t->stack[i], now, more, n);
  /* Out-of-order stop (nonblocking I/O): close the gap. */
  if (SIOX_UNLIKELY((uint32_t)i != t->depth - 1))
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

/* stop_attrs for an aid below the top of the stack, or with more
 * attributes than the record has room for. */
static __attribute__((noinline, cold)) void stop_attrs_slow(struct siox__thread *t, siox_aid aid, uint64_t now,
                                                            const struct siox_attr *attrs, unsigned n, int32_t err) {
  int i = stack_find(t, aid);
  if (i < 0) return;
  struct siox__open *o = &t->stack[i];
  unsigned room = SIOX_CW_MAX_ATTRS - o->act.nattr, take = n < room ? n : room;
  for (unsigned k = take; k < n; k++) siox__bump(&t->n_dropped);
  if (err) o->act.err = err;
  stop_slot(t, i, now, attrs, take);
}

SIOX_HOT void siox_activity_stop_attrs(siox_aid aid, const struct siox_attr *attrs, unsigned n, int32_t err) {
  _Static_assert(sizeof(struct siox_attr) == sizeof(struct siox_cw_attr), "wire layout");
  uint64_t now = siox__clock_now();
  struct siox__thread *t = siox__self;
  if (SIOX_UNLIKELY(t == NULL || aid == 0 || !siox__enter(t))) return;
  uint32_t top = t->depth - 1; /* UINT32_MAX on an empty stack: fails the first test */
  struct siox__open *o = &t->stack[top < SIOX_STACK_DEPTH ? top : 0];
  /* The wrappers' case: the activity on top, its attributes fit. */
  if (SIOX_LIKELY(top < SIOX_STACK_DEPTH && o->act.aid == aid && n <= SIOX_CW_MAX_ATTRS - o->act.nattr)) {
    if (err) o->act.err = err;
    /* The top itself: the slot's address and the new depth are known
     * (stop_slot would find them again from an index). */
    write_slot(t, o, now, attrs, n);
    t->depth = top;
  } else {
    stop_attrs_slow(t, aid, now, attrs, n, err);
  }
  siox__leave(t);
}

siox_aid siox_activity_current(void) {
  struct siox__thread *t = siox__self;
  return (t && t->depth) ? t->stack[t->depth - 1].act.aid : 0;
}
