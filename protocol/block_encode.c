/*
 * Block -> wire. siox-daemon calls siox_block_encode_with() when it seals a
 * batch: dictionaries become protobuf messages, activities become the
 * delta-coded columns described in siox.proto, protobuf-c packs the Block
 * and lz4 compresses it. Every protobuf-c struct of one encode is carved
 * from one scratch area, and an encoder keeps that area, the packed bytes
 * and the lz4 output from one block to the next: a warm encode allocates
 * only the payload it returns.
 */
#include <assert.h>
#include <errno.h>
#include <lz4.h>
#include <stdlib.h>
#include <string.h>

#include "attr_prev.h"
#include "siox.pb-c.h"
#include "siox_block.h"
#include "siox_client_wire.h"
#include "siox_frame.h"
#include <siox/siox_ontology.h>

/* ---- checks: encode only what siox_block_decode() accepts ---------------- */

static int str_ok(const char *s) {
  return !s || strnlen(s, SIOX_BLOCK_MAX_STR + 1) <= SIOX_BLOCK_MAX_STR;
}

static int value_ok(const struct siox_value *v) {
  if (v->vtype > SIOX_VT_BYTES) return 0;
  if (v->vtype < SIOX_VT_STR) return 1;
  return v->len <= SIOX_BLOCK_MAX_STR && (v->bytes || v->len == 0);
}

static int descriptor_ok(const struct siox_block_descriptor *d) {
  if (d->kind < SIOX_DESC_CREATE || d->kind > SIOX_DESC_RECEIVE) return 0;
  if (d->nvalues != (d->kind == SIOX_DESC_MAP ? 2u : 1u)) return 0;
  for (uint32_t i = 0; i < d->nvalues; i++)
    if (!value_ok(&d->values[i])) return 0;
  return 1;
}

static int dicts_ok(const struct siox_block *b) {
  size_t np = b->n_processes;
  for (size_t i = 0; i < np; i++) {
    const struct siox_block_process *p = &b->processes[i];
    if (!str_ok(p->host) || !str_ok(p->exe) || !str_ok(p->args) || !str_ok(p->job)) return 0;
  }
  for (size_t i = 0; i < b->n_nodes; i++) {
    const struct siox_block_node *n = &b->nodes[i];
    if (n->proc >= np || !str_ok(n->hwid) || !str_ok(n->swid) || !str_ok(n->iid)) return 0;
  }
  for (size_t i = 0; i < b->n_edges; i++)
    if (b->edges[i].proc >= np) return 0;
  for (size_t i = 0; i < b->n_types; i++)
    if (b->types[i].proc >= np || !str_ok(b->types[i].name)) return 0;
  for (size_t i = 0; i < b->n_targets; i++) {
    const struct siox_block_target *t = &b->targets[i];
    if (t->proc >= np || !str_ok(t->hwid) || !str_ok(t->swid)) return 0;
  }
  for (size_t i = 0; i < b->n_node_attrs; i++)
    if (b->node_attrs[i].proc >= np || !value_ok(&b->node_attrs[i].value)) return 0;
  for (size_t i = 0; i < b->n_string_attrs; i++) {
    const struct siox_value *v = &b->string_attrs[i].value;
    if (b->string_attrs[i].proc >= np || v->len > SIOX_BLOCK_MAX_STR || (!v->bytes && v->len)) return 0;
  }
  for (size_t i = 0; i < b->n_descriptors; i++)
    if (b->descriptors[i].proc >= np || !descriptor_ok(&b->descriptors[i])) return 0;
  for (size_t i = 0; i < b->n_stats; i++)
    if (b->stats[i].proc >= np) return 0;
  return 1;
}

/* Also counts the attribute entries the columns will hold (*m). */
static int activities_ok(const struct siox_block *b, size_t *m) {
  *m = 0;
  for (size_t i = 0; i < b->n_activities; i++) {
    const struct siox_block_activity *a = &b->activities[i];
    if (a->proc >= b->n_processes) return 0;
    if ((uint64_t)a->attr_first + a->nattr > b->n_attrs) return 0;
    for (uint32_t k = 0; k < a->nattr; k++)
      if (b->attrs[a->attr_first + k].vtype > SIOX_VT_F64) return 0;
    *m += a->nattr;
  }
  return 1;
}

/* ---- scratch: one allocation for all protobuf-c structs ------------------ */

struct scratch {
  char *p, *end;
};

static void *carve(struct scratch *s, size_t n) {
  size_t a = (n + 7) & ~(size_t)7;
  assert((size_t)(s->end - s->p) >= a); /* scratch_size() must cover every carve */
  void *r = s->p;
  s->p += a;
  return r;
}

