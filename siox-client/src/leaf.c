/*
 * The rare steps of a leaf activity (leaf.h): the record the inline path
 * declined, and an id taken before the record.
 */
#include "leaf.h"

void siox__leaf_slow(siox_type_id type, siox_aid aid, uint64_t t0, uint64_t now, int32_t err,
                     const struct siox_attr *attrs, uint32_t nattr) {
  struct siox__thread *t = siox__self;
  if (t == NULL || !siox__enter(t)) return; /* enter counts the drop */
  uint32_t ntypes = atomic_load_explicit(&siox__ntypes, memory_order_relaxed);
  if (type - 1u >= ntypes || nattr > SIOX_CW_MAX_ATTRS || (aid == 0 && (aid = siox__aid_take(t)) == 0)) {
    siox__bump(&t->n_dropped);
    siox__leave(t);
    return;
  }
  uint32_t depth = t->depth;
  struct siox__open rec = {
      .hdr = {SIOX_REC_ACTIVITY, (uint16_t)((SIOX_LEAF_FIXED + nattr * sizeof rec.attrs[0]) / 8), type},
      .act = {aid, depth ? t->stack[depth - 1].act.aid : 0, t0, now, err, nattr},
  };
  _Static_assert(sizeof(struct siox_attr) == sizeof(struct siox_cw_attr), "wire layout");
  memcpy(rec.attrs, attrs, nattr * sizeof rec.attrs[0]);
  /* ring_write2 wraps around the ring's end, or counts a full ring. */
  if (siox__ring_write(t, &rec, (uint32_t)(SIOX_LEAF_FIXED + nattr * sizeof rec.attrs[0])) == 0)
    siox__bump(&t->n_activities);
  siox__start_check(t, now);
  siox__leave(t);
}

siox_aid siox__leaf_aid(void) {
  struct siox__thread *t = siox__self;
  if (t == NULL || !siox__enter(t)) return 0;
  siox_aid aid = siox__aid_take(t);
  if (aid == 0) siox__bump(&t->n_dropped);
  siox__leave(t);
  return aid;
}
