/*
 * For fuzz_server_decode: builds a protobuf Block from a recipe of fuzz
 * bytes, setting every field of every message directly (protobuf-c structs),
 * with no regard for what the encoder would allow: proc indices, kinds, value
 * cases and counts, activity column lengths are all the fuzzer's choice.
 * Byte mutations of a packed protobuf rarely get past its length prefixes
 * and default-omitted fields; this reaches each check of the decoder's
 * validation with one changed byte.
 */
#ifndef SIOX_FUZZ_PB_RECIPE_H
#define SIOX_FUZZ_PB_RECIPE_H

#include "fuzz_common.h"
#include "siox.pb-c.h"

#define PB_MAX_ALLOCS 512

struct pb_recipe {
  struct fuzz_reader r;
  void *allocs[PB_MAX_ALLOCS];
  size_t n_allocs;
};

static inline void *pb_alloc(struct pb_recipe *c, size_t n) {
  FUZZ_CHECK(c->n_allocs < PB_MAX_ALLOCS, "recipe allocations");
  void *p = calloc(1, n ? n : 1);
  FUZZ_CHECK(p != NULL, "calloc");
  return c->allocs[c->n_allocs++] = p;
}

static inline void pb_recipe_free(struct pb_recipe *c) {
  for (size_t i = 0; i < c->n_allocs; i++) free(c->allocs[i]);
  c->n_allocs = 0;
}

/* A small number most of the time (indices, counts), any 32 bits when the
 * selector byte says so. */
static inline uint32_t pb_u32(struct pb_recipe *c) {
  uint8_t sel = fuzz_u8(&c->r);
  return sel >= 0xf0 ? fuzz_u32(&c->r) : sel % 8u;
}

static inline uint64_t pb_u64(struct pb_recipe *c) {
  uint8_t sel = fuzz_u8(&c->r);
  return sel >= 0xf0 ? fuzz_u64(&c->r) : (uint64_t)(int8_t)sel;
}

static inline char *pb_str(struct pb_recipe *c) {
  size_t len;
  const char *s = fuzz_bytes(&c->r, 32, &len);
  char *p = pb_alloc(c, len + 1);
  memcpy(p, s, len);
  return p; /* protobuf-c packs up to the first NUL */
}

static inline size_t pb_count(struct pb_recipe *c, size_t max) { return fuzz_u8(&c->r) % (max + 1); }

/* n pointers to n zeroed messages of size sz, each initialised. */
static inline void **pb_msgs(struct pb_recipe *c, size_t n, size_t sz, void (*init)(void *)) {
  void **v = pb_alloc(c, n * sizeof *v);
  for (size_t i = 0; i < n; i++) init(v[i] = pb_alloc(c, sz));
  return v;
}

static inline Siox__Value *pb_value(struct pb_recipe *c) {
  Siox__Value *v = pb_alloc(c, sizeof *v);
  siox__value__init(v);
  v->attr = pb_u32(c);
  switch (fuzz_u8(&c->r) % 5) {
  case 0: break; /* no case set */
  case 1: v->v_case = SIOX__VALUE__V_U, v->u = pb_u64(c); break;
  case 2: v->v_case = SIOX__VALUE__V_I, v->i = (int64_t)pb_u64(c); break;
  case 3: v->v_case = SIOX__VALUE__V_F, v->f = (double)(int64_t)pb_u64(c) / 3; break;
  default: {
    size_t len;
    const char *s = fuzz_bytes(&c->r, 64, &len);
    v->v_case = SIOX__VALUE__V_B, v->b.len = len, v->b.data = pb_alloc(c, len);
    memcpy(v->b.data, s, len);
  }
  }
  return v;
}

#define PB_INIT(fn) ((void (*)(void *))(fn))

static inline void pb_dicts(struct pb_recipe *c, Siox__Block *b) {
  b->n_processes = pb_count(c, 4);
  b->processes = (Siox__Process **)pb_msgs(c, b->n_processes, sizeof(Siox__Process), PB_INIT(siox__process__init));
  for (size_t i = 0; i < b->n_processes; i++) {
    Siox__Process *p = b->processes[i];
    p->pid = pb_u32(c), p->uid = pb_u32(c), p->nonce = pb_u64(c);
    p->host = pb_str(c), p->exe = pb_str(c), p->args = pb_str(c), p->job = pb_str(c);
  }
  b->n_nodes = pb_count(c, 4);
  b->nodes = (Siox__Node **)pb_msgs(c, b->n_nodes, sizeof(Siox__Node), PB_INIT(siox__node__init));
  for (size_t i = 0; i < b->n_nodes; i++) {
    Siox__Node *n = b->nodes[i];
    n->proc = pb_u32(c), n->unid = pb_u32(c), n->hwid = pb_str(c), n->swid = pb_str(c), n->iid = pb_str(c);
  }
  b->n_edges = pb_count(c, 4);
  b->edges = (Siox__Edge **)pb_msgs(c, b->n_edges, sizeof(Siox__Edge), PB_INIT(siox__edge__init));
  for (size_t i = 0; i < b->n_edges; i++)
    b->edges[i]->proc = pb_u32(c), b->edges[i]->from = pb_u32(c), b->edges[i]->to = pb_u32(c);
  b->n_types = pb_count(c, 4);
  b->types = (Siox__ActivityType **)pb_msgs(c, b->n_types, sizeof(Siox__ActivityType), PB_INIT(siox__activity_type__init));
  for (size_t i = 0; i < b->n_types; i++) {
    Siox__ActivityType *t = b->types[i];
    t->proc = pb_u32(c), t->type_id = pb_u32(c), t->unid = pb_u32(c), t->name = pb_str(c);
  }
  b->n_targets = pb_count(c, 4);
  b->targets = (Siox__Target **)pb_msgs(c, b->n_targets, sizeof(Siox__Target), PB_INIT(siox__target__init));
  for (size_t i = 0; i < b->n_targets; i++) {
    Siox__Target *t = b->targets[i];
    t->proc = pb_u32(c), t->target_id = pb_u32(c), t->hwid = pb_str(c), t->swid = pb_str(c);
  }
}