#define MSGS(n, T) ((n) * (sizeof(T) + sizeof(T *)))

static size_t scratch_size(const struct siox_block *b, size_t m) {
  size_t sz = MSGS(b->n_processes, Siox__Process) + MSGS(b->n_nodes, Siox__Node) +
              MSGS(b->n_edges, Siox__Edge) + MSGS(b->n_types, Siox__ActivityType) +
              MSGS(b->n_targets, Siox__Target) + MSGS(b->n_string_attrs, Siox__StringAttr) +
              MSGS(b->n_stats, Siox__Stats) + MSGS(b->n_node_attrs, Siox__NodeAttr) +
              b->n_node_attrs * sizeof(Siox__Value) + MSGS(b->n_descriptors, Siox__Descriptor) +
              2 * MSGS(b->n_descriptors, Siox__Value);
  sz += b->n_activities * (6 * sizeof(int64_t) + sizeof(int32_t) + sizeof(uint32_t));
  sz += m * (sizeof(uint32_t) * 2 + sizeof(int64_t) + sizeof(protobuf_c_boolean) + sizeof(double));
  return sz + 64 * 8; /* alignment slack: fewer than 64 carves */
}

/* ---- dictionaries --------------------------------------------------------- */

static char *str(const char *s) {
  return s ? (char *)s : (char *)protobuf_c_empty_string;
}

static void put_value(Siox__Value *pv, const struct siox_value *v) {
  siox__value__init(pv);
  pv->attr = v->attr;
  switch (v->vtype) {
  case SIOX_VT_U64: pv->v_case = SIOX__VALUE__V_U, pv->u = v->v.u64; break;
  case SIOX_VT_I64: pv->v_case = SIOX__VALUE__V_I, pv->i = v->v.i64; break;
  case SIOX_VT_F64: pv->v_case = SIOX__VALUE__V_F, pv->f = v->v.f64; break;
  default:
    pv->v_case = SIOX__VALUE__V_B;
    pv->b.len = v->len;
    pv->b.data = (uint8_t *)v->bytes;
  }
}

/* Carves n messages of size sz plus the pointer array that links them. */
static void *put_msgs(struct scratch *s, size_t n, size_t sz, void ***ptrs) {
  char *msgs = carve(s, n * sz);
  *ptrs = carve(s, n * sizeof(void *));
  for (size_t i = 0; i < n; i++) (*ptrs)[i] = msgs + i * sz;
  return msgs;
}

static void put_processes(Siox__Block *pb, const struct siox_block *b, struct scratch *s) {
  Siox__Process *m = put_msgs(s, b->n_processes, sizeof *m, (void ***)&pb->processes);
  pb->n_processes = b->n_processes;
  for (size_t i = 0; i < b->n_processes; i++) {
    const struct siox_block_process *p = &b->processes[i];
    siox__process__init(&m[i]);
    m[i].pid = p->pid, m[i].uid = p->uid, m[i].nonce = p->nonce;
    m[i].host = str(p->host), m[i].exe = str(p->exe), m[i].args = str(p->args), m[i].job = str(p->job);
  }
}

static void put_nodes_edges(Siox__Block *pb, const struct siox_block *b, struct scratch *s) {
  Siox__Node *n = put_msgs(s, b->n_nodes, sizeof *n, (void ***)&pb->nodes);
  pb->n_nodes = b->n_nodes;
  for (size_t i = 0; i < b->n_nodes; i++) {
    const struct siox_block_node *x = &b->nodes[i];
    siox__node__init(&n[i]);
    n[i].proc = x->proc, n[i].unid = x->unid;
    n[i].hwid = str(x->hwid), n[i].swid = str(x->swid), n[i].iid = str(x->iid);
  }
  Siox__Edge *e = put_msgs(s, b->n_edges, sizeof *e, (void ***)&pb->edges);
  pb->n_edges = b->n_edges;
  for (size_t i = 0; i < b->n_edges; i++) {
    siox__edge__init(&e[i]);
    e[i].proc = b->edges[i].proc, e[i].from = b->edges[i].from, e[i].to = b->edges[i].to;
  }
}

