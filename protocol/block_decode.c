/*
 * Wire -> block. siox-server calls siox_block_decode() on every Batch it
 * receives: lz4 decompression to the announced size, protobuf-c unpack under
 * a memory budget, then a full validation pass before anything is copied, so
 * that a corrupt or hostile payload is refused with a reason and never
 * reaches the graph builder or the warehouse.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <lz4.h>
#include <stdlib.h>
#include <string.h>

#include "attr_prev.h"
#include "siox.pb-c.h"
#include "siox_block.h"
#include "siox_client_wire.h"
#include "siox_frame.h"
#include <siox/siox_ontology.h>

/* A small protobuf can unpack into far more memory: an empty submessage is
 * 2 bytes on the wire and up to 80 in memory, plus protobuf-c's transient
 * scan record per field. The worst a block that passes validation can do in
 * bulk is all-empty Process messages (48x is too little, 56x enough; see
 * test_dense_block_within_budget). The budget sits above that, so a payload
 * that tries more is refused, not unpacked. */
#define UNPACK_BUDGET_FACTOR 64u
#define UNPACK_BUDGET_BASE (1u << 20)

struct budget {
  size_t left;
};

static void *budget_alloc(void *data, size_t n) {
  struct budget *b = data;
  if (n > b->left) return NULL;
  b->left -= n;
  return malloc(n);
}

static void budget_free(void *data, void *p) {
  (void)data;
  free(p);
}

#define BAD(msg)        \
  do {                  \
    *why = (msg);       \
    return -EBADMSG;    \
  } while (0)

/* ---- validation of the unpacked message ---------------------------------- */

static int str_ok(const char *s) {
  return !s || strnlen(s, SIOX_BLOCK_MAX_STR + 1) <= SIOX_BLOCK_MAX_STR;
}

static int value_ok(const Siox__Value *v) {
  if (!v) return 0;
  switch (v->v_case) {
  case SIOX__VALUE__V_U:
  case SIOX__VALUE__V_I:
  case SIOX__VALUE__V_F: return 1;
  case SIOX__VALUE__V_B: return v->b.len <= SIOX_BLOCK_MAX_STR && (v->b.data || !v->b.len);
  default: return 0;
  }
}

static int check_names(const Siox__Block *pb, const char **why) {
  for (size_t i = 0; i < pb->n_processes; i++) {
    const Siox__Process *p = pb->processes[i];
    if (!str_ok(p->host) || !str_ok(p->exe) || !str_ok(p->args) || !str_ok(p->job)) BAD("process string too long");
  }
  for (size_t i = 0; i < pb->n_nodes; i++) {
    const Siox__Node *n = pb->nodes[i];
    if (n->proc >= pb->n_processes) BAD("node: proc index out of range");
    if (!str_ok(n->hwid) || !str_ok(n->swid) || !str_ok(n->iid)) BAD("node string too long");
  }
  for (size_t i = 0; i < pb->n_edges; i++)
    if (pb->edges[i]->proc >= pb->n_processes) BAD("edge: proc index out of range");
  for (size_t i = 0; i < pb->n_types; i++) {
    if (pb->types[i]->proc >= pb->n_processes) BAD("type: proc index out of range");
    if (!str_ok(pb->types[i]->name)) BAD("type name too long");
  }
  for (size_t i = 0; i < pb->n_targets; i++) {
    const Siox__Target *t = pb->targets[i];
    if (t->proc >= pb->n_processes) BAD("target: proc index out of range");
    if (!str_ok(t->hwid) || !str_ok(t->swid)) BAD("target string too long");
  }
  return 0;
}

static int check_descriptor(const Siox__Descriptor *d, size_t np, const char **why) {
  if (d->proc >= np) BAD("descriptor: proc index out of range");
  if (d->kind < SIOX_DESC_CREATE || d->kind > SIOX_DESC_RECEIVE) BAD("descriptor: unknown kind");
  if (d->n_values != (d->kind == SIOX_DESC_MAP ? 2u : 1u)) BAD("descriptor: wrong number of values for its kind");
  for (size_t k = 0; k < d->n_values; k++)
    if (!value_ok(d->values[k])) BAD("descriptor: value missing, unset or too long");
  return 0;
}

static int check_records(const Siox__Block *pb, const char **why) {
  size_t np = pb->n_processes;
  for (size_t i = 0; i < pb->n_node_attrs; i++) {
    if (pb->node_attrs[i]->proc >= np) BAD("node attribute: proc index out of range");
    if (!value_ok(pb->node_attrs[i]->value)) BAD("node attribute: value missing, unset or too long");
  }
  for (size_t i = 0; i < pb->n_string_attrs; i++) {
    const Siox__StringAttr *s = pb->string_attrs[i];
    if (s->proc >= np) BAD("string attribute: proc index out of range");
    if (s->value.len > SIOX_BLOCK_MAX_STR || (!s->value.data && s->value.len)) BAD("string attribute too long");
  }
  for (size_t i = 0; i < pb->n_descriptors; i++) {
    int rc = check_descriptor(pb->descriptors[i], np, why);
    if (rc) return rc;
  }
  for (size_t i = 0; i < pb->n_stats; i++)
    if (pb->stats[i]->proc >= np) BAD("stats: proc index out of range");
  return 0;
}

