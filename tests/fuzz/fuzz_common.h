/*
 * Shared by the libFuzzer targets of tests/fuzz: a check that aborts (so
 * libFuzzer reports the input as a crash and saves it), a reader that turns
 * fuzz bytes into values, the invariants a decoded block must hold, and the
 * comparison of a block before encoding with the block the decoder gave back.
 *
 * The comparison knows the three documented ways the codec changes a block
 * (protocol/siox_block.h): NULL strings arrive as "", an activity that names
 * itself as parent arrives as a root, and a STR/BYTES value arrives with the
 * ontology's choice of the two. Strings of the dictionaries travel as C
 * strings, so they compare up to their first NUL.
 */
#ifndef SIOX_FUZZ_COMMON_H
#define SIOX_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "siox_block.h"
#include "siox_client_wire.h"
#include <siox/siox_ontology.h>

#define FUZZ_CHECK(cond, ...)                                         \
  do {                                                                \
    if (!(cond)) {                                                    \
      fprintf(stderr, "fuzz check failed: %s (%s:%d): ", #cond, __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                                   \
      fputc('\n', stderr);                                            \
      abort();                                                        \
    }                                                                 \
  } while (0)

/* ---- reading values from fuzz bytes (zeros once the bytes run out) ------- */

struct fuzz_reader {
  const uint8_t *p;
  size_t left;
};

static inline uint64_t fuzz_read(struct fuzz_reader *r, unsigned nbytes) {
  uint64_t v = 0;
  for (unsigned i = 0; i < nbytes && r->left; i++, r->p++, r->left--) v |= (uint64_t)*r->p << (8 * i);
  return v;
}

static inline uint8_t fuzz_u8(struct fuzz_reader *r) { return (uint8_t)fuzz_read(r, 1); }
static inline uint32_t fuzz_u32(struct fuzz_reader *r) { return (uint32_t)fuzz_read(r, 4); }
static inline uint64_t fuzz_u64(struct fuzz_reader *r) { return fuzz_read(r, 8); }

/* Up to max bytes of the input, length first; *len may be shorter than asked
 * when the input runs out. */
static inline const char *fuzz_bytes(struct fuzz_reader *r, size_t max, size_t *len) {
  size_t want = fuzz_u8(r) % (max + 1);
  *len = want < r->left ? want : r->left;
  const char *s = (const char *)r->p;
  r->p += *len, r->left -= *len;
  return s;
}

/* ---- what a decoded block promises the server ---------------------------- */

static inline int fuzz_is_bytes(uint32_t vtype) { return vtype == SIOX_VT_STR || vtype == SIOX_VT_BYTES; }

/* STR or BYTES, as the decoder derives it from the ontology. */
static inline uint32_t fuzz_bytes_vtype(uint32_t attr) {
  const struct siox_attr_info *info = siox_attr_lookup(attr);
  return info && info->type == SIOX_VT_STR ? SIOX_VT_STR : SIOX_VT_BYTES;
}

static inline void fuzz_check_str(const char *s) { FUZZ_CHECK(s && strlen(s) <= SIOX_BLOCK_MAX_STR, "bad string"); }

static inline void fuzz_check_value(const struct siox_value *v) {
  FUZZ_CHECK(v->vtype <= SIOX_VT_BYTES, "vtype %u", v->vtype);
  if (fuzz_is_bytes(v->vtype)) {
    FUZZ_CHECK(v->bytes && v->len <= SIOX_BLOCK_MAX_STR && v->bytes[v->len] == '\0', "bytes value len %u", v->len);
    FUZZ_CHECK(v->vtype == fuzz_bytes_vtype(v->attr), "STR/BYTES not from the ontology (attr %u)", v->attr);
  }
}

/* Every index in range, every string present and bounded: what the graph
 * builder and the warehouse rely on after siox_block_decode() returned 0. */
static inline void fuzz_check_decoded(const struct siox_block *b) {
  size_t np = b->n_processes;
  for (size_t i = 0; i < np; i++) {
    const struct siox_block_process *p = &b->processes[i];
    fuzz_check_str(p->host), fuzz_check_str(p->exe), fuzz_check_str(p->args), fuzz_check_str(p->job);
  }
  for (size_t i = 0; i < b->n_nodes; i++) {
    FUZZ_CHECK(b->nodes[i].proc < np, "node %zu proc", i);
    fuzz_check_str(b->nodes[i].hwid), fuzz_check_str(b->nodes[i].swid), fuzz_check_str(b->nodes[i].iid);
  }
  for (size_t i = 0; i < b->n_edges; i++) FUZZ_CHECK(b->edges[i].proc < np, "edge %zu proc", i);
  for (size_t i = 0; i < b->n_types; i++) {
    FUZZ_CHECK(b->types[i].proc < np, "type %zu proc", i);
    fuzz_check_str(b->types[i].name);
  }
  for (size_t i = 0; i < b->n_targets; i++) {
    FUZZ_CHECK(b->targets[i].proc < np, "target %zu proc", i);
    fuzz_check_str(b->targets[i].hwid), fuzz_check_str(b->targets[i].swid);
  }
  for (size_t i = 0; i < b->n_node_attrs; i++) {
    FUZZ_CHECK(b->node_attrs[i].proc < np, "node attr %zu proc", i);
    fuzz_check_value(&b->node_attrs[i].value);
  }
  for (size_t i = 0; i < b->n_string_attrs; i++) {
    FUZZ_CHECK(b->string_attrs[i].proc < np, "string attr %zu proc", i);
    FUZZ_CHECK(fuzz_is_bytes(b->string_attrs[i].value.vtype), "string attr %zu vtype", i);
    fuzz_check_value(&b->string_attrs[i].value);
  }
  for (size_t i = 0; i < b->n_descriptors; i++) {
    const struct siox_block_descriptor *d = &b->descriptors[i];
    FUZZ_CHECK(d->proc < np, "descriptor %zu proc", i);
    FUZZ_CHECK(d->kind >= SIOX_DESC_CREATE && d->kind <= SIOX_DESC_RECEIVE, "descriptor kind %u", d->kind);
    FUZZ_CHECK(d->nvalues == (d->kind == SIOX_DESC_MAP ? 2u : 1u), "descriptor nvalues %u", d->nvalues);
    for (uint32_t k = 0; k < d->nvalues; k++) fuzz_check_value(&d->values[k]);
  }
  for (size_t i = 0; i < b->n_stats; i++) FUZZ_CHECK(b->stats[i].proc < np, "stats %zu proc", i);
  for (size_t i = 0; i < b->n_activities; i++) {
    const struct siox_block_activity *a = &b->activities[i];
    FUZZ_CHECK(a->proc < np, "activity %zu proc", i);
    FUZZ_CHECK((uint64_t)a->attr_first + a->nattr <= b->n_attrs, "activity %zu attr slice", i);
    for (uint32_t k = 0; k < a->nattr; k++)
      FUZZ_CHECK(b->attrs[a->attr_first + k].vtype <= SIOX_VT_F64, "activity %zu attr %u not numeric", i, k);
  }
}

/* ---- before encoding == after decoding ------------------------------------ */

static inline int fuzz_str_same(const char *a, const char *b) { return strcmp(a ? a : "", b ? b : "") == 0; }

static inline int fuzz_value_same(const struct siox_value *want, const struct siox_value *got) {
  if (want->attr != got->attr) return 0;
  if (fuzz_is_bytes(want->vtype))
    return got->vtype == fuzz_bytes_vtype(want->attr) && want->len == got->len &&
           (!want->len || memcmp(want->bytes, got->bytes, want->len) == 0);
  return want->vtype == got->vtype && want->v.u64 == got->v.u64; /* bit-exact, floats too */
}

#define FUZZ_SAME(cond, what, i) FUZZ_CHECK(cond, "round trip changed %s %zu", what, (size_t)(i))

static inline void fuzz_dicts_same(const struct siox_block *a, const struct siox_block *b) {
  FUZZ_SAME(a->n_processes == b->n_processes, "process count", a->n_processes);
  for (size_t i = 0; i < a->n_processes; i++) {
    const struct siox_block_process *x = &a->processes[i], *y = &b->processes[i];
    FUZZ_SAME(x->pid == y->pid && x->uid == y->uid && x->nonce == y->nonce, "process", i);
    FUZZ_SAME(fuzz_str_same(x->host, y->host) && fuzz_str_same(x->exe, y->exe), "process strings", i);
    FUZZ_SAME(fuzz_str_same(x->args, y->args) && fuzz_str_same(x->job, y->job), "process strings", i);
  }
  FUZZ_SAME(a->n_nodes == b->n_nodes, "node count", a->n_nodes);
  for (size_t i = 0; i < a->n_nodes; i++) {
    const struct siox_block_node *x = &a->nodes[i], *y = &b->nodes[i];
    FUZZ_SAME(x->proc == y->proc && x->unid == y->unid, "node", i);
    FUZZ_SAME(fuzz_str_same(x->hwid, y->hwid) && fuzz_str_same(x->swid, y->swid) && fuzz_str_same(x->iid, y->iid),
              "node strings", i);
  }
  FUZZ_SAME(a->n_edges == b->n_edges, "edge count", a->n_edges);
  for (size_t i = 0; i < a->n_edges; i++)
    FUZZ_SAME(memcmp(&a->edges[i], &b->edges[i], sizeof a->edges[i]) == 0, "edge", i);
  FUZZ_SAME(a->n_types == b->n_types, "type count", a->n_types);
  for (size_t i = 0; i < a->n_types; i++) {
    const struct siox_block_type *x = &a->types[i], *y = &b->types[i];
    FUZZ_SAME(x->proc == y->proc && x->type_id == y->type_id && x->unid == y->unid, "type", i);
    FUZZ_SAME(fuzz_str_same(x->name, y->name), "type name", i);
  }
  FUZZ_SAME(a->n_targets == b->n_targets, "target count", a->n_targets);
  for (size_t i = 0; i < a->n_targets; i++) {
    const struct siox_block_target *x = &a->targets[i], *y = &b->targets[i];
    FUZZ_SAME(x->proc == y->proc && x->target_id == y->target_id, "target", i);
    FUZZ_SAME(fuzz_str_same(x->hwid, y->hwid) && fuzz_str_same(x->swid, y->swid), "target strings", i);
  }
}

static inline void fuzz_records_same(const struct siox_block *a, const struct siox_block *b) {
  FUZZ_SAME(a->n_node_attrs == b->n_node_attrs, "node attribute count", a->n_node_attrs);
  for (size_t i = 0; i < a->n_node_attrs; i++) {
    const struct siox_block_node_attr *x = &a->node_attrs[i], *y = &b->node_attrs[i];
    FUZZ_SAME(x->proc == y->proc && x->unid == y->unid && fuzz_value_same(&x->value, &y->value), "node attribute", i);
  }
  FUZZ_SAME(a->n_string_attrs == b->n_string_attrs, "string attribute count", a->n_string_attrs);
  for (size_t i = 0; i < a->n_string_attrs; i++) {
    const struct siox_block_string_attr *x = &a->string_attrs[i], *y = &b->string_attrs[i];
    FUZZ_SAME(x->proc == y->proc && x->aid == y->aid && fuzz_value_same(&x->value, &y->value), "string attribute", i);
  }
  FUZZ_SAME(a->n_descriptors == b->n_descriptors, "descriptor count", a->n_descriptors);
  for (size_t i = 0; i < a->n_descriptors; i++) {
    const struct siox_block_descriptor *x = &a->descriptors[i], *y = &b->descriptors[i];
    FUZZ_SAME(x->proc == y->proc && x->kind == y->kind && x->aid == y->aid && x->node == y->node, "descriptor", i);
    FUZZ_SAME(x->offset == y->offset && x->length == y->length && x->nvalues == y->nvalues, "descriptor", i);
    for (uint32_t k = 0; k < x->nvalues; k++) FUZZ_SAME(fuzz_value_same(&x->values[k], &y->values[k]), "descriptor value", i);
  }
  FUZZ_SAME(a->n_stats == b->n_stats, "stats count", a->n_stats);
  for (size_t i = 0; i < a->n_stats; i++)
    FUZZ_SAME(memcmp(&a->stats[i], &b->stats[i], sizeof a->stats[i]) == 0, "stats", i);
}

static inline void fuzz_activities_same(const struct siox_block *a, const struct siox_block *b) {
  FUZZ_SAME(a->n_activities == b->n_activities, "activity count", a->n_activities);
  for (size_t i = 0; i < a->n_activities; i++) {
    const struct siox_block_activity *x = &a->activities[i], *y = &b->activities[i];
    uint64_t parent = x->parent == x->aid ? 0 : x->parent; /* a self-parent travels as a root */
    FUZZ_SAME(x->proc == y->proc && x->type_id == y->type_id && x->aid == y->aid && parent == y->parent, "activity", i);
    FUZZ_SAME(x->start_ns == y->start_ns && x->end_ns == y->end_ns && x->err == y->err, "activity", i);
    FUZZ_SAME(x->nattr == y->nattr, "activity attribute count", i);
    for (uint32_t k = 0; k < x->nattr; k++)
      FUZZ_SAME(fuzz_value_same(&a->attrs[x->attr_first + k], &b->attrs[y->attr_first + k]), "activity attribute", i);
  }
}

/* Aborts unless got is what decoding the encoding of want must give. */
static inline void fuzz_blocks_same(const struct siox_block *want, const struct siox_block *got) {
  fuzz_dicts_same(want, got);
  fuzz_records_same(want, got);
  fuzz_activities_same(want, got);
}

/* Encodes b (which must be encodable), decodes the result, checks the decoded
 * block's invariants and that it equals b. The path of every batch from the
 * daemon's spool into the server. */
static inline void fuzz_encode_decode_same(const struct siox_block *b) {
  uint8_t *z = NULL;
  size_t zlen = 0, raw = 0;
  int rc = siox_block_encode(b, &z, &zlen, &raw);
  FUZZ_CHECK(rc == 0, "siox_block_encode refused a valid block: %d", rc);
  struct siox_block got;
  const char *why = NULL;
  siox_block_init(&got);
  rc = siox_block_decode(z, zlen, raw, &got, &why);
  FUZZ_CHECK(rc == 0, "siox_block_decode refused what siox_block_encode made: %s", why ? why : "?");
  fuzz_check_decoded(&got);
  fuzz_blocks_same(b, &got);
  siox_block_free(&got);
  free(z);
}

#endif
