/*
 * Test helpers shared by the test_protocol_* programs: a block holding every
 * record kind with awkward values, and a field-by-field comparison.
 */
#ifndef TEST_PROTOCOL_SAMPLE_H
#define TEST_PROTOCOL_SAMPLE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "siox_block.h"
#include "siox_client_wire.h"
#include <siox/siox_ontology.h>

static inline char *sample_str(struct siox_block *b, const char *s) {
  return siox_block_strdup(b, s, strlen(s));
}

static inline void sample_value(struct siox_block *b, struct siox_value *v, uint32_t attr, uint32_t vtype, uint64_t u,
                         const void *bytes, size_t len) {
  v->attr = attr;
  v->vtype = vtype;
  v->v.u64 = u;
  if (vtype >= SIOX_VT_STR) assert_int_equal(siox_block_set_bytes(b, v, bytes, len), 0);
}

static inline void sample_dicts(struct siox_block *b) {
  for (int i = 0; i < 3; i++) {
    struct siox_block_process *p = siox_block_add_process(b);
    p->pid = 1000u + (uint32_t)i, p->uid = i ? UINT32_MAX : 0, p->nonce = UINT64_MAX - (uint64_t)i;
    p->host = sample_str(b, "node01"), p->exe = sample_str(b, i ? "/bin/ior" : "");
    p->args = sample_str(b, "ior -w -b 4m"), p->job = i == 2 ? NULL : sample_str(b, "job.42");
  }
  struct siox_block_node *n = siox_block_add_node(b);
  n->proc = 2, n->unid = 7, n->hwid = sample_str(b, "host12"), n->swid = sample_str(b, "POSIX"), n->iid = sample_str(b, "");
  struct siox_block_edge *e = siox_block_add_edge(b);
  e->proc = 1, e->from = 7, e->to = UINT32_MAX;
  struct siox_block_type *t = siox_block_add_type(b);
  t->proc = 0, t->type_id = 3, t->unid = 7, t->name = sample_str(b, "write");
  struct siox_block_target *g = siox_block_add_target(b);
  g->proc = 1, g->target_id = 9, g->hwid = sample_str(b, ""), g->swid = sample_str(b, "GlusterFS-brick");
  struct siox_block_node_attr *na = siox_block_add_node_attr(b);
  na->proc = 0, na->unid = 7;
  sample_value(b, &na->value, SIOX_ATTR_NODE_CAPACITY, SIOX_VT_U64, UINT64_MAX, NULL, 0);
  na = siox_block_add_node_attr(b);
  na->proc = 2, na->unid = 7, na->value.attr = SIOX_ATTR_NODE_BANDWIDTH, na->value.vtype = SIOX_VT_F64;
  na->value.v.f64 = -1.5e300;
  na = siox_block_add_node_attr(b);
  na->proc = 1, na->unid = 8;
  sample_value(b, &na->value, SIOX_ATTR_NODE_CAPABILITIES, SIOX_VT_STR, 0, "", 0);
  struct siox_block_string_attr *sa = siox_block_add_string_attr(b);
  sa->proc = 1, sa->aid = UINT64_MAX;
  sample_value(b, &sa->value, SIOX_ATTR_POSIX_PATH, SIOX_VT_STR, 0, "", 0);
  sa = siox_block_add_string_attr(b);
  sa->proc = 0, sa->aid = 5;
  sample_value(b, &sa->value, SIOX_ATTR_GLUSTERFS_GFID, SIOX_VT_BYTES, 0, "\0a\0b\0", 5);
  struct siox_block_stats *st = siox_block_add_stats(b);
  st->proc = 2, st->activities = UINT64_MAX, st->records = 0, st->dropped = 1;
}