static int check_attr_columns(const Siox__Activities *a, const char **why) {
  size_t m = a->n_attr_id, nf = 0;
  if (a->n_attr_delta != m || a->n_attr_is_f64 != m || a->n_attr_vtype != m)
    BAD("activities: attribute columns of unequal length");
  uint64_t sum = 0;
  for (size_t i = 0; i < a->n_nattr; i++) sum += a->nattr[i];
  if (sum != m) BAD("activities: nattr does not add up to the attribute entries");
  for (size_t j = 0; j < m; j++) {
    uint32_t vt = a->attr_vtype[j];
    if (vt > SIOX_VT_F64) BAD("activities: attribute vtype not numeric");
    if (!a->attr_is_f64[j] != (vt != SIOX_VT_F64)) BAD("activities: attr_is_f64 disagrees with vtype");
    if (a->attr_is_f64[j] && a->attr_delta[j]) BAD("activities: float attribute with an integer delta");
    nf += a->attr_is_f64[j] != 0;
  }
  if (nf != a->n_attr_f64) BAD("activities: attr_f64 length differs from float flags");
  return 0;
}

static int check_columns(const Siox__Activities *a, const char **why) {
  if (!a) return 0;
  size_t n = a->n_proc_delta;
  if (a->n_aid_delta != n || a->n_parent_back != n || a->n_type_delta != n || a->n_start_delta != n ||
      a->n_duration != n || a->n_err != n || a->n_nattr != n)
    BAD("activities: columns of unequal length");
  return check_attr_columns(a, why);
}

/* ---- conversion into the block (the message is valid by now) ------------ */

/* Returns a block-owned copy of a protobuf-c string ("" for none), or NULL
 * on ENOMEM. */
static char *copy_str(struct siox_block *b, const char *s) {
  return siox_block_strdup(b, s, s ? strlen(s) : 0);
}

static uint32_t bytes_vtype(uint32_t attr) {
  const struct siox_attr_info *info = siox_attr_lookup(attr);
  return info && info->type == SIOX_VT_STR ? SIOX_VT_STR : SIOX_VT_BYTES;
}

static int get_value(struct siox_block *b, struct siox_value *v, const Siox__Value *pv) {
  memset(v, 0, sizeof *v);
  v->attr = pv->attr;
  switch (pv->v_case) {
  case SIOX__VALUE__V_U: v->vtype = SIOX_VT_U64, v->v.u64 = pv->u; return 0;
  case SIOX__VALUE__V_I: v->vtype = SIOX_VT_I64, v->v.i64 = pv->i; return 0;
  case SIOX__VALUE__V_F: v->vtype = SIOX_VT_F64, v->v.f64 = pv->f; return 0;
  default: v->vtype = bytes_vtype(pv->attr); return siox_block_set_bytes(b, v, pv->b.data, pv->b.len);
  }
}

static int get_processes(struct siox_block *b, const Siox__Block *pb) {
  for (size_t i = 0; i < pb->n_processes; i++) {
    const Siox__Process *m = pb->processes[i];
    struct siox_block_process *p = siox_block_add_process(b);
    if (!p) return -ENOMEM;
    p->pid = m->pid, p->uid = m->uid, p->nonce = m->nonce;
    p->host = copy_str(b, m->host), p->exe = copy_str(b, m->exe);
    p->args = copy_str(b, m->args), p->job = copy_str(b, m->job);
    if (!p->host || !p->exe || !p->args || !p->job) return -ENOMEM;
  }
  return 0;
}

static int get_nodes_edges(struct siox_block *b, const Siox__Block *pb) {
  for (size_t i = 0; i < pb->n_nodes; i++) {
    const Siox__Node *m = pb->nodes[i];
    struct siox_block_node *n = siox_block_add_node(b);
    if (!n) return -ENOMEM;
    n->proc = m->proc, n->unid = m->unid;
    n->hwid = copy_str(b, m->hwid), n->swid = copy_str(b, m->swid), n->iid = copy_str(b, m->iid);
    if (!n->hwid || !n->swid || !n->iid) return -ENOMEM;
  }
  for (size_t i = 0; i < pb->n_edges; i++) {
    struct siox_block_edge *e = siox_block_add_edge(b);
    if (!e) return -ENOMEM;
    e->proc = pb->edges[i]->proc, e->from = pb->edges[i]->from, e->to = pb->edges[i]->to;
  }
  return 0;
}