static void put_types_targets(Siox__Block *pb, const struct siox_block *b, struct scratch *s) {
  Siox__ActivityType *t = put_msgs(s, b->n_types, sizeof *t, (void ***)&pb->types);
  pb->n_types = b->n_types;
  for (size_t i = 0; i < b->n_types; i++) {
    const struct siox_block_type *x = &b->types[i];
    siox__activity_type__init(&t[i]);
    t[i].proc = x->proc, t[i].type_id = x->type_id, t[i].unid = x->unid, t[i].name = str(x->name);
  }
  Siox__Target *g = put_msgs(s, b->n_targets, sizeof *g, (void ***)&pb->targets);
  pb->n_targets = b->n_targets;
  for (size_t i = 0; i < b->n_targets; i++) {
    const struct siox_block_target *x = &b->targets[i];
    siox__target__init(&g[i]);
    g[i].proc = x->proc, g[i].target_id = x->target_id, g[i].hwid = str(x->hwid), g[i].swid = str(x->swid);
  }
}

static void put_attrs_stats(Siox__Block *pb, const struct siox_block *b, struct scratch *s) {
  Siox__NodeAttr *na = put_msgs(s, b->n_node_attrs, sizeof *na, (void ***)&pb->node_attrs);
  Siox__Value *nv = carve(s, b->n_node_attrs * sizeof *nv);
  pb->n_node_attrs = b->n_node_attrs;
  for (size_t i = 0; i < b->n_node_attrs; i++) {
    siox__node_attr__init(&na[i]);
    na[i].proc = b->node_attrs[i].proc, na[i].unid = b->node_attrs[i].unid;
    put_value(&nv[i], &b->node_attrs[i].value);
    na[i].value = &nv[i];
  }
  Siox__StringAttr *sa = put_msgs(s, b->n_string_attrs, sizeof *sa, (void ***)&pb->string_attrs);
  pb->n_string_attrs = b->n_string_attrs;
  for (size_t i = 0; i < b->n_string_attrs; i++) {
    const struct siox_block_string_attr *x = &b->string_attrs[i];
    siox__string_attr__init(&sa[i]);
    sa[i].proc = x->proc, sa[i].aid = x->aid, sa[i].attr = x->value.attr;
    sa[i].value.len = x->value.len, sa[i].value.data = (uint8_t *)x->value.bytes;
  }
  Siox__Stats *st = put_msgs(s, b->n_stats, sizeof *st, (void ***)&pb->stats);
  pb->n_stats = b->n_stats;
  for (size_t i = 0; i < b->n_stats; i++) {
    const struct siox_block_stats *x = &b->stats[i];
    siox__stats__init(&st[i]);
    st[i].proc = x->proc, st[i].activities = x->activities, st[i].records = x->records, st[i].dropped = x->dropped;
    st[i].dropped_exit = x->dropped_exit;
    st[i].daemon_dropped_spool = x->daemon_dropped_spool;
    st[i].daemon_dropped_invalid = x->daemon_dropped_invalid;
  }
}

static void put_descriptors(Siox__Block *pb, const struct siox_block *b, struct scratch *s) {
  size_t n = b->n_descriptors;
  Siox__Descriptor *d = put_msgs(s, n, sizeof *d, (void ***)&pb->descriptors);
  Siox__Value **vp;
  Siox__Value *v = put_msgs(s, 2 * n, sizeof *v, (void ***)&vp);
  pb->n_descriptors = n;
  for (size_t i = 0; i < n; i++) {
    const struct siox_block_descriptor *x = &b->descriptors[i];
    siox__descriptor__init(&d[i]);
    d[i].proc = x->proc, d[i].kind = x->kind, d[i].aid = x->aid, d[i].node = x->node;
    d[i].offset = x->offset, d[i].length = x->length;
    d[i].n_values = x->nvalues;
    d[i].values = &vp[2 * i];
    for (uint32_t k = 0; k < x->nvalues; k++) put_value(&v[2 * i + k], &x->values[k]);
  }
}

/* ---- activity columns ----------------------------------------------------- */

static void carve_columns(Siox__Activities *pa, size_t n, size_t m, struct scratch *s) {
  siox__activities__init(pa);
  pa->n_proc_delta = pa->n_aid_delta = pa->n_parent_back = pa->n_type_delta = n;
  pa->n_start_delta = pa->n_duration = pa->n_err = pa->n_nattr = n;
  pa->proc_delta = carve(s, n * sizeof(int64_t));
  pa->aid_delta = carve(s, n * sizeof(int64_t));
  pa->parent_back = carve(s, n * sizeof(int64_t));
  pa->type_delta = carve(s, n * sizeof(int64_t));
  pa->start_delta = carve(s, n * sizeof(int64_t));
  pa->duration = carve(s, n * sizeof(uint64_t));
  pa->err = carve(s, n * sizeof(int32_t));
  pa->nattr = carve(s, n * sizeof(uint32_t));
  pa->n_attr_id = pa->n_attr_delta = pa->n_attr_is_f64 = pa->n_attr_vtype = m;
  pa->attr_id = carve(s, m * sizeof(uint32_t));
  pa->attr_delta = carve(s, m * sizeof(int64_t));
  pa->attr_is_f64 = carve(s, m * sizeof(protobuf_c_boolean));
  pa->attr_vtype = carve(s, m * sizeof(uint32_t));
  pa->attr_f64 = carve(s, m * sizeof(double)); /* n_attr_f64 counts the used part */
}