static inline void sample_descriptors(struct siox_block *b) {
  static const uint8_t gfid[16] = {0, 1, 0, 2, 0, 0, 0, 255, 9, 0, 0, 0, 0, 0, 0, 0};
  for (uint32_t kind = SIOX_DESC_CREATE; kind <= SIOX_DESC_RECEIVE; kind++) {
    struct siox_block_descriptor *d = siox_block_add_descriptor(b);
    d->proc = kind % 3, d->kind = kind, d->aid = kind == SIOX_DESC_SEND ? UINT64_MAX : kind;
    d->node = kind * 11, d->offset = UINT64_MAX - kind, d->length = kind == SIOX_DESC_RECEIVE ? 0 : 4096;
    d->nvalues = kind == SIOX_DESC_MAP ? 2 : 1;
    sample_value(b, &d->values[0], SIOX_ATTR_POSIX_PATH, SIOX_VT_STR, 0, "/scratch/f\0x", 12);
    if (kind == SIOX_DESC_MAP) sample_value(b, &d->values[1], SIOX_ATTR_POSIX_FD, SIOX_VT_I64, (uint64_t)-3, NULL, 0);
    if (kind == SIOX_DESC_RECEIVE) sample_value(b, &d->values[0], SIOX_ATTR_GLUSTERFS_GFID, SIOX_VT_BYTES, 0, gfid, 16);
  }
}

/* Activities with deltas of both signs, extreme ids and times, and attribute
 * values that exercise wrap-around, floats and "no attribute". */
static inline void sample_activities(struct siox_block *b) {
  static const struct {
    uint32_t proc, type;
    uint64_t aid, parent;
    int64_t start, end;
    int32_t err;
  } a[] = {
      {2, 3, 10, 0, 1000, 2000, 0},
      {2, 3, 11, 10, 1500, 1600, -5},
      {0, 1, UINT64_MAX, 1, INT64_MIN, INT64_MAX, INT32_MIN},
      {1, UINT32_MAX, 1, UINT64_MAX, -7, -9, INT32_MAX},
      {1, 0, 0, 3, 0, 0, 0},
      {2, 3, 12, 10, 1400, 1700, 0},
  };
  for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) {
    struct siox_block_activity *x = siox_block_add_activity(b);
    x->proc = a[i].proc, x->type_id = a[i].type, x->aid = a[i].aid, x->parent = a[i].parent;
    x->start_ns = a[i].start, x->end_ns = a[i].end, x->err = a[i].err;
    uint32_t n = (uint32_t)(i % 4);
    struct siox_value *v = siox_block_add_attrs(b, x, n);
    for (uint32_t k = 0; k < n; k++) {
      v[k].attr = k == 2 ? SIOX_ATTR_IO_RESULT : SIOX_ATTR_IO_OFFSET + k;
      v[k].vtype = k == 2 ? (i == 3 ? SIOX_VT_F64 : SIOX_VT_I64) : SIOX_VT_U64;
      v[k].v.u64 = i == 2 ? UINT64_MAX - k : (uint64_t)(4096 * (5 - i) + k);
      if (v[k].vtype == SIOX_VT_F64) v[k].v.f64 = 0.25;
    }
  }
}

static inline void sample_block(struct siox_block *b) {
  sample_dicts(b);
  sample_descriptors(b);
  sample_activities(b);
}

static inline void assert_str_same(const char *a, const char *b) {
  assert_string_equal(a ? a : "", b ? b : "");
}

static inline void assert_value_same(const struct siox_value *a, const struct siox_value *b) {
  assert_int_equal(a->attr, b->attr);
  assert_int_equal(a->vtype, b->vtype);
  if (a->vtype >= SIOX_VT_STR) {
    assert_int_equal(a->len, b->len);
    assert_memory_equal(a->bytes, b->bytes, a->len);
    assert_int_equal(b->bytes[b->len], 0);
  } else {
    assert_int_equal(a->v.u64, b->v.u64); /* bit-exact, floats included */
  }
}