static int get_types_targets(struct siox_block *b, const Siox__Block *pb) {
  for (size_t i = 0; i < pb->n_types; i++) {
    const Siox__ActivityType *m = pb->types[i];
    struct siox_block_type *t = siox_block_add_type(b);
    if (!t) return -ENOMEM;
    t->proc = m->proc, t->type_id = m->type_id, t->unid = m->unid;
    if (!(t->name = copy_str(b, m->name))) return -ENOMEM;
  }
  for (size_t i = 0; i < pb->n_targets; i++) {
    const Siox__Target *m = pb->targets[i];
    struct siox_block_target *t = siox_block_add_target(b);
    if (!t) return -ENOMEM;
    t->proc = m->proc, t->target_id = m->target_id;
    t->hwid = copy_str(b, m->hwid), t->swid = copy_str(b, m->swid);
    if (!t->hwid || !t->swid) return -ENOMEM;
  }
  return 0;
}

static int get_attrs_stats(struct siox_block *b, const Siox__Block *pb) {
  for (size_t i = 0; i < pb->n_node_attrs; i++) {
    struct siox_block_node_attr *a = siox_block_add_node_attr(b);
    if (!a) return -ENOMEM;
    a->proc = pb->node_attrs[i]->proc, a->unid = pb->node_attrs[i]->unid;
    if (get_value(b, &a->value, pb->node_attrs[i]->value)) return -ENOMEM;
  }
  for (size_t i = 0; i < pb->n_string_attrs; i++) {
    const Siox__StringAttr *m = pb->string_attrs[i];
    struct siox_block_string_attr *a = siox_block_add_string_attr(b);
    if (!a) return -ENOMEM;
    a->proc = m->proc, a->aid = m->aid;
    a->value.attr = m->attr, a->value.vtype = bytes_vtype(m->attr);
    if (siox_block_set_bytes(b, &a->value, m->value.data, m->value.len)) return -ENOMEM;
  }
  for (size_t i = 0; i < pb->n_stats; i++) {
    const Siox__Stats *m = pb->stats[i];
    struct siox_block_stats *s = siox_block_add_stats(b);
    if (!s) return -ENOMEM;
    s->proc = m->proc, s->activities = m->activities, s->records = m->records, s->dropped = m->dropped;
    s->dropped_exit = m->dropped_exit;
    s->daemon_dropped_spool = m->daemon_dropped_spool;
    s->daemon_dropped_invalid = m->daemon_dropped_invalid;
  }
  return 0;
}

static int get_descriptors(struct siox_block *b, const Siox__Block *pb) {
  for (size_t i = 0; i < pb->n_descriptors; i++) {
    const Siox__Descriptor *m = pb->descriptors[i];
    struct siox_block_descriptor *d = siox_block_add_descriptor(b);
    if (!d) return -ENOMEM;
    d->proc = m->proc, d->kind = m->kind, d->aid = m->aid, d->node = m->node;
    d->offset = m->offset, d->length = m->length;
    d->nvalues = (uint32_t)m->n_values;
    for (uint32_t k = 0; k < d->nvalues; k++)
      if (get_value(b, &d->values[k], m->values[k])) return -ENOMEM;
  }
  return 0;
}

/* Undoes the attribute deltas of activity a (entries from *j, floats from *f). */
static int get_attr_entries(struct siox_block *b, struct siox_block_activity *a, uint32_t nattr,
                            const Siox__Activities *pa, size_t *j, size_t *f, struct attr_prev *prev) {
  struct siox_value *v = siox_block_add_attrs(b, a, nattr);
  if (!v) return -ENOMEM;
  for (uint32_t k = 0; k < a->nattr; k++, (*j)++) {
    v[k].attr = pa->attr_id[*j];
    v[k].vtype = pa->attr_vtype[*j];
    if (pa->attr_is_f64[*j]) {
      v[k].v.f64 = pa->attr_f64[(*f)++];
      continue;
    }
    uint64_t *last = attr_prev_get(prev, v[k].attr);
    if (!last) return -ENOMEM;
    v[k].v.u64 = *last += (uint64_t)pa->attr_delta[*j];
  }
  return 0;
}

/* Undoes the column deltas (unsigned arithmetic, as the encoder did) and
 * checks what only the absolute values reveal: proc and type ranges. */
