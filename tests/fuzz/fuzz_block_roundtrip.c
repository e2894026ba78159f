/*
 * libFuzzer target: encoder -> decoder round trip. The input is a recipe:
 * each step takes an opcode byte and the values that follow it and adds one
 * entry to a block with the builders of protocol/siox_block.h. Most steps
 * keep the block valid (proc indices taken modulo the process count); a step
 * can also break a rule the encoder enforces (proc out of range, a bad
 * vtype, descriptor kind or value count, an attribute slice outside attrs).
 * The target then checks:
 *   - siox_block_encode() refuses (-EINVAL) exactly the blocks that break a
 *     rule, and encodes the rest;
 *   - siox_block_decode() of what it encoded succeeds and gives back the
 *     same block (fuzz_blocks_same), abort()ing on the first difference.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_STEPS 512

struct recipe {
  struct fuzz_reader r;
  struct siox_block *b;
  int invalid; /* a step broke one of the encoder's rules */
};

/* A string of the dictionaries: NULL, or up to 64 bytes of the input. */
static char *take_str(struct recipe *c) {
  size_t len;
  const char *s = fuzz_bytes(&c->r, 64, &len);
  if (len == 0 && (fuzz_u8(&c->r) & 1)) return NULL;
  char *p = siox_block_strdup(c->b, s, len);
  FUZZ_CHECK(p != NULL, "siox_block_strdup");
  return p;
}

/* A proc index: in range unless the next byte says otherwise. */
static uint32_t take_proc(struct recipe *c) {
  uint8_t sel = fuzz_u8(&c->r);
  uint32_t np = (uint32_t)c->b->n_processes;
  if (sel == 0xff || np == 0) return fuzz_u32(&c->r); /* judged at the end: see refs_broken() */
  return sel % np;
}

/* A value: numeric, or STR/BYTES with up to 128 bytes; vtypes beyond BYTES
 * are invalid (numeric_only: beyond F64). */
static void take_value(struct recipe *c, struct siox_value *v, int numeric_only) {
  uint8_t vt = fuzz_u8(&c->r);
  v->attr = fuzz_u8(&c->r) & 0x80 ? fuzz_u32(&c->r) : fuzz_u8(&c->r) % (SIOX_ATTR_COUNT + 2);
  v->vtype = vt & 0x80 ? vt : vt % (numeric_only ? 3u : 5u);
  c->invalid |= !numeric_only && v->vtype > SIOX_VT_BYTES; /* activity attrs: refs_broken() */
  if (fuzz_is_bytes(v->vtype)) {
    size_t len;
    const char *s = fuzz_bytes(&c->r, 128, &len);
    FUZZ_CHECK(siox_block_set_bytes(c->b, v, s, len) == 0, "siox_block_set_bytes");
  } else {
    v->v.u64 = fuzz_u64(&c->r);
  }
}

static void step_process(struct recipe *c) {
  struct siox_block_process *p = siox_block_add_process(c->b);
  FUZZ_CHECK(p != NULL, "add");
  p->pid = fuzz_u32(&c->r), p->uid = fuzz_u32(&c->r), p->nonce = fuzz_u64(&c->r);
  p->host = take_str(c), p->exe = take_str(c), p->args = take_str(c), p->job = take_str(c);
}

static void step_node(struct recipe *c) {
  uint32_t proc = take_proc(c);
  struct siox_block_node *n = siox_block_add_node(c->b);
  FUZZ_CHECK(n != NULL, "add");
  n->proc = proc, n->unid = fuzz_u32(&c->r);
  n->hwid = take_str(c), n->swid = take_str(c), n->iid = take_str(c);
}

static void step_edge(struct recipe *c) {
  uint32_t proc = take_proc(c);
  struct siox_block_edge *e = siox_block_add_edge(c->b);
  FUZZ_CHECK(e != NULL, "add");
  e->proc = proc, e->from = fuzz_u32(&c->r), e->to = fuzz_u32(&c->r);
}

static void step_type(struct recipe *c) {
  uint32_t proc = take_proc(c);
  struct siox_block_type *t = siox_block_add_type(c->b);
  FUZZ_CHECK(t != NULL, "add");
  t->proc = proc, t->type_id = fuzz_u32(&c->r), t->unid = fuzz_u32(&c->r), t->name = take_str(c);
}

static void step_target(struct recipe *c) {
  uint32_t proc = take_proc(c);
  struct siox_block_target *t = siox_block_add_target(c->b);
  FUZZ_CHECK(t != NULL, "add");
  t->proc = proc, t->target_id = fuzz_u32(&c->r), t->hwid = take_str(c), t->swid = take_str(c);
}

static void step_node_attr(struct recipe *c) {
  uint32_t proc = take_proc(c);
  struct siox_block_node_attr *a = siox_block_add_node_attr(c->b);
  FUZZ_CHECK(a != NULL, "add");
  a->proc = proc, a->unid = fuzz_u32(&c->r);
  take_value(c, &a->value, 0);
}

static void step_string_attr(struct recipe *c) {
  uint32_t proc = take_proc(c);
  struct siox_block_string_attr *a = siox_block_add_string_attr(c->b);
  FUZZ_CHECK(a != NULL, "add");
  a->proc = proc, a->aid = fuzz_u64(&c->r);
  a->value.attr = fuzz_u32(&c->r), a->value.vtype = SIOX_VT_STR + (fuzz_u8(&c->r) & 1);
  size_t len;
  const char *s = fuzz_bytes(&c->r, 255, &len);
  FUZZ_CHECK(siox_block_set_bytes(c->b, &a->value, s, len) == 0, "siox_block_set_bytes");
}