/* The previous-value slot of the attribute at each position of the last
 * activity: consecutive activities mostly carry the same ids in the same
 * order, so a compare replaces the hash probe (about 20 instructions an
 * attribute). Slots move when the map grows: the cache is then emptied. */
#define POS_CACHE 8

struct attr_pos {
  uint64_t id1[POS_CACHE]; /* attribute id + 1; 0: empty */
  uint64_t *slot[POS_CACHE];
};

static uint64_t *prev_slot(struct attr_prev *prev, struct attr_pos *pc, uint32_t k, uint32_t id) {
  if (k < POS_CACHE && pc->id1[k] == (uint64_t)id + 1) return pc->slot[k];
  const struct attr_prev_slot *s = prev->s;
  uint64_t *last = attr_prev_get(prev, id);
  if (prev->s != s) memset(pc, 0, sizeof *pc);
  if (last && k < POS_CACHE) pc->id1[k] = (uint64_t)id + 1, pc->slot[k] = last;
  return last;
}

/* Appends activity a's attributes at entry *j. Returns 0 or -ENOMEM. */
static int put_attr_entries(Siox__Activities *pa, const struct siox_block *b, const struct siox_block_activity *a,
                            size_t *j, struct attr_prev *prev, struct attr_pos *pc) {
  for (uint32_t k = 0; k < a->nattr; k++, (*j)++) {
    const struct siox_value *v = &b->attrs[a->attr_first + k];
    pa->attr_id[*j] = v->attr;
    pa->attr_vtype[*j] = v->vtype;
    pa->attr_is_f64[*j] = v->vtype == SIOX_VT_F64;
    pa->attr_delta[*j] = 0;
    if (v->vtype == SIOX_VT_F64) {
      pa->attr_f64[pa->n_attr_f64++] = v->v.f64;
      continue;
    }
    uint64_t *last = prev_slot(prev, pc, k, v->attr);
    if (!last) return -ENOMEM;
    pa->attr_delta[*j] = (int64_t)(v->v.u64 - *last);
    *last = v->v.u64;
  }
  return 0;
}

/* Deltas use unsigned arithmetic: wrap-around is well defined and the
 * decoder undoes it exactly, whatever the values. */
static int put_activities(Siox__Activities *pa, const struct siox_block *b, size_t m, struct scratch *s) {
  struct attr_prev prev;
  struct attr_pos pc;
  uint64_t proc = 0, aid = 0, type = 0, start = 0;
  size_t j = 0;
  int rc = 0;
  carve_columns(pa, b->n_activities, m, s);
  attr_prev_init(&prev);
  memset(&pc, 0, sizeof pc);
  for (size_t i = 0; i < b->n_activities && !rc; i++) {
    const struct siox_block_activity *a = &b->activities[i];
    pa->proc_delta[i] = (int64_t)(a->proc - proc), proc = a->proc;
    pa->aid_delta[i] = (int64_t)(a->aid - aid), aid = a->aid;
    pa->parent_back[i] = a->parent ? (int64_t)(a->aid - a->parent) : 0;
    pa->type_delta[i] = (int64_t)(a->type_id - type), type = a->type_id;
    pa->start_delta[i] = (int64_t)((uint64_t)a->start_ns - start), start = (uint64_t)a->start_ns;
    pa->duration[i] = (uint64_t)a->end_ns - (uint64_t)a->start_ns;
    pa->err[i] = a->err;
    pa->nattr[i] = a->nattr;
    rc = put_attr_entries(pa, b, a, &j, &prev, &pc);
  }
  attr_prev_free(&prev);
  return rc;
}

/* ---- the encoder: buffers kept from one block to the next ----------------- */

struct grow_buf {
  void *p;
  size_t cap;
};

struct siox_block_encoder {
  struct grow_buf scratch, raw, z;
};

struct siox_block_encoder *siox_block_encoder_create(void) { return calloc(1, sizeof(struct siox_block_encoder)); }