static int get_activities(struct siox_block *b, const Siox__Block *pb, const char **why) {
  const Siox__Activities *pa = pb->activities;
  uint64_t proc = 0, aid = 0, type = 0, start = 0;
  size_t j = 0, f = 0;
  struct attr_prev prev;
  int rc = 0;
  attr_prev_init(&prev);
  for (size_t i = 0; pa && i < pa->n_proc_delta && !rc; i++) {
    struct siox_block_activity *a = siox_block_add_activity(b);
    if (!a) { rc = -ENOMEM; break; }
    proc += (uint64_t)pa->proc_delta[i];
    type += (uint64_t)pa->type_delta[i];
    aid += (uint64_t)pa->aid_delta[i];
    start += (uint64_t)pa->start_delta[i];
    if (proc >= pb->n_processes) { *why = "activity: proc index out of range", rc = -EBADMSG; break; }
    if (type > UINT32_MAX) { *why = "activity: type id out of range", rc = -EBADMSG; break; }
    a->proc = (uint32_t)proc, a->type_id = (uint32_t)type, a->aid = aid;
    a->parent = pa->parent_back[i] ? aid - (uint64_t)pa->parent_back[i] : 0;
    a->start_ns = (int64_t)start;
    a->end_ns = (int64_t)(start + pa->duration[i]);
    a->err = pa->err[i];
    rc = get_attr_entries(b, a, pa->nattr[i], pa, &j, &f, &prev);
  }
  attr_prev_free(&prev);
  return rc;
}

/* ---- entry point ---------------------------------------------------------- */

/* lz4 cannot expand one input byte into more than 255 output bytes (a
 * match length is extended by one 255 byte per input byte), so a larger
 * declared size is a lie: refuse it before allocating it. */
#define LZ4_MAX_RATIO 255u
#define LZ4_SLACK 64u

/* The protobuf-c allocations of a block of raw_len bytes: the amplification
 * budget, and never more than half of what the decode may use after the
 * raw buffer (the other half is for the converted block, about as large). */
static size_t unpack_budget(size_t raw_len, size_t max_mem) {
  size_t amp = UNPACK_BUDGET_BASE + UNPACK_BUDGET_FACTOR * raw_len;
  size_t cap = max_mem > raw_len ? (max_mem - raw_len) / 2 : 0;
  return amp < cap ? amp : cap;
}

static int unpack(const uint8_t *in, size_t in_len, size_t raw_len, size_t max_mem, Siox__Block **pb,
                  const char **why) {
  if (raw_len > SIOX_FRAME_MAX_PAYLOAD) BAD("declared raw size above the frame limit");
  if (in_len > INT_MAX) BAD("compressed payload too large");
  if (raw_len > (size_t)LZ4_MAX_RATIO * in_len + LZ4_SLACK) BAD("declared raw size beyond what lz4 can expand to");
  if (raw_len >= max_mem / 2) BAD("declared raw size above the decode memory budget");
  char *raw = malloc(raw_len ? raw_len : 1);
  if (!raw) return -ENOMEM;
  int n = LZ4_decompress_safe((const char *)in, raw, (int)in_len, (int)raw_len);
  if (n < 0 || (size_t)n != raw_len) {
    free(raw);
    BAD(n < 0 ? "lz4 data corrupt or larger than declared" : "lz4 data shorter than declared");
  }
  struct budget budget = {unpack_budget(raw_len, max_mem)};
  ProtobufCAllocator alloc = {budget_alloc, budget_free, &budget};
  *pb = siox__block__unpack(&alloc, raw_len, (const uint8_t *)raw);
  free(raw);
  if (!*pb) BAD("protobuf Block malformed (or beyond the unpack memory budget)");
  return 0;
}

static int convert(struct siox_block *b, const Siox__Block *pb, const char **why) {
  int rc;
  if ((rc = get_processes(b, pb)) || (rc = get_nodes_edges(b, pb)) || (rc = get_types_targets(b, pb)) ||
      (rc = get_attrs_stats(b, pb)) || (rc = get_descriptors(b, pb)))
    return rc;
  return get_activities(b, pb, why);
}

int siox_block_decode(const uint8_t *in, size_t in_len, size_t raw_len, struct siox_block *b, const char **why) {
  return siox_block_decode_limited(in, in_len, raw_len, SIZE_MAX, b, why);
}

int siox_block_decode_limited(const uint8_t *in, size_t in_len, size_t raw_len, size_t max_mem, struct siox_block *b,
                              const char **why) {
  const char *reason = NULL;
  Siox__Block *pb = NULL;
  siox_block_reset(b);
  int rc = unpack(in, in_len, raw_len, max_mem, &pb, &reason);
  if (!rc) rc = check_names(pb, &reason);
  if (!rc) rc = check_records(pb, &reason);
  if (!rc) rc = check_columns(pb->activities, &reason);
  if (!rc) rc = convert(b, pb, &reason);
  if (rc == -ENOMEM) reason = "out of memory";
  if (pb) siox__block__free_unpacked(pb, NULL); /* plain free(), as budget_free */
  if (rc) siox_block_reset(b);
  if (why) *why = rc ? reason : NULL;
  return rc;
}