static inline void pb_records(struct pb_recipe *c, Siox__Block *b) {
  b->n_node_attrs = pb_count(c, 4);
  b->node_attrs = (Siox__NodeAttr **)pb_msgs(c, b->n_node_attrs, sizeof(Siox__NodeAttr), PB_INIT(siox__node_attr__init));
  for (size_t i = 0; i < b->n_node_attrs; i++) {
    Siox__NodeAttr *a = b->node_attrs[i];
    a->proc = pb_u32(c), a->unid = pb_u32(c);
    a->value = fuzz_u8(&c->r) % 8 ? pb_value(c) : NULL; /* a missing value */
  }
  b->n_string_attrs = pb_count(c, 4);
  b->string_attrs = (Siox__StringAttr **)pb_msgs(c, b->n_string_attrs, sizeof(Siox__StringAttr), PB_INIT(siox__string_attr__init));
  for (size_t i = 0; i < b->n_string_attrs; i++) {
    Siox__StringAttr *a = b->string_attrs[i];
    a->proc = pb_u32(c), a->aid = pb_u64(c), a->attr = pb_u32(c);
    size_t len;
    const char *s = fuzz_bytes(&c->r, 64, &len);
    a->value.len = len, a->value.data = pb_alloc(c, len);
    memcpy(a->value.data, s, len);
  }
  b->n_descriptors = pb_count(c, 4);
  b->descriptors = (Siox__Descriptor **)pb_msgs(c, b->n_descriptors, sizeof(Siox__Descriptor), PB_INIT(siox__descriptor__init));
  for (size_t i = 0; i < b->n_descriptors; i++) {
    Siox__Descriptor *d = b->descriptors[i];
    d->proc = pb_u32(c), d->kind = pb_u32(c), d->aid = pb_u64(c), d->node = pb_u32(c);
    d->offset = pb_u64(c), d->length = pb_u64(c);
    d->n_values = pb_count(c, 3);
    d->values = pb_alloc(c, d->n_values * sizeof *d->values);
    for (size_t k = 0; k < d->n_values; k++) d->values[k] = pb_value(c);
  }
  b->n_stats = pb_count(c, 4);
  b->stats = (Siox__Stats **)pb_msgs(c, b->n_stats, sizeof(Siox__Stats), PB_INIT(siox__stats__init));
  for (size_t i = 0; i < b->n_stats; i++)
    b->stats[i]->proc = pb_u32(c), b->stats[i]->activities = pb_u64(c), b->stats[i]->dropped = pb_u64(c);
}

/* A column of n values, or of a length of its own when the next byte says
 * so (columns of unequal length are what the decoder must refuse). */
#define PB_COLUMN(c, pa, name, n, T, gen)                                   \
  do {                                                                      \
    size_t len_ = fuzz_u8(&(c)->r) >= 0xf8 ? pb_count(c, 16) : (n);        \
    (pa)->n_##name = len_;                                                  \
    (pa)->name = pb_alloc(c, len_ * sizeof(T));                             \
    for (size_t i_ = 0; i_ < len_; i_++) (pa)->name[i_] = (T)(gen);         \
  } while (0)

static inline void pb_activities(struct pb_recipe *c, Siox__Block *b) {
  if (!(fuzz_u8(&c->r) & 1)) return;
  Siox__Activities *a = pb_alloc(c, sizeof *a);
  siox__activities__init(a);
  b->activities = a;
  size_t n = pb_count(c, 16), m = pb_count(c, 16);
  PB_COLUMN(c, a, proc_delta, n, int64_t, pb_u64(c));
  PB_COLUMN(c, a, aid_delta, n, int64_t, pb_u64(c));
  PB_COLUMN(c, a, parent_back, n, int64_t, pb_u64(c));
  PB_COLUMN(c, a, type_delta, n, int64_t, pb_u64(c));
  PB_COLUMN(c, a, start_delta, n, int64_t, pb_u64(c));
  PB_COLUMN(c, a, duration, n, uint64_t, pb_u64(c));
  PB_COLUMN(c, a, err, n, int32_t, pb_u32(c));
  PB_COLUMN(c, a, nattr, n, uint32_t, pb_u32(c));
  PB_COLUMN(c, a, attr_id, m, uint32_t, pb_u32(c));
  PB_COLUMN(c, a, attr_delta, m, int64_t, pb_u64(c));
  PB_COLUMN(c, a, attr_is_f64, m, protobuf_c_boolean, fuzz_u8(&c->r) & 1);
  PB_COLUMN(c, a, attr_vtype, m, uint32_t, pb_u32(c));
  PB_COLUMN(c, a, attr_f64, m, double, (double)(int64_t)pb_u64(c) / 7);
}

/* The recipe's Block, packed. Returns a malloc'd buffer (*len bytes). */
static inline uint8_t *pb_recipe_pack(struct pb_recipe *c, size_t *len) {
  Siox__Block b = SIOX__BLOCK__INIT;
  pb_dicts(c, &b);
  pb_records(c, &b);
  pb_activities(c, &b);
  *len = siox__block__get_packed_size(&b);
  uint8_t *out = malloc(*len ? *len : 1);
  FUZZ_CHECK(out != NULL, "malloc");
  FUZZ_CHECK(siox__block__pack(&b, out) == *len, "pack size");
  pb_recipe_free(c);
  return out;
}

#endif