void siox_block_encoder_destroy(struct siox_block_encoder *e) {
  if (!e) return;
  free(e->scratch.p), free(e->raw.p), free(e->z.p);
  free(e);
}

/* Grows b to at least need bytes; its contents need not survive. */
static int reserve(struct grow_buf *b, size_t need) {
  if (need <= b->cap) return 0;
  size_t cap = b->cap * 2 > need ? b->cap * 2 : need;
  void *p = malloc(cap);
  if (!p) return -ENOMEM;
  free(b->p);
  b->p = p, b->cap = cap;
  return 0;
}

/* ---- pack + compress ------------------------------------------------------ */

/* The most bytes protobuf can take for one entry of a packed column: a 64-bit
 * varint 10, a 32-bit one 5 (sint32 zigzags to 32 bits), a bool 1, a double
 * 8; each field adds a tag (1 byte: numbers below 16) and a length (<= 5). */
static size_t activities_bound(size_t n, size_t m, size_t nf64) {
  return 1 + 5 + 13 * (1 + 5) + n * (6 * 10 + 5 + 5) + m * (5 + 10 + 1 + 5) + nf64 * 8;
}

/* Packs pb into e->raw. protobuf-c's pack needs a buffer it cannot overrun;
 * its get_packed_size() would walk every column once more only to size it,
 * so the buffer is sized by a bound instead: the dictionaries' exact size
 * (few entries) plus activities_bound(). Only a block that might exceed the
 * frame limit is sized exactly, to refuse it without a huge buffer. */
static int pack_raw(struct siox_block_encoder *e, Siox__Block *pb, size_t *raw) {
  Siox__Activities *pa = pb->activities;
  pb->activities = NULL;
  size_t need = siox__block__get_packed_size(pb) + activities_bound(pa->n_duration, pa->n_attr_id, pa->n_attr_f64);
  pb->activities = pa;
  if (need > SIOX_FRAME_MAX_PAYLOAD && (need = siox__block__get_packed_size(pb)) > SIOX_FRAME_MAX_PAYLOAD)
    return -EOVERFLOW;
  if (reserve(&e->raw, need) < 0) return -ENOMEM;
  *raw = siox__block__pack(pb, e->raw.p);
  assert(*raw <= need);
  return *raw > SIOX_FRAME_MAX_PAYLOAD ? -EOVERFLOW : 0;
}

/* On success *out is a new malloc'd copy of the payload the caller frees (the
 * batch may sit in a spool queue; the encoder keeps its own buffers). */
static int pack_compress(struct siox_block_encoder *e, Siox__Block *pb, uint8_t **out, size_t *out_len,
                         size_t *raw_len) {
  size_t raw;
  int rc = pack_raw(e, pb, &raw);
  if (rc < 0) return rc;
  int bound = LZ4_compressBound((int)raw);
  if (reserve(&e->z, (size_t)bound) < 0) return -ENOMEM;
  int zn = LZ4_compress_default(e->raw.p, e->z.p, (int)raw, bound);
  if (zn <= 0) return -EOVERFLOW; /* lz4 fails only when the bound is exceeded */
  if (!(*out = malloc((size_t)zn))) return -ENOMEM;
  memcpy(*out, e->z.p, (size_t)zn);
  *out_len = (size_t)zn;
  *raw_len = raw;
  return 0;
}

int siox_block_encode_with(struct siox_block_encoder *e, const struct siox_block *b, uint8_t **out,
                           size_t *out_len, size_t *raw_len) {
  size_t m;
  if (!dicts_ok(b) || !activities_ok(b, &m)) return -EINVAL;
  size_t sz = scratch_size(b, m);
  if (reserve(&e->scratch, sz) < 0) return -ENOMEM;
  struct scratch s = {e->scratch.p, (char *)e->scratch.p + sz};
  Siox__Block pb = SIOX__BLOCK__INIT;
  Siox__Activities pa;
  put_processes(&pb, b, &s);
  put_nodes_edges(&pb, b, &s);
  put_types_targets(&pb, b, &s);
  put_attrs_stats(&pb, b, &s);
  put_descriptors(&pb, b, &s);
  int rc = put_activities(&pa, b, m, &s);
  pb.activities = &pa;
  return rc ? rc : pack_compress(e, &pb, out, out_len, raw_len);
}

int siox_block_encode(const struct siox_block *b, uint8_t **out, size_t *out_len, size_t *raw_len) {
  struct siox_block_encoder *e = siox_block_encoder_create();
  if (!e) return -ENOMEM;
  int rc = siox_block_encode_with(e, b, out, out_len, raw_len);
  siox_block_encoder_destroy(e);
  return rc;
}