static void step_descriptor(struct recipe *c) {
  uint32_t proc = take_proc(c);
  struct siox_block_descriptor *d = siox_block_add_descriptor(c->b);
  FUZZ_CHECK(d != NULL, "add");
  uint8_t kind = fuzz_u8(&c->r), nv = fuzz_u8(&c->r);
  d->proc = proc;
  d->kind = kind & 0x80 ? kind & 7u : SIOX_DESC_CREATE + kind % 5u;
  d->nvalues = nv & 0x80 ? nv % 3u : (d->kind == SIOX_DESC_MAP ? 2u : 1u);
  c->invalid |= d->kind < SIOX_DESC_CREATE || d->kind > SIOX_DESC_RECEIVE ||
                d->nvalues != (d->kind == SIOX_DESC_MAP ? 2u : 1u);
  d->aid = fuzz_u64(&c->r), d->node = fuzz_u32(&c->r);
  d->offset = fuzz_u64(&c->r), d->length = fuzz_u64(&c->r);
  for (uint32_t k = 0; k < d->nvalues; k++) take_value(c, &d->values[k], 0);
}

static void step_stats(struct recipe *c) {
  uint32_t proc = take_proc(c);
  struct siox_block_stats *s = siox_block_add_stats(c->b);
  FUZZ_CHECK(s != NULL, "add");
  s->proc = proc, s->activities = fuzz_u64(&c->r), s->records = fuzz_u64(&c->r), s->dropped = fuzz_u64(&c->r);
}

/* Ids, times and attribute values either small steps from the previous
 * activity (the common case the deltas are made for) or arbitrary. */
static void step_activity(struct recipe *c) {
  uint32_t proc = take_proc(c);
  struct siox_block *b = c->b;
  const struct siox_block_activity *prev = b->n_activities ? &b->activities[b->n_activities - 1] : NULL;
  uint8_t shape = fuzz_u8(&c->r);
  uint64_t aid = fuzz_u64(&c->r), parent = fuzz_u64(&c->r);
  uint64_t start = fuzz_u64(&c->r), dur = fuzz_u64(&c->r);
  if (prev && (shape & 1)) aid = prev->aid + (aid & 0xff), start = (uint64_t)prev->start_ns + (start & 0xffff);
  if (shape & 2) parent = prev ? prev->aid : aid; /* a child, or a self-parent */
  struct siox_block_activity *a = siox_block_add_activity(b);
  FUZZ_CHECK(a != NULL, "add");
  a->proc = proc, a->type_id = fuzz_u32(&c->r), a->aid = aid, a->parent = parent;
  a->start_ns = (int64_t)start, a->end_ns = (int64_t)(start + (shape & 4 ? dur & 0xfff : dur));
  a->err = (int32_t)fuzz_u32(&c->r);
  uint32_t n = fuzz_u8(&c->r) % 9;
  struct siox_value *v = siox_block_add_attrs(b, a, n);
  FUZZ_CHECK(v != NULL, "siox_block_add_attrs");
  for (uint32_t k = 0; k < n; k++) take_value(c, &v[k], 1);
  if (shape == 0xff) a->attr_first += fuzz_u8(&c->r) + 1u; /* may run past attrs */
}

/* Whether an index of the finished block points outside it (a proc index
 * past the processes, an attribute slice past attrs) or an activity's slice
 * holds a non-numeric attribute. Judged on the whole block, as later steps
 * can add what an index points to, and a moved slice sees other entries. */
static int refs_broken(const struct siox_block *b) {
  size_t np = b->n_processes;
  int bad = 0;
  for (size_t i = 0; i < b->n_nodes; i++) bad |= b->nodes[i].proc >= np;
  for (size_t i = 0; i < b->n_edges; i++) bad |= b->edges[i].proc >= np;
  for (size_t i = 0; i < b->n_types; i++) bad |= b->types[i].proc >= np;
  for (size_t i = 0; i < b->n_targets; i++) bad |= b->targets[i].proc >= np;
  for (size_t i = 0; i < b->n_node_attrs; i++) bad |= b->node_attrs[i].proc >= np;
  for (size_t i = 0; i < b->n_string_attrs; i++) bad |= b->string_attrs[i].proc >= np;
  for (size_t i = 0; i < b->n_descriptors; i++) bad |= b->descriptors[i].proc >= np;
  for (size_t i = 0; i < b->n_stats; i++) bad |= b->stats[i].proc >= np;
  for (size_t i = 0; i < b->n_activities; i++) {
    const struct siox_block_activity *a = &b->activities[i];
    bad |= a->proc >= np || (uint64_t)a->attr_first + a->nattr > b->n_attrs;
    for (uint32_t k = 0; !bad && k < a->nattr; k++) bad |= b->attrs[a->attr_first + k].vtype > SIOX_VT_F64;
  }
  return bad;
}

static void (*const steps[])(struct recipe *) = {
    step_process, step_node,       step_edge,  step_type,    step_target,
    step_node_attr, step_string_attr, step_descriptor, step_stats, step_activity,
    step_activity, step_activity,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct siox_block b;
  siox_block_init(&b);
  struct recipe c = {{data, size}, &b, 0};
  for (int i = 0; i < MAX_STEPS && c.r.left; i++) steps[fuzz_u8(&c.r) % (sizeof steps / sizeof steps[0])](&c);
  if (c.invalid || refs_broken(&b)) {
    uint8_t *z = NULL;
    size_t zlen = 0, raw = 0;
    int rc = siox_block_encode(&b, &z, &zlen, &raw);
    FUZZ_CHECK(rc == -EINVAL, "encoder took a block that breaks its rules: %d", rc);
  } else {
    fuzz_encode_decode_same(&b); /* encodes, decodes, compares */
  }
  siox_block_free(&b);
  return 0;
}