static inline void assert_dicts_same(const struct siox_block *a, const struct siox_block *b) {
  assert_int_equal(a->n_processes, b->n_processes);
  for (size_t i = 0; i < a->n_processes; i++) {
    const struct siox_block_process *x = &a->processes[i], *y = &b->processes[i];
    assert_int_equal(x->pid, y->pid), assert_int_equal(x->uid, y->uid), assert_int_equal(x->nonce, y->nonce);
    assert_str_same(x->host, y->host), assert_str_same(x->exe, y->exe);
    assert_str_same(x->args, y->args), assert_str_same(x->job, y->job);
  }
  assert_int_equal(a->n_nodes, b->n_nodes);
  for (size_t i = 0; i < a->n_nodes; i++) {
    assert_int_equal(a->nodes[i].proc, b->nodes[i].proc), assert_int_equal(a->nodes[i].unid, b->nodes[i].unid);
    assert_str_same(a->nodes[i].hwid, b->nodes[i].hwid), assert_str_same(a->nodes[i].swid, b->nodes[i].swid);
    assert_str_same(a->nodes[i].iid, b->nodes[i].iid);
  }
  assert_int_equal(a->n_edges, b->n_edges);
  for (size_t i = 0; i < a->n_edges; i++)
    assert_memory_equal(&a->edges[i], &b->edges[i], sizeof a->edges[i]);
  assert_int_equal(a->n_types, b->n_types);
  for (size_t i = 0; i < a->n_types; i++) {
    assert_int_equal(a->types[i].type_id, b->types[i].type_id), assert_int_equal(a->types[i].unid, b->types[i].unid);
    assert_int_equal(a->types[i].proc, b->types[i].proc), assert_str_same(a->types[i].name, b->types[i].name);
  }
  assert_int_equal(a->n_targets, b->n_targets);
  for (size_t i = 0; i < a->n_targets; i++) {
    assert_int_equal(a->targets[i].proc, b->targets[i].proc);
    assert_int_equal(a->targets[i].target_id, b->targets[i].target_id);
    assert_str_same(a->targets[i].hwid, b->targets[i].hwid), assert_str_same(a->targets[i].swid, b->targets[i].swid);
  }
}

static inline void assert_records_same(const struct siox_block *a, const struct siox_block *b) {
  assert_int_equal(a->n_node_attrs, b->n_node_attrs);
  for (size_t i = 0; i < a->n_node_attrs; i++) {
    assert_int_equal(a->node_attrs[i].proc, b->node_attrs[i].proc);
    assert_int_equal(a->node_attrs[i].unid, b->node_attrs[i].unid);
    assert_value_same(&a->node_attrs[i].value, &b->node_attrs[i].value);
  }
  assert_int_equal(a->n_string_attrs, b->n_string_attrs);
  for (size_t i = 0; i < a->n_string_attrs; i++) {
    assert_int_equal(a->string_attrs[i].proc, b->string_attrs[i].proc);
    assert_int_equal(a->string_attrs[i].aid, b->string_attrs[i].aid);
    assert_value_same(&a->string_attrs[i].value, &b->string_attrs[i].value);
  }
  assert_int_equal(a->n_descriptors, b->n_descriptors);
  for (size_t i = 0; i < a->n_descriptors; i++) {
    const struct siox_block_descriptor *x = &a->descriptors[i], *y = &b->descriptors[i];
    assert_int_equal(x->proc, y->proc), assert_int_equal(x->kind, y->kind), assert_int_equal(x->aid, y->aid);
    assert_int_equal(x->node, y->node), assert_int_equal(x->offset, y->offset);
    assert_int_equal(x->length, y->length), assert_int_equal(x->nvalues, y->nvalues);
    for (uint32_t k = 0; k < x->nvalues; k++) assert_value_same(&x->values[k], &y->values[k]);
  }
  assert_int_equal(a->n_stats, b->n_stats);
  for (size_t i = 0; i < a->n_stats; i++) assert_memory_equal(&a->stats[i], &b->stats[i], sizeof a->stats[i]);
}

static inline void assert_activities_same(const struct siox_block *a, const struct siox_block *b) {
  assert_int_equal(a->n_activities, b->n_activities);
  for (size_t i = 0; i < a->n_activities; i++) {
    const struct siox_block_activity *x = &a->activities[i], *y = &b->activities[i];
    assert_int_equal(x->proc, y->proc), assert_int_equal(x->type_id, y->type_id);
    assert_int_equal(x->aid, y->aid), assert_int_equal(x->parent, y->parent);
    assert_int_equal(x->start_ns, y->start_ns), assert_int_equal(x->end_ns, y->end_ns);
    assert_int_equal(x->err, y->err), assert_int_equal(x->nattr, y->nattr);
    for (uint32_t k = 0; k < x->nattr; k++)
      assert_value_same(&a->attrs[x->attr_first + k], &b->attrs[y->attr_first + k]);
  }
}

static inline void assert_blocks_same(const struct siox_block *a, const struct siox_block *b) {
  assert_dicts_same(a, b);
  assert_records_same(a, b);
  assert_activities_same(a, b);
}

#endif
