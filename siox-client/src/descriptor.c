/*
 * Records written at once into the calling thread's ring, beside the
 * activities: string attributes and descriptor events (create, map, send,
 * receive, release). Slower than the numeric hot path (a string copy), but
 * still free of locks, system calls and allocation.
 */
#include "client.h"

#define PAD8(n) (((size_t)(n) + 7u) & ~(size_t)7u)

/* Writes a record built on the stack; returns 0 or a negative errno. */
static int emit(const void *rec, size_t bytes) {
  struct siox__thread *t = siox__thread_get();
  if (!t) return 0; /* recording is off: nothing to do, by design */
  if (!siox__enter(t)) return -EBUSY;
  int rc = siox__ring_write(t, rec, (uint32_t)bytes);
  siox__leave(t);
  return rc;
}

void siox_activity_attr_str(siox_aid aid, uint32_t attr, const char *v) {
  const struct siox_attr_info *info = siox_attr_lookup(attr);
  if (aid == 0 || !v || !info || info->type != SIOX_VT_STR) return;
  size_t len = strnlen(v, SIOX_CW_MAX_VALUE + 1);
  if (len > SIOX_CW_MAX_VALUE) { /* never cut a value short: count it lost */
    struct siox__thread *t = siox__self;
    if (t) siox__bump(&t->n_dropped);
    return;
  }
  _Alignas(8) uint8_t rec[sizeof(struct siox_cw_rec_hdr) + sizeof(struct siox_cw_attr_str) + SIOX_CW_MAX_VALUE];
  size_t total = sizeof(struct siox_cw_rec_hdr) + sizeof(struct siox_cw_attr_str) + PAD8(len);
  struct siox_cw_rec_hdr h = {SIOX_REC_ATTR_STR, (uint16_t)(total / 8), attr};
  struct siox_cw_attr_str f = {aid, (uint32_t)len, 0};
  memcpy(rec, &h, sizeof h);
  memcpy(rec + sizeof h, &f, sizeof f);
  memcpy(rec + sizeof h + sizeof f, v, len);
  memset(rec + sizeof h + sizeof f + len, 0, PAD8(len) - len);
  emit(rec, total);
}

/* Checks d against its ontology type: a descriptor type (has a scope), an
 * integer for u64/i64 types, 1..max bytes for str/bytes types. */
static int desc_ok(const siox_desc *d) {
  const struct siox_attr_info *info = d ? siox_attr_lookup(d->type) : NULL;
  if (!info || info->scope == SIOX_SCOPE_NONE) return 0;
  switch (info->type) {
  case SIOX_VT_U64:
  case SIOX_VT_I64: return d->len == 0;
  case SIOX_VT_STR: return d->len > 0 && d->len <= SIOX_CW_MAX_VALUE && d->v.ptr;
  case SIOX_VT_BYTES: return d->len > 0 && d->len <= SIOX_CW_MAX_DESC_BYTES && d->v.ptr;
  default: return 0;
  }
}

/* Appends one descriptor value at p; returns bytes written. */
static size_t put_value(uint8_t *p, const siox_desc *d) {
  struct siox_cw_desc_value v = {d->type, d->len, d->len ? 0 : d->v.u64};
  memcpy(p, &v, sizeof v);
  if (d->len) {
    memcpy(p + sizeof v, d->v.ptr, d->len);
    memset(p + sizeof v + d->len, 0, PAD8(d->len) - d->len);
  }
  return sizeof v + PAD8(d->len);
}

static int desc_record(enum siox_cw_desc_kind kind, siox_aid aid, uint32_t node, const siox_desc *a,
                       const siox_desc *b, uint64_t offset, uint64_t len) {
  if (!desc_ok(a) || (b && !desc_ok(b))) return -EINVAL;
  _Alignas(8) uint8_t rec[SIOX_REC_MAX_BYTES];
  size_t off = sizeof(struct siox_cw_rec_hdr);
  struct siox_cw_desc f = {aid, node, b ? 2 : 1, offset, len};
  memcpy(rec + off, &f, sizeof f);
  off += sizeof f;
  off += put_value(rec + off, a);
  if (b) off += put_value(rec + off, b);
  struct siox_cw_rec_hdr h = {SIOX_REC_DESC, (uint16_t)(off / 8), kind};
  memcpy(rec, &h, sizeof h);
  return emit(rec, off);
}

int siox_descriptor_create(siox_unid node, siox_aid aid, const siox_desc *d) {
  if (siox__ensure() && !siox__node_valid(node)) return -EINVAL;
  return desc_record(SIOX_DESC_CREATE, aid, node, d, NULL, 0, 0);
}

int siox_descriptor_map(siox_unid node, siox_aid aid, const siox_desc *from, const siox_desc *to) {
  if (!to) return -EINVAL;
  if (siox__ensure() && !siox__node_valid(node)) return -EINVAL;
  return desc_record(SIOX_DESC_MAP, aid, node, from, to, 0, 0);
}

int siox_descriptor_send(siox_aid aid, siox_target_id target, const siox_desc *d, uint64_t offset,
                         uint64_t len) {
  if (siox__ensure() && !siox__target_valid(target)) return -EINVAL;
  return desc_record(SIOX_DESC_SEND, aid, target, d, NULL, offset, len);
}

int siox_descriptor_receive(siox_aid aid, const siox_desc *d, uint64_t offset, uint64_t len) {
  return desc_record(SIOX_DESC_RECEIVE, aid, 0, d, NULL, offset, len);
}

int siox_descriptor_release(siox_unid node, siox_aid aid, const siox_desc *d) {
  if (siox__ensure() && !siox__node_valid(node)) return -EINVAL;
  return desc_record(SIOX_DESC_RELEASE, aid, node, d, NULL, 0, 0);
}
