/*
 * Leaf activities: an activity that begins and ends inside one wrapper with
 * nothing recorded beneath it (the POSIX layer's read/write family, whose
 * guard keeps any call made inside from being recorded). It never goes on
 * the thread's stack: the wrapper reads the clock before the real call, and
 * after it writes the whole ACTIVITY record straight into the ring, its
 * attributes stored by the wrapper from registers. Against start + stop
 * this saves the stack slot's stores and loads, a second busy section and
 * a call, and the attribute array the wrapper built for stop to copy.
 * The record is the one stop writes (same wire layout, the parent is the
 * activity on top of the stack), and every failure goes to the slow path,
 * which writes it or counts it dropped: nothing is lost uncounted.
 * For libsiox-posix, which links the client's objects into its own DSO
 * (instrumentation/posix/README.md, "One library"); not an API.
 */
#ifndef SIOX_CLIENT_LEAF_H
#define SIOX_CLIENT_LEAF_H

#include "client.h"

#define SIOX_LEAF_FIXED (sizeof(struct siox_cw_rec_hdr) + sizeof(struct siox_cw_activity))

/* The calling thread's state when it records (attached on first use), or
 * NULL: recording off, or the library's own I/O (never traced). */
static inline __attribute__((always_inline)) struct siox__thread *siox__leaf_thread(void) {
  if (SIOX_UNLIKELY(siox__in_lib)) return NULL;
  return siox__thread_get();
}

/* A record being written: what siox__leaf_close needs. */
struct siox__leaf {
  struct siox__thread *t;
  uint8_t *buf;
  uint64_t mask, tail, head_new, now;
};

/* Opens the ACTIVITY record of a leaf of `type` that ran from t0 to now,
 * with nattr attributes, in t's ring (aid 0: one is taken here). Returns
 * where the caller stores the nattr attributes (16 bytes each; then
 * siox__leaf_close), or NULL with nothing changed: the signal guard is up,
 * the type is unknown, the id block is used up, or the record would not
 * fit before the ring's end or its tail; then siox__leaf_slow. The
 * signal guard is up from here to siox__leaf_close. */
static inline __attribute__((always_inline)) uint8_t *siox__leaf_open(struct siox__leaf *w, struct siox__thread *t,
                                                                    siox_type_id type, siox_aid aid, uint64_t t0,
                                                                    uint64_t now, int32_t err, uint32_t nattr) {
  /* The guard first: a signal handler that records between reading head
   * and raising it would have its record overwritten. */
  if (SIOX_UNLIKELY(t->busy)) return NULL;
  t->busy = 1;
  atomic_signal_fence(memory_order_seq_cst);
  uint8_t *buf = t->buf;
  uint64_t head = t->head, mask = t->mask, tail = t->tail_cache, off = head & mask;
  uint32_t bytes = (uint32_t)(SIOX_LEAF_FIXED + nattr * sizeof(struct siox_cw_attr));
  uint32_t ntypes = atomic_load_explicit(&siox__ntypes, memory_order_relaxed);
  /* One test for the rare cases (no short circuit: one branch). */
  if (SIOX_UNLIKELY((type - 1u >= ntypes) | (mask + 1 - (head - tail) < bytes) | (mask + 1 - off < bytes) |
                    (aid == 0 && t->aid_next == t->aid_end))) {
    siox__leave(t);
    return NULL;
  }
  if (aid == 0) aid = t->aid_next++;
  uint32_t depth = t->depth;
  siox_aid parent = depth ? t->stack[depth - 1].act.aid : 0;
  uint8_t *p = buf + off;
  struct siox_cw_rec_hdr hdr = {SIOX_REC_ACTIVITY, (uint16_t)(bytes / 8), type};
  struct {
    int32_t err;
    uint32_t nattr;
  } tail_word = {err, nattr};
  _Static_assert(sizeof(struct siox_cw_activity) == 40 && offsetof(struct siox_cw_activity, err) == 32 &&
                     sizeof tail_word == 8,
                 "ACTIVITY wire layout");
  __builtin_memcpy(p, &hdr, 8);
  __builtin_memcpy(p + 8, &aid, 8);
  __builtin_memcpy(p + 16, &parent, 8);
  __builtin_memcpy(p + 24, &t0, 8);
  __builtin_memcpy(p + 32, &now, 8);
  __builtin_memcpy(p + 40, &tail_word, 8);
  *w = (struct siox__leaf){t, buf, mask, tail, head + bytes, now};
  return p + SIOX_LEAF_FIXED;
}

/* Stores attribute i of an open record at a (siox__leaf_open's answer). */
static inline __attribute__((always_inline)) void siox__leaf_attr(uint8_t *a, unsigned i, uint32_t attr,
                                                                 uint32_t vtype, uint64_t v) {
  struct {
    uint32_t attr, vtype;
  } w0 = {attr, vtype}; /* struct siox_cw_attr's first word */
  __builtin_memcpy(a + 16 * i, &w0, 8);
  __builtin_memcpy(a + 16 * i + 8, &v, 8);
}

/* Publishes the record and lowers the signal guard. */
static inline __attribute__((always_inline)) void siox__leaf_close(const struct siox__leaf *w) {
  struct siox__thread *t = w->t;
  siox__ring_publish(t, w->buf, w->mask, w->tail, w->head_new);
  siox__bump(&t->n_activities);
  siox__start_check(t, w->now);
  siox__leave(t);
}

/* The record siox__leaf_open declined, written the general way (a wrap
 * around the ring's end, a refill of the id block) or counted dropped
 * (signal guard up, ring full, unknown type, ids used up). */
SIOX_HIDDEN void siox__leaf_slow(siox_type_id type, siox_aid aid, uint64_t t0, uint64_t now, int32_t err,
                                 const struct siox_attr *attrs, uint32_t nattr) __attribute__((cold));
/* An id for a leaf whose id is needed before its record (descriptor events
 * of the call), or 0 (counted dropped). */
SIOX_HIDDEN siox_aid siox__leaf_aid(void) __attribute__((cold));

#endif
